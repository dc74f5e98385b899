//! Puts a variant into a whole HTTP request, in each of the places a real client carries
//! data, so recall is measured per placement and not only for a query string.

use crate::mutate::percent_specials;
use crate::{Carrier, Variant};

/// Where a [`Carrier::Value`] variant goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// `GET /search?q=<percent-encoded>`
    Query,
    /// `POST` `application/x-www-form-urlencoded`
    Form,
    /// `POST` `application/json`, nested one level (`{"user":{"bio":...}}`)
    Json,
    /// A custom header value (`X-Client-Note`)
    Header,
    /// A cookie value
    Cookie,
    /// `POST` `application/xml`, as element text (entity-escaped as a client would)
    Xml,
    /// `POST` `multipart/form-data`, as a text part
    Multipart,
}

impl Placement {
    pub const ALL: [Placement; 7] =
        [Placement::Query, Placement::Form, Placement::Json, Placement::Header, Placement::Cookie, Placement::Xml, Placement::Multipart];

    pub fn name(self) -> &'static str {
        match self {
            Placement::Query => "query",
            Placement::Form => "form",
            Placement::Json => "json",
            Placement::Header => "header",
            Placement::Cookie => "cookie",
            Placement::Xml => "xml",
            Placement::Multipart => "multipart",
        }
    }
}

/// A whole request in the engine's terms.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Request {
    pub method: String,
    /// Path and raw query, as on the wire.
    pub path: String,
    /// `(name, value)`; names as a client sends them.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Request {
    pub fn new(method: &str, path: &str) -> Self {
        Request { method: method.into(), path: path.into(), headers: Vec::new(), body: String::new() }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn body(mut self, body: &str) -> Self {
        self.body = body.into();
        self
    }

    /// The spec's request_text: `{METHOD} {path}` newline `{body}`.
    pub fn request_text(&self) -> String {
        if self.body.is_empty() {
            format!("{} {}", self.method, self.path)
        } else {
            format!("{} {}\n{}", self.method, self.path, self.body)
        }
    }
}

const UA: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";

/// The request carrying `variant`. A [`Carrier::Header`] or [`Carrier::Request`] variant
/// ignores `placement`.
pub fn to_request(variant: &Variant, placement: Placement) -> Request {
    let payload = variant.payload.as_str();
    match &variant.carrier {
        Carrier::Request(request) => request.clone(),
        Carrier::Header(name) => Request::new("GET", "/api/items?page=2").header("User-Agent", UA).header(name, &header_safe(payload)),
        Carrier::Value => place_value(payload, placement),
    }
}

fn place_value(payload: &str, placement: Placement) -> Request {
    let base = |method: &str, path: &str| Request::new(method, path).header("User-Agent", UA).header("Accept", "*/*");
    match placement {
        Placement::Query => base("GET", &format!("/search?q={}&page=1", percent_specials(payload))),
        Placement::Form => base("POST", "/account/profile")
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(&format!("name=alex&bio={}&save=1", percent_specials(payload))),
        Placement::Json => base("POST", "/api/v1/profile")
            .header("Content-Type", "application/json")
            .body(&format!("{{\"user\":{{\"id\":42,\"bio\":{}}},\"save\":true}}", json_string(payload))),
        Placement::Header => base("GET", "/api/items?page=2").header("X-Client-Note", &header_safe(payload)),
        Placement::Cookie => base("GET", "/account").header("Cookie", &format!("session=abc123; pref={}", cookie_safe(payload))),
        Placement::Xml => base("POST", "/api/orders")
            .header("Content-Type", "application/xml")
            .body(&format!("<?xml version=\"1.0\"?><order><id>7</id><note>{}</note></order>", xml_text(payload))),
        Placement::Multipart => {
            base("POST", "/upload").header("Content-Type", "multipart/form-data; boundary=----rampartEvasion").body(&format!(
                "------rampartEvasion\r\nContent-Disposition: form-data; name=\"comment\"\r\n\r\n{payload}\r\n------rampartEvasion--\r\n"
            ))
        }
    }
}

/// A header value cannot hold CR, LF or NUL: those are percent-encoded, as an attacker must.
fn header_safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\r' | '\n' | '\0' => out.push_str(&format!("%{:02X}", c as u32)),
            _ => out.push(c),
        }
    }
    out
}

/// Cookie values cannot hold `;`, `,`, whitespace or controls: those are percent-encoded, as
/// applications URL-decode cookie values.
fn cookie_safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            ';' | ',' | ' ' | '\t' | '\r' | '\n' | '\0' | '%' | '"' => out.push_str(&format!("%{:02X}", c as u32)),
            _ => out.push(c),
        }
    }
    out
}

pub fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn xml_text(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(payload: &str) -> Variant {
        Variant { family: "t", mutation: "base".into(), payload: payload.into(), carrier: Carrier::Value }
    }

    #[test]
    fn every_placement_carries_the_payload() {
        for p in Placement::ALL {
            let r = to_request(&value("a<b"), p);
            let all = format!("{} {:?}", r.request_text(), r.headers);
            assert!(all.contains("a<b") || all.contains("a%3Cb") || all.contains("a&lt;b"), "{p:?}: {all}");
        }
        let r = to_request(&value("x\r\ny"), Placement::Header);
        assert_eq!(r.headers.last().unwrap().1, "x%0D%0Ay");
        assert_eq!(json_string("a\"b\n"), "\"a\\\"b\\n\"");
    }
}
