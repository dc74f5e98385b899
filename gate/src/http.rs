//! JSON responses shared by every Rampart HTTP surface, errors rendered from their one
//! mapping (errors::wire).

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use hyper::{Response, StatusCode};
use serde::Serialize;

use crate::errors::ToWire;

pub type HttpResponse = Response<Full<Bytes>>;

pub use crate::errors::ApiError;

impl ApiError {
    pub fn into_response(self) -> HttpResponse {
        error_response(&self)
    }
}

/// Any edge error as `{error, detail}` with its status (the mapping is [`crate::errors::ToWire`]'s).
pub fn error_response(err: &impl ToWire) -> HttpResponse {
    let wire = err.wire();
    let mut resp = json_response(wire.status, &ErrorBody { error: wire.code, detail: &wire.detail });
    if let Some(allow) = wire.allow {
        resp.headers_mut().insert(ALLOW, HeaderValue::from_static(allow));
    }
    resp
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
    detail: &'a str,
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
        Err(err) => Err(ApiError::BodyRead(err)),
    }
}
