//! JSON responses and the error → response mapping shared by every Rampart HTTP surface.

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use hyper::{Response, StatusCode};
use serde::Serialize;

pub type HttpResponse = Response<Full<Bytes>>;

/// Client-caused failures of an API call; each maps to one status and a stable code.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    NotFound(String),
    #[error("{detail}")]
    MethodNotAllowed { allow: &'static str, detail: String },
    #[error("{0}")]
    MalformedJson(String),
    #[error("{0}")]
    InvalidRequest(String),
    #[error("request body is larger than {limit} bytes")]
    TooLarge { limit: usize },
    #[error("{0}")]
    UnknownDetector(String),
    #[error("{0}")]
    Unavailable(String),
    #[error("cannot read the request body: {0}")]
    BodyRead(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    UnsupportedMediaType(String),
}

impl ApiError {
    fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            ApiError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            ApiError::UnknownDetector(_) => (StatusCode::NOT_FOUND, "unknown_detector"),
            ApiError::MethodNotAllowed { .. } => (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
            ApiError::MalformedJson(_) => (StatusCode::BAD_REQUEST, "malformed_json"),
            ApiError::InvalidRequest(_) => (StatusCode::BAD_REQUEST, "invalid_request"),
            ApiError::TooLarge { .. } => (StatusCode::PAYLOAD_TOO_LARGE, "body_too_large"),
            ApiError::BodyRead(_) => (StatusCode::BAD_REQUEST, "body_read_failed"),
            ApiError::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            ApiError::Forbidden(_) => (StatusCode::FORBIDDEN, "admin_forbidden"),
            ApiError::UnsupportedMediaType(_) => (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type"),
        }
    }

    pub fn into_response(self) -> HttpResponse {
        let (status, code) = self.status_and_code();
        let mut resp = json_response(status, &ErrorBody { error: code, detail: self.to_string() });
        if let ApiError::MethodNotAllowed { allow, .. } = self {
            resp.headers_mut().insert(ALLOW, HeaderValue::from_static(allow));
        }
        resp
    }
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
    detail: String,
}

pub fn json_response<T: Serialize>(status: StatusCode, value: &T) -> HttpResponse {
    let body = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    *resp.status_mut() = status;
    resp.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

/// Reads a whole body, refusing more than `limit` bytes without buffering them.
pub async fn read_body(body: Incoming, limit: usize) -> Result<Bytes, ApiError> {
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(err) if err.is::<http_body_util::LengthLimitError>() => Err(ApiError::TooLarge { limit }),
        Err(err) => Err(ApiError::BodyRead(err.to_string())),
    }
}
