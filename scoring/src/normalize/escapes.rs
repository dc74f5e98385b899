//! JS/JSON/C-style escapes: `\uXXXX` (surrogate pairs combined), `\u{X..XXXXXX}`, `\xXX`,
//! three-digit octal `\NNN` and `\/`.
//!
//! `\xXX` and octal escapes are bytes (as in PHP, Python and C strings), so `\xc0\xae` goes
//! through the overlong mapping like `%c0%ae`. Other backslashes (`\'`, `\n`, Windows paths)
//! are kept as they are: rewriting them would hide `..\..\` traversals.

use super::percent::push_code_point;

fn hex_val(b: u8) -> Option<u32> {
    (b as char).to_digit(16)
}

/// Decodes escapes. Appends to `out`; returns whether anything was decoded.
pub fn decode(input: &str, out: &mut String) -> bool {
    let b = input.as_bytes();
    if memchr::memchr(b'\\', b).is_none() {
        out.push_str(input);
        return false;
    }
    let mut buf: Vec<u8> = Vec::with_capacity(b.len());
    let mut changed = false;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            let end = memchr::memchr(b'\\', &b[i..]).map_or(b.len(), |j| i + j);
            buf.extend_from_slice(&b[i..end]);
            i = end;
            continue;
        }
        match escape_at(b, i, &mut buf) {
            Some(len) => {
                changed = true;
                i += len;
            }
            None => {
                buf.push(b'\\');
                i += 1;
            }
        }
    }
    if !changed {
        out.push_str(input);
        return false;
    }
    super::utf8::bytes_into(&buf, out);
    true
}

/// `\uXXXX` at `i` as a code point.
fn u4(b: &[u8], i: usize) -> Option<u32> {
    if b.get(i) != Some(&b'\\') || b.get(i + 1) != Some(&b'u') {
        return None;
    }
    let digits = b.get(i + 2..i + 6)?;
    digits.iter().try_fold(0u32, |v, &d| Some(v << 4 | hex_val(d)?))
}

/// Decodes the escape at `i` (a backslash) into `buf`; returns its length.
fn escape_at(b: &[u8], i: usize, buf: &mut Vec<u8>) -> Option<usize> {
    match *b.get(i + 1)? {
        b'u' if b.get(i + 2) == Some(&b'{') => {
            let start = i + 3;
            let mut j = start;
            let mut v = 0u32;
            while j < b.len() && j - start < 6 {
                match hex_val(b[j]) {
                    Some(d) => v = v << 4 | d,
                    None => break,
                }
                j += 1;
            }
            if j == start || b.get(j) != Some(&b'}') {
                return None;
            }
            push_code_point(v, buf);
            Some(j + 1 - i)
        }
        b'u' => {
            let hi = u4(b, i)?;
            if (0xD800..0xDC00).contains(&hi) {
                if let Some(lo) = u4(b, i + 6).filter(|lo| (0xDC00..0xE000).contains(lo)) {
                    push_code_point(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00), buf);
                    return Some(12);
                }
            }
            push_code_point(hi, buf);
            Some(6)
        }
        b'x' | b'X' => {
            let h = hex_val(*b.get(i + 2)?)?;
            let l = hex_val(*b.get(i + 3)?)?;
            buf.push((h << 4 | l) as u8);
            Some(4)
        }
        d @ b'0'..=b'3' => {
            let o1 = *b.get(i + 2)?;
            let o2 = *b.get(i + 3)?;
            if !(b'0'..=b'7').contains(&o1) || !(b'0'..=b'7').contains(&o2) {
                return None;
            }
            buf.push((d - b'0') << 6 | (o1 - b'0') << 3 | (o2 - b'0'));
            Some(4)
        }
        b'/' => {
            buf.push(b'/');
            Some(2)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &str) -> (String, bool) {
        crate::normalize::apply(decode, s)
    }

    #[test]
    fn unicode_escapes() {
        assert_eq!(dec("\\u003cimg src=x\\u003e").0, "<img src=x>");
        assert_eq!(dec("\\u{3c}script\\u{00003E}").0, "<script>");
        assert_eq!(dec("\\ud83d\\ude00").0, "\u{1F600}");
        assert_eq!(dec("\\ud83d!").0, "\u{FFFD}!");
        assert_eq!(dec("\\u{110000}").0, "\u{FFFD}");
    }

    #[test]
    fn byte_escapes() {
        assert_eq!(dec("\\x3cscript\\x3E").0, "<script>");
        assert_eq!(dec("\\074svg\\076").0, "<svg>");
        assert_eq!(dec("\\xc0\\xae\\xc0\\xae\\xc0\\xaf").0, "../");
        assert_eq!(dec("\\xc3\\xa9").0, "\u{e9}");
        assert_eq!(dec("a\\x00b").0, "ab");
        assert_eq!(dec("http:\\/\\/evil").0, "http://evil");
    }

    #[test]
    fn other_backslashes_are_kept() {
        for s in ["..\\..\\boot.ini", "\\'", "\\n", "\\u12", "\\u{}", "\\u{12", "\\x4", "\\8", "\\09", "\\", "é\\é"] {
            assert_eq!(dec(s), (s.to_string(), false), "{s}");
        }
    }
}
