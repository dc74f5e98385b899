//! Where a payload goes in a request, and which encodings make sense there. A placement
//! builds the whole request from the (already encoded) payload and escapes only what its
//! syntax requires.

use super::encodings::{
    cookie_name_char, cookie_value_char, header_char, path_segment_char, percent_escape, uri_value_char, xml_escape, Encoding, Encoding::*,
};

/// A request as sent to a door.
pub struct Req {
    pub method: &'static str,
    /// Path and query, as on the request line.
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

pub struct Placement {
    /// Stable id: the first column of known_gaps.txt.
    pub id: &'static str,
    pub encodings: &'static [Encoding],
    /// Rows that pad the request past field or byte caps: a control may be refused there
    /// once partial verdicts block (WAF_ON_PARTIAL), so controls are allowed to block.
    pub padded: bool,
    build: fn(Encoding, &str) -> Req,
}

impl Placement {
    pub fn build(&self, encoding: Encoding, payload: &str) -> Req {
        (self.build)(encoding, &encoding.apply(payload))
    }
}

const PADDING_FIELDS: usize = 1_100;
const PADDING_BYTES: usize = 900 * 1024;
const BOUNDARY: &str = "----rampart-invariance-7f3a";

const fn row(id: &'static str, encodings: &'static [Encoding], build: fn(Encoding, &str) -> Req) -> Placement {
    Placement { id, encodings, padded: false, build }
}

const fn padded(id: &'static str, build: fn(Encoding, &str) -> Req) -> Placement {
    Placement { id, encodings: &[Plain], padded: true, build }
}

pub const PLACEMENTS: &[Placement] = &[
    row("query-value", &[Plain, Url, DoubleUrl, Base64, Html], |_, v| get(format!("/search?q={}", query(v)), vec![])),
    row("path-segment", &[Plain, Url, DoubleUrl], |_, v| get(format!("/files/{}/view", percent_escape(v, path_segment_char)), vec![])),
    row("form-field", &[Plain, Url, DoubleUrl, Base64, Html], |_, v| form(format!("name=alice&comment={}", query(v)))),
    row("json-value", &[Plain, JsonU, Url, Base64, Html], |e, v| json(format!("{{\"name\":\"alice\",\"comment\":{}}}", json_str(e, v)))),
    row("json-key", &[Plain, JsonU], |e, v| json(format!("{{\"name\":\"alice\",{}:1}}", json_str(e, v)))),
    row("multipart-part", &[Plain, Url, Base64, Html], |_, v| multipart(v)),
    row("xml-text", &[Plain, Html, Base64], |e, v| xml(format!("<order><note>{}</note></order>", xml_str(e, v)))),
    row("xml-attribute", &[Plain, Html], |e, v| xml(format!("<order note=\"{}\"><id>1</id></order>", xml_str(e, v)))),
    row("header-user-agent", &[Plain, Url], |_, v| get("/".into(), vec![("user-agent", header(v))])),
    row("header-referer", &[Plain, Url], |_, v| get("/".into(), vec![("referer", header(v))])),
    row("header-x-custom", &[Plain, Url, Base64, Html], |_, v| get("/".into(), vec![("x-custom-data", header(v))])),
    row("header-accept-language", &[Plain], |_, v| get("/".into(), vec![("accept-language", header(v))])),
    row("header-x-forwarded-for", &[Plain], |_, v| get("/".into(), vec![("x-forwarded-for", header(v))])),
    row("cookie-name", &[Plain], |_, v| {
        get("/".into(), vec![("cookie", format!("{}=1; theme=dark", percent_escape(v, cookie_name_char)))])
    }),
    row("cookie-value", &[Plain, Url, Base64], |_, v| {
        get("/".into(), vec![("cookie", format!("theme=dark; pref={}", percent_escape(v, cookie_value_char)))])
    }),
    padded("query-after-1100-fields", |_, v| get(format!("/search?{}q={}", "a&".repeat(PADDING_FIELDS), query(v)), vec![])),
    padded("form-after-1100-fields", |_, v| form(format!("{}comment={}", "a=1&".repeat(PADDING_FIELDS), query(v)))),
    padded("json-after-1100-items", |e, v| {
        json(format!("{{\"items\":[{}0],\"comment\":{}}}", "0,".repeat(PADDING_FIELDS), json_str(e, v)))
    }),
    padded("form-after-900kb", |_, v| form(format!("pad={}&comment={}", "a".repeat(PADDING_BYTES), query(v)))),
    padded("json-after-900kb", |e, v| json(format!("{{\"pad\":\"{}\",\"comment\":{}}}", "a".repeat(PADDING_BYTES), json_str(e, v)))),
];

fn query(value: &str) -> String {
    percent_escape(value, uri_value_char)
}

fn header(value: &str) -> String {
    percent_escape(value, header_char)
}

/// A JSON string literal: json-u text goes in verbatim (it is already JSON escapes).
fn json_str(encoding: Encoding, value: &str) -> String {
    if encoding == JsonU {
        format!("\"{value}\"")
    } else {
        serde_json::Value::String(value.to_string()).to_string()
    }
}

/// XML character data: html-encoded text is already character references.
fn xml_str(encoding: Encoding, value: &str) -> String {
    if encoding == Html {
        value.to_string()
    } else {
        xml_escape(value)
    }
}

fn get(target: String, headers: Vec<(&str, String)>) -> Req {
    Req { method: "GET", target, headers: headers.into_iter().map(|(n, v)| (n.to_string(), v)).collect(), body: Vec::new() }
}

fn post(target: &str, content_type: &str, body: String) -> Req {
    Req { method: "POST", target: target.into(), headers: vec![("content-type".into(), content_type.into())], body: body.into_bytes() }
}

fn form(body: String) -> Req {
    post("/comment", "application/x-www-form-urlencoded", body)
}

fn json(body: String) -> Req {
    post("/api/comment", "application/json", body)
}

fn xml(body: String) -> Req {
    post("/api/order", "application/xml", body)
}

fn multipart(value: &str) -> Req {
    let body = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nalice\r\n\
         --{BOUNDARY}\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"note.txt\"\r\nContent-Type: text/plain\r\n\r\n{value}\r\n\
         --{BOUNDARY}--\r\n"
    );
    post("/upload", &format!("multipart/form-data; boundary={BOUNDARY}"), body)
}
