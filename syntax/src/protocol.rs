//! HTTP protocol anomalies: header and name values that no ordinary client sends and that
//! exist to make the WAF and the application read one request two ways — a method override
//! that turns a GET into a DELETE (or asks for TRACE), legacy and overlapping ranges (the
//! Apache range DoS), a Connection header that repeats itself or names end-to-end headers
//! (so a proxy strips `X-Forwarded-For` or `Authorization` before the application sees it),
//! a Transfer-Encoding other than `chunked` or a Content-Length that is not a number
//! (request smuggling), and multipart part names a parser can split differently (a quote,
//! CR/LF, NUL, `..`, unbalanced brackets); a URL-override header (`X-Original-URL`) that
//! routes the request to another path than the one judged, and an upload named like the
//! server's own configuration (`.htaccess`, `web.config`); a `Proxy` request header
//! (httpoxy: CGI turns it into `HTTP_PROXY`, which HTTP libraries take as their proxy).
//!
//! Decided from [`Input::place`] and [`Input::name`]: only the few named headers and
//! parameters are read, so any other field costs one comparison.

use crate::{Check, Finding, Input, Place};

pub struct ProtocolCheck;

/// More ranges than any media player or download manager asks for in one request.
const MAX_RANGES: usize = 5;
/// Ranges compared pairwise for overlap (bounded, so linear in the input).
const OVERLAP_WINDOW: usize = 32;

impl Check for ProtocolCheck {
    fn detector(&self) -> &'static str {
        "protocol"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        let found = match input.place {
            Place::Header => match input.name {
                "x-http-method-override" | "x-http-method" | "x-method-override" => method_override(input.text, input.method),
                "request-range" => Some(("protocol:request-range", 1)),
                "range" => range(input.text),
                "connection" | "proxy-connection" => connection(input.text),
                "transfer-encoding" => transfer_encoding(input.text),
                "content-length" => content_length(input.text),
                "x-original-url" | "x-rewrite-url" => url_override(input.text),
                // No client has a reason to send it; under CGI it becomes `HTTP_PROXY`, and the
                // application's outbound requests go through the attacker's host (httpoxy).
                "proxy" if !input.text.trim().is_empty() => Some(("protocol:httpoxy-proxy-header", 1)),
                _ => None,
            },
            Place::QueryValue | Place::BodyValue if input.name.eq_ignore_ascii_case("_method") => method_override(input.text, input.method),
            Place::BodyKey => malformed_name(input.text, input.name),
            _ => None,
        };
        let (reason, level) = found?;
        (level <= input.sensitivity).then_some(Finding { reason, score: 0.95, level })
    }
}

type Found = Option<(&'static str, u8)>;

fn is_standard_method(m: &str) -> bool {
    matches!(m, "GET" | "HEAD" | "POST" | "PUT" | "DELETE" | "PATCH" | "OPTIONS")
}

fn is_webdav_method(m: &str) -> bool {
    matches!(m, "PROPFIND" | "PROPPATCH" | "MKCOL" | "COPY" | "MOVE" | "LOCK" | "UNLOCK" | "SEARCH" | "REPORT" | "MKCALENDAR")
}

/// `X-HTTP-Method-Override: DELETE` on a GET: frameworks that honour it run the request as a
/// DELETE while a WAF or cache rule keyed on the method saw a harmless GET. POST tunnelling
/// a standard verb is the header's intended use (HTML forms, Google APIs) and only counts at
/// level 3.
fn method_override(value: &str, method: &str) -> Found {
    let verb = value.trim();
    if verb.is_empty() || verb.len() > 16 || !verb.bytes().all(|b| b.is_ascii_alphabetic() || b == b'-' || b == b'_') {
        return if verb.is_empty() { None } else { Some(("protocol:method-override-odd", 2)) };
    }
    let verb = verb.to_ascii_uppercase();
    let method = method.trim().to_ascii_uppercase();
    if matches!(verb.as_str(), "TRACE" | "TRACK" | "CONNECT" | "DEBUG") {
        return Some(("protocol:method-override-debug", 1));
    }
    if verb == method {
        return None;
    }
    let safe_request = matches!(method.as_str(), "GET" | "HEAD" | "OPTIONS");
    let known = is_standard_method(&verb) || is_webdav_method(&verb);
    match (safe_request, known) {
        (true, true) if !matches!(verb.as_str(), "GET" | "HEAD" | "OPTIONS") => Some(("protocol:method-override-unsafe", 1)),
        (_, false) => Some(("protocol:method-override-odd", 2)),
        _ => Some(("protocol:method-override", 3)),
    }
}

/// `bytes=0-,0-,0-...`: more than [`MAX_RANGES`] ranges, or ranges that overlap.
fn range(value: &str) -> Found {
    let (_unit, specs) = value.split_once('=')?;
    let mut seen: Vec<(u64, u64)> = Vec::with_capacity(8);
    let mut count = 0usize;
    let mut overlap = false;
    for spec in specs.split(',') {
        let spec = spec.trim();
        if spec.is_empty() {
            continue;
        }
        count += 1;
        let Some((first, last)) = spec.split_once('-') else { continue };
        let (first, last) = (first.trim(), last.trim());
        let span = match (first.parse::<u64>(), last.parse::<u64>()) {
            (Ok(a), Ok(b)) => (a, b),
            (Ok(a), Err(_)) if last.is_empty() => (a, u64::MAX),
            // A suffix range (`-500`) is the end of the file: compare by length, as a
            // negative start.
            (Err(_), Ok(n)) if first.is_empty() => (u64::MAX - n, u64::MAX),
            _ => continue,
        };
        if seen.len() < OVERLAP_WINDOW {
            overlap |= seen.iter().any(|&(a, b)| span.0 <= b && a <= span.1);
            seen.push(span);
        }
    }
    if count > MAX_RANGES {
        Some(("protocol:range-many", 1))
    } else if overlap {
        Some(("protocol:range-overlap", 1))
    } else {
        None
    }
}

/// Headers a Connection header must never name: a proxy honouring it would drop them before
/// the application (and its access control) sees them.
fn is_end_to_end_security_header(token: &str) -> bool {
    let t = token.to_ascii_lowercase();
    t.starts_with("x-forwarded-")
        || t.starts_with("x-waf-")
        || t.starts_with("x-auth")
        || t.starts_with("x-api-")
        || matches!(
            t.as_str(),
            "authorization"
                | "proxy-authorization"
                | "cookie"
                | "host"
                | "content-length"
                | "content-type"
                | "forwarded"
                | "x-real-ip"
                | "x-client-ip"
                | "true-client-ip"
                | "cf-connecting-ip"
                | "x-csrf-token"
                | "x-xsrf-token"
                | "x-original-url"
                | "x-rewrite-url"
                | "origin"
                | "referer"
                | "via"
                | "x-user"
                | "x-user-id"
        )
}

/// Connection options browsers and HTTP libraries send.
fn is_common_connection_option(token: &str) -> bool {
    ["close", "keep-alive", "upgrade", "te", "http2-settings"].iter().any(|o| o.eq_ignore_ascii_case(token))
}

/// `close, close` or `keep-alive, X-Forwarded-For`.
fn connection(value: &str) -> Found {
    let tokens: Vec<&str> = value.split(',').map(str::trim).filter(|t| !t.is_empty()).take(32).collect();
    if tokens.iter().any(|t| is_end_to_end_security_header(t)) {
        return Some(("protocol:connection-strips-header", 1));
    }
    let duplicated = tokens.iter().enumerate().any(|(k, t)| tokens[..k].iter().any(|u| u.eq_ignore_ascii_case(t)));
    if duplicated {
        return Some(("protocol:connection-duplicate", 1));
    }
    if tokens.iter().any(|t| !is_common_connection_option(t)) {
        return Some(("protocol:connection-odd", 3));
    }
    None
}

/// Anything but `chunked` (smuggling: `chunked, identity`, `xchunked`, `chunked `, tabs).
/// Not even surrounding spaces: HTTP parsers strip them before the value reaches us, so a
/// space that survived was sent to split a front end from a back end.
fn transfer_encoding(value: &str) -> Found {
    if value == "chunked" {
        None
    } else if value.eq_ignore_ascii_case("chunked") {
        Some(("protocol:transfer-encoding-case", 2))
    } else {
        Some(("protocol:transfer-encoding", 1))
    }
}

/// A Content-Length that is not one decimal number (`5, 5`, `+5`, `0x10`, `5 abc`).
fn content_length(value: &str) -> Found {
    let v = value.trim();
    if !v.is_empty() && v.len() <= 20 && v.bytes().all(|b| b.is_ascii_digit()) {
        None
    } else {
        Some(("protocol:content-length", 1))
    }
}

/// A body key (multipart part name or filename, form name, JSON key) a parser can split
/// differently from the application: a quote, CR/LF, NUL (raw or `%xx`), `..`, or brackets
/// that do not balance (PHP reads `a[b` as `a_b`).
/// Per-directory configuration a web server reads from the folder it serves.
const SERVER_CONFIG_FILES: &[&str] = &[".htaccess", ".htpasswd", ".user.ini", "web.config", "php.ini"];

/// `X-Original-URL` / `X-Rewrite-URL` (IIS URL Rewrite, Symfony, Zend): frameworks that honour
/// them route the request to the path in the header, while the WAF and the front proxy's access
/// rules judged the request line's path (`GET /` with `X-Original-URL: /admin`). Set by a
/// rewriting proxy behind Rampart, never by a client in front of it.
fn url_override(value: &str) -> Found {
    let v = value.trim();
    (v.starts_with('/') || v.starts_with('\\') || v.get(..4).is_some_and(|h| h.eq_ignore_ascii_case("http")))
        .then_some(("protocol:url-override-header", 1))
}

fn malformed_name(text: &str, name: &str) -> Found {
    let b = text.as_bytes();
    // A JSON document sent as a form body (jQuery's default content type) arrives as one
    // long form name full of quotes: data, not a part name.
    if name != "filename" && (b.len() > 200 || matches!(b.first(), Some(b'{' | b'['))) {
        return None;
    }
    if b.iter().any(|&c| matches!(c, b'"' | b'\r' | b'\n' | 0)) {
        return Some(("protocol:malformed-part-name", 1));
    }
    let lower_has = |pat: &[u8]| b.windows(pat.len()).any(|w| w.eq_ignore_ascii_case(pat));
    if lower_has(b"%00") || lower_has(b"%0d") || lower_has(b"%0a") || lower_has(b"%22") {
        return Some(("protocol:malformed-part-name", 1));
    }
    if name == "filename" {
        // `..` as a path segment in a filename (`../x`, `..\x`, a bare `..`).
        let dotdot = text.split(['/', '\\']).any(|seg| seg == "..");
        if dotdot {
            return Some(("protocol:malformed-part-name", 1));
        }
        // An upload named like the server's own per-directory configuration: `.htaccess`
        // with `AddType application/x-httpd-php .jpg` makes every uploaded image a script.
        let base = text.rsplit(['/', '\\']).next().unwrap_or(text).trim();
        let config = SERVER_CONFIG_FILES.iter().any(|f| base.eq_ignore_ascii_case(f));
        return config.then_some(("protocol:server-config-upload", 1));
    }
    if lower_has(b"..") {
        return Some(("protocol:malformed-part-name", 1));
    }
    let mut open = 0i32;
    for &c in b {
        match c {
            b'[' => open += 1,
            b']' => {
                open -= 1;
                if open < 0 {
                    break;
                }
            }
            _ => {}
        }
    }
    (open != 0).then_some(("protocol:malformed-part-name", 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(place: Place, name: &str, method: &str, text: &str, level: u8) -> Option<&'static str> {
        let mut input = Input::new(text);
        input.place = place;
        input.name = name;
        input.method = method;
        input.sensitivity = level;
        ProtocolCheck.inspect(&input).map(|f| f.reason)
    }

    #[test]
    fn anomalies() {
        let h = Place::Header;
        assert_eq!(check(h, "x-http-method-override", "GET", "DELETE", 1), Some("protocol:method-override-unsafe"));
        assert_eq!(check(h, "x-http-method", "POST", "trace", 1), Some("protocol:method-override-debug"));
        assert_eq!(check(Place::QueryValue, "_method", "GET", "put", 1), Some("protocol:method-override-unsafe"));
        assert_eq!(check(h, "request-range", "GET", "bytes=0-1", 1), Some("protocol:request-range"));
        assert_eq!(check(h, "range", "GET", "bytes=0-,5-0,5-1,5-2,5-3,5-4,5-5", 1), Some("protocol:range-many"));
        assert_eq!(check(h, "range", "GET", "bytes=0-100,50-150", 1), Some("protocol:range-overlap"));
        assert_eq!(check(h, "connection", "GET", "close, close", 1), Some("protocol:connection-duplicate"));
        assert_eq!(check(h, "connection", "GET", "keep-alive, X-Forwarded-For", 1), Some("protocol:connection-strips-header"));
        for te in ["chunked, identity", "xchunked", "chunked ", " chunked", "\tchunked", "chunked\t", "identity", "chunked;x=1"] {
            assert_eq!(check(h, "transfer-encoding", "POST", te, 1), Some("protocol:transfer-encoding"), "{te:?}");
        }
        assert_eq!(check(h, "content-length", "POST", "5, 5", 1), Some("protocol:content-length"));
        assert_eq!(check(Place::BodyKey, "", "POST", "a\"; filename=\"x.php", 1), Some("protocol:malformed-part-name"));
        assert_eq!(check(Place::BodyKey, "filename", "POST", "../../shell.php", 1), Some("protocol:malformed-part-name"));
        assert_eq!(check(Place::BodyKey, "", "POST", "user[name", 1), Some("protocol:malformed-part-name"));
        assert_eq!(check(h, "x-original-url", "GET", "/admin", 1), Some("protocol:url-override-header"));
        assert_eq!(check(h, "x-rewrite-url", "GET", " /admin/delete?id=1", 1), Some("protocol:url-override-header"));
        assert_eq!(check(h, "proxy", "GET", "http://10.0.0.5:8080", 1), Some("protocol:httpoxy-proxy-header"));
        assert_eq!(check(Place::BodyKey, "filename", "POST", ".htaccess", 1), Some("protocol:server-config-upload"));
        assert_eq!(check(Place::BodyKey, "filename", "POST", "C:\\site\\Web.Config", 1), Some("protocol:server-config-upload"));
    }

    #[test]
    fn normal_protocol() {
        let h = Place::Header;
        assert_eq!(check(h, "x-http-method-override", "POST", "PATCH", 2), None);
        assert_eq!(check(Place::BodyValue, "_method", "POST", "delete", 2), None);
        assert_eq!(check(h, "x-http-method-override", "GET", "GET", 4), None);
        assert_eq!(check(h, "range", "GET", "bytes=0-1023", 4), None);
        assert_eq!(check(h, "range", "GET", "bytes=0-99,200-299,-100", 4), None);
        assert_eq!(check(h, "connection", "GET", "keep-alive, Upgrade", 4), None);
        assert_eq!(check(h, "transfer-encoding", "POST", "chunked", 4), None);
        assert_eq!(check(Place::BodyKey, "", "POST", "user[address][city]", 4), None);
        assert_eq!(check(Place::BodyKey, "filename", "POST", "my report v1.2..final.pdf", 4), None);
        assert_eq!(check(Place::BodyKey, "filename", "POST", "htaccess-notes.txt", 4), None);
        assert_eq!(check(h, "x-original-url", "GET", "", 4), None);
        assert_eq!(check(h, "proxy-connection", "GET", "keep-alive", 4), None);
        assert_eq!(check(Place::QueryValue, "q", "GET", "DELETE", 4), None);
    }
}
