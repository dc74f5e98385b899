//! Comment removal and whitespace collapsing.
//!
//! - `/* ... */` becomes a space (unterminated: to the end); MySQL executable comments
//!   `/*!50000 ... */` keep their content (the server runs it), only the markers become spaces.
//! - `<!-- ... -->` is removed without a trace (`<scr<!-- -->ipt>` → `<script>`); unterminated:
//!   to the end.
//! - What a comment held is not lost: it follows the collapsed text, after a space. A comment
//!   marker is only a comment where the reader is a parser of that language; an attacker
//!   writes it where it is data (`<!--"><img onerror=...>-->` in an HTML attribute value,
//!   `x/*' or 1=1-- */` in an SQL string literal) and the content is live. The plain view
//!   shows that content only when nothing was encoded; this keeps it visible after decoding.
//! - Runs of whitespace (space, `\t \n \r \v \f`, other control bytes, NBSP and the other
//!   Unicode spaces) become one space; zero-width characters are removed.
//! - Case is kept: the pattern database matches caseless except for rules marked
//!   `case_sensitive` (serialization magic such as `rO0AB`), which need the original case,
//!   and the SQLi featurizer folds case itself.

/// Appends the collapsed text, then what its comments held, to `out`; returns whether it
/// differs from `input`.
pub fn collapse(input: &str, out: &mut String) -> bool {
    collapse_with(input, out, Contents::Appended)
}

/// Appends the collapsed text with its comments' contents gone (the SQL reading: what the
/// server parses when the markers are comments; the decoded view holds the other reading).
pub fn collapse_dropping_comments(input: &str, out: &mut String) -> bool {
    collapse_with(input, out, Contents::Dropped)
}

#[derive(Clone, Copy, PartialEq)]
enum Contents {
    Appended,
    Dropped,
}

fn collapse_with(input: &str, out: &mut String, contents: Contents) -> bool {
    let b = input.as_bytes();
    let n = b.len();
    let mut o: Vec<u8> = Vec::with_capacity(n);
    let mut pending_space = false;
    let mut exec_comment = false;
    // The removed comments' contents, in order (appended after the text).
    let mut removed: Vec<&[u8]> = Vec::new();
    let mut i = 0;
    while i < n {
        let c = b[i];
        let next = b.get(i + 1).copied();
        match c {
            b'/' if next == Some(b'*') => {
                pending_space = true;
                if b.get(i + 2) == Some(&b'!') {
                    let mut j = i + 3;
                    while j < n && j < i + 9 && b[j].is_ascii_digit() {
                        j += 1;
                    }
                    exec_comment = true;
                    i = j;
                } else {
                    let (content_end, next_i) = match memchr::memmem::find(&b[i + 2..], b"*/") {
                        Some(k) => (i + 2 + k, i + 2 + k + 2),
                        None => (n, n),
                    };
                    removed.push(&b[i + 2..content_end]);
                    i = next_i;
                }
            }
            b'*' if exec_comment && next == Some(b'/') => {
                exec_comment = false;
                pending_space = true;
                i += 2;
            }
            b'<' if b.get(i + 1..i + 4) == Some(b"!--") => {
                let (content_end, next_i) = match memchr::memmem::find(&b[i + 4..], b"-->") {
                    Some(k) => (i + 4 + k, i + 4 + k + 3),
                    None => (n, n),
                };
                removed.push(&b[i + 4..content_end]);
                i = next_i;
            }
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => {
                pending_space = true;
                i += 1;
            }
            // Other control bytes separate keywords for MSSQL (`union%01select`) and mean
            // nothing else in text: whitespace, like `\t`.
            0x01..=0x08 | 0x0e..=0x1f | 0x7f => {
                pending_space = true;
                i += 1;
            }
            0xC2 | 0xE2 | 0xE3 if odd_space_len(&b[i..]) > 0 => {
                pending_space = true;
                i += odd_space_len(&b[i..]);
            }
            // Zero-width characters vanish where an application strips them (`on\u{200b}error`).
            0xC2 | 0xE2 | 0xEF if invisible_len(&b[i..]) > 0 => i += invisible_len(&b[i..]),
            _ => {
                if pending_space {
                    o.push(b' ');
                    pending_space = false;
                }
                o.push(c);
                i += 1;
            }
        }
    }
    if pending_space {
        o.push(b' ');
    }
    if contents == Contents::Appended {
        append_contents(&removed, &mut o);
    }
    let changed = o.as_slice() != b;
    // Only ASCII-delimited ranges and whole Unicode characters were removed: `o` is valid UTF-8.
    match String::from_utf8(o) {
        Ok(s) => out.push_str(&s),
        Err(e) => out.push_str(&String::from_utf8_lossy(e.as_bytes())),
    }
    changed
}
/// Length of the Unicode space at the start of `b`, 0 when there is none: NBSP (MySQL's
/// latin-1 whitespace), NEL, the typographic spaces U+2000..U+200A, the line and paragraph
/// separators, the narrow and medium spaces and the ideographic space. An application that
/// normalises text turns each into a space between SQL keywords or shell words.
pub fn odd_space_len(b: &[u8]) -> usize {
    match b {
        [0xC2, 0xA0 | 0x85, ..] => 2,
        [0xE2, 0x80, 0x80..=0x8A | 0xA8 | 0xA9 | 0xAF, ..] | [0xE2, 0x81, 0x9F, ..] | [0xE3, 0x80, 0x80, ..] => 3,
        _ => 0,
    }
}

/// Length of the zero-width character at the start of `b`, 0 when there is none: the soft
/// hyphen, U+200B..U+200F, the word joiner and invisible operators U+2060..U+2064, and the
/// BOM. [`collapse`] removes them.
pub fn invisible_len(b: &[u8]) -> usize {
    match b {
        [0xC2, 0xAD, ..] => 2,
        [0xE2, 0x80, 0x8B..=0x8F, ..] | [0xE2, 0x81, 0xA0..=0xA4, ..] | [0xEF, 0xBB, 0xBF, ..] => 3,
        _ => 0,
    }
}

/// Whether `text` holds spacing that [`collapse`] rewrites but the plain view keeps: control
/// bytes other than `\t \n \v \f \r`, the Unicode spaces of [`odd_space_len`] and the
/// zero-width characters of [`invisible_len`]. `bytes` is the text's byte set, which rejects
/// nearly every field at once.
pub fn has_odd_spacing(text: &str, bytes: &syntax::ByteSet) -> bool {
    // A set, not a list: this runs on every field, and one set intersection is four ANDs.
    const LEADS: syntax::ByteSet = syntax::ByteSet::of_bytes(
        b"\x01\x02\x03\x04\x05\x06\x07\x08\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f\xc2\xe2\xe3\xef",
    );
    if !bytes.intersects(&LEADS) {
        return false;
    }
    let b = text.as_bytes();
    b.iter().enumerate().any(|(i, &c)| {
        matches!(c, 0x01..=0x08 | 0x0e..=0x1f | 0x7f) || c >= 0xC2 && (odd_space_len(&b[i..]) > 0 || invisible_len(&b[i..]) > 0)
    })
}

/// Appends the removed comments' contents after one space, whitespace runs collapsed and no
/// comment read inside them again (one pass: linear however the markers nest). Empty
/// comments (`union/**/select`) add nothing.
fn append_contents(removed: &[&[u8]], o: &mut Vec<u8>) {
    let mut pending_space = true;
    for content in removed {
        for &c in content.iter() {
            if matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
                pending_space = true;
                continue;
            }
            if pending_space {
                if o.last() != Some(&b' ') {
                    o.push(b' ');
                }
                pending_space = false;
            }
            o.push(c);
        }
        pending_space = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(s: &str) -> (String, bool) {
        crate::normalize::apply(collapse, s)
    }

    #[test]
    fn sql_comments_and_case() {
        assert_eq!(col("SeLeCt/**/uNiOn").0, "SeLeCt uNiOn");
        assert_eq!(col("union/*foo*/ /**/select").0, "union select foo");
        assert_eq!(col("/*!50000UNION*/ /*!SELECT*/").0, " UNION SELECT ");
        assert_eq!(col("1 /* unterminated union select").0, "1 unterminated union select");
        assert_eq!(col("x/*' or 1=1-- */").0, "x ' or 1=1--");
    }

    #[test]
    fn html_comments_removed_entirely() {
        assert_eq!(col("<scr<!-- -->ipt>").0, "<script>");
        assert_eq!(col("<sc<!--x-->ri<!---->pt>").0, "<script> x");
        assert_eq!(col("a<!-- open").0, "a open");
        assert_eq!(col("<!--\"><img src=x onerror=alert(1)>-->").0, " \"><img src=x onerror=alert(1)>");
    }

    #[test]
    fn whitespace_runs_collapse() {
        assert_eq!(col("a \t\r\n\x0b\x0cb\u{a0}\u{a0}c").0, "a b c");
        assert_eq!(col("already clean"), ("already clean".to_string(), false));
        assert_eq!(col("é  É"), ("é É".to_string(), true));
        assert_eq!(col(""), (String::new(), false));
        assert_eq!(col("/*"), (" ".to_string(), true));
        assert_eq!(col("<!--"), (String::new(), true));
    }

    /// Red-team pass 4: control bytes and Unicode spaces between SQL keywords, zero-width
    /// characters inside them; other non-ASCII text is kept as it is.
    #[test]
    fn odd_spacing_is_read_as_spaces_or_removed() {
        assert_eq!(col("1\u{1}UNION\u{1c}SELECT\u{85}a\u{3000}b\u{2003}c").0, "1 UNION SELECT a b c");
        assert_eq!(col("on\u{200b}error=al\u{ad}ert\u{feff}(1)").0, "onerror=alert(1)");
        assert_eq!(col("naïve ‘quotes’ 日本語"), ("naïve ‘quotes’ 日本語".to_string(), false));
        let spaced = |t: &str| has_odd_spacing(t, &syntax::ByteSet::of(t));
        assert!(spaced("1\u{a0}UNION") && spaced("a\u{2}b") && spaced("on\u{200b}error") && spaced("日本\u{3000}語"));
        assert!(!spaced("naïve ‘quotes’ 日本語") && !spaced("plain text"));
    }
}
