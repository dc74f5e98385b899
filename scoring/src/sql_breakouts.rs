//! Where a string break-out starts inside a longer value. A value that the application puts
//! inside a SQL string literal can carry any text before its closing quote: `Great product,
//! I would buy it again' UNION SELECT password FROM users--` breaks out exactly as
//! `' UNION SELECT …` does. Read whole, the prose in front dilutes the SQLi model's n-grams
//! (63 bytes of it took that payload from 0.998 to 0.04), so an attacker who reads our
//! source would pad every injection. The model therefore also reads a short window from each
//! quote on, the break-out without what the application's literal held before it.
//!
//! Only quotes start a window: a numeric context (`id=5 UNION …`) needs the value to start
//! with the number, so anything in front of it breaks the query, and the whole value is
//! already read from its start.

/// The SQLi model's score from which a break-out window inside its text counts; below it the
/// window adds nothing. The model's 0.5 is calibrated on whole values; a window is cut to
/// start at a quote followed by SQL-looking text, which pasted code and SQL in a chat message
/// also are (`"id" INT GENERATED …`, `$_POST['username'] ) && isset(`): those windows scored
/// 0.63 to 0.94 on real chat messages, most padded injections 0.99 and above.
pub const MIN_SCORE: f32 = 0.95;

/// The bar for a window that runs to the end of its text: the injection's usual place, the
/// break-out and nothing after it (or only what the SQL reading left of a comment). Pasted
/// code and SQL put their windows mid-text. Some break-outs score 0.89–0.94 even alone
/// (`"; create table …`); 0.85 catches them, where the model's own 0.5 tripled the pool's
/// benign SQL statements flagged by windows (rules.md has the three settings measured).
pub const TAIL_MIN_SCORE: f32 = 0.85;

/// One window the SQLi model reads, and the score it must reach to count: [`TAIL_MIN_SCORE`]
/// when it runs to the end of its text, [`MIN_SCORE`] otherwise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Breakout<'t> {
    pub text: &'t str,
    pub min_score: f32,
}

/// Bytes a window reads from its quote: a UNION or stacked payload with its comment fits
/// (`' UNION SELECT NULL,concat(user,0x3a,password) FROM users--` is 61), and prose padded
/// after the injection adds at most the rest of the window.
pub const WINDOW_BYTES: usize = 96;

/// Bytes that must precede a quote before its window is worth a model call: with less, the
/// whole value is already the break-out (the model reads it from byte 0).
pub const MIN_PREFIX_BYTES: usize = 8;

/// Quotes closer than this to the last window's start share it (`'1'='1`, `''`).
const MIN_GAP_BYTES: usize = 8;

/// The most windows one text may ask of the model. More gated quotes than this in one value
/// is no ordinary text; what is left unread is reported so the verdict says partial.
pub const MAX_WINDOWS: usize = 16;

/// The most quotes inspected in one text: bounds the gate scans a quote-heavy body costs.
const MAX_QUOTES: usize = 256;

/// The break-out windows of `text` the SQLi model reads, each from a quote preceded by at
/// least [`MIN_PREFIX_BYTES`], [`WINDOW_BYTES`] long (less at the end of the text) and
/// selected by `gated` (the SQLi gate rules, as for a whole field). The flag is true when
/// some quote was left uninspected or some gated window unread (more than the bounds above).
pub fn breakout_windows(text: &str, gated: impl Fn(&str) -> bool) -> (Vec<Breakout<'_>>, bool) {
    let bytes = text.as_bytes();
    let mut windows = Vec::new();
    let mut last_start: Option<usize> = None;
    let mut inspected = 0;
    for at in memchr::memchr3_iter(b'\'', b'"', b'`', bytes) {
        if at < MIN_PREFIX_BYTES || last_start.is_some_and(|last| at - last < MIN_GAP_BYTES) {
            continue;
        }
        // The last quote of the text closes the value's own literal: nothing follows it.
        if bytes.len() - at < 2 {
            break;
        }
        if inspected == MAX_QUOTES {
            return (windows, true);
        }
        inspected += 1;
        let mut end = (at + WINDOW_BYTES).min(bytes.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let window = &text[at..end];
        if gated(window) {
            if windows.len() == MAX_WINDOWS {
                return (windows, true);
            }
            let min_score = if end == bytes.len() { TAIL_MIN_SCORE } else { MIN_SCORE };
            windows.push(Breakout { text: window, min_score });
            last_start = Some(at);
        }
    }
    (windows, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts<'t>(windows: &[Breakout<'t>]) -> Vec<&'t str> {
        windows.iter().map(|w| w.text).collect()
    }

    fn sql_like(window: &str) -> bool {
        window.to_ascii_lowercase().contains("union") || window.contains("OR 1")
    }

    #[test]
    fn the_break_out_is_read_without_the_prose_in_front_of_it() {
        let value = "Great product, I love it and would buy it again for my family' UNION SELECT password FROM users--";
        let (windows, cut) = breakout_windows(value, sql_like);
        assert_eq!(texts(&windows), ["' UNION SELECT password FROM users--"]);
        assert!(!cut);
        assert!(breakout_windows("' UNION SELECT password FROM users--", sql_like).0.is_empty(), "nothing in front: read whole already");
        assert!(breakout_windows("it's the customer's order, isn't it", sql_like).0.is_empty(), "quotes the gate does not select");
    }

    #[test]
    fn a_window_that_ends_its_text_clears_the_model_bar_others_a_higher_one() {
        let tail = "Great product, I would buy it again' UNION SELECT 1--";
        let (windows, _) = breakout_windows(tail, sql_like);
        assert_eq!(windows[0].min_score, TAIL_MIN_SCORE);
        let inner = format!("see this' UNION SELECT 1 FROM t WHERE {}", "x = 1 AND ".repeat(20));
        let (windows, _) = breakout_windows(&inner, sql_like);
        assert_eq!(windows[0].min_score, MIN_SCORE, "cut at 96 bytes, mid-text");
    }

    #[test]
    fn a_window_stops_after_its_bytes_and_on_a_char_boundary() {
        let value = format!("padding text here' UNION SELECT {}", "é".repeat(100));
        let (windows, _) = breakout_windows(&value, sql_like);
        assert_eq!(windows.len(), 1);
        assert!(windows[0].text.len() <= WINDOW_BYTES && windows[0].text.len() >= WINDOW_BYTES - 1);
    }

    #[test]
    fn decoy_quotes_cannot_hide_the_injection_past_the_bounds() {
        let decoys = "x' OR 1 ".repeat(MAX_WINDOWS + 1);
        let value = format!("{decoys}          ' UNION SELECT 1--");
        let (windows, cut) = breakout_windows(&value, sql_like);
        assert_eq!(windows.len(), MAX_WINDOWS);
        assert!(cut, "the unread rest is reported");
        let quotes = "a'b ".repeat(MAX_QUOTES + 40);
        let (_, cut) = breakout_windows(&format!("{quotes}' UNION SELECT 1--"), sql_like);
        assert!(cut, "uninspected quotes are reported");
        let (windows, cut) = breakout_windows("abcdefgh'1'='1' OR 1=1 UNION SELECT 2", sql_like);
        assert_eq!((windows.len(), cut), (1, false), "quotes of one break-out share its window: {windows:?}");
    }
}
