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
//! - Runs of whitespace (space, `\t \n \r \v \f`, NBSP) become one space.
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
            0xC2 if next == Some(0xA0) => {
                pending_space = true;
                i += 2;
            }
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
    // Only ASCII-delimited ranges and whole NBSPs were removed, so `o` is valid UTF-8.
    match String::from_utf8(o) {
        Ok(s) => out.push_str(&s),
        Err(e) => out.push_str(&String::from_utf8_lossy(e.as_bytes())),
    }
    changed
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
}
