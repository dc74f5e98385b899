//! Request cutting for the new_families tests: a minimal JSON reader (the crate has no
//! dependencies), fields of a request as the engine cuts them (query values, form and JSON
//! leaves, multipart part names and filenames, headers with lower-case names), a sketch of the
//! decoded view, and `detect`, which runs every check on every field's plain and decoded text.

// Shared by several test binaries: each uses only some of the helpers.
#![allow(dead_code)]

use evasion::Request;
use syntax::{checks, Input, Place};

// ---- a minimal JSON reader (the crate has no dependencies) ----

#[derive(Debug)]
pub enum Json {
    Null,
    Bool,
    Num,
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

pub fn parse_json(text: &str) -> Option<Json> {
    let b = text.as_bytes();
    let mut i = 0;
    let v = value(b, &mut i, 0)?;
    Some(v)
}

fn ws(b: &[u8], i: &mut usize) {
    while *i < b.len() && b[*i].is_ascii_whitespace() {
        *i += 1;
    }
}

fn value(b: &[u8], i: &mut usize, depth: usize) -> Option<Json> {
    ws(b, i);
    if depth > 64 {
        return None;
    }
    match *b.get(*i)? {
        b'{' => {
            *i += 1;
            let mut fields = Vec::new();
            loop {
                ws(b, i);
                if b.get(*i) == Some(&b'}') {
                    *i += 1;
                    return Some(Json::Obj(fields));
                }
                let Json::Str(key) = value(b, i, depth + 1)? else { return None };
                ws(b, i);
                (b.get(*i) == Some(&b':')).then_some(())?;
                *i += 1;
                fields.push((key, value(b, i, depth + 1)?));
                ws(b, i);
                if b.get(*i) == Some(&b',') {
                    *i += 1;
                }
            }
        }
        b'[' => {
            *i += 1;
            let mut items = Vec::new();
            loop {
                ws(b, i);
                if b.get(*i) == Some(&b']') {
                    *i += 1;
                    return Some(Json::Arr(items));
                }
                items.push(value(b, i, depth + 1)?);
                ws(b, i);
                if b.get(*i) == Some(&b',') {
                    *i += 1;
                }
            }
        }
        b'"' => {
            *i += 1;
            let mut out: Vec<u16> = Vec::new();
            let mut s = String::new();
            loop {
                let c = *b.get(*i)?;
                match c {
                    b'"' => {
                        *i += 1;
                        s.push_str(&String::from_utf16_lossy(&out));
                        return Some(Json::Str(s));
                    }
                    b'\\' => {
                        let e = *b.get(*i + 1)?;
                        *i += 2;
                        let ch = match e {
                            b'n' => '\n',
                            b'r' => '\r',
                            b't' => '\t',
                            b'b' => '\u{8}',
                            b'f' => '\u{c}',
                            b'u' => {
                                let hex = std::str::from_utf8(b.get(*i..*i + 4)?).ok()?;
                                *i += 4;
                                out.push(u16::from_str_radix(hex, 16).ok()?);
                                continue;
                            }
                            other => other as char,
                        };
                        out.extend(ch.encode_utf16(&mut [0; 2]).iter());
                    }
                    _ => {
                        // One UTF-8 character.
                        let len = match c {
                            0..=0x7f => 1,
                            0xc0..=0xdf => 2,
                            0xe0..=0xef => 3,
                            _ => 4,
                        };
                        let ch = std::str::from_utf8(b.get(*i..*i + len)?).ok()?;
                        out.extend(ch.encode_utf16());
                        *i += len;
                    }
                }
            }
        }
        b't' | b'f' => {
            *i += if b[*i] == b't' { 4 } else { 5 };
            Some(Json::Bool)
        }
        b'n' => {
            *i += 4;
            Some(Json::Null)
        }
        _ => {
            let start = *i;
            while *i < b.len() && (b[*i].is_ascii_digit() || b"+-.eE".contains(&b[*i])) {
                *i += 1;
            }
            (*i > start).then_some(Json::Num)
        }
    }
}

impl Json {
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    pub fn str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }
}

// ---- fields of a request, as the engine cuts them ----

pub struct Field {
    pub place: Place,
    pub name: String,
    pub text: String,
}

fn field(place: Place, name: &str, text: &str) -> Field {
    Field { place, name: name.into(), text: text.into() }
}

pub fn percent_decode(text: &str, plus: bool) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match b[i] {
            b'%' if i + 2 < b.len() && hex(b[i + 1]).is_some() && hex(b[i + 2]).is_some() => {
                out.push((hex(b[i + 1]).unwrap() * 16 + hex(b[i + 2]).unwrap()) as u8);
                i += 3;
            }
            b'+' if plus => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_plain_name(name: &str) -> bool {
    name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'[' | b']'))
}

fn push_pairs(text: &str, key: Place, value: Place, out: &mut Vec<Field>) {
    for pair in text.split('&').filter(|p| !p.is_empty()) {
        let (n, v) = pair.split_once('=').unwrap_or(("", pair));
        let n = percent_decode(n, true);
        if !is_plain_name(&n) {
            out.push(field(key, "", &n));
        }
        out.push(field(value, &n, &percent_decode(v, true)));
    }
}

fn push_json(v: &Json, name: &str, out: &mut Vec<Field>) {
    match v {
        Json::Str(s) => out.push(field(Place::BodyValue, name, s)),
        Json::Arr(items) => items.iter().for_each(|item| push_json(item, name, out)),
        Json::Obj(fields) => {
            for (k, item) in fields {
                if !is_plain_name(k) {
                    out.push(field(Place::BodyKey, "", k));
                }
                push_json(item, k, out);
            }
        }
        _ => {}
    }
}

/// Content-Disposition parameters as the engine's multipart parser reads them (quoted values
/// with backslash escapes kept as they are).
fn disposition_params(value: &str) -> Vec<(String, String)> {
    let mut params = Vec::new();
    let b = value.as_bytes();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && (b[i] == b';' || b[i].is_ascii_whitespace()) {
            i += 1;
        }
        let start = i;
        while i < b.len() && b[i] != b'=' && b[i] != b';' {
            i += 1;
        }
        let pname = value[start..i].trim().to_string();
        if i >= b.len() || b[i] == b';' {
            continue;
        }
        i += 1;
        let pvalue = if b.get(i) == Some(&b'"') {
            let s = i + 1;
            i = s;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            let e = i.min(b.len());
            i = e + 1;
            value.get(s..e).unwrap_or("").to_string()
        } else {
            let s = i;
            while i < b.len() && b[i] != b';' {
                i += 1;
            }
            value[s..i].trim().to_string()
        };
        params.push((pname, pvalue));
    }
    params
}

fn push_multipart(body: &str, boundary: &str, out: &mut Vec<Field>) {
    for part in body.split(&format!("--{boundary}")).skip(1) {
        let Some((head, content)) = part.split_once("\r\n\r\n") else { continue };
        let mut name = String::new();
        for line in head.split("\r\n") {
            if let Some((h, v)) = line.split_once(':') {
                if h.trim().eq_ignore_ascii_case("content-disposition") {
                    for (p, v) in disposition_params(v) {
                        if p.eq_ignore_ascii_case("name") {
                            name = v;
                        } else if p.eq_ignore_ascii_case("filename") {
                            out.push(field(Place::BodyKey, "filename", &v));
                        }
                    }
                }
            }
        }
        if !name.is_empty() && !is_plain_name(&name) {
            out.push(field(Place::BodyKey, "", &name));
        }
        out.push(field(Place::BodyValue, &name, content.trim_end_matches("\r\n")));
    }
}

/// Headers the engine skips while their value is machine-formatted (a sketch of
/// `scoring::headers`, enough for these families: Connection only as distinct common options).
fn header_skipped(lower: &str, value: &str) -> bool {
    let v = value.trim();
    match lower {
        "content-length" => !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()),
        "connection" => {
            let tokens: Vec<String> = v.split(',').map(|t| t.trim().to_ascii_lowercase()).filter(|t| !t.is_empty()).collect();
            tokens
                .iter()
                .enumerate()
                .all(|(k, t)| ["close", "keep-alive", "upgrade", "te", "http2-settings"].contains(&t.as_str()) && !tokens[..k].contains(t))
        }
        "accept" | "accept-encoding" | "accept-language" | "host" | "content-type" | "cookie" | "authorization" => true,
        _ => false,
    }
}

pub fn fields_of(request: &Request) -> Vec<Field> {
    let mut out = Vec::new();
    let (path, query) = request.path.split_once('?').unwrap_or((&request.path, ""));
    if path.len() > 1 {
        out.push(field(Place::Path, "", &percent_decode(path, false)));
    }
    push_pairs(query, Place::QueryName, Place::QueryValue, &mut out);
    let mut content_type = String::new();
    for (name, value) in &request.headers {
        let lower = name.to_ascii_lowercase();
        if lower == "content-type" {
            content_type = value.to_ascii_lowercase();
        }
        if lower == "cookie" {
            for pair in value.split(';') {
                let (n, v) = pair.trim().split_once('=').unwrap_or(("", pair));
                out.push(field(Place::Cookie, n, &percent_decode(v, false)));
            }
        } else if !header_skipped(&lower, value) {
            out.push(field(Place::Header, &lower, value));
        }
    }
    let body = request.body.as_str();
    if body.is_empty() {
    } else if content_type.contains("json") {
        match parse_json(body) {
            Some(v) => push_json(&v, "", &mut out),
            None => out.push(field(Place::BodyRaw, "", body)),
        }
    } else if content_type.contains("x-www-form-urlencoded") {
        push_pairs(body, Place::BodyKey, Place::BodyValue, &mut out);
    } else if let Some(b) = content_type.split("boundary=").nth(1) {
        let boundary = request
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.split("boundary=").nth(1).unwrap_or(b).to_string())
            .unwrap_or_default();
        push_multipart(body, &boundary, &mut out);
    } else if content_type.contains("xml") {
        // Element text, one field per text node.
        for chunk in body.split('<').filter_map(|c| c.split_once('>').map(|(_, t)| t)).filter(|t| !t.trim().is_empty()) {
            let text = chunk.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
            out.push(field(Place::BodyValue, "", &text));
        }
    } else {
        out.push(field(Place::BodyRaw, "", body));
    }
    out
}

/// A sketch of the engine's decoded view: percent and numeric entities undone, `<!-- -->`
/// comments removed, whitespace runs (CR/LF included) collapsed to one space.
pub fn decoded_view(text: &str) -> String {
    let mut t = percent_decode(text, false);
    for (from, to) in [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#13;", "\r"), ("&#10;", "\n"), ("&amp;", "&")] {
        t = t.replace(from, to);
    }
    while let Some(start) = t.find("<!--") {
        let Some(len) = t[start..].find("-->") else { break };
        t.replace_range(start..start + len + 3, "");
    }
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The detectors that fire on any field of the request, plain or decoded, at `level`.
pub fn detect(request: &Request, level: u8) -> Vec<(&'static str, String)> {
    let mut found = Vec::new();
    let fields = fields_of(request);
    // The engine's request-level checks (scoring/src/request_checks.rs): framing headers read
    // together, GraphQL operations summed over the request's `query` documents.
    let headers = request.headers.iter().map(|(n, v)| (n.as_str(), v.as_str()));
    if let Some(finding) = syntax::framing::framing_anomaly(headers, level) {
        found.push((finding.reason, String::new()));
    }
    let documents: Vec<u32> = fields
        .iter()
        .filter(|f| f.name == "query" && matches!(f.place, syntax::Place::QueryValue | syntax::Place::BodyValue))
        .filter_map(|f| syntax::graphql::operation_count(&f.text))
        .collect();
    if documents.len() > 1 && documents.iter().map(|&n| n.max(1)).sum::<u32>() > syntax::graphql::MAX_BATCHED_OPERATIONS {
        found.push(("graphql:batched-operations", String::new()));
    }
    for f in fields {
        let decoded = decoded_view(&f.text);
        for (text, is_decoded) in [(f.text.as_str(), false), (decoded.as_str(), true)] {
            let mut input = Input::new(text);
            input.place = f.place;
            input.name = &f.name;
            input.method = &request.method;
            input.decoded = is_decoded;
            input.sensitivity = level;
            for check in checks() {
                if let Some(finding) = check.inspect(&input).filter(|x| x.level <= level) {
                    found.push((finding.reason, text.chars().take(120).collect()));
                }
            }
        }
    }
    found
}
