//! Which bytes occur in a text: computed once per field, so each check can reject a field
//! that lacks its trigger bytes with a few bit tests instead of a scan.

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByteSet([u64; 4]);

impl ByteSet {
    pub fn of(text: &str) -> Self {
        let mut set = [0u64; 4];
        for &b in text.as_bytes() {
            set[(b >> 6) as usize] |= 1u64 << (b & 63);
        }
        ByteSet(set)
    }

    pub fn contains(&self, b: u8) -> bool {
        self.0[(b >> 6) as usize] & (1u64 << (b & 63)) != 0
    }

    /// True when any of `bytes` occurs.
    pub fn any(&self, bytes: &[u8]) -> bool {
        bytes.iter().any(|&b| self.contains(b))
    }

    /// True when every one of `bytes` occurs.
    pub fn all(&self, bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| self.contains(b))
    }
}

#[cfg(test)]
mod tests {
    use super::ByteSet;

    #[test]
    fn membership() {
        let set = ByteSet::of("a(b)\u{e9}");
        assert!(set.contains(b'(') && set.contains(b')') && set.contains(0xc3));
        assert!(!set.contains(b'`'));
        assert!(set.any(b"`("));
        assert!(!set.all(b"`("));
        assert!(!ByteSet::of("").any(b"abc"));
    }
}
