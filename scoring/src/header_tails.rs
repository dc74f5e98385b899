//! What the SQLi model reads of a header value besides the whole value. Headers carry the
//! client's own value first (a 100-byte browser User-Agent) and the payload after it; read
//! whole, the prefix dilutes the injection's n-grams below the threshold.

/// The parts of a header value the SQLi model reads besides the whole value: from the first
/// quote on (the break-out, without the benign value in front of it), the last
/// [`HEADER_TAIL_BYTES`] of a long value (payloads are appended to the client's real value),
/// and the gated core: a numeric injection (`1 AND (SELECT 1 FROM (SELECT SLEEP(5))a)`) has no
/// quote and, behind a 60-byte User-Agent, is too short for the 96-byte tail to leave the
/// prefix out. `gated` is the SQLi gate. Empty for a short value with nothing before its quote.
pub fn header_sql_tails(text: &str, gated: impl Fn(&str) -> bool) -> Vec<&str> {
    let mut tails = Vec::new();
    if let Some(at) = text.bytes().position(|b| matches!(b, b'\'' | b'"' | b'`')) {
        // A quote that ends the value (`Netscape6/6.1"`, `(largie's)`) leaves no room for an
        // injection: the model would score a lone quote.
        if at > 0 && text.len() - at >= MIN_TAIL_BYTES {
            tails.push(&text[at..]);
        }
    }
    if text.len() > 2 * HEADER_TAIL_BYTES {
        let mut from = text.len() - HEADER_TAIL_BYTES;
        while !text.is_char_boundary(from) {
            from += 1;
        }
        tails.push(&text[from..]);
    }
    for core in gated_cores(text, gated) {
        if !tails.contains(&core) {
            tails.push(core);
        }
    }
    tails
}

/// The shortest gated suffix that starts a word, and the same with a few words in front: the
/// payload's core without the client's value in front of it. The gate gives no match
/// offsets, so word starts are tried from the end (at most [`MAX_WORD_STARTS`] in the last
/// [`MAX_CORE_BYTES`]); the words kept in front ([`CONTEXT_WORDS`]) hold what the gate did
/// not need (`1 AND (` before `SELECT SLEEP(5)`), and the suffix alone is the payload when
/// those words are the client's (`… AppleWebKit/537.36 (select*from(select(sleep(3)))x)`).
/// Neither when it is the whole value, or when nothing gates.
fn gated_cores(text: &str, gated: impl Fn(&str) -> bool) -> Vec<&str> {
    let bytes = text.as_bytes();
    let first = text.len().saturating_sub(MAX_CORE_BYTES).max(1);
    let starts: Vec<usize> = (first..text.len()).filter(|&i| bytes[i - 1] == b' ' && bytes[i] != b' ').collect();
    let tried = starts.len().saturating_sub(MAX_WORD_STARTS);
    let Some(shortest) = (tried..starts.len()).rev().find(|&k| gated(&text[starts[k]..])) else {
        return Vec::new();
    };
    let with_context = starts[shortest.saturating_sub(CONTEXT_WORDS)];
    let mut cores = vec![&text[starts[shortest]..]];
    if with_context != starts[shortest] {
        cores.push(&text[with_context..]);
    }
    cores.retain(|core| core.len() >= MIN_TAIL_BYTES);
    cores
}

/// Word starts tried from the end of a value: a payload longer than this many words keeps the
/// 96-byte tail and the whole-value reading.
const MAX_WORD_STARTS: usize = 24;

/// Only the value's last bytes are searched (each try is a gate scan of the suffix).
const MAX_CORE_BYTES: usize = 512;

/// Words kept in front of the shortest gated suffix.
const CONTEXT_WORDS: usize = 3;

/// The shortest break-out worth a model call (`'or 1#`).
pub const MIN_TAIL_BYTES: usize = 6;

/// Long enough for a UNION or time-based payload, short enough that a browser User-Agent in
/// front of it no longer dilutes it.
pub const HEADER_TAIL_BYTES: usize = 96;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_tails_drop_the_benign_prefix() {
        let never = |_: &str| false;
        assert_eq!(header_sql_tails("Mozilla/5.0 (X11; Linux) Chrome/126' OR 1=1--", never), ["' OR 1=1--"]);
        assert!(header_sql_tails("' or 1=1", never).is_empty(), "nothing precedes the quote");
        assert!(header_sql_tails("plain value", never).is_empty());
        assert!(header_sql_tails("Mozilla/5.0 (X11) Firefox/1.0 (largie's)", never).is_empty(), "too short to hold an injection");
        let ua = format!("Mozilla/5.0 (X11; Linux x86_64) {} AND 1=(SELECT 1 FROM PG_SLEEP(5))", "x".repeat(200));
        let tails = header_sql_tails(&ua, never);
        assert_eq!(tails.len(), 1);
        assert!(tails[0].ends_with("PG_SLEEP(5))") && tails[0].len() == HEADER_TAIL_BYTES);
    }

    /// A stand-in gate: SQL keywords in upper or lower case.
    fn sql_words(text: &str) -> bool {
        let lower = text.to_ascii_lowercase();
        ["select", "sleep(", "updatexml("].iter().any(|w| lower.contains(w))
    }

    #[test]
    fn a_numeric_injection_behind_a_browser_user_agent_is_read_from_its_core() {
        let ua = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 1 AND (SELECT 1 FROM (SELECT SLEEP(5))a)";
        // The shortest gated suffix is `SLEEP(5))a)`; then with three words before it.
        assert_eq!(header_sql_tails(ua, sql_words), ["SLEEP(5))a)", "1 FROM (SELECT SLEEP(5))a)"]);
        let ua = "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/126.0 1 and updatexml(1,concat(0x7e,user()),1)";
        assert_eq!(
            header_sql_tails(ua, sql_words),
            ["updatexml(1,concat(0x7e,user()),1)", "Firefox/126.0 1 and updatexml(1,concat(0x7e,user()),1)"]
        );
        let ua = "Mozilla/5.0 AppleWebKit/537.36 (select*from(select(sleep(3)))x)";
        assert_eq!(header_sql_tails(ua, sql_words), ["(select*from(select(sleep(3)))x)", &ua[12..]]);
        assert_eq!(header_sql_tails("a select 1", sql_words), ["select 1"]);
        assert!(header_sql_tails("select 1", sql_words).is_empty(), "the core is the whole value");
        assert!(header_sql_tails("Mozilla/5.0 (X11; Linux x86_64) Firefox/126.0", sql_words).is_empty(), "nothing gates");
    }
}
