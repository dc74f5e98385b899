//! Compatibility forms of ASCII syntax characters folded to ASCII: full-width forms
//! (`＜`, `＝`, `（`, U+FF01–U+FF5E) and the small and vertical presentation forms of
//! brackets and operators (`︵`, `﹤`, `﹦`). Unicode NFKC normalisation and Windows "best fit"
//! code-page conversion both turn them into `<`, `=`, `(`, so a back end that normalises
//! receives markup and code a WAF reading the raw text never saw (`＜svg onload＝alert︵1)＞`).

use crate::{ByteSet, Finding, Input};

/// `inspect` on the input and, when that finds nothing at level 1 and the text holds
/// compatibility forms, on the folded text too: the lower level wins.
pub fn with_folded(input: &Input<'_>, inspect: impl Fn(&Input<'_>) -> Option<Finding>) -> Option<Finding> {
    let found = inspect(input);
    if found.is_some_and(|f| f.level == 1) {
        return found;
    }
    // The forms may sit under percent layers (`%EF%BC%9C`): the decoded view of a field
    // holds them plain, but a check's own plain text may not.
    let plain = if input.bytes.contains(0xef) {
        input.text.to_string()
    } else if input.bytes.contains(b'%') && has_encoded_lead(input.text.as_bytes()) {
        crate::js_lex::percent_deep(input.text)
    } else {
        return found;
    };
    let Some(folded) = fold(&plain) else { return found };
    let again = inspect(&Input { text: &folded, bytes: ByteSet::of(&folded), ..*input });
    lower_level(found, again)
}

/// The finding of the lower level (the first on a tie), of two readings of one input.
pub fn lower_level(first: Option<Finding>, second: Option<Finding>) -> Option<Finding> {
    match (first, second) {
        (Some(a), Some(b)) => Some(if b.level < a.level { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// `%EF` (or `%25EF`...): the percent-encoded lead byte of a compatibility form.
fn has_encoded_lead(b: &[u8]) -> bool {
    b.windows(3).any(|w| w[0] == b'%' && w[1..].eq_ignore_ascii_case(b"ef"))
}

/// `text` with every compatibility form of an ASCII character folded, or None when it has
/// none (the common case: one byte test per byte of text with no `0xEF` lead).
pub fn fold(text: &str) -> Option<String> {
    if !text.as_bytes().contains(&0xef) {
        return None;
    }
    let mut changed = false;
    let folded: String = text
        .chars()
        .map(|c| match ascii_of(c) {
            Some(a) => {
                changed = true;
                a
            }
            None => c,
        })
        .collect();
    changed.then_some(folded)
}

/// The ASCII character a compatibility form stands for.
fn ascii_of(c: char) -> Option<char> {
    let code = c as u32;
    let ascii = match code {
        // Full-width ASCII: `！` .. `～`.
        0xff01..=0xff5e => code - 0xff01 + 0x21,
        0x3000 => 0x20,
        // Vertical presentation forms (NFKC: `<vertical>`).
        0xfe10 => 0x2c,
        0xfe13 => 0x3a,
        0xfe14 => 0x3b,
        0xfe15 => 0x21,
        0xfe16 => 0x3f,
        0xfe35 => 0x28,
        0xfe36 => 0x29,
        0xfe37 => 0x7b,
        0xfe38 => 0x7d,
        0xfe47 => 0x5b,
        0xfe48 => 0x5d,
        // Small forms (NFKC: `<small>`).
        0xfe50 => 0x2c,
        0xfe52 => 0x2e,
        0xfe54 => 0x3b,
        0xfe55 => 0x3a,
        0xfe56 => 0x3f,
        0xfe57 => 0x21,
        0xfe59 => 0x28,
        0xfe5a => 0x29,
        0xfe5b => 0x7b,
        0xfe5c => 0x7d,
        0xfe5f => 0x23,
        0xfe60 => 0x26,
        0xfe61 => 0x2a,
        0xfe62 => 0x2b,
        0xfe63 => 0x2d,
        0xfe64 => 0x3c,
        0xfe65 => 0x3e,
        0xfe66 => 0x3d,
        0xfe68 => 0x5c,
        0xfe69 => 0x24,
        0xfe6a => 0x25,
        0xfe6b => 0x40,
        _ => return None,
    };
    char::from_u32(ascii)
}

#[cfg(test)]
mod tests {
    use super::fold;

    #[test]
    fn folds_compatibility_forms() {
        assert_eq!(fold("＜marquee loop＝1 onfinish＝alert︵1)>x").as_deref(), Some("<marquee loop=1 onfinish=alert(1)>x"));
        assert_eq!(fold("﹤svg onload﹦alert﹙1﹚﹥").as_deref(), Some("<svg onload=alert(1)>"));
        assert_eq!(fold("plain <b>ascii</b>"), None);
        assert_eq!(fold("日本語のテキスト"), None, "no compatibility form: nothing folded");
    }
}
