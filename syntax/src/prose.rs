//! Whether a field reads as prose or pasted source rather than a value an attacker broke out
//! of: the shell checks move a command found in such text to level 2 (chat apps receive
//! pasted commands and scripts all day).

/// Words of running English that command lines do not use.
const FUNCTION_WORDS: &[&str] = &[
    "the", "a", "an", "to", "of", "and", "is", "it", "you", "that", "this", "with", "on", "how", "what", "i", "my", "can", "be", "are",
    "not", "have", "your", "me", "we", "please", "why", "when", "but", "or", "so", "if", "as", "at", "from", "will", "would", "should",
    "does", "there", "which", "about", "like",
];

/// A field that is mostly prose, a markdown code block, or long multi-line source: a command
/// in it is more likely pasted text than an injection, so its findings move to level 2.
pub fn is_long_or_prose(text: &[u8]) -> bool {
    if text.windows(3).any(|w| w == b"```") {
        return true;
    }
    let lines = text.iter().filter(|&&c| c == b'\n').count();
    if lines >= 3 && text.len() > 120 {
        return true;
    }
    let (mut tokens, mut function) = (0usize, 0usize);
    for w in text.split(|c| c.is_ascii_whitespace()).filter(|w| !w.is_empty()) {
        tokens += 1;
        let core = w.strip_suffix(b",").or_else(|| w.strip_suffix(b".")).or_else(|| w.strip_suffix(b"?")).unwrap_or(w);
        if core.len() <= 6 && FUNCTION_WORDS.iter().any(|f| core.eq_ignore_ascii_case(f.as_bytes())) {
            function += 1;
        }
    }
    // Long source with many tokens (a script whose newlines the decoded view collapsed), or
    // running English: function words that command lines do not use.
    text.len() > 300 && tokens >= 30 || function >= 4 || function >= 2 && tokens >= 10
}

/// A value that opens with a script construct is a pasted script, not a value broken out of;
/// one that opens with `{` or `[` and spans lines is a document (a GraphQL query, pretty JSON)
/// whose lines are field names, not commands.
pub fn starts_script(text: &[u8]) -> bool {
    let start = text.trim_ascii_start();
    if start.first().is_some_and(|&c| c == b'{' || c == b'[') && text.iter().filter(|&&c| c == b'\n').count() >= 2 {
        return true;
    }
    [&b"#!"[..], b"while ", b"for ", b"if [", b"until ", b"case ", b"function ", b"do "].iter().any(|k| start.starts_with(k))
}
