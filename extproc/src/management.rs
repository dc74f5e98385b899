//! The ext_proc service's HTTP port (spec 4.4): health, metrics, and the mode — readable,
//! never writable (spec 3: fixed at start-up).

use hyper::body::Incoming;
use hyper::{Method, Request, StatusCode};
use serde_json::json;

use super::ExtprocService;
use gate::http::{json_response, ApiError, HttpResponse};

pub fn handle(service: &ExtprocService, req: &Request<Incoming>) -> HttpResponse {
    let mode = service.mode().as_str();
    let answer = match (req.uri().path(), req.method()) {
        ("/_waf/health", &Method::GET | &Method::HEAD) => {
            Ok(json_response(StatusCode::OK, &json!({ "service": "extproc", "status": "ok", "mode": mode })))
        }
        ("/metrics", &Method::GET | &Method::HEAD) => Ok(gate::metrics::metrics_response(service.metrics())),
        ("/_waf/ready", &Method::GET | &Method::HEAD) => Ok(gate::lifecycle::readiness("extproc", true)),
        ("/api/mode", &Method::GET | &Method::HEAD) => Ok(json_response(StatusCode::OK, &json!({ "mode": mode }))),
        ("/api/mode", _) => Err(ApiError::MethodNotAllowed {
            allow: "GET",
            detail: "the ext_proc mode is fixed at start-up (WAF_MODE); restart to change it".into(),
        }),
        (path @ ("/_waf/health" | "/metrics"), _) => {
            Err(ApiError::MethodNotAllowed { allow: "GET", detail: format!("{path} accepts GET") })
        }
        (path, _) => Err(ApiError::NotFound(format!("no route for {path}"))),
    };
    answer.unwrap_or_else(ApiError::into_response)
}
