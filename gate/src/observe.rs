//! Observable happenings, one struct each: emitting one logs it and counts it together, so a
//! log line never exists without its counter or the other way round (vector's internal_events).
//! Logs go out inside the caller's span; the request span is DEBUG-level (never built at the
//! default level), so the warnings a request raises name its `request_id` themselves.

use crate::errors::{error_chain, ScoreError, ToWire, UpstreamError};
use crate::metrics::Metrics;

pub trait Emit {
    fn emit(self, metrics: &Metrics);
}

/// No verdict: the scorer failed. The gate's policy decides what happens to the request.
pub struct ScoringFailed<'a> {
    pub request_id: &'a str,
    pub component: &'static str,
    pub error: &'a ScoreError,
    /// Forwarded (fail-open) or refused (fail-closed), as the decision said.
    pub refused: bool,
}

impl Emit for ScoringFailed<'_> {
    fn emit(self, metrics: &Metrics) {
        let side = self.error.wire().side.as_str();
        tracing::warn!(
            request_id = self.request_id,
            error = %error_chain(self.error),
            side,
            component = self.component,
            refused = self.refused,
            "scoring failed"
        );
        metrics.count_scoring_error(self.error.waf_error());
    }
}

/// A verdict without a model's opinion (a [`crate::scorer::missing_model_code`]): loading, or
/// shed by the model queue (`model-overloaded`, `model-deadline`).
pub struct ModelMissing<'a> {
    pub why: &'a str,
}

impl Emit for ModelMissing<'_> {
    fn emit(self, metrics: &Metrics) {
        tracing::debug!(why = self.why, "verdict without a model");
        metrics.count_model_missing(self.why);
    }
}

/// The proxy's upstream did not answer.
pub struct UpstreamFailed<'a> {
    pub request_id: &'a str,
    pub error: &'a UpstreamError,
}

impl Emit for UpstreamFailed<'_> {
    fn emit(self, metrics: &Metrics) {
        tracing::warn!(request_id = self.request_id, error = %error_chain(self.error), kind = self.error.kind(), "upstream failed");
        metrics.count_upstream_error(self.error.kind());
    }
}

/// A limit cut work short (a slug of [`crate::metrics::LIMITS`]).
pub struct LimitHit {
    pub limit: &'static str,
}

impl Emit for LimitHit {
    fn emit(self, metrics: &Metrics) {
        tracing::debug!(limit = self.limit, "limit hit");
        metrics.count_limit(self.limit);
    }
}

/// A policy file reload: taken (the new policy is in force) or rejected (the old one stays).
pub struct PolicyReloaded<'a> {
    pub path: &'a std::path::Path,
    pub outcome: Result<std::time::Duration, &'a crate::policy::PolicyError>,
}

impl Emit for PolicyReloaded<'_> {
    fn emit(self, metrics: &Metrics) {
        let path = self.path.display().to_string();
        match self.outcome {
            Ok(took) => {
                tracing::info!(path, took_us = took.as_micros() as u64, "policy reloaded");
                metrics.policy_reloads.get_or_create(&crate::metrics::ResultLabel { result: "ok" }).inc();
            }
            Err(err) => {
                tracing::error!(path, error = %err, "policy file rejected; the previous policy stays in force");
                metrics.policy_reloads.get_or_create(&crate::metrics::ResultLabel { result: "error" }).inc();
            }
        }
    }
}

/// A client ran out of its scope's rate-limit tokens.
pub struct RateLimited<'a> {
    pub scope: &'a str,
    pub client: &'a str,
}

impl Emit for RateLimited<'_> {
    fn emit(self, metrics: &Metrics) {
        tracing::debug!(scope = self.scope, client = self.client, "rate limited");
        metrics.rate_limited.inc();
    }
}
