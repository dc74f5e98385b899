//! What an auth subrequest's headers say about the client's request: nginx sends the original
//! method, URI, Host and content type in headers (the subrequest's own line is `/_waf/check`).
//! Only the headers these were read from describe the subrequest; every other header is the
//! client's and is scored.

use hyper::{HeaderMap, Method};

use gate::http::ApiError;

/// Header pairs nginx (and other auth-subrequest front ends) use for the original request, in
/// order of preference.
pub const METHOD_HEADERS: [&str; 2] = ["x-original-method", "x-forwarded-method"];
pub const URI_HEADERS: [&str; 3] = ["x-original-uri", "x-forwarded-uri", "x-original-url"];
/// The client's Host, for the policy's host scopes: nginx's subrequest carries the adapter's own
/// Host, so the original travels in one of these (still scored like any header); plain `host`
/// last, for callers that forward it unchanged.
pub const HOST_HEADERS: [&str; 3] = ["x-original-host", "x-forwarded-host", "host"];
pub const CONTENT_TYPE_HEADERS: [&str; 2] = ["x-original-content-type", "content-type"];

pub struct Original {
    pub method: String,
    pub uri: String,
    pub host: String,
    pub content_type: Option<String>,
    /// The headers the method, URI and content type were read from.
    sources: Vec<&'static str>,
}

impl Original {
    /// Reads the original request from the subrequest's headers; the URI is required.
    pub fn read(headers: &HeaderMap, subrequest_method: &Method) -> Result<Original, ApiError> {
        let method_source = first_header(headers, &METHOD_HEADERS);
        let uri_source = first_header(headers, &URI_HEADERS);
        let type_source = first_header(headers, &CONTENT_TYPE_HEADERS);
        // Only the headers this request's line and type were read from describe the
        // subrequest; the client's X-Forwarded-*, X-Real-IP, X-Original-URL reach the app.
        let sources = [&method_source, &uri_source, &type_source].iter().filter_map(|s| s.as_ref().map(|(n, _)| *n)).collect();
        let method = method_source.map(|(_, v)| v).unwrap_or_else(|| subrequest_method.as_str().to_string());
        let uri = uri_source.map(|(_, v)| v).ok_or_else(|| {
            ApiError::InvalidRequest(
                "X-Original-URI is missing: set `proxy_set_header X-Original-URI $request_uri;` in the auth location".into(),
            )
        })?;
        let host = first_header(headers, &HOST_HEADERS).map(|(_, v)| v).unwrap_or_default();
        Ok(Original { method, uri, host, content_type: type_source.map(|(_, v)| v), sources })
    }

    /// The URI's path and query (empty when it has none).
    pub fn path_and_query(&self) -> (&str, &str) {
        self.uri.split_once('?').unwrap_or((self.uri.as_str(), ""))
    }

    /// The headers to score: the client's, without the subrequest's plumbing, and the original
    /// content type under its own name.
    pub fn scored_headers<'a>(&'a self, headers: &'a HeaderMap) -> Vec<(&'a str, &'a [u8])> {
        let mut scored: Vec<(&str, &[u8])> =
            headers.iter().filter(|(name, _)| !self.is_plumbing(name.as_str())).map(|(n, v)| (n.as_str(), v.as_bytes())).collect();
        if let Some(content_type) = &self.content_type {
            scored.push(("content-type", content_type.as_bytes()));
        }
        scored
    }

    /// Headers that describe the subrequest, not the client's request: the ones the original
    /// method, URI and content type were read from, and the subrequest's own framing.
    pub fn is_plumbing(&self, name: &str) -> bool {
        self.sources.contains(&name) || matches!(name, "content-type" | "content-length" | "x-original-content-type")
    }
}

/// The first of `names` present with a non-empty value: (its name, its value).
fn first_header(headers: &HeaderMap, names: &[&'static str]) -> Option<(&'static str, String)> {
    names.iter().find_map(|&name| {
        let value = String::from_utf8_lossy(headers.get(name)?.as_bytes()).into_owned();
        (!value.is_empty()).then_some((name, value))
    })
}
