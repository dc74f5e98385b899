//! Every error that can reach a front door's wire, one enum per layer, each cause kept typed
//! (`#[source]`) and every variant tagged with the [`Side`] that failed (pingora's
//! ErrorSource): the client, the upstream application, the scorer, or Rampart itself.
//! [`wire`] is the one table from an error to what goes on the wire (HTTP status and
//! `{error, detail}` code, gRPC status, X-Waf-Error value, event reason); doors only render
//! it. Whether a failed scoring forwards or refuses is not here: the gate's policy decides
//! (decision.rs), and the door renders that ruling.
//!
//! A leaf module: it names no other module of the crate, so every layer can use it.

mod wire;

use std::time::Duration;

use thiserror::Error;

pub use wire::{OnTheWire, ToWire, SCORER_ERRORS, SCORING_INCOMPLETE};

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Who failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The request (or the peer asking for a verdict: nginx, Envoy) was at fault.
    Client,
    /// The protected application did not answer.
    Upstream,
    /// The scorer (the inference service, a model) could not give a verdict.
    Scorer,
    /// Rampart itself: a bug or a resource it ran out of.
    Internal,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Upstream => "upstream",
            Side::Scorer => "scorer",
            Side::Internal => "internal",
        }
    }
}

/// Why no verdict came back from a scorer.
#[derive(Debug, Error)]
pub enum ScoreError {
    #[error("inference service unreachable")]
    Unreachable(#[source] BoxError),
    #[error("inference service did not answer within {0:?}")]
    Timeout(Duration),
    #[error("inference service answered {status}: {detail}")]
    BadStatus { status: u16, detail: String },
    #[error("cannot read the inference service's answer")]
    AnswerUnreadable(#[source] BoxError),
    #[error("inference service answer is not a score")]
    AnswerNotJson(#[source] serde_json::Error),
    #[error("inference service answered score {0}, outside 0..1")]
    ScoreOutOfRange(f32),
    /// Our side: the query could not be written as JSON (it never left the process).
    #[error("cannot encode the query for the inference service")]
    Encode(#[source] serde_json::Error),
}

/// The proxy's upstream did not answer.
#[derive(Debug, Error)]
pub enum UpstreamError {
    #[error("cannot reach the upstream")]
    Connect(#[source] BoxError),
    #[error("the upstream did not answer within {0:?}")]
    Timeout(Duration),
    #[error("the upstream connection failed")]
    Failed(#[source] BoxError),
}

impl UpstreamError {
    /// The `waf_upstream_errors_total` label.
    pub fn kind(&self) -> &'static str {
        match self {
            UpstreamError::Connect(_) => "connect",
            UpstreamError::Timeout(_) => "timeout",
            UpstreamError::Failed(_) => "failed",
        }
    }
}

/// The proxy could not get the part of a request body it scores.
#[derive(Debug, Error)]
pub enum BodyError {
    #[error("the client did not send the request body within {0:?}")]
    Timeout(Duration),
    #[error("the request body could not be read")]
    Read(#[source] BoxError),
    /// Too many bodies are buffered process-wide (WAF_BODY_BUDGET_BYTES, WAF_ON_BODY_BUDGET=refuse).
    #[error("the process-wide body budget is exhausted")]
    BudgetExhausted,
}

impl BodyError {
    /// The partial slug the refused request's event carries.
    pub fn partial(&self) -> Option<&'static str> {
        matches!(self, BodyError::BudgetExhausted).then_some("body-budget")
    }
}

/// One ext_proc message could not be answered.
#[derive(Debug, Error)]
pub enum ExchangeError {
    /// Envoy's side: a message naming no phase is not one the protocol has.
    #[error("ProcessingRequest without a phase")]
    NoPhase,
    /// The stream broke off or a message did not decode (its status says which; its
    /// message is the whole cause, so it is not a `source`).
    #[error("{}", .0.message())]
    Unreadable(tonic::Status),
    /// Scoring failed and the fail mode let the request go on.
    #[error(transparent)]
    Scoring(#[from] ScoreError),
}

/// Client-caused failures of an API call (admin endpoints, the inference service's API).
#[derive(Debug, Error)]
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
    /// Rampart cannot serve it right now (event streams at their cap, a model missing).
    #[error("{0}")]
    Unavailable(String),
    #[error("cannot read the request body")]
    BodyRead(#[source] BoxError),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    UnsupportedMediaType(String),
}

/// The error and its causes on one line: hyper's client errors say "client error (Connect)"
/// at the top; the cause is underneath.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
