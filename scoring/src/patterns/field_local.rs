//! Makes a rule's pattern field-local. Views join fields with a NUL separator so one scan
//! covers a whole request; a pattern must never match across that separator, or a benign
//! path followed by a benign value could combine into a false positive.
//!
//! Rewrites, outside character classes: `.` → `[^\n\x00]`, `\S` `\W` `\D` `\H` `\V` `\N` → a
//! class that also excludes NUL; `^` and `$` → start / end of the *field* (`(?:^|\x00)`,
//! `(?:\x00|$)`: the separator counts as the field's edge); inside negated classes: `\x00` is
//! added. A positive NUL
//! (`\x00`, `\0`, `\x{0}`) is kept, and the rule is reported as needing a start-of-match
//! check: the stage compiles it with SOM_LEFTMOST and drops matches that span fields.

/// The rewritten pattern, and whether the rule can still match a NUL byte on purpose.
pub fn make_field_local(pattern: &str) -> (String, bool) {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut matches_nul = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if i + 1 < chars.len() => {
                let next = chars[i + 1];
                let (esc_len, is_nul) = escape_len(&chars, i);
                match next {
                    'S' => out.push_str(r"[^\s\x00]"),
                    'W' => out.push_str(r"[^\w\x00]"),
                    'D' => out.push_str(r"[^\d\x00]"),
                    'H' => out.push_str(r"[^\h\x00]"),
                    'V' => out.push_str(r"[^\v\x00]"),
                    'N' => out.push_str(r"[^\n\x00]"),
                    _ => {
                        matches_nul |= is_nul;
                        out.extend(&chars[i..i + esc_len]);
                    }
                }
                i += esc_len;
            }
            '.' => {
                out.push_str(r"[^\n\x00]");
                i += 1;
            }
            '^' => {
                out.push_str(r"(?:^|\x00)");
                i += 1;
            }
            '$' => {
                out.push_str(r"(?:\x00|$)");
                i += 1;
            }
            '[' => {
                let (end, negated, class_has_nul, body) = class_end(&chars, i);
                if negated {
                    // At the start of the body: at the end, `\x00` could become a range end.
                    out.extend(&chars[i..body]);
                    out.push_str(r"\x00");
                    out.extend(&chars[body..end]);
                } else {
                    matches_nul |= class_has_nul;
                    out.extend(&chars[i..end]);
                }
                i = end;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    (out, matches_nul)
}

/// Length in chars of the escape starting at `i` (a backslash), and whether it denotes NUL.
pub(super) fn escape_len(chars: &[char], i: usize) -> (usize, bool) {
    let next = chars.get(i + 1).copied().unwrap_or('\\');
    match next {
        'x' => {
            if chars.get(i + 2) == Some(&'{') {
                let close = chars[i + 2..].iter().position(|&c| c == '}').map(|p| i + 2 + p);
                match close {
                    Some(end) => {
                        let digits: String = chars[i + 3..end].iter().collect();
                        (end + 1 - i, u32::from_str_radix(&digits, 16) == Ok(0))
                    }
                    None => (2, false),
                }
            } else {
                let digits: String = chars[i + 2..chars.len().min(i + 4)].iter().take_while(|c| c.is_ascii_hexdigit()).collect();
                (2 + digits.len(), !digits.is_empty() && u32::from_str_radix(&digits, 16) == Ok(0))
            }
        }
        '0' => {
            let digits = chars[i + 1..chars.len().min(i + 4)].iter().take_while(|c| ('0'..='7').contains(c)).count();
            let value: String = chars[i + 1..i + 1 + digits].iter().collect();
            (1 + digits, u32::from_str_radix(&value, 8) == Ok(0))
        }
        _ => (2, false),
    }
}

/// Index one past the class starting at `start` (a `[`), whether it is negated, whether a
/// positive class names NUL, and where its body starts (after `[^` and a literal `]`).
pub(super) fn class_end(chars: &[char], start: usize) -> (usize, bool, bool, usize) {
    let mut i = start + 1;
    let negated = chars.get(i) == Some(&'^');
    if negated {
        i += 1;
    }
    // A `]` right after `[` or `[^` is a literal.
    if chars.get(i) == Some(&']') {
        i += 1;
    }
    let body = i;
    let mut has_nul = false;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                let (len, is_nul) = escape_len(chars, i);
                has_nul |= is_nul;
                i += len;
            }
            '[' if chars.get(i + 1) == Some(&':') => {
                // POSIX class `[:alpha:]`.
                match chars[i + 2..].windows(2).position(|w| w == [':', ']']) {
                    Some(p) => i = i + 2 + p + 2,
                    None => i += 1,
                }
            }
            ']' => return (i + 1, negated, has_nul, body),
            _ => i += 1,
        }
    }
    // Unterminated: leave it to Hyperscan to reject.
    (chars.len(), false, has_nul, body)
}

#[cfg(test)]
mod tests {
    use super::make_field_local;

    #[test]
    fn dots_negations_and_shorthands_exclude_nul() {
        assert_eq!(make_field_local(r"<script.{0,9}>").0, r"<script[^\n\x00]{0,9}>");
        assert_eq!(make_field_local(r"on\w+=[^>]+").0, r"on\w+=[^\x00>]+");
        assert_eq!(make_field_local(r"[^\w*.~-]").0, r"[^\x00\w*.~-]");
        assert_eq!(make_field_local(r"\S+\s").0, r"[^\s\x00]+\s");
        assert_eq!(make_field_local(r"a\.b[.]").0, r"a\.b[.]");
        assert_eq!(make_field_local(r"[^]x]").0, r"[^]\x00x]");
        assert_eq!(make_field_local(r"[[:alpha:]]+").0, r"[[:alpha:]]+");
        assert_eq!(make_field_local(r"[^[:space:]]").0, r"[^\x00[:space:]]");
    }

    #[test]
    fn anchors_mean_the_field_edges() {
        assert_eq!(make_field_local(r"--\s*$").0, r"--\s*(?:\x00|$)");
        assert_eq!(make_field_local(r"^\d+ or").0, r"(?:^|\x00)\d+ or");
        assert_eq!(make_field_local(r"\$\{[^$]").0, r"\$\{[^\x00$]");
        // The separator used as an edge is not a NUL match: no start-of-match check needed.
        assert!(!make_field_local(r"--\s*$").1);
    }

    #[test]
    fn positive_nul_is_reported() {
        assert!(make_field_local(r"\.php\x00").1);
        assert!(make_field_local(r"\.php(%00|\0)").1);
        assert!(make_field_local(r"\.php[\x00\s]").1);
        assert!(make_field_local(r"\x{0}").1);
        assert!(!make_field_local(r"[^>\x00]+").1);
        assert!(!make_field_local(r"\x0a\x20").1);
    }

    #[test]
    fn rewritten_patterns_compile() {
        use hyperscan::prelude::*;
        for p in [r"<script.{0,9}>", r"[^]x]", r"\S+@\W", r"[^[:space:]]+", r"\.php\x00", r"[^\w*.~-]/"] {
            let (rewritten, _) = make_field_local(p);
            let db: Result<BlockDatabase, _> = Pattern::new(rewritten.clone()).unwrap().build();
            assert!(db.is_ok(), "{p} → {rewritten}");
        }
    }
}
