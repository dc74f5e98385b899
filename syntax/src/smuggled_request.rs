//! `protocol:smuggled-request`: a whole second HTTP message inside a parameter or body value —
//! a request line (`GET /admin HTTP/1.1`) followed by its `Host:` (or framing) header, or a
//! status line (`HTTP/1.1 200 OK`) followed by a response header. A value reflected into a
//! back-end connection or a response (a proxy that forwards it, a cache key, a log line that a
//! second parser reads) is then read as two messages: request smuggling or response splitting
//! without any encoded line break for `crlf` to see.
//!
//! `crlf` covers a header or request line after an *encoded* break (`%0d%0a`) and raw breaks in
//! compact values; this check reads the message itself, with its breaks raw, or collapsed to a
//! space by the decoded view. Level 1 in a parameter, header, cookie or form value; level 2
//! in a raw body (a `multipart/mixed` batch request legitimately holds requests) and in prose
//! or long text (a chat message asking about an HTTP request).

use crate::prose::is_long_or_prose;
use crate::{Check, Finding, Input, Place, Trigger};

pub struct SmuggledRequest;

/// Bytes after a start line in which its header must follow.
const HEADER_WINDOW: usize = 256;

const METHODS: &[&[u8]] = &[b"GET", b"POST", b"PUT", b"DELETE", b"HEAD", b"OPTIONS", b"PATCH", b"TRACE", b"CONNECT"];
/// Headers that make a request line a request a server acts on.
const REQUEST_HEADERS: &[&[u8]] = &[b"host:", b"transfer-encoding:", b"content-length:", b"x-forwarded-for:", b"cookie:"];
/// Headers that make a status line a response a client acts on.
const RESPONSE_HEADERS: &[&[u8]] =
    &[b"content-type:", b"content-length:", b"set-cookie:", b"location:", b"transfer-encoding:", b"content-security-policy:"];

impl Check for SmuggledRequest {
    fn trigger(&self) -> Trigger {
        // `HTTP/1.` holds `/` and `.`; the cheapest distinctive byte of it is `/`.
        Trigger::any_of(b"/")
    }

    fn detector(&self) -> &'static str {
        "protocol"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        if matches!(input.place, Place::Path | Place::QueryName | Place::BodyKey | Place::XmlDoctype) {
            return None;
        }
        // The whole field, without a cap that padding could push the message past: the search
        // runs from one `/` to the next, and each version's look-back and header window are
        // bounded (the target words read back from distinct versions do not overlap).
        let text = input.text.as_bytes();
        let at = find_message(text)?;
        let level = if input.place == Place::BodyRaw || is_long_or_prose(text) || at > 0 && has_prose_before(&text[..at]) { 2 } else { 1 };
        (level <= input.sensitivity).then_some(Finding { reason: "protocol:smuggled-request", score: 0.95, level })
    }
}

/// Where a start line followed by one of its headers begins, if any.
fn find_message(text: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = find_version(text, from) {
        from = at + 7;
        let version_ok = text.get(at + 7).is_some_and(|&c| c == b'0' || c == b'1');
        if !version_ok {
            continue;
        }
        // A request line: `METHOD SP target SP HTTP/1.x`, the version closing the line.
        if let Some(start) = request_line_start(text, at) {
            let after = &text[at + 8..];
            if header_follows(after, REQUEST_HEADERS) {
                return Some(start);
            }
        }
        // A status line: `HTTP/1.x SP 3DIGIT`.
        let after = &text[at + 8..];
        let status = after.first() == Some(&b' ') && after.len() > 4 && after[1..4].iter().all(u8::is_ascii_digit);
        let line_start = at == 0 || matches!(text[at - 1], b'\n' | b'\r' | b' ');
        if status && line_start && header_follows(&after[4..], RESPONSE_HEADERS) {
            return Some(at);
        }
    }
    None
}

/// The start of `METHOD SP target SP` just before the version at `version`.
fn request_line_start(text: &[u8], version: usize) -> Option<usize> {
    let before = &text[..version];
    let before = before.strip_suffix(b" ")?;
    let target_len = before.iter().rev().take(2048).take_while(|&&c| c != b' ' && c != b'\n' && c != b'\r').count();
    let target = &before[before.len() - target_len..];
    if !(target.starts_with(b"/") || target.starts_with(b"http") || target == b"*" || target.contains(&b':')) {
        return None;
    }
    let before = before[..before.len() - target_len].strip_suffix(b" ")?;
    let method = METHODS.iter().find(|m| before.ends_with(m))?;
    let start = before.len() - method.len();
    // The method opens the value or a line (or follows a blank in a collapsed view).
    (start == 0 || matches!(before[start - 1], b'\n' | b'\r' | b' ' | b'"' | b'\'' | b'>')).then_some(start)
}

/// One of `names` opens a line (or a blank-separated word in a collapsed view) within the
/// window right after a start line.
fn header_follows(after: &[u8], names: &[&[u8]]) -> bool {
    let window = &after[..after.len().min(HEADER_WINDOW)];
    let mut k = 0;
    while k < window.len() {
        if matches!(window[k], b'\n' | b'\r' | b' ') {
            let rest = &window[k + 1..];
            if names.iter().any(|n| rest.len() >= n.len() && rest[..n.len()].eq_ignore_ascii_case(n)) {
                return true;
            }
        }
        k += 1;
    }
    false
}

/// The next `HTTP/1.` at or after `from`, found from its `/` (rare in text) rather than by
/// comparing at every byte.
fn find_version(text: &[u8], from: usize) -> Option<usize> {
    let mut k = from + 4;
    while k + 2 < text.len() {
        let slash = k + text[k..].iter().position(|&c| c == b'/')?;
        if slash >= from + 4 && text[slash - 4..slash].eq_ignore_ascii_case(b"http") && text.get(slash + 1..slash + 3) == Some(b"1.") {
            return Some(slash - 4);
        }
        k = slash + 1;
    }
    None
}

/// Running words before the message (a question about it): four or more blank-separated words
/// of letters only.
fn has_prose_before(before: &[u8]) -> bool {
    before.split(|c| c.is_ascii_whitespace()).filter(|w| w.len() >= 2 && w.iter().all(u8::is_ascii_alphabetic)).count() >= 4
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(place: Place, value: &str) -> Option<u8> {
        let mut input = Input::new(value);
        input.place = place;
        input.sensitivity = 4;
        SmuggledRequest.inspect(&input).map(|f| f.level)
    }

    #[test]
    fn second_messages() {
        for v in [
            "x\r\n\r\nGET /admin HTTP/1.1\r\nHost: localhost\r\n\r\n",
            "0\r\n\r\nPOST /internal HTTP/1.1\r\nHost: backend\r\nContent-Length: 10\r\n\r\nx=",
            "a GET /admin HTTP/1.1 Host: 127.0.0.1",
            "x\r\nHTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<script>alert(1)</script>",
        ] {
            assert_eq!(level(Place::BodyValue, v), Some(1), "{v:?}");
        }
        for v in ["see https://example.com/http/1.1 for details", "GET /api HTTP/1.1", "HTTP/1.1 is the version we use"] {
            assert_eq!(level(Place::QueryValue, v), None, "{v:?}");
        }
        assert_eq!(level(Place::BodyRaw, "--b\r\nContent-Type: application/http\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n"), Some(2));
    }

    /// A second message after 100 KiB of benign text is still read (a long field is level 2).
    #[test]
    fn padding_hides_no_message() {
        let pad = "lorem/ipsum ".repeat(9 * 1024);
        assert_eq!(level(Place::BodyValue, &format!("{pad}\r\n\r\nGET /admin HTTP/1.1\r\nHost: localhost\r\n\r\n")), Some(2));
        assert_eq!(level(Place::BodyValue, &format!("{pad} see HTTP/1.1 docs")), None);
    }
}
