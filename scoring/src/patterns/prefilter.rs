//! Prefiltered rules: the shared scan looks for a cheap part of a rule, and each field that
//! part matches in is confirmed by the whole rule, scanned over that one field.
//!
//! Some patterns are costly in one multi-pattern scan whatever the text holds: a line-start
//! window (`^[^\n]{0,N}REST`, "a value that begins like an attack") makes Hyperscan follow
//! every field start for N bytes (1 µs per 1 KB view for `path-traversal:encoded-dotdot-chain`
//! alone, stop 30), and an unbounded gap after a short common word (`\b(?:or|and)\s*…`) keeps
//! an automaton running through prose. The scanned part is always a run of the pattern's
//! top-level factors (pieces whose concatenation is the pattern), so every match of the rule
//! holds a match of that part in the same field: a field where the part never matches cannot
//! match the rule, and the confirmation makes the rest exact. What a rule matches is
//! unchanged; only fields that hold the cheap part pay for a second, short scan.
//!
//! Windows are found here; other rules name their part in the rule file (`prefilter`), and
//! the loader refuses a prefilter that is not a run of factors.

use super::field_local::{class_end, escape_len};

/// The pattern cut into top-level factors, each an atom with its quantifier; None when the
/// pattern has a top-level alternation (no factor is common to every branch) or syntax this
/// reader does not follow (`\Q…\E`).
pub fn top_level_factors(pattern: &str) -> Option<Vec<&str>> {
    let chars: Vec<(usize, char)> = pattern.char_indices().collect();
    let plain: Vec<char> = chars.iter().map(|&(_, c)| c).collect();
    let byte_at = |i: usize| chars.get(i).map_or(pattern.len(), |&(b, _)| b);
    let mut factors = Vec::new();
    let mut i = 0;
    while i < plain.len() {
        let start = i;
        i = match plain[i] {
            '|' | ')' => return None,
            '\\' if plain.get(i + 1) == Some(&'Q') => return None,
            '\\' if matches!(plain.get(i + 1), Some('p' | 'P')) && plain.get(i + 2) == Some(&'{') => {
                i + plain[i..].iter().position(|&c| c == '}')? + 1
            }
            '\\' => i + escape_len(&plain, i).0,
            '[' => class_end(&plain, i).0,
            '(' => group_end(&plain, i)?,
            _ => i + 1,
        };
        i = quantifier_end(&plain, i);
        factors.push(&pattern[byte_at(start)..byte_at(i)]);
    }
    Some(factors)
}

/// Index one past the group opening at `open`, or None when it never closes.
fn group_end(chars: &[char], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += escape_len(chars, i).0,
            '[' => i = class_end(chars, i).0,
            '(' => {
                depth += 1;
                i += 1;
            }
            ')' => {
                depth -= 1;
                i += 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// Index one past the quantifier (and its lazy or possessive mark) at `i`, if any.
fn quantifier_end(chars: &[char], i: usize) -> usize {
    let after = match chars.get(i) {
        Some('*' | '+' | '?') => i + 1,
        Some('{') => {
            let close = chars[i..].iter().position(|&c| c == '}').map(|p| i + p);
            match close {
                Some(end) if end > i + 1 && chars[i + 1..end].iter().all(|c| c.is_ascii_digit() || *c == ',') && chars[i + 1] != ',' => {
                    end + 1
                }
                _ => return i,
            }
        }
        _ => return i,
    };
    match chars.get(after) {
        Some('?' | '+') => after + 1,
        _ => after,
    }
}

/// Whether `part` is a run of consecutive top-level factors of `pattern`.
pub fn is_factor_run(pattern: &str, part: &str) -> bool {
    let Some(factors) = top_level_factors(pattern) else { return false };
    (0..factors.len()).any(|from| {
        let mut joined = String::new();
        factors[from..].iter().any(|f| {
            joined.push_str(f);
            joined == part
        })
    })
}

/// A line-start window: `[^\n]{0,N}` (lazy or not), `(?:[^\n]{0,N}?\s)?` or `\s*`.
fn is_window(factor: &str) -> bool {
    let bounded = |f: &str| {
        f.strip_prefix(r"[^\n]{0,")
            .and_then(|r| r.strip_suffix('}'))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    factor == r"\s*"
        || bounded(factor)
        || factor.strip_suffix('?').is_some_and(bounded)
        || factor.strip_prefix("(?:").and_then(|f| f.strip_suffix(r"?\s)?")).is_some_and(bounded)
}

/// The part of `pattern` after its line-start window (`^` then a window), when that part is
/// worth scanning alone; None for every other pattern.
pub fn window_rest(pattern: &str) -> Option<&str> {
    let factors = top_level_factors(pattern)?;
    if factors.len() < 3 || factors[0] != "^" || !is_window(factors[1]) {
        return None;
    }
    let rest_start = factors[0].len() + factors[1].len();
    // A rest that is only an anchor would match at every field end.
    let rest = &pattern[rest_start..];
    (!matches!(rest, "$" | r"\s*$")).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_top_level_factors() {
        assert_eq!(top_level_factors(r"^[^\n]{0,16}(?:\.\./|x)+").unwrap(), vec!["^", r"[^\n]{0,16}", r"(?:\.\./|x)+"]);
        assert_eq!(
            top_level_factors(r"a{2,}?\x{41}[]|)](b(c))\p{L}{3}").unwrap(),
            vec!["a{2,}?", r"\x{41}", "[]|)]", "(b(c))", r"\p{L}{3}"]
        );
        assert_eq!(top_level_factors(r"x{,3}").unwrap(), vec!["x", "{", ",", "3", "}"], "not a quantifier: literal braces");
        assert_eq!(top_level_factors("a|b"), None);
        assert_eq!(top_level_factors("(a"), None);
        assert_eq!(top_level_factors(r"\Qa|b\E"), None);
    }

    #[test]
    fn a_prefilter_must_be_a_run_of_factors() {
        let p = r"(?:\b(?:or|and)|&&)\s*(?:not\s+)?\w{1,32}\s*(?:like|in\s*\()";
        assert!(is_factor_run(p, r"(?:like|in\s*\()"));
        assert!(is_factor_run(p, r"\w{1,32}\s*(?:like|in\s*\()"));
        assert!(!is_factor_run(p, r"like"), "inside a group: a branch, not a factor");
        assert!(!is_factor_run(p, r"\s*(?:like"), "cuts a group");
        assert!(!is_factor_run("a|like", "like"), "top-level alternation");
    }

    #[test]
    fn finds_rest_after_the_known_windows_only() {
        assert_eq!(window_rest(r"^[^\n]{0,16}(?:\.\./)"), Some(r"(?:\.\./)"));
        assert_eq!(window_rest(r"^[^\n]{0,60}?\s-(?:exec)"), Some(r"\s-(?:exec)"));
        assert_eq!(window_rest(r"^(?:[^\n]{0,40}?\s)?-{1,2}x"), Some(r"-{1,2}x"));
        assert_eq!(window_rest(r"^\s*\**(?:[()|&!])+\s*$"), Some(r"\**(?:[()|&!])+\s*$"));
        assert_eq!(window_rest(r"^\s*$"), None);
        assert_eq!(window_rest(r"^[^\n]{0,}x"), None, "no bound");
        assert_eq!(window_rest(r"^[^\n]{0,16}"), None, "nothing after the window");
        assert_eq!(window_rest(r"^[^\n]{0,16}x|y"), None, "top-level alternation");
        assert_eq!(window_rest(r"^\d+x"), None);
        assert_eq!(window_rest(r"x^[^\n]{0,16}y"), None);
    }
}
