//! The five families without a detector before issue 12 (ssi, graphql, mail-injection,
//! scanner, protocol): recall of the code checks on generated variants (per mutation), hard
//! negatives, an `#[ignore]` false-positive scan over the real benign files, and an
//! `#[ignore]` dump of the rule-backed families' variants for `rampart eval`.
//!
//! Requests are cut into fields here the way the engine does (query values, form and JSON
//! leaves, multipart part names and filenames, headers with their lower-case names), with a
//! small approximation of the decoded view, so the checks see what they would see in scoring.

use std::collections::BTreeMap;

use evasion::{place::to_request, Carrier, Placement, Request};
use syntax::{checks, Input, Place};

// ---- a minimal JSON reader (the crate has no dependencies) ----

#[derive(Debug)]
enum Json {
    Null,
    Bool,
    Num,
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

fn parse_json(text: &str) -> Option<Json> {
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
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    fn str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }
}

// ---- fields of a request, as the engine cuts them ----

struct Field {
    place: Place,
    name: String,
    text: String,
}

fn field(place: Place, name: &str, text: &str) -> Field {
    Field { place, name: name.into(), text: text.into() }
}

fn percent_decode(text: &str, plus: bool) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match b[i] {
            b'%' if i + 2 < b.len() + 0 && hex(b[i + 1]).is_some() && hex(b[i + 2]).is_some() => {
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
            tokens.iter().enumerate().all(|(k, t)| {
                ["close", "keep-alive", "upgrade", "te", "http2-settings"].contains(&t.as_str()) && !tokens[..k].contains(t)
            })
        }
        "accept" | "accept-encoding" | "accept-language" | "host" | "content-type" | "cookie" | "authorization" => true,
        _ => false,
    }
}

fn fields_of(request: &Request) -> Vec<Field> {
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
        let boundary = request.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("content-type")).map(|(_, v)| v.split("boundary=").nth(1).unwrap_or(b).to_string()).unwrap_or_default();
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
fn decoded_view(text: &str) -> String {
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
fn detect(request: &Request, level: u8) -> Vec<(&'static str, String)> {
    let mut found = Vec::new();
    for f in fields_of(request) {
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

// ---- recall ----

fn recall(family: &str, n: usize) -> f64 {
    recall_of(family, n, |_| true)
}

/// Recall on the variants whose mutation passes `keep`.
fn recall_of(family: &str, n: usize, keep: impl Fn(&str) -> bool) -> f64 {
    let fam = evasion::family(family).expect("family registered");
    let variants: Vec<_> = evasion::sample(fam, 12, n).into_iter().filter(|v| keep(&v.mutation)).collect();
    let n = variants.len();
    let mut per_mutation: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut caught = 0;
    let mut misses = Vec::new();
    for (k, v) in variants.iter().enumerate() {
        let placement = Placement::ALL[k % Placement::ALL.len()];
        let request = to_request(v, placement);
        let hit = detect(&request, 1).iter().any(|(reason, _)| reason.starts_with(&format!("{}:", fam.detector())));
        let entry = per_mutation.entry(v.mutation.clone()).or_default();
        entry.1 += 1;
        if hit {
            entry.0 += 1;
            caught += 1;
        } else if misses.len() < 8 {
            misses.push(format!("{} [{}] {:?}", v.mutation, placement.name(), v.payload.chars().take(160).collect::<String>()));
        }
    }
    let rate = caught as f64 / n as f64;
    println!("{family}: recall {caught}/{n} = {:.1} %", rate * 100.0);
    for (m, (c, t)) in &per_mutation {
        if *c < *t || per_mutation.len() <= 30 {
            println!("  {m:<50} {c}/{t}");
        }
    }
    for m in misses {
        println!("  miss: {m}");
    }
    rate
}

#[test]
fn graphql_recall() {
    assert!(recall("graphql", 1000) >= 0.95);
}

#[test]
fn mail_injection_recall() {
    assert!(recall("mail-injection", 1000) >= 0.95);
}

/// SSI is mostly rules (measured with `rampart eval`); the code check covers what the rules
/// cannot see: directives still encoded in the plain view (the decoded view drops comments).
#[test]
fn ssi_encoded_recall() {
    let encoded = |m: &str| !m.contains("esi") && m.split('+').any(|x| matches!(x, "url" | "double-url" | "url-all"));
    assert!(recall_of("ssi", 2000, encoded) >= 0.95);
}

/// Scanner is mostly rules (measured with `rampart eval`); the code check covers the marker
/// headers, whose names the rules never see.
#[test]
fn scanner_marker_header_recall() {
    assert!(recall_of("scanner", 1000, |m| m == "marker-header") >= 0.95);
}

#[test]
fn protocol_recall() {
    assert!(recall("protocol", 1000) >= 0.95);
}

// ---- hard negatives ----

fn value_request(method: &str, name: &str, value: &str) -> Request {
    let mut r = Request::new(method, "/api/x").header("Content-Type", "application/json");
    r.body = format!("{{\"{name}\":{}}}", evasion::place::json_string(value));
    r
}

#[test]
fn hard_negatives_pass_at_level_1() {
    let mut requests = vec![
        // GraphQL an application sends.
        value_request("POST", "query", "query Hero($episode: Episode, $withFriends: Boolean!) { hero(episode: $episode) { name friends @include(if: $withFriends) { name } } }"),
        value_request("POST", "query", "{ user(id: 4) { id name smallPic: profilePic(size: 64) bigPic: profilePic(size: 1024) } }"),
        value_request("POST", "query", "query { __schema { types { name } } }"),
        value_request("POST", "query", "{ __type(name: \"User\") { name fields { name type { name } } } }"),
        value_request("POST", "query", "query { viewer { ...UserParts } } fragment UserParts on User { id ...Avatar } fragment Avatar on User { avatarUrl }"),
        value_request("POST", "query", "type Query { me: User users(first: Int): [User] } type User { id: ID! name: String email: String a: String b: String c: String d: String e: String f: String g: String h: String i: String }"),
        value_request("POST", "query", "mutation CreateReview($ep: Episode!, $review: ReviewInput!) { createReview(episode: $ep, review: $review) { stars commentary } }"),
        value_request("POST", "code", "function f(a) { if (a) { for (;;) { while (x) { try { g({a: {b: {c: {d: {e: {f: {g: {h: 1}}}}}}}}) } catch (e) {} } } } }"),
        // Multi-line text and mail forms.
        value_request("POST", "message", "Hi team,\nData from last week is attached.\nQuit worrying about the deadline.\nThanks"),
        value_request("POST", "message", "Please review:\nTo: the whole team\nSubject to approval by legal"),
        value_request("POST", "to", "alice@example.com, bob@example.com"),
        value_request("POST", "address", "Flat 2\r\n10 Downing Street\r\nLondon"),
        value_request("POST", "notes", "Steps:\n1 select the file\n2 delete it\n3 close the window"),
        value_request("POST", "message", "Can you make this email sound more professional? I want it to be short and friendly.\nFrom: alice@example.com\nTo: bob@example.com\nSubject: Lunch\n\nHey Bob, want to grab lunch on Friday at noon near the office?"),
        value_request("POST", "csv", "name,email\nAlice,alice@example.com\nBob,bob@example.com"),
        value_request("POST", "code", "printf(\"From: %s\\n\", sender);\nputs(\"DATA\");"),
        // Protocol use that is normal.
        Request::new("POST", "/posts/7").header("Content-Type", "application/x-www-form-urlencoded").body("_method=delete&authenticity_token=abc"),
        Request::new("POST", "/v1/items:search").header("X-HTTP-Method-Override", "GET"),
        Request::new("POST", "/items/7").header("X-HTTP-Method-Override", "PATCH"),
        Request::new("GET", "/video.mp4").header("Range", "bytes=0-"),
        Request::new("GET", "/file.bin").header("Range", "bytes=0-499,1000-1499,-500"),
        Request::new("GET", "/").header("Connection", "keep-alive"),
        Request::new("GET", "/ws").header("Connection", "Upgrade").header("Upgrade", "websocket"),
        Request::new("POST", "/upload").header("Transfer-Encoding", "chunked"),
        Request::new("POST", "/upload").header("Content-Length", "348"),
    ];
    let multipart = "--b\r\nContent-Disposition: form-data; name=\"user[address][city]\"\r\n\r\nParis\r\n--b\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"IMG 2024 (1).jpg\"\r\n\r\nxx\r\n--b\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"résumé v1.2..final.pdf\"\r\n\r\nyy\r\n--b--\r\n";
    requests.push(Request::new("POST", "/upload").header("Content-Type", "multipart/form-data; boundary=b").body(multipart));
    requests.push(value_request("POST", "user.name", "x"));
    let mut failures = Vec::new();
    for r in &requests {
        let found = detect(r, 1);
        let own: Vec<_> = found.iter().filter(|(reason, _)| ["graphql:", "mail-injection:", "protocol:", "ssi:", "scanner:"].iter().any(|p| reason.starts_with(p))).collect();
        if !own.is_empty() {
            failures.push(format!("{} {} {:?}: {:?}", r.method, r.path, r.headers, own));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn probes_count_at_level_2() {
    let r = value_request("POST", "query", "{ __schema { queryType { name } } }");
    assert!(detect(&r, 1).iter().all(|(reason, _)| !reason.starts_with("graphql:")));
    assert!(detect(&r, 2).iter().any(|(reason, _)| *reason == "graphql:schema-probe"));
}

// ---- the real benign files ----

fn data_dir() -> std::path::PathBuf {
    std::env::var("RAMPART_DATA").unwrap_or_else(|_| "/work/shared/datasets".into()).into()
}

fn rows(file: &str) -> Vec<Json> {
    let path = data_dir().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().filter_map(parse_json).collect()
}

fn text_of(row: &Json) -> String {
    row.get("text").and_then(Json::str).unwrap_or("").to_string()
}

/// The request a benign row stands for.
fn benign_requests(file: &str, row: &Json) -> Vec<Request> {
    let text = text_of(row);
    let ua = "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0";
    match file {
        "graphql_spec_examples.jsonl" => vec![
            value_request("POST", "query", &text),
            Request::new("POST", "/graphql").header("Content-Type", "application/graphql").body(&text),
        ],
        "uap_core_user_agents.jsonl" => vec![Request::new("GET", "/").header("User-Agent", &text)],
        "sharegpt_user_messages.jsonl" => vec![value_request("POST", "content", &text)],
        "har_fixture_parts.jsonl" => match row.get("part").and_then(Json::str).unwrap_or("") {
            "url" => {
                let path = text.split_once("://").map(|(_, rest)| rest.find('/').map_or("/", |i| &rest[i..])).unwrap_or(&text);
                vec![Request::new("GET", path).header("User-Agent", ua)]
            }
            "query" => vec![Request::new("GET", &format!("/x?{text}"))],
            "cookie" => vec![Request::new("GET", "/").header("Cookie", &text)],
            "user-agent" => vec![Request::new("GET", "/").header("User-Agent", &text)],
            "referer" => vec![Request::new("GET", "/").header("Referer", &text)],
            _ => vec![
                Request::new("POST", "/x").header("Content-Type", "application/json").body(&text),
                Request::new("POST", "/x").header("Content-Type", "application/x-www-form-urlencoded").body(&text),
            ],
        },
        _ => {
            // Whole-request files.
            let mut r = Request::new(row.get("method").and_then(Json::str).unwrap_or("GET"), row.get("path").and_then(Json::str).unwrap_or("/"));
            if let Some(Json::Obj(headers)) = row.get("headers") {
                for (n, v) in headers {
                    r.headers.push((n.clone(), v.str().unwrap_or("").to_string()));
                }
            }
            r.body = row.get("body").and_then(Json::str).unwrap_or("").to_string();
            vec![r]
        }
    }
}

/// False positives of the three code checks on every real benign file, at levels 1 and 2.
/// `cargo test -p rampart-syntax --test new_families -- --ignored --nocapture fp_scan`
#[test]
#[ignore]
fn fp_scan() {
    let files = [
        "graphql_spec_examples.jsonl",
        "uap_core_user_agents.jsonl",
        "har_fixture_parts.jsonl",
        "requests/har_fixture_requests.jsonl",
        "requests/node_soap_requests.jsonl",
        "sharegpt_user_messages.jsonl",
    ];
    let mut level1_total = 0;
    for file in files {
        let rows = rows(file);
        let mut by_level = [0usize; 3];
        let mut shown = 0;
        for row in &rows {
            let requests = benign_requests(file, row);
            for level in [1u8, 2] {
                let hits: Vec<_> = requests.iter().flat_map(|r| detect(r, level)).filter(|(reason, _)| ["graphql:", "mail-injection:", "protocol:", "ssi:", "scanner:"].iter().any(|p| reason.starts_with(p))).collect();
                if let Some((reason, text)) = hits.first() {
                    by_level[level as usize] += 1;
                    if shown < 12 {
                        shown += 1;
                        println!("  L{level} {file} {reason}: {text:?}");
                    }
                }
            }
        }
        level1_total += by_level[1];
        println!("{file}: {} rows, flagged at level 1: {}, at level 2: {}", rows.len(), by_level[1], by_level[2]);
    }
    println!("level-1 flags in all files: {level1_total}");
}

/// Writes every family's variants as eval rows (`{"text","label","source":"gen"}`), one file
/// per family under `RAMPART_GEN_OUT` (default /tmp/families), for `rampart eval --data`.
#[test]
#[ignore]
fn dump_variants_for_eval() {
    let out: std::path::PathBuf = std::env::var("RAMPART_GEN_OUT").unwrap_or_else(|_| "/tmp/families".into()).into();
    std::fs::create_dir_all(&out).unwrap();
    for name in ["ssi", "scanner", "mail-injection", "graphql"] {
        let fam = evasion::family(name).unwrap();
        let mut lines = String::new();
        for v in evasion::sample(fam, 12, 1000) {
            let text = match &v.carrier {
                Carrier::Request(_) => v.payload.clone(),
                _ => v.payload.clone(),
            };
            lines.push_str(&format!(
                "{{\"text\":{},\"label\":\"{}\",\"source\":\"gen_{}\",\"mutation\":{}}}\n",
                evasion::place::json_string(&text),
                fam.detector(),
                name.replace('-', "_"),
                evasion::place::json_string(&v.mutation)
            ));
        }
        std::fs::write(out.join(format!("gen_{}.jsonl", name.replace('-', "_"))), lines).unwrap();
    }
}

/// Cost of the five families' checks on a benign 1 KB JSON body (every leaf, plain and
/// decoded): `cargo test --release -p rampart-syntax --test new_families -- --ignored --nocapture cost`
#[test]
#[ignore]
fn cost_on_benign_json() {
    let body = r#"{"user":{"id":42,"name":"Alex Martin","email":"alex.martin@example.com","bio":"Backend developer & coffee fan. Writes Rust, Go and some TypeScript; runs 10k on Sundays (50% of the time)."},"address":{"street":"12 Rue de la Paix","city":"Paris","zip":"75002","country":"FR"},"preferences":{"newsletter":true,"theme":"dark","language":"fr-FR","timezone":"Europe/Paris"},"cart":[{"sku":"TSHIRT-RED-M","qty":2,"price":19.99,"note":"gift wrap, please"},{"sku":"MUG-BLUE","qty":1,"price":9.5,"note":"no rush\nthanks!"}],"comment":"Please deliver after 6pm, the concierge is away until then. Call +33 1 23 45 67 89 if needed.","coupon":"SPRING-2024","referrer":"https://www.example.org/blog/posts/123?utm_source=newsletter&utm_medium=email"}"#;
    let request = Request::new("POST", "/api/v1/orders").header("Content-Type", "application/json").body(body);
    let fields: Vec<(Field, String)> = fields_of(&request).into_iter().map(|f| { let d = decoded_view(&f.text); (f, d) }).collect();
    let inputs: Vec<Input> = fields.iter().flat_map(|(f, d)| {
        [(&f.text, false), (d, true)].map(|(t, decoded)| { let mut i = Input::new(t); i.place = f.place; i.name = &f.name; i.method = "POST"; i.decoded = decoded; i })
    }).collect();
    // The best of five timings: the machine is shared, so the minimum is the cost.
    let rounds = 5_000;
    let time = |run: &dyn Fn() -> usize| {
        (0..5)
            .map(|_| {
                let start = std::time::Instant::now();
                for _ in 0..rounds {
                    std::hint::black_box(run());
                }
                start.elapsed() / rounds
            })
            .min()
            .unwrap()
    };
    let all = time(&|| inputs.iter().map(|i| checks().iter().filter(|c| c.inspect(std::hint::black_box(i)).is_some()).count()).sum());
    println!("{} bytes, {} inputs, {} checks: {all:?} per request", body.len(), inputs.len(), checks().len());
    for check in checks() {
        let one = time(&|| inputs.iter().filter(|i| check.inspect(std::hint::black_box(i)).is_some()).count());
        println!("  {:<16} {one:?}", check.detector());
    }
}
