//! Encoding abuse: bytes written so that the WAF and the application decode a value
//! differently, whatever attack rides on it.
//!
//! - `protocol:null-byte`: a NUL (`%00`) inside a path or a value, with more text after it —
//!   C-backed file APIs stop at the NUL (`shell.php%00.jpg` passes an extension check and opens
//!   `shell.php`). Level 1 when the NUL sits between file-name characters in a short value (one
//!   or two NULs: binary blobs hold many); level 2 otherwise.
//! - `protocol:double-encoding`: a second percent layer over a byte that matters to an attack
//!   (`%2500` NUL, `%252e%252e` dots, `%253c` before a tag name, `%250d%250a` line breaks): an
//!   application that decodes twice sees what a single-decoding filter did not. Level 1; the
//!   same layer over `/`, `:`, `&`, `=` is ordinary in tracking URLs and is not read.
//! - `protocol:invalid-percent`: `%` followed by a non-hex byte *inside* a word, twice or more
//!   (`<s%cr%ipt>`, `un%io%n`): ASP and some decoders drop the stray `%`, joining the keyword
//!   again. Level 1 from two such splits in one word of a short single-line value; level 2 for
//!   one split, or in source code and prose (`printf("%c%s")`).

use crate::{Check, Finding, Input, Place, Trigger};

pub struct EncodingAbuse;

/// A value longer than this is a document, not a file name or a parameter.
const SHORT: usize = 256;

impl Check for EncodingAbuse {
    fn trigger(&self) -> Trigger {
        Trigger::any_of(b"%\0")
    }

    fn detector(&self) -> &'static str {
        "protocol"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        if matches!(input.place, Place::BodyRaw | Place::Base64 | Place::Overflow | Place::XmlDoctype) {
            return None;
        }
        // The whole field (each test is one pass): a cap would let padding hide the layer.
        let text = input.text.as_bytes();
        let at: Vec<usize> = marks(text).collect();
        let mut found = null_byte(text, &at).or_else(|| double_encoding(text, &at)).or_else(|| invalid_percent(text, &at))?;
        // A stray `%` in source code or prose is a format string (`"%c%s"`), not a split keyword.
        if found.0 == "protocol:invalid-percent" && (text.len() > SHORT || text.contains(&b'\n') || crate::prose::is_long_or_prose(text)) {
            found.1 = found.1.max(2);
        }
        (found.1 <= input.sensitivity).then_some(Finding { reason: found.0, score: 0.95, level: found.1 })
    }
}

type Found = Option<(&'static str, u8)>;

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/' | b'\\')
}

/// Where each `%` or NUL stands: every kind below starts at one, so the text is walked once
/// and each kind looks only at these positions (most values hold none or one).
fn marks(text: &[u8]) -> impl Iterator<Item = usize> + '_ {
    text.iter().enumerate().filter(|&(_, &c)| c == b'%' || c == 0).map(|(k, _)| k)
}

/// Positions of NULs, raw or as `%00`, with the byte before and after each.
fn null_byte(text: &[u8], at: &[usize]) -> Found {
    let mut count = 0usize;
    let mut named = false;
    for &k in at {
        let len = if text[k] == 0 {
            1
        } else if text.get(k + 1) == Some(&b'0') && text.get(k + 2) == Some(&b'0') {
            3
        } else {
            continue;
        };
        count += 1;
        let before = k.checked_sub(1).map(|p| text[p]);
        let after = text.get(k + len).copied();
        // Text must follow: a trailing NUL truncates nothing the attacker needs to hide.
        if before.is_some_and(is_name_byte) && after.is_some_and(|c| c == b'.' || c.is_ascii_alphanumeric() || c == b'/') {
            named = true;
        }
    }
    // Only `%` and NUL bytes: nothing is hidden behind them.
    if count == 0 || at.len() == text.len() {
        return None;
    }
    let trailing_text = at.iter().rev().find(|&&k| text[k] == 0).is_none_or(|&p| p + 1 < text.len());
    if named && count <= 2 && text.len() <= SHORT {
        Some(("protocol:null-byte", 1))
    } else if trailing_text && count <= 4 {
        Some(("protocol:null-byte", 2))
    } else {
        None
    }
}

/// `%25` followed by the hex of a byte that matters to an attack.
fn double_encoding(text: &[u8], at: &[usize]) -> Found {
    for &at in at.iter().filter(|&&k| text.get(k..k + 3) == Some(b"%25")) {
        let hex = text.get(at + 3..at + 5).map(|h| [h[0].to_ascii_lowercase(), h[1].to_ascii_lowercase()]);
        let next = text.get(at + 5).copied();
        let hit = match hex.as_ref().map(|h| &h[..]) {
            Some(b"00") => true,
            // `%253c` before a tag name, `/` or `!`.
            Some(b"3c") => next.is_some_and(|c| c.is_ascii_alphabetic() || c == b'/' || c == b'!'),
            // Two dots: `%252e%252e`.
            Some(b"2e") => text[at + 5..].len() >= 5 && text[at + 5..at + 10].eq_ignore_ascii_case(b"%252e"),
            Some(b"0d") | Some(b"0a") => text[at + 5..].len() >= 5 && text[at + 5..at + 8].eq_ignore_ascii_case(b"%25"),
            _ => false,
        };
        if hit {
            return Some(("protocol:double-encoding", 1));
        }
    }
    None
}

/// `%` + a non-hex byte between letters: a stray escape splitting a word.
fn invalid_percent(text: &[u8], at: &[usize]) -> Found {
    let mut best = 0usize;
    let mut in_word = 0usize;
    let mut last: Option<usize> = None;
    for &k in at.iter().filter(|&&k| text[k] == b'%') {
        // Any other byte that is neither a letter, a digit nor `<` since the last `%` ends the
        // word (read only while a split is counted: otherwise there is nothing to end).
        if in_word > 0 {
            let from = last.map_or(0, |l| l + 1);
            if text[from..k].iter().any(|&c| !c.is_ascii_alphanumeric() && c != b'<') {
                in_word = 0;
            }
        }
        last = Some(k);
        let prev = k.checked_sub(1).map(|p| text[p]);
        let a = text.get(k + 1).copied();
        let b = text.get(k + 2).copied();
        let valid = a.is_some_and(|x| x.is_ascii_hexdigit()) && b.is_some_and(|x| x.is_ascii_hexdigit());
        let split = !valid && prev.is_some_and(|p| p.is_ascii_alphabetic() || p == b'<') && a.is_some_and(|x| x.is_ascii_alphabetic());
        if split {
            in_word += 1;
            best = best.max(in_word);
        }
    }
    match best {
        0 => None,
        1 => Some(("protocol:invalid-percent", 2)),
        _ => Some(("protocol:invalid-percent", 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(value: &str) -> Option<(&'static str, u8)> {
        let mut input = Input::new(value);
        input.sensitivity = 4;
        EncodingAbuse.inspect(&input).map(|f| (f.reason, f.level))
    }

    #[test]
    fn abuse_and_ordinary_percent() {
        assert_eq!(find("shell.php%00.jpg"), Some(("protocol:null-byte", 1)));
        assert_eq!(find("../../etc/passwd\u{0}.png"), Some(("protocol:null-byte", 1)));
        assert_eq!(find("%252e%252e%252fetc"), Some(("protocol:double-encoding", 1)));
        assert_eq!(find("%253Cscript%253E"), Some(("protocol:double-encoding", 1)));
        assert_eq!(find("<s%cr%ipt>"), Some(("protocol:invalid-percent", 1)));
        assert_eq!(find("int main() {\n  printf(\"Value:%c%s\", c, s);\n}"), Some(("protocol:invalid-percent", 2)));
        for v in ["50% off", "100%", "https%253A%252F%252Fexample.com", "a%20b", "Hello %s, you have %d messages", "caf%E9"] {
            assert_eq!(find(v), None, "{v}");
        }
    }

    /// Splits count within one word only: a blank, a NUL or punctuation between two ends it.
    #[test]
    fn splits_are_counted_per_word() {
        let cases: [(&str, Option<(&str, u8)>); 7] = [
            ("s%cr%ipt", Some(("protocol:invalid-percent", 1))),
            ("s%cr<%ipt", Some(("protocol:invalid-percent", 1))),
            ("s%cr %ipt", Some(("protocol:invalid-percent", 2))),
            ("s%cr-%ipt", Some(("protocol:invalid-percent", 2))),
            ("s%cr\u{0}%ipt", Some(("protocol:null-byte", 2))),
            ("%%%", None),
            ("\u{0}%\u{0}", None),
        ];
        for (text, expected) in cases {
            assert_eq!(find(text), expected, "{text:?}");
        }
    }

    /// An abuse after 100 KiB of benign text is read; a long text moves only the kinds whose
    /// level depends on length.
    #[test]
    fn padding_hides_no_abuse() {
        let pad = "a".repeat(100 * 1024);
        assert_eq!(find(&format!("{pad}/%252e%252e%252fetc")), Some(("protocol:double-encoding", 1)));
        assert_eq!(find(&format!("{pad}/shell.php%00.jpg")), Some(("protocol:null-byte", 2)));
        assert_eq!(find(&format!("{pad} 50% off")), None);
    }
}
