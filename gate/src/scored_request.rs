//! The one place an HTTP request becomes a [`ScoreQuery`], for every front door (proxy, auth
//! adapter, ext_proc): so the three cannot diverge in what they score.
//!
//! The body is scored as the application will read it: Content-Encoding undone, charset
//! decoded (`scoring::transport`). What could not be decoded is named in `ScoreQuery.partial`
//! for policy to decide on. The front door forwards what the client sent; only the scored view
//! is decoded.

use scoring::body::grpc::{decode_messages, GrpcBody};
use scoring::transport::{decode_body, DecodeLimits, EncodedBody, DEFAULT_MAX_RATIO};

use crate::scorer::{compose_request_text, ScoreQuery};

/// A request as a front door saw it.
pub struct HttpRequest<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub query: &'a str,
    /// `(name, value)` as received, names lower case. Content-Type and Content-Encoding are
    /// read from here, so a door that learns them elsewhere (nginx's X-Original-Content-Type)
    /// puts them in this list.
    pub headers: &'a [(&'a str, &'a [u8])],
    /// The buffered body prefix (at most the body limit).
    pub body: &'a [u8],
    /// The body was longer than `body`.
    pub body_truncated: bool,
    /// Most bytes decompression may produce: the body limit.
    pub body_limit: usize,
}

impl ScoreQuery {
    /// The scored request for `request`: request text over the decoded body, scored headers,
    /// and the partial slugs decoding produced.
    pub fn from_http(request: HttpRequest<'_>) -> ScoreQuery {
        let content_encoding = joined_values(request.headers, "content-encoding");
        let content_type = request
            .headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("content-type"))
            .map(|(_, value)| String::from_utf8_lossy(value));
        let encoded = EncodedBody {
            bytes: request.body,
            content_encoding: content_encoding.as_deref(),
            content_type: content_type.as_deref(),
            truncated: request.body_truncated,
        };
        let limits = DecodeLimits { max_output: request.body_limit, max_ratio: DEFAULT_MAX_RATIO };
        let decoded = decode_body(encoded, limits);
        // gRPC frames are binary: read into named fields here, before the body becomes text.
        let grpc_encoding = joined_values(request.headers, "grpc-encoding");
        let grpc = GrpcBody {
            content_type: content_type.as_deref(),
            grpc_encoding: grpc_encoding.as_deref(),
            truncated: request.body_truncated,
            max_output: request.body_limit,
        };
        let decoded = decode_messages(decoded, &grpc);
        let text = compose_request_text(request.method, request.path, request.query, &decoded.bytes);
        let mut query = ScoreQuery::with_headers(text, request.headers.iter().copied());
        query.partial.extend(decoded.partial);
        query
    }
}

/// Every value of header `name`, joined with `,` (a repeated header is one list); `None` when
/// the header is absent.
fn joined_values(headers: &[(&str, &[u8])], name: &str) -> Option<String> {
    let values: Vec<_> =
        headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, value)| String::from_utf8_lossy(value)).collect();
    (!values.is_empty()).then(|| values.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scored(headers: &[(&str, &[u8])], body: &[u8], body_truncated: bool) -> ScoreQuery {
        ScoreQuery::from_http(HttpRequest { method: "POST", path: "/p", query: "a=1", headers, body, body_truncated, body_limit: 1 << 20 })
    }

    #[test]
    fn undecodable_bodies_are_named_partial() {
        let query = scored(&[("content-encoding", b"compress")], b"\x1f\x9d", false);
        assert_eq!(query.partial, ["content-encoding:compress"]);
        let query = scored(&[("content-encoding", b"gzip")], b"not gzip", false);
        assert_eq!(query.partial, ["content-encoding:gzip"]);
        let query = scored(&[("content-type", b"text/plain; charset=utf-7")], b"+ADw-script+AD4-", false);
        assert_eq!(query.partial, ["charset:utf-7"]);
        assert!(query.request_text.starts_with("POST /p?a=1\n"));
    }

    #[test]
    fn repeated_content_encoding_headers_are_one_list() {
        let utf16: Vec<u8> = "<svg onload=alert(1)>".encode_utf16().flat_map(u16::to_be_bytes).collect();
        let headers: [(&str, &[u8]); 3] =
            [("content-encoding", b"identity"), ("Content-Encoding", b"identity"), ("content-type", b"text/plain; charset=utf-16be")];
        let query = scored(&headers, &utf16, false);
        assert_eq!(query.request_text, "POST /p?a=1\n<svg onload=alert(1)>");
        assert!(query.partial.is_empty());
        assert!(query.headers.iter().any(|(name, _)| name == "content-type"), "the body parser still gets its hint");
    }
}
