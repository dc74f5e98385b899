//! Fullwidth ASCII (U+FF01–U+FF5E) and the ideographic space (U+3000) → ASCII, for the views
//! the attack detectors read. Applications that NFKC-normalise input, and Windows' "best fit"
//! conversion of Unicode to an ANSI code page, turn `＇　ＵＮＩＯＮ　ＳＥＬＥＣＴ` into SQL after
//! the WAF has looked; the detectors must see what they see. Only this block is folded here
//! (it is what both conversions map one-to-one to ASCII); styled letters and homoglyphs are
//! for the prompt-injection reading (`confusables.rs`).
//!
//! Chinese and Japanese text uses fullwidth punctuation routinely (`（`, `！`, `：`): folded,
//! it reads as the same prose with ASCII punctuation, which the detectors already pass.

/// Appends `input` with fullwidth forms folded; returns whether anything was folded.
pub fn fold(input: &str, out: &mut String) -> bool {
    // Every fullwidth form starts with byte 0xEF (U+F000–U+FFFF): most text skips at once.
    if memchr::memchr(0xEF, input.as_bytes()).is_none() {
        out.push_str(input);
        return false;
    }
    let mut changed = false;
    for c in input.chars() {
        match c {
            '\u{FF01}'..='\u{FF5E}' => {
                out.push(char::from((c as u32 - 0xFF01 + 0x21) as u8));
                changed = true;
            }
            '\u{3000}' => {
                out.push(' ');
                changed = true;
            }
            _ => out.push(c),
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    fn fold(s: &str) -> (String, bool) {
        crate::normalize::apply(super::fold, s)
    }

    #[test]
    fn fullwidth_ascii_becomes_ascii() {
        assert_eq!(fold("１＇　ＵＮＩＯＮ　ＳＥＬＥＣＴ　ｐａｓｓ－－"), ("1' UNION SELECT pass--".to_string(), true));
        assert_eq!(fold("＜ｓｃｒｉｐｔ＞"), ("<script>".to_string(), true));
    }

    #[test]
    fn other_text_is_untouched() {
        assert_eq!(fold("plain ascii"), ("plain ascii".to_string(), false));
        assert_eq!(fold("日本語のテキスト"), ("日本語のテキスト".to_string(), false));
        assert_eq!(fold("￥￠"), ("￥￠".to_string(), false), "fullwidth signs outside the ASCII block stay");
    }
}
