//! CRLF injection (HTTP response splitting, header injection, request smuggling) whose line
//! break is hidden under more encoding than the rules can see.
//!
//! The `crlf.toml` rules match a raw CR/LF, or one `%0d%0a` layer followed by a header name
//! written in clear. The engine's decoded view undoes every layer but collapses line breaks to
//! spaces, so a break under a second layer (`%250d%250a` left in a form value after its one
//! decoding, `&#x25;0d&#x25;0a`, a header value holding `%0D%0ASet%2DCookie%3A`) is visible
//! in neither view. This check decodes the plain view itself — percent and character-reference
//! layers, alternately, a bounded number of times — keeping breaks as breaks, and asks what the
//! line after each *encoded* break is: a response header (`Set-Cookie: ...`, `Location: ...`,
//! any `X-...: ...`), a status line (`HTTP/1.1 200`), a second request line
//! (`GET /admin HTTP/1.1`) or, after a blank line, markup (a body the attacker wrote).
//!
//! An encoded break that survives the application's own decoding has no benign reason to be
//! followed by a header line: level 1 in a compact field. A raw CR/LF is normal in a textarea
//! or a chat message (full of `Name: value` lines), so a raw break counts at level 1 only in a
//! compact query, path, header or cookie value, where no client puts one, and at level 2 in a
//! compact body value. Linear: each decoding pass is one
//! scan, the passes are bounded, and each break looks at one bounded line.

use crate::mail::{decode_char_refs, is_compact, percent_decode};
use crate::{Check, Finding, Input, Place, Trigger};

pub struct CrlfCheck;

/// Decoding rounds (each: one percent layer, one character-reference layer).
const ROUNDS: usize = 6;
/// Longest header name read after a break.
const NAME_MAX: usize = 40;

/// Header names whose injection changes what a client or a cache does with the response, or
/// what a back end does with a smuggled request. Any `x-` name counts too.
const HEADERS: &[&[u8]] = &[
    b"set-cookie",
    b"set-cookie2",
    b"location",
    b"content-type",
    b"content-length",
    b"content-disposition",
    b"content-security-policy",
    b"content-security-policy-report-only",
    b"content-encoding",
    b"content-language",
    b"transfer-encoding",
    b"refresh",
    b"cache-control",
    b"pragma",
    b"expires",
    b"last-modified",
    b"etag",
    b"link",
    b"vary",
    b"www-authenticate",
    b"proxy-authenticate",
    b"authorization",
    b"host",
    b"cookie",
    b"connection",
    b"upgrade",
    b"keep-alive",
    b"strict-transport-security",
    b"referrer-policy",
    b"server",
    b"referer",
    b"user-agent",
    b"origin",
    b"forwarded",
    b"via",
    b"te",
    b"trailer",
    b"age",
    b"allow",
    b"access-control-allow-origin",
    b"access-control-allow-credentials",
    b"access-control-allow-headers",
    b"access-control-allow-methods",
    b"access-control-expose-headers",
    b"access-control-max-age",
    b"permissions-policy",
    b"feature-policy",
    b"cross-origin-opener-policy",
    b"cross-origin-resource-policy",
    b"cross-origin-embedder-policy",
    b"timing-allow-origin",
    b"retry-after",
    b"content-range",
    b"accept-ranges",
];

const METHODS: &[&[u8]] = &[b"GET", b"POST", b"PUT", b"DELETE", b"HEAD", b"OPTIONS", b"PATCH", b"TRACE", b"CONNECT"];

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Body,
    Header,
    StoreCommand,
    RequestLine,
    StatusLine,
}

impl Check for CrlfCheck {
    fn trigger(&self) -> Trigger {
        // A break: raw CR/LF, `%` or `&#`.
        Trigger::any_of(b"%&\r\n")
    }

    fn detector(&self) -> &'static str {
        "crlf"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        // The decoded view has no breaks left; a break needs CR/LF, `%` or `&#`.
        if input.decoded || !input.bytes.any(b"%&\r\n") || input.text.len() < 8 {
            return None;
        }
        let text = input.text.as_bytes();
        let encoded = input.bytes.any(b"%&") && has_encoded_marker(text);
        let found = if encoded { decode_layers(text, false).and_then(|d| scan(&d).map(|k| (k, d, true))) } else { None };
        let found = found.or_else(|| {
            // Raw breaks only: the application received a real CR/LF. Normal in a textarea or
            // a chat message, so only a compact value of a query, path, header or cookie (where
            // no client puts a line break) counts at level 1, a compact body value at level 2.
            // A raw break in a body value is at most level 2: skip the work below it.
            if !input.bytes.any(b"\r\n") || !single_line_place(input.place) && input.sensitivity < 2 {
                return None;
            }
            decode_layers(text, true).and_then(|d| scan(&d).map(|k| (k, d, false)))
        });
        let (kind, decoded, encoded_break) = found?;
        let reason = match kind {
            Kind::Header => "crlf:encoded-header",
            Kind::StoreCommand => "crlf:store-command",
            Kind::StatusLine => "crlf:encoded-status-line",
            Kind::RequestLine => "crlf:encoded-request-line",
            Kind::Body => "crlf:encoded-body",
        };
        // A long or prose field (a pasted document) waits for level 2, as the mail check does.
        let compact = is_compact(&decoded);
        let level = match (encoded_break, compact) {
            (true, true) => 1,
            (true, false) => 2,
            (false, true) if single_line_place(input.place) => 1,
            (false, true) => 2,
            (false, false) => return None,
        };
        (level <= input.sensitivity).then_some(Finding { reason, score: 0.98, level })
    }
}

/// A `%` before `0a`/`0d`, `e5` (the look-alikes' lead byte) or an encoded `%`/`&` (a further layer), or a numeric
/// character reference: the only ways an encoded break can start.
fn has_encoded_marker(b: &[u8]) -> bool {
    let mut i = 0;
    while i + 2 < b.len() {
        match b[i] {
            b'%' => {
                let hex = [b[i + 1] | 0x20, b[i + 2] | 0x20];
                if matches!(&hex, b"0a" | b"0d" | b"25" | b"26" | b"e5") {
                    return true;
                }
            }
            b'&' if b[i + 1] == b'#' => return true,
            _ => {}
        }
        i += 1;
    }
    false
}

/// The text with raw CR/LF blanked (unless `keep_raw`) and then percent and character-
/// reference layers undone, alternately, up to [`ROUNDS`] times; the Unicode look-alikes
/// `嘊`/`嘍` (U+560A/U+560D, which a server truncating to Latin-1 turns into LF/CR) read as
/// breaks. `None` when no encoded break came out.
fn decode_layers(text: &[u8], keep_raw: bool) -> Option<Vec<u8>> {
    let mut out: Vec<u8> = text.iter().map(|&c| if !keep_raw && (c == b'\r' || c == b'\n') { b' ' } else { c }).collect();
    for _ in 0..ROUNDS {
        let before = out.len();
        if out.contains(&b'%') {
            out = percent_decode(&out);
        }
        if out.windows(2).any(|w| w == b"&#") {
            out = decode_char_refs(&out);
        }
        if out.len() == before {
            break;
        }
    }
    if out.windows(2).any(|w| w == [0xe5, 0x98]) {
        let mut v = Vec::with_capacity(out.len());
        let mut i = 0;
        while i < out.len() {
            match out.get(i..i + 3) {
                Some([0xe5, 0x98, 0x8a]) => {
                    v.push(b'\n');
                    i += 3;
                }
                Some([0xe5, 0x98, 0x8d]) => {
                    v.push(b'\r');
                    i += 3;
                }
                _ => {
                    v.push(out[i]);
                    i += 1;
                }
            }
        }
        out = v;
    }
    out.iter().any(|&c| c == b'\r' || c == b'\n').then_some(out)
}

/// Fields in which no client sends a line break.
fn single_line_place(place: Place) -> bool {
    matches!(place, Place::QueryValue | Place::QueryName | Place::Path | Place::Header | Place::Cookie)
}

/// The strongest line kind after any break in `b`.
fn scan(b: &[u8]) -> Option<Kind> {
    let mut best = None;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\r' && b[i] != b'\n' {
            i += 1;
            continue;
        }
        // The run of breaks and blanks; a blank line (two LFs, or two CRs for lenient parsers)
        // ends the header block.
        let (mut lfs, mut crs) = (0, 0);
        let mut j = i;
        while j < b.len() && matches!(b[j], b'\r' | b'\n' | b' ' | b'\t') {
            lfs += (b[j] == b'\n') as usize;
            crs += (b[j] == b'\r') as usize;
            j += 1;
        }
        if let Some(kind) = line_kind(b, j, lfs >= 2 || crs >= 2) {
            best = best.max(Some(kind));
            if kind == Kind::StatusLine {
                break;
            }
        }
        i = j.max(i + 1);
    }
    best
}

fn line_kind(b: &[u8], at: usize, after_blank: bool) -> Option<Kind> {
    let rest = b.get(at..)?;
    let first = *rest.first()?;
    if after_blank && first == b'<' && rest.get(1).is_some_and(|c| c.is_ascii_alphabetic() || *c == b'!') {
        return Some(Kind::Body);
    }
    if rest.len() >= 8 && rest[..5].eq_ignore_ascii_case(b"http/") && rest[5].is_ascii_digit() {
        return Some(Kind::StatusLine);
    }
    if let Some(m) = METHODS.iter().find(|m| rest.starts_with(m) && rest.get(m.len()) == Some(&b' ')) {
        let target = &rest[m.len() + 1..];
        let line_end = target.iter().take(300).position(|&c| c == b'\r' || c == b'\n').unwrap_or(target.len().min(300));
        let line = &target[..line_end];
        let http = line.windows(6).any(|w| w.eq_ignore_ascii_case(b" http/"));
        if (target.first() == Some(&b'/') || target.starts_with(b"http")) && http {
            return Some(Kind::RequestLine);
        }
    }
    if store_command(rest) {
        return Some(Kind::StoreCommand);
    }
    header(rest).then_some(Kind::Header)
}

/// Redis commands that wipe the store, make it a replica of the attacker's or write its
/// dump where a web server or cron reads it. Redis and memcached read one command per line,
/// so a cache key or value that reaches them unescaped ends the application's command at the
/// break and starts the attacker's (`key=x%0d%0aFLUSHALL`).
const STORE_COMMANDS: &[&[u8]] = &[b"flushall", b"flushdb", b"flush_all", b"slaveof", b"replicaof", b"config set", b"module load"];

/// The line at `rest` is one of [`STORE_COMMANDS`] (alone or with arguments) or a memcached
/// storage command with its numeric fields (`set admin 0 0 4`).
fn store_command(rest: &[u8]) -> bool {
    let line_end = rest.iter().take(200).position(|&c| c == b'\r' || c == b'\n').unwrap_or(rest.len().min(200));
    let line = &rest[..line_end];
    let named = STORE_COMMANDS
        .iter()
        .any(|c| line.len() >= c.len() && line[..c.len()].eq_ignore_ascii_case(c) && line.get(c.len()).is_none_or(|&b| b == b' '));
    named || memcached_storage(line)
}

/// `set|add|replace|append|prepend|cas <key> <flags> <exptime> <bytes>`: three numbers after
/// the key are memcached's syntax and nothing else's.
fn memcached_storage(line: &[u8]) -> bool {
    let mut words = line.split(|&c| c == b' ').filter(|w| !w.is_empty());
    let verb = words.next().unwrap_or(b"");
    let storage = [&b"set"[..], b"add", b"replace", b"append", b"prepend", b"cas"].iter().any(|v| v.eq_ignore_ascii_case(verb));
    let key = words.next();
    let numbers = words.take(3).filter(|w| w.iter().all(u8::is_ascii_digit)).count();
    storage && key.is_some() && numbers == 3
}

/// `Name: value` with a name a response or request header takes.
fn header(rest: &[u8]) -> bool {
    let name_len = rest.iter().take(NAME_MAX + 1).take_while(|c| c.is_ascii_alphanumeric() || **c == b'-').count();
    if !(2..=NAME_MAX).contains(&name_len) {
        return false;
    }
    let name = &rest[..name_len];
    let mut k = name_len;
    while rest.get(k).is_some_and(|c| *c == b' ' || *c == b'\t') {
        k += 1;
    }
    if rest.get(k) != Some(&b':') {
        return false;
    }
    k += 1;
    while rest.get(k).is_some_and(|c| *c == b' ' || *c == b'\t') {
        k += 1;
    }
    if !rest.get(k).is_some_and(|c| !matches!(c, b'\r' | b'\n')) {
        return false;
    }
    let x_header = name.len() > 3 && name[..2].eq_ignore_ascii_case(b"x-");
    x_header || HEADERS.iter().any(|h| h.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(text: &str) -> Option<&'static str> {
        let mut input = Input::new(text);
        input.place = Place::BodyValue;
        CrlfCheck.inspect(&input).map(|f| f.reason)
    }

    #[test]
    fn layered_breaks() {
        assert_eq!(reason("x%0D%0ASet%2DCookie%3A%20session%3Dattacker"), Some("crlf:encoded-header"));
        assert_eq!(reason("%250d%250aSet-Cookie:%2520session=attacker"), Some("crlf:encoded-header"));
        assert_eq!(reason("&#x25;0d&#x25;0aSet&#x2d;Cookie&#x3a;&#x25;20session&#x3d;attacker"), Some("crlf:encoded-header"));
        assert_eq!(reason("%2525250d%2525250aLocation:%20//evil.example"), Some("crlf:encoded-header"));
        assert_eq!(reason("a%0d%0aHTTP/1.1%20200%20OK"), Some("crlf:encoded-status-line"));
        assert_eq!(reason("a%250d%250aGET%2520/admin%2520HTTP/1.1"), Some("crlf:encoded-request-line"));
        assert_eq!(reason("a%0d%0a%0d%0a<script>alert(1)</script>"), Some("crlf:encoded-body"));
        assert_eq!(reason("%E5%98%8A%E5%98%8DX-Injected:%201"), Some("crlf:encoded-header"));
        assert_eq!(reason("en%26%23x0d%3B%26%23x0a%3BX-Forwarded-Host%3A%20evil"), Some("crlf:encoded-header"));
    }

    #[test]
    fn raw_breaks_by_place() {
        let mut input = Input::new("x\r\nX-Injected: 1");
        assert_eq!(CrlfCheck.inspect(&input).map(|f| f.level), Some(1));
        input.place = Place::BodyValue;
        assert_eq!(CrlfCheck.inspect(&input), None);
        input.sensitivity = 2;
        assert_eq!(CrlfCheck.inspect(&input).map(|f| f.level), Some(2));
    }

    /// A cache key that reaches Redis or memcached unescaped: each line is a command.
    #[test]
    fn store_commands_after_a_break() {
        for text in [
            "x%0d%0aFLUSHALL%0d%0a",
            "x%0d%0aCONFIG%20SET%20dir%20/var/www/html",
            "x%0d%0aSLAVEOF%20203.0.113.9%206379",
            "x%0d%0aset%20admin%200%200%204%0d%0atrue",
        ] {
            assert_eq!(reason(text), Some("crlf:store-command"), "{text}");
        }
        let mut input = Input::new("x\r\nFLUSHALL\r\n");
        assert_eq!(CrlfCheck.inspect(&input).map(|f| (f.reason, f.level)), Some(("crlf:store-command", 1)));
        input.place = Place::BodyValue;
        assert_eq!(CrlfCheck.inspect(&input), None, "a raw break in a body value waits for level 2");
        for text in ["a%0d%0aset the table for 4", "a%0d%0aconfiguration set up", "a%0d%0aflushall-ish"] {
            assert_eq!(reason(text), None, "{text}");
        }
    }

    #[test]
    fn benign() {
        for text in [
            "mailto:a@b.c?subject=Hi&body=Hello%0D%0AName%3A%20Bob",
            "line one\nContent-Type: a textarea in a body is normal",
            "100%25 done%0D%0Anext line",
            "q=%0d%0a",
            "Total: 50%0AName: Bob",
            "&#13;&#10;Note: hello",
        ] {
            assert_eq!(reason(text), None, "{text}");
        }
    }
}
