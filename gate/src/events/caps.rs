//! Byte caps on event fields. An event is built from client-controlled text (a 400 KB method
//! is valid HTTP), and each event is copied into the ring, every SSE subscriber and the audit
//! queue: without caps one request could pin megabytes in each. Caps count the bytes the field
//! takes *in the JSON line* (after escaping), so the documented line size is a true bound.

/// Per-field caps, in JSON bytes (quotes excluded).
pub const METHOD: usize = 32;
pub const PATH: usize = 2048;
pub const QUERY: usize = 2048;
pub const REASON: usize = 256;
pub const DETECTOR: usize = 64;
pub const SOURCE_IP: usize = 64;
/// For the comma-joined work-bound slugs (`Verdict.partial`) once events carry them.
pub const PARTIAL: usize = 128;
/// The audit fields (docs/AUDIT.md).
pub const HOST: usize = 256;
pub const USER_AGENT: usize = 512;
pub const FIELD: usize = 256;
pub const RULE: usize = 128;
pub const SCOPE: usize = 128;

/// The largest serialised event line: the capped fields, the fixed ones (timestamp, score,
/// mode, action, latency, component: under 230 bytes with their keys), the field names, up to
/// three top detectors (each capped) and the `truncated` list (at most every capped field's
/// name). Checked by a test in events/mod.rs.
pub const MAX_EVENT_BYTES: usize = 8 * 1024;

/// Marks a field that was cut (the text ends with it, so a reader sees the cut too).
const ELLIPSIS: &str = "…";

/// Returns `text` cut so its JSON-escaped form fits in `limit` bytes, and whether it was cut.
pub fn cap(text: &str, limit: usize) -> (String, bool) {
    if escaped_len(text) <= limit {
        return (text.to_string(), false);
    }
    let budget = limit.saturating_sub(ELLIPSIS.len());
    let mut used = 0;
    let mut end = 0;
    for (i, c) in text.char_indices() {
        let width = escaped_char_len(c);
        if used + width > budget {
            break;
        }
        used += width;
        end = i + c.len_utf8();
    }
    (format!("{}{ELLIPSIS}", &text[..end]), true)
}

fn escaped_len(text: &str) -> usize {
    text.chars().map(escaped_char_len).sum()
}

/// serde_json's escaping: `"` and `\` and the short control escapes take 2 bytes, other
/// control characters `\u00XX` 6, everything else its UTF-8 length.
fn escaped_char_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{08}' | '\u{0c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// Caps one field, recording its name in `truncated` when cut.
pub fn capped(name: &'static str, text: &str, limit: usize, truncated: &mut Vec<&'static str>) -> String {
    let (text, cut) = cap(text, limit);
    if cut {
        truncated.push(name);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_count_escaped_bytes_and_keep_char_boundaries() {
        assert_eq!(cap("GET", METHOD), ("GET".to_string(), false));
        let (text, cut) = cap(&"A".repeat(400_000), METHOD);
        assert!(cut && serde_json::to_string(&text).unwrap().len() - 2 <= METHOD, "{text}");
        let quotes = "\"".repeat(5000);
        let (text, cut) = cap(&quotes, PATH);
        assert!(cut && serde_json::to_string(&text).unwrap().len() - 2 <= PATH);
        let controls = "\u{1}".repeat(5000);
        let (text, _) = cap(&controls, QUERY);
        assert!(serde_json::to_string(&text).unwrap().len() - 2 <= QUERY);
        let (text, cut) = cap(&"é".repeat(3000), PATH);
        assert!(cut && text.len() <= PATH && text.ends_with(ELLIPSIS));
    }
}
