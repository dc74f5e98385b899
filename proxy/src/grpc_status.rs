//! Rampart's own answers to a gRPC call (a kill with `forbidden`, a rate limit, a refusal, an
//! upstream failure), said in gRPC's terms: a trailers-only response (HTTP 200, `grpc-status`
//! and `grpc-message` in the headers, no body). A gRPC client reads a JSON 403 as a framing
//! error (INTERNAL); this way it gets PERMISSION_DENIED, RESOURCE_EXHAUSTED or UNAVAILABLE.
//! The upstream's own responses are never rewritten.

use http_body_util::{BodyExt, Empty};
use hyper::header::{HeaderValue, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{HeaderMap, Response, StatusCode};

use super::ProxyBody;

/// The request is a gRPC or gRPC-Web call.
pub fn is_grpc(headers: &HeaderMap) -> bool {
    headers.get(CONTENT_TYPE).is_some_and(|v| v.as_bytes().len() >= 16 && v.as_bytes()[..16].eq_ignore_ascii_case(b"application/grpc"))
}

/// gRPC status codes (grpc/doc/statuscodes.md) for the HTTP statuses Rampart answers with.
fn code_and_message(status: StatusCode) -> (&'static str, &'static str) {
    match status.as_u16() {
        403 => ("7", "request blocked by the web application firewall"),
        429 => ("8", "too many requests from this client"),
        408 | 504 => ("4", "the proxy gave up waiting"),
        413 => ("8", "request body over the proxy's limit"),
        400 => ("3", "the proxy could not read the request"),
        502 | 503 => ("14", "the proxy could not serve the call"),
        _ => ("2", "the proxy refused the call"),
    }
}

/// `resp` (Rampart's own) as a trailers-only gRPC response; its other headers (X-Waf-*,
/// Retry-After) are kept.
pub fn answer(resp: Response<ProxyBody>) -> Response<ProxyBody> {
    let (mut parts, _) = resp.into_parts();
    let (code, message) = code_and_message(parts.status);
    parts.status = StatusCode::OK;
    parts.headers.remove(CONTENT_LENGTH);
    parts.headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    parts.headers.insert("grpc-status", HeaderValue::from_static(code));
    parts.headers.insert("grpc-message", HeaderValue::from_static(message));
    Response::from_parts(parts, Empty::new().map_err(|never| match never {}).boxed_unsync())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_becomes_a_trailers_only_status() {
        let resp = super::super::boxed(gate::http::json_response(StatusCode::FORBIDDEN, &serde_json::json!({"error": "blocked"})));
        let resp = answer(resp);
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(resp.headers()["grpc-status"], "7");
        assert_eq!(resp.headers()["content-type"], "application/grpc");
        assert!(hyper::body::Body::is_end_stream(resp.body()), "no body: the status is in the headers");
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, "Application/gRPC-Web+proto".parse().unwrap());
        assert!(is_grpc(&headers));
        headers.insert(CONTENT_TYPE, "application/json".parse().unwrap());
        assert!(!is_grpc(&headers));
    }
}
