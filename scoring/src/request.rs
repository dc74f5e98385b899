//! Parses the spec's request_text (`{METHOD} {path}?{query}` newline `{body}`) and optional
//! headers into [`Fields`].

use crate::body;
use crate::fields::{FieldKind, FieldLimits, Fields};
use crate::headers;
use crate::normalize::percent::path_decode_into;

/// A scoring request as the inference service receives it.
#[derive(Clone, Debug, Default)]
pub struct ScoreInput<'a> {
    pub request_text: &'a str,
    /// Headers of the original request, `(name, value)`; names in any case.
    pub headers: &'a [(String, String)],
}

/// The request after parsing: its method and path, and every field a detector looks at.
#[derive(Debug)]
pub struct ParsedRequest {
    pub method: String,
    pub path: String,
    pub fields: Fields,
}

use body::form::push_form_pairs;
use body::is_plain_name;

/// Parses a request. Never fails: anything unrecognised is kept as raw text to scan.
pub fn parse_request(input: &ScoreInput<'_>, limits: FieldLimits) -> ParsedRequest {
    let mut fields = Fields::with_limits(limits);
    let text = input.request_text;
    fields.reserve(text.len() + input.headers.iter().map(|(n, v)| n.len() + v.len()).sum::<usize>());
    let (first_line, body) = match memchr::memchr(b'\n', text.as_bytes()) {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (text, ""),
    };
    let first_line = first_line.strip_suffix('\r').unwrap_or(first_line);
    let (method, target) = split_request_line(first_line);
    let (raw_path, query) = match memchr::memchr(b'?', target.as_bytes()) {
        Some(i) => (&target[..i], Some(&target[i + 1..])),
        None => (target, None),
    };

    let mut scratch = String::new();
    path_decode_into(raw_path, &mut scratch);
    let path = scratch.clone();
    if path.len() > 1 {
        fields.push(FieldKind::Path, "", &path);
    }
    if let Some(query) = query {
        push_query(query, &mut fields, &mut scratch);
    }

    let mut content_type = None;
    for (name, value) in input.headers {
        if name.eq_ignore_ascii_case("content-type") {
            content_type = Some(value.as_str());
        }
        // The name reaches the application too (frameworks hand every header to the code, and
        // logs write it): a name that is not a plain token is scored like a cookie name. Real
        // names are letters, digits and `-`, so this costs one pass over a few bytes.
        if !is_plain_name(name) {
            fields.push(FieldKind::Header, "", name);
        }
        if name.eq_ignore_ascii_case("cookie") {
            push_cookies(value, &mut fields, &mut scratch);
        } else if let Some(value) = headers::scored_value(name, value) {
            let value = if is_page_address(name) { without_plain_origin(&value) } else { &value };
            if !value.is_empty() {
                fields.push(FieldKind::Header, &name.to_ascii_lowercase(), value);
            }
        }
    }
    if !body.is_empty() {
        body::parse_body(body, content_type, &mut fields);
    }
    ParsedRequest { method: method.to_string(), path, fields }
}

/// Headers a browser fills with the address of the page that made the request.
fn is_page_address(name: &str) -> bool {
    name.eq_ignore_ascii_case("referer") || name.eq_ignore_ascii_case("origin")
}

/// `http://127.0.0.1:8080/cart?x=1` → `/cart?x=1`. The scheme and host of Origin / Referer
/// name the site the user is on — for an intranet or a local app, a private or loopback
/// address the SSRF rules would flag on every browser POST. Only a plain host (letters,
/// digits, `.-:[]`) is dropped: anything stranger in that position is still scored.
fn without_plain_origin(value: &str) -> &str {
    let Some(rest) = value.strip_prefix("http://").or_else(|| value.strip_prefix("https://")) else { return value };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = &rest[..end];
    if !host.is_empty() && host.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']')) {
        &rest[end..]
    } else {
        value
    }
}

/// `GET /a?b HTTP/1.1` → (`GET`, `/a?b`); tolerant of a missing method or version.
fn split_request_line(line: &str) -> (&str, &str) {
    let line = line.trim_start();
    let (method, rest) = match memchr::memchr(b' ', line.as_bytes()) {
        Some(i) if line[..i].bytes().all(|b| b.is_ascii_alphabetic()) => (&line[..i], &line[i + 1..]),
        _ => ("", line),
    };
    let rest = rest.trim_start();
    let target = match rest.rfind(" HTTP/") {
        Some(i) => &rest[..i],
        None => rest,
    };
    (method, target)
}

fn push_query(query: &str, fields: &mut Fields, scratch: &mut String) {
    push_form_pairs(query, FieldKind::QueryName, FieldKind::QueryValue, fields, scratch);
}

fn push_cookies(header: &str, fields: &mut Fields, scratch: &mut String) {
    for pair in header.split(';') {
        let pair = pair.trim();
        if pair.is_empty() {
            continue;
        }
        let (name, value) = match memchr::memchr(b'=', pair.as_bytes()) {
            Some(i) => (&pair[..i], &pair[i + 1..]),
            None => ("", pair),
        };
        let name = name.trim();
        // Names reach the application too (frameworks iterate over every cookie).
        if !is_plain_name(name) {
            path_decode_into(name, scratch);
            fields.push(FieldKind::Cookie, "", scratch);
        }
        path_decode_into(value, scratch);
        fields.push(FieldKind::Cookie, name, scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::Field;

    fn parse(text: &str) -> ParsedRequest {
        parse_request(&ScoreInput { request_text: text, headers: &[] }, FieldLimits::default())
    }

    #[test]
    fn request_line_query_and_body_become_fields() {
        let req = parse("GET /shop/item?id=42&name=O%27Brien+Jr&x%3Cy=1\nhello");
        assert_eq!(req.method, "GET");
        assert_eq!(req.path, "/shop/item");
        let fields: Vec<Field<'_>> = req.fields.iter().collect();
        assert!(fields.contains(&Field { kind: FieldKind::QueryValue, name: "name", value: "O'Brien Jr" }));
        assert!(fields.contains(&Field { kind: FieldKind::QueryName, name: "", value: "x<y" }));
        assert!(fields.iter().any(|f| f.value == "hello"));
    }

    #[test]
    fn http_version_suffix_and_bare_tokens() {
        let req = parse("GET /a/b?../../etc/passwd HTTP/1.1\n");
        assert_eq!(req.path, "/a/b");
        assert!(req.fields.iter().any(|f| f.kind == FieldKind::QueryValue && f.value == "../../etc/passwd"));
    }

    #[test]
    fn headers_and_cookies_are_scored_but_plumbing_is_not() {
        let headers = vec![
            ("User-Agent".to_string(), "sqlmap/1.7".to_string()),
            ("Accept".to_string(), "*/*".to_string()),
            ("Cookie".to_string(), "sid=abc; pref=%3Cscript%3E; %3Cb%3E=1".to_string()),
        ];
        let req = parse_request(&ScoreInput { request_text: "GET /", headers: &headers }, FieldLimits::default());
        let fields: Vec<Field<'_>> = req.fields.iter().collect();
        assert!(fields.contains(&Field { kind: FieldKind::Header, name: "user-agent", value: "sqlmap/1.7" }));
        assert!(fields.contains(&Field { kind: FieldKind::Cookie, name: "pref", value: "<script>" }));
        assert!(!fields.iter().any(|f| f.value == "*/*"));
        assert!(fields.contains(&Field { kind: FieldKind::Cookie, name: "", value: "<b>" }), "cookie names are scored");
    }

    #[test]
    fn garbage_never_panics() {
        for text in ["", "\n", "?", "GET", " ?&=&=\n\n", "\u{0}\u{ffff}?%", "GET /%%%?%u12&%zz=%"] {
            let _ = parse(text);
        }
    }

    #[test]
    fn origin_and_referer_lose_only_a_plain_host() {
        assert_eq!(without_plain_origin("http://127.0.0.1:8080"), "");
        assert_eq!(without_plain_origin("http://10.0.0.5/cart?item=3"), "/cart?item=3");
        assert_eq!(without_plain_origin("https://[::1]:8443/a#b"), "/a#b");
        assert_eq!(without_plain_origin("http://x' or 1=1--/"), "http://x' or 1=1--/");
        assert_eq!(without_plain_origin("javascript:alert(1)"), "javascript:alert(1)");
        let headers = vec![
            ("Origin".to_string(), "http://127.0.0.1:8080".to_string()),
            ("Referer".to_string(), "http://127.0.0.1:8080/search?q=1' union select 1--".to_string()),
        ];
        let parsed = parse_request(&ScoreInput { request_text: "POST /x\n", headers: &headers }, FieldLimits::default());
        let values: Vec<&str> = parsed.fields.iter().filter(|f| f.kind == FieldKind::Header).map(|f| f.value).collect();
        assert_eq!(values, ["/search?q=1' union select 1--"]);
    }
}
