//! The process's readiness: whether a load balancer or a Kubernetes readiness probe should send
//! it new traffic. Not ready while the scorer is still loading its models, and from the moment
//! a stop signal arrives (draining): the listeners keep serving for `WAF_DRAIN_MS` so the
//! balancer can take the process out of rotation, then stop accepting and let in-flight
//! requests finish. Process-wide on purpose: one signal drains every listener of the process.

use std::sync::atomic::{AtomicBool, Ordering};

use hyper::StatusCode;
use serde_json::json;

use crate::http::{json_response, ApiError, HttpResponse};

static DRAINING: AtomicBool = AtomicBool::new(false);

/// Called once a stop signal arrives; readiness answers 503 from then on.
pub fn begin_draining() {
    DRAINING.store(true, Ordering::Relaxed);
}

pub fn draining() -> bool {
    DRAINING.load(Ordering::Relaxed)
}

/// The readiness answer of every listener: 200 `{"ready":true}`, or 503 `{error, detail}`
/// naming why not. `scorer_ready`: the models this process depends on can answer.
pub fn readiness(service: &'static str, scorer_ready: bool) -> HttpResponse {
    let not_ready = if draining() {
        Some(format!("{service} is draining (stop signal received)"))
    } else if !scorer_ready {
        Some(format!("{service}: models still loading"))
    } else {
        None
    };
    match not_ready {
        None => json_response(StatusCode::OK, &json!({ "service": service, "ready": true })),
        Some(detail) => ApiError::Unavailable(detail).into_response(),
    }
}
