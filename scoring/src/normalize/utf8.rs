//! NUL removal, overlong UTF-8 and lossy conversion of decoded bytes.
//!
//! Percent-decoding and byte escapes produce bytes, not text: [`bytes_into`] turns them into
//! text without losing the attack. Overlong encodings (`C0 AE` → `.`, `C0 AF` / `E0 80 AF` →
//! `/`, and the 5/6-byte forms some old decoders accepted) are mapped to the character they
//! encode, NUL bytes are removed, a lone 0xA0 is latin-1 NBSP, and any other invalid sequence
//! becomes U+FFFD.

/// Removes NUL characters. Appends to `out`; returns whether anything was removed.
pub fn clean(input: &str, out: &mut String) -> bool {
    push_without_nul(input, out)
}

/// Appends `bytes` as text: overlong sequences mapped, NUL removed, invalid bytes replaced
/// by U+FFFD (one per maximal invalid sequence). Returns whether the text differs from a plain
/// UTF-8 reading of `bytes` (anything mapped, removed or replaced).
pub fn bytes_into(bytes: &[u8], out: &mut String) -> bool {
    let mut changed = false;
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                changed |= push_without_nul(s, out);
                return changed;
            }
            Err(e) => {
                let (valid, bad) = rest.split_at(e.valid_up_to());
                if let Ok(s) = std::str::from_utf8(valid) {
                    push_without_nul(s, out);
                }
                changed = true;
                if let Some((c, len)) = overlong(bad) {
                    if c != '\0' {
                        out.push(c);
                    }
                    rest = &bad[len..];
                } else if bad[0] == 0xA0 {
                    // A lone `%a0` is latin-1 NBSP, whitespace to MySQL (`1%a0UNION%a0SELECT`):
                    // read as NBSP, which collapsing turns into a space, not as U+FFFD.
                    out.push('\u{A0}');
                    rest = &bad[1..];
                } else {
                    out.push('\u{FFFD}');
                    let n = e.error_len().unwrap_or(bad.len()).clamp(1, bad.len().max(1));
                    rest = bad.get(n..).unwrap_or(&[]);
                }
                if rest.is_empty() {
                    return changed;
                }
            }
        }
    }
}

/// An overlong (or 5/6-byte) UTF-8 sequence at the start of `b`: the character it encodes and
/// the sequence length.
fn overlong(b: &[u8]) -> Option<(char, usize)> {
    let lead = *b.first()?;
    let (n, mask, min) = match lead {
        0xC0 | 0xC1 => (2, 0x1F, 0x80),
        0xE0 => (3, 0x0F, 0x800),
        0xF0 => (4, 0x07, 0x1_0000),
        0xF8..=0xFB => (5, 0x03, 0x1_0000),
        0xFC | 0xFD => (6, 0x01, 0x1_0000),
        _ => return None,
    };
    let cont = b.get(1..n)?;
    let mut v = u32::from(lead & mask);
    for &c in cont {
        if c & 0xC0 != 0x80 {
            return None;
        }
        v = v << 6 | u32::from(c & 0x3F);
    }
    if v >= min {
        return None;
    }
    Some((char::from_u32(v)?, n))
}

fn push_without_nul(s: &str, out: &mut String) -> bool {
    if memchr::memchr(0, s.as_bytes()).is_none() {
        out.push_str(s);
        return false;
    }
    for piece in s.split('\0') {
        out.push_str(piece);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(b: &[u8]) -> (String, bool) {
        let mut out = String::new();
        let changed = bytes_into(b, &mut out);
        (out, changed)
    }

    #[test]
    fn overlong_sequences_map_to_ascii() {
        assert_eq!(fix(b"\xc0\xae\xc0\xae\xc0\xaf").0, "../");
        assert_eq!(fix(b"\xe0\x80\xaf").0, "/");
        assert_eq!(fix(b"\xf0\x80\x80\xaf").0, "/");
        assert_eq!(fix(b"\xf8\x80\x80\x80\xaf").0, "/");
        assert_eq!(fix(b"\xfc\x80\x80\x80\x80\xaf").0, "/");
        assert_eq!(fix(b"\xc1\x9c").0, "\\");
        assert_eq!(fix(b"\xc0\xbcscript\xc0\xbe").0, "<script>");
        assert_eq!(fix(b"a\xc0\x80b").0, "ab");
    }

    #[test]
    fn invalid_bytes_become_replacement_chars() {
        assert_eq!(fix(b"a\xffb"), ("a\u{FFFD}b".to_string(), true));
        assert_eq!(fix(b"\xc0"), ("\u{FFFD}".to_string(), true));
        assert_eq!(fix(b"\xe0\x80"), ("\u{FFFD}\u{FFFD}".to_string(), true));
        assert_eq!(fix(b"\xc3\xa9\xbf'"), ("\u{e9}\u{FFFD}'".to_string(), true));
        assert_eq!(fix(b"ok"), ("ok".to_string(), false));
        // A lone 0xA0 is latin-1's NBSP (MySQL's whitespace), not an unknown byte.
        assert_eq!(fix(b"1\xa0UNION\xa0SELECT"), ("1\u{a0}UNION\u{a0}SELECT".to_string(), true));
        assert_eq!(fix(b""), (String::new(), false));
    }

    #[test]
    fn nul_removed() {
        let mut out = String::new();
        assert!(clean("a\0b\0", &mut out));
        assert_eq!(out, "ab");
        out.clear();
        assert!(!clean("ab", &mut out));
        assert_eq!(out, "ab");
        assert_eq!(fix(b"\0\0x"), ("x".to_string(), true));
    }
}
