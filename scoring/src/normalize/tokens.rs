//! Whitespace-separated tokens, as `str::split_whitespace` gives them, found by a byte scan on
//! ASCII text. The prompt readings (`word_noise`, `glued`, `leet`) split every prose field of
//! every request into tokens, and decoding each character to ask `char::is_whitespace` was most
//! of their cost; most fields are ASCII, where whitespace is a byte test.

/// The tokens of `text` between whitespace, exactly those of `text.split_whitespace()`.
pub fn whitespace_tokens(text: &str) -> Tokens<'_> {
    if text.is_ascii() {
        Tokens::Ascii { text, at: 0 }
    } else {
        Tokens::Unicode(text.split_whitespace())
    }
}

pub enum Tokens<'a> {
    /// An ASCII text and how far it has been read.
    Ascii {
        text: &'a str,
        at: usize,
    },
    Unicode(std::str::SplitWhitespace<'a>),
}

/// `char::is_whitespace` on an ASCII byte (vertical tab and form feed included).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        match self {
            Tokens::Unicode(tokens) => tokens.next(),
            Tokens::Ascii { text, at } => {
                let bytes = text.as_bytes();
                let start = *at + bytes[*at..].iter().position(|&b| !is_space(b))?;
                let end = bytes[start..].iter().position(|&b| is_space(b)).map_or(bytes.len(), |n| start + n);
                *at = end;
                Some(&text[start..end])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_those_of_split_whitespace() {
        let pieces = ["a", "bc", " ", "\t", "\n", "\r", "\u{b}", "\u{c}", "\u{a0}", "\u{3000}", "é", ",", "\u{85}"];
        let mut seed = 11u64;
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..(seed % 12) as usize {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                text.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            let fast: Vec<&str> = whitespace_tokens(&text).collect();
            let slow: Vec<&str> = text.split_whitespace().collect();
            assert_eq!(fast, slow, "{text:?}");
        }
    }
}
