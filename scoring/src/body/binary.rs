//! Binary bodies: bytes that are not text after transport decoding (an undecodable compressed
//! stream, an image, protobuf). The request text carries them lossily decoded (invalid UTF-8 as
//! U+FFFD), and they are still scanned by every pattern and code check — every byte is scored
//! — but they are not natural language: the prompt-injection model must not read replacement
//! characters and control bytes as prose (a gzip stream once scored as an injection).

/// Share of a text's characters that must be U+FFFD or C0 controls (other than tab, CR, LF)
/// for it to count as binary: 1 in 8. Real text with a few mangled characters (CSIC's
/// `a�adir`) stays far below; a compressed stream or image is mostly replacement characters.
const BINARY_SHARE_DENOMINATOR: usize = 8;

/// `text` without replacement characters and C0 controls (tab, CR, LF kept): what is left of
/// a binary-looking field for the prose test, so control bytes sprinkled through a prompt
/// injection cannot keep it from the prompt-injection model.
pub fn printable_text(text: &str) -> String {
    text.chars().filter(|&c| c != '\u{fffd}' && (c >= ' ' || matches!(c, '\t' | '\r' | '\n'))).collect()
}

/// Whether `text` is mostly bytes that were not text: replacement characters and controls.
pub fn looks_binary(text: &str) -> bool {
    let (mut chars, mut odd) = (0usize, 0usize);
    for c in text.chars() {
        chars += 1;
        odd += usize::from(c == '\u{fffd}' || (c < ' ' && !matches!(c, '\t' | '\r' | '\n')) || c == '\u{7f}');
    }
    chars > 0 && odd * BINARY_SHARE_DENOMINATOR >= chars
}

#[cfg(test)]
mod tests {
    use super::looks_binary;

    #[test]
    fn binary_is_told_from_text() {
        let gzip = String::from_utf8_lossy(&[
            0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00,
        ]);
        assert!(looks_binary(&gzip));
        assert!(looks_binary("\u{0}\u{1}\u{2}abc\u{3}\u{4}\u{5}"));
        assert!(!looks_binary("Please ignore the previous email, the meeting moved to 3pm."));
        assert!(!looks_binary("id=3&nombre=vino+rioja&b1=a\u{fffd}adir+al+carrito"));
        assert!(!looks_binary(""));
    }
}
