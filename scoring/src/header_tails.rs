//! What the SQLi model reads of a header value besides the whole value. Headers carry the
//! client's own value first (a 100-byte browser User-Agent) and the payload after it; read
//! whole, the prefix dilutes the injection's n-grams below the threshold.

/// The parts of a header value the SQLi model reads besides the whole value: from the first
/// quote on (the break-out, without the benign value in front of it), and the last
/// [`HEADER_TAIL_BYTES`] of a long value (payloads are appended to the client's real value;
/// a numeric injection has no quote). Empty for a short value with nothing before its quote.
pub fn header_sql_tails(text: &str) -> Vec<&str> {
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
    tails
}

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
        assert_eq!(header_sql_tails("Mozilla/5.0 (X11; Linux) Chrome/126' OR 1=1--"), ["' OR 1=1--"]);
        assert!(header_sql_tails("' or 1=1").is_empty(), "nothing precedes the quote");
        assert!(header_sql_tails("plain value").is_empty());
        assert!(header_sql_tails("Mozilla/5.0 (X11) Firefox/1.0 (largie's)").is_empty(), "too short to hold an injection");
        let ua = format!("Mozilla/5.0 (X11; Linux x86_64) {} AND 1=(SELECT 1 FROM PG_SLEEP(5))", "x".repeat(200));
        let tails = header_sql_tails(&ua);
        assert_eq!(tails.len(), 1);
        assert!(tails[0].ends_with("PG_SLEEP(5))") && tails[0].len() == HEADER_TAIL_BYTES);
    }
}
