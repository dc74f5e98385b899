//! Rows as the proxy would see them: a whole request (method, path, raw query, headers, body
//! bytes) that goes through [`ScoreQuery::from_http`], the one path every front door takes, so
//! Content-Encoding, charset and header filtering are those of production, not the eval's own.
//!
//! Three kinds of rows become such a request: whole-request JSONL (`requests/*.jsonl`), text
//! rows carrying `part` (placed where that part lives in real traffic, see [`place_part`]), and
//! plain text rows (the `--placement` of the pool section, see `data::request_for`).

use std::path::Path;

use serde::Deserialize;

use crate::scored_request::HttpRequest;
use crate::scorer::ScoreQuery;

/// Most body bytes decompression may produce: the proxy's default body limit (1 MiB).
pub const BODY_LIMIT: usize = 1 << 20;

/// One request as it arrives on the wire.
#[derive(Clone, Debug, Default)]
pub struct WireRequest {
    pub method: String,
    pub path: String,
    /// Raw query string, without the `?`.
    pub query: String,
    /// `(name, value)`; names are lower-cased when scored, as front doors do.
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
}

impl WireRequest {
    pub fn new(method: &str, target: &str) -> Self {
        let (path, query) = split_target(target);
        WireRequest { method: method.into(), path: path.into(), query: query.into(), ..Default::default() }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_ascii_lowercase(), value.as_bytes().to_vec()));
        self
    }

    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self
    }

    /// The scored request, built exactly as the proxy builds it.
    pub fn score_query(&self) -> ScoreQuery {
        let headers: Vec<(&str, &[u8])> = self.headers.iter().map(|(n, v)| (n.as_str(), v.as_slice())).collect();
        ScoreQuery::from_http(HttpRequest {
            method: &self.method,
            path: &self.path,
            query: &self.query,
            headers: &headers,
            body: &self.body,
            body_truncated: false,
            body_limit: BODY_LIMIT,
        })
    }
}

/// `/a/b?x=1` → (`/a/b`, `x=1`).
fn split_target(target: &str) -> (&str, &str) {
    match target.split_once('?') {
        Some((path, query)) => (path, query),
        None => (target, ""),
    }
}

/// A line of a whole-request file (`requests/*.jsonl`).
#[derive(Debug, Deserialize)]
struct RequestLine {
    method: String,
    /// Path with the raw query.
    path: String,
    #[serde(default)]
    headers: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    body_b64: Option<String>,
    label: String,
    #[serde(default)]
    source: String,
}

/// A whole request with its label and source.
pub struct LabelledRequest {
    pub request: WireRequest,
    pub label: String,
    pub source: String,
    /// One line summary for listings (`METHOD path`).
    pub summary: String,
}

/// Every request of one whole-request JSONL file; the source is the file stem when a line
/// names none.
pub fn load_requests(path: &Path) -> Result<Vec<LabelledRequest>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("requests").to_string();
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row: RequestLine = serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?;
        let mut request = WireRequest::new(&row.method, &row.path);
        for (name, value) in &row.headers {
            // A repeated header is recorded as a list: each value is its own header line.
            match value {
                serde_json::Value::Array(values) => {
                    for v in values {
                        request = request.header(name, v.as_str().unwrap_or_default());
                    }
                }
                serde_json::Value::String(v) => request = request.header(name, v),
                other => request = request.header(name, &other.to_string()),
            }
        }
        request.body = match (&row.body_b64, &row.body) {
            (Some(b64), _) => decode_base64(b64).ok_or_else(|| format!("{}:{}: bad body_b64", path.display(), n + 1))?,
            (None, Some(body)) => body.as_bytes().to_vec(),
            (None, None) => Vec::new(),
        };
        let summary = format!("{} {}", row.method, row.path);
        let source = if row.source.is_empty() { stem.clone() } else { row.source };
        out.push(LabelledRequest { request, label: row.label, source, summary });
    }
    Ok(out)
}

/// Standard base64 (padding optional, whitespace ignored); None on any other byte.
pub fn decode_base64(text: &str) -> Option<Vec<u8>> {
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    use base64::Engine as _;
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    LENIENT.decode(compact).ok()
}

const UA: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";

/// The request that carries `text` as `part`; None for an unknown part.
///
/// - `url`: a GET of that URL (request line from its path and query, Host from its authority);
/// - `query`: the raw query string of `GET /search`; `path`: the request path (and query);
/// - `cookie` / `user-agent` / `referer`: that header of `GET /`;
/// - `body`: a POST body, `application/json` when it parses as JSON, else `text/plain` (the
///   engine sniffs forms and XML);
/// - `graphql`: `POST /graphql` with `{"query": text}`; `shell`: a JSON value
///   (`{"command": text}`, an admin console posting a command line); `chat`: an LLM chat
///   completion body (`{"messages":[{"role":"user","content":text}]}`).
pub fn place_part(part: &str, text: &str) -> Option<WireRequest> {
    let get = |target: &str| WireRequest::new("GET", target).header("user-agent", UA).header("accept", "*/*");
    let json_post = |path: &str, body: serde_json::Value| {
        WireRequest::new("POST", path).header("user-agent", UA).header("content-type", "application/json").body(body.to_string())
    };
    Some(match part {
        "url" => url_request(text),
        "query" => get(&format!("/search?{}", text.trim_start_matches('?'))),
        "path" => get(&if text.starts_with('/') { text.to_string() } else { format!("/{text}") }),
        "cookie" => get("/").header("cookie", text),
        "user-agent" => WireRequest::new("GET", "/").header("user-agent", text).header("accept", "*/*"),
        "referer" => get("/").header("referer", text),
        "body" => {
            let json = serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| v.is_object() || v.is_array());
            let ct = if json { "application/json" } else { "text/plain; charset=utf-8" };
            WireRequest::new("POST", "/api/v1/items").header("user-agent", UA).header("content-type", ct).body(text)
        }
        "graphql" => json_post("/graphql", serde_json::json!({ "query": text })),
        "shell" => json_post("/api/v1/console/run", serde_json::json!({ "command": text })),
        "chat" => json_post(
            "/v1/chat/completions",
            serde_json::json!({ "model": "gpt-4o-mini", "messages": [{ "role": "user", "content": text }] }),
        ),
        _ => return None,
    })
}

/// `https://host:8443/p?q=1` → `GET /p?q=1` with `Host: host:8443`; a text without a scheme is
/// taken as a path.
fn url_request(text: &str) -> WireRequest {
    let rest = match text.find("://") {
        Some(i) if text[..i].bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')) => &text[i + 3..],
        _ => return WireRequest::new("GET", if text.starts_with('/') { text } else { "/" }).header("user-agent", UA),
    };
    let cut = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (host, target) = rest.split_at(cut);
    let target = target.split('#').next().unwrap_or("");
    let target = if target.starts_with('?') {
        format!("/{target}")
    } else if target.is_empty() {
        "/".into()
    } else {
        target.into()
    };
    WireRequest::new("GET", &target).header("host", host).header("user-agent", UA).header("accept", "*/*")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_land_where_they_live() {
        let r = place_part("url", "https://api.example.com:8443/v1/x?a=1#frag").unwrap();
        assert_eq!((r.path.as_str(), r.query.as_str()), ("/v1/x", "a=1"));
        assert!(r.headers.iter().any(|(n, v)| n == "host" && v == b"api.example.com:8443"));
        let r = place_part("path", "/a/b?c=d").unwrap();
        assert_eq!((r.path.as_str(), r.query.as_str()), ("/a/b", "c=d"));
        let r = place_part("body", "{\"a\":1}").unwrap();
        assert!(r.headers.iter().any(|(n, v)| n == "content-type" && v == b"application/json"));
        let q = place_part("cookie", "sid=1; x=2").unwrap().score_query();
        assert!(q.request_text.starts_with("GET /\n"));
        assert!(q.headers.iter().any(|(n, _)| n == "cookie"));
        assert!(place_part("nowhere", "x").is_none());
    }

    #[test]
    fn base64_bodies_decode() {
        assert_eq!(decode_base64("aGk/Pz4=").unwrap(), b"hi??>");
        assert_eq!(decode_base64("H4sI").unwrap(), [0x1f, 0x8b, 0x08]);
        assert!(decode_base64("a*b").is_none());
    }
}
