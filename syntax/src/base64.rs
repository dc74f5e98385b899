//! Base64 (standard or URL-safe alphabet, padding optional) for the checks that undo an
//! attacker's own encoding layer (`atob('...')`, `echo ... | base64 -d | sh`). The crate has no
//! dependencies, so the few lines live here once.

/// The bytes `text` decodes to, stopping at the first `=`; None on any byte outside the
/// alphabets.
pub fn decode(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in text {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            _ => return None,
        };
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn both_alphabets_and_padding() {
        assert_eq!(super::decode(b"aWQ=").unwrap(), b"id");
        assert_eq!(super::decode(b"YWxlcnQoMSk").unwrap(), b"alert(1)");
        assert_eq!(super::decode(b"-_8").unwrap(), [0xfb, 0xff]);
        assert!(super::decode(b"a*b").is_none());
    }
}
