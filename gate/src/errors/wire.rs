//! The one table from an error to the wire. A door renders [`OnTheWire`]: the proxy, the
//! inference service and the admin endpoints as an HTTP status with `{error, detail}`,
//! ext_proc as a gRPC status, every door's forwarded request as X-Waf-Error, the event as its
//! reason. Like linkerd's synthetic responses: the cause picks the answer, never the door.

use std::borrow::Cow;

use hyper::StatusCode;

use super::{error_chain, ApiError, BodyError, ExchangeError, ScoreError, Side, UpstreamError};

/// X-Waf-Error of a verdict that lacks a model's opinion and was let through
/// (WAF_ON_MODEL_MISSING=open): not an error type, a verdict, but the header's values live here.
pub const SCORING_INCOMPLETE: &str = "scoring-incomplete";

/// Every X-Waf-Error value a scorer failure can have (metrics export them all from the start).
pub const SCORER_ERRORS: [&str; 4] = ["scorer-unreachable", "scorer-timeout", "scorer-bad-answer", "internal-error"];

/// How one error looks on the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OnTheWire {
    pub side: Side,
    /// The status of an HTTP answer carrying the error.
    pub status: StatusCode,
    /// `error` of the `{error, detail}` body: stable, for machines.
    pub code: &'static str,
    /// `detail` of the body: for people; never internal addresses or causes from our side.
    pub detail: Cow<'static, str>,
    /// `Allow` of a 405.
    pub allow: Option<&'static str>,
    /// X-Waf-Error on a request that goes on despite the error (scoring failures only).
    pub waf_error: Option<&'static str>,
    /// The event's reason when the request is recorded with this error (`error:…` for a
    /// failed scoring, `<side>:<why>` for a body refused before scoring).
    pub event_reason: Option<&'static str>,
}

impl OnTheWire {
    fn new(side: Side, status: StatusCode, code: &'static str, detail: impl Into<Cow<'static, str>>) -> Self {
        OnTheWire { side, status, code, detail: detail.into(), allow: None, waf_error: None, event_reason: None }
    }

    /// The gRPC status an ext_proc stream ends with: the peer's fault is INVALID_ARGUMENT, a
    /// scorer or upstream failure UNAVAILABLE (Envoy's failure_mode_allow decides), ours INTERNAL.
    pub fn grpc_code(&self) -> tonic::Code {
        match self.side {
            Side::Client => tonic::Code::InvalidArgument,
            Side::Upstream | Side::Scorer => tonic::Code::Unavailable,
            Side::Internal => tonic::Code::Internal,
        }
    }
}

/// Every edge error maps itself here, and only here.
pub trait ToWire: std::error::Error + 'static {
    fn wire(&self) -> OnTheWire;

    /// The gRPC status ending an ext_proc stream, its message naming the whole cause chain
    /// (Envoy logs it; Envoy is our own peer, not the client).
    fn grpc_status(&self) -> tonic::Status
    where
        Self: Sized,
    {
        let wire = self.wire();
        let what = match wire.side {
            Side::Client => "rampart could not read the message",
            _ => "rampart could not score the request",
        };
        tonic::Status::new(wire.grpc_code(), format!("{what}: {}", error_chain(self)))
    }
}

/// The fail-closed refusal's body (`waf_headers::UNAVAILABLE_BODY` says the same).
const SCORING_UNAVAILABLE: (&str, &str) =
    ("scoring_unavailable", "the request could not be inspected in full and the firewall fails closed");

impl ScoreError {
    /// (side, X-Waf-Error on a request let through after this failure, the event's reason).
    fn row(&self) -> (Side, &'static str, &'static str) {
        match self {
            ScoreError::Unreachable(_) => (Side::Scorer, "scorer-unreachable", "error:scorer-unreachable"),
            ScoreError::Timeout(_) => (Side::Scorer, "scorer-timeout", "error:scorer-timeout"),
            ScoreError::BadStatus { .. }
            | ScoreError::AnswerUnreadable(_)
            | ScoreError::AnswerNotJson(_)
            | ScoreError::ScoreOutOfRange(_) => (Side::Scorer, "scorer-bad-answer", "error:scorer-bad-answer"),
            ScoreError::Encode(_) => (Side::Internal, "internal-error", "error:internal-error"),
        }
    }

    pub fn waf_error(&self) -> &'static str {
        self.row().1
    }

    pub fn event_reason(&self) -> &'static str {
        self.row().2
    }
}

impl ToWire for ScoreError {
    fn wire(&self) -> OnTheWire {
        let (side, waf_error, event_reason) = self.row();
        let (code, detail) = SCORING_UNAVAILABLE;
        OnTheWire {
            waf_error: Some(waf_error),
            event_reason: Some(event_reason),
            ..OnTheWire::new(side, StatusCode::SERVICE_UNAVAILABLE, code, detail)
        }
    }
}

impl ToWire for UpstreamError {
    fn wire(&self) -> OnTheWire {
        let status = match self {
            UpstreamError::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
            UpstreamError::Connect(_) | UpstreamError::Failed(_) => StatusCode::BAD_GATEWAY,
        };
        OnTheWire::new(Side::Upstream, status, "upstream_unavailable", "the upstream application did not answer")
    }
}

impl BodyError {
    /// The reason of the `error` event recording the refused request.
    pub fn event_reason(&self) -> &'static str {
        match self {
            BodyError::Timeout(_) => "client:body-timeout",
            BodyError::Read(_) => "client:body-read-failed",
            BodyError::BudgetExhausted => "limit:body-budget",
        }
    }
}

impl ToWire for BodyError {
    fn wire(&self) -> OnTheWire {
        // Both client failures say the same: how the read failed is in our log, not the answer.
        const UNREAD: &str = "the request body could not be read";
        let wire = match self {
            BodyError::Timeout(_) => OnTheWire::new(Side::Client, StatusCode::REQUEST_TIMEOUT, "body_timeout", UNREAD),
            BodyError::Read(_) => OnTheWire::new(Side::Client, StatusCode::BAD_REQUEST, "body_read_failed", UNREAD),
            BodyError::BudgetExhausted => OnTheWire::new(
                Side::Internal,
                StatusCode::SERVICE_UNAVAILABLE,
                "body_budget_exhausted",
                "too many request bodies are buffered for inspection right now (WAF_BODY_BUDGET_BYTES); retry later",
            ),
        };
        OnTheWire { event_reason: Some(self.event_reason()), ..wire }
    }
}

impl ToWire for ExchangeError {
    fn wire(&self) -> OnTheWire {
        match self {
            ExchangeError::NoPhase | ExchangeError::Unreadable(_) => {
                OnTheWire::new(Side::Client, StatusCode::BAD_REQUEST, "invalid_request", error_chain(self))
            }
            ExchangeError::Scoring(err) => err.wire(),
        }
    }
}

impl ToWire for ApiError {
    fn wire(&self) -> OnTheWire {
        let (side, status, code) = match self {
            ApiError::NotFound(_) => (Side::Client, StatusCode::NOT_FOUND, "not_found"),
            ApiError::UnknownDetector(_) => (Side::Client, StatusCode::NOT_FOUND, "unknown_detector"),
            ApiError::MethodNotAllowed { .. } => (Side::Client, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
            ApiError::MalformedJson(_) => (Side::Client, StatusCode::BAD_REQUEST, "malformed_json"),
            ApiError::InvalidRequest(_) => (Side::Client, StatusCode::BAD_REQUEST, "invalid_request"),
            ApiError::TooLarge { .. } => (Side::Client, StatusCode::PAYLOAD_TOO_LARGE, "body_too_large"),
            ApiError::BodyRead(_) => (Side::Client, StatusCode::BAD_REQUEST, "body_read_failed"),
            ApiError::Unavailable(_) => (Side::Internal, StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            ApiError::Forbidden(_) => (Side::Client, StatusCode::FORBIDDEN, "admin_forbidden"),
            ApiError::UnsupportedMediaType(_) => (Side::Client, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type"),
        };
        // Every API detail is written for the client; a body-read cause is the client's own.
        let allow = match self {
            ApiError::MethodNotAllowed { allow, .. } => Some(*allow),
            _ => None,
        };
        OnTheWire { allow, ..OnTheWire::new(side, status, code, error_chain(self)) }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn cause() -> super::super::BoxError {
        "connection refused".into()
    }

    fn json_error() -> serde_json::Error {
        serde_json::from_str::<u8>("x").unwrap_err()
    }

    /// (error, side, HTTP status, code, X-Waf-Error, event reason, gRPC code)
    type Row = (Box<dyn Fn() -> OnTheWire>, Side, u16, &'static str, Option<&'static str>, Option<&'static str>, tonic::Code);

    #[test]
    fn the_table() {
        use tonic::Code::{Internal, InvalidArgument, Unavailable};
        let score = |e: fn() -> ScoreError| -> Box<dyn Fn() -> OnTheWire> { Box::new(move || e().wire()) };
        let rows: Vec<Row> = vec![
            (
                score(|| ScoreError::Unreachable(cause())),
                Side::Scorer,
                503,
                "scoring_unavailable",
                Some("scorer-unreachable"),
                Some("error:scorer-unreachable"),
                Unavailable,
            ),
            (
                score(|| ScoreError::Timeout(Duration::from_millis(5))),
                Side::Scorer,
                503,
                "scoring_unavailable",
                Some("scorer-timeout"),
                Some("error:scorer-timeout"),
                Unavailable,
            ),
            (
                score(|| ScoreError::BadStatus { status: 500, detail: "x".into() }),
                Side::Scorer,
                503,
                "scoring_unavailable",
                Some("scorer-bad-answer"),
                Some("error:scorer-bad-answer"),
                Unavailable,
            ),
            (
                score(|| ScoreError::AnswerUnreadable(cause())),
                Side::Scorer,
                503,
                "scoring_unavailable",
                Some("scorer-bad-answer"),
                Some("error:scorer-bad-answer"),
                Unavailable,
            ),
            (
                score(|| ScoreError::AnswerNotJson(json_error())),
                Side::Scorer,
                503,
                "scoring_unavailable",
                Some("scorer-bad-answer"),
                Some("error:scorer-bad-answer"),
                Unavailable,
            ),
            (
                score(|| ScoreError::ScoreOutOfRange(1.5)),
                Side::Scorer,
                503,
                "scoring_unavailable",
                Some("scorer-bad-answer"),
                Some("error:scorer-bad-answer"),
                Unavailable,
            ),
            // Was filed as the scorer's bad answer; the query never left the process.
            (
                score(|| ScoreError::Encode(json_error())),
                Side::Internal,
                503,
                "scoring_unavailable",
                Some("internal-error"),
                Some("error:internal-error"),
                Internal,
            ),
            (Box::new(|| UpstreamError::Connect(cause()).wire()), Side::Upstream, 502, "upstream_unavailable", None, None, Unavailable),
            (
                Box::new(|| UpstreamError::Timeout(Duration::from_secs(1)).wire()),
                Side::Upstream,
                504,
                "upstream_unavailable",
                None,
                None,
                Unavailable,
            ),
            (Box::new(|| UpstreamError::Failed(cause()).wire()), Side::Upstream, 502, "upstream_unavailable", None, None, Unavailable),
            (
                Box::new(|| BodyError::Timeout(Duration::from_secs(1)).wire()),
                Side::Client,
                408,
                "body_timeout",
                None,
                Some("client:body-timeout"),
                InvalidArgument,
            ),
            (
                Box::new(|| BodyError::Read(cause()).wire()),
                Side::Client,
                400,
                "body_read_failed",
                None,
                Some("client:body-read-failed"),
                InvalidArgument,
            ),
            (
                Box::new(|| BodyError::BudgetExhausted.wire()),
                Side::Internal,
                503,
                "body_budget_exhausted",
                None,
                Some("limit:body-budget"),
                Internal,
            ),
            // Was reported as the scorer's bad answer (UNAVAILABLE): Envoy sent a message the
            // protocol does not have.
            (Box::new(|| ExchangeError::NoPhase.wire()), Side::Client, 400, "invalid_request", None, None, InvalidArgument),
            (
                Box::new(|| ExchangeError::Unreadable(tonic::Status::data_loss("cut")).wire()),
                Side::Client,
                400,
                "invalid_request",
                None,
                None,
                InvalidArgument,
            ),
            (
                Box::new(|| ExchangeError::Scoring(ScoreError::Timeout(Duration::ZERO)).wire()),
                Side::Scorer,
                503,
                "scoring_unavailable",
                Some("scorer-timeout"),
                Some("error:scorer-timeout"),
                Unavailable,
            ),
            (Box::new(|| ApiError::NotFound("x".into()).wire()), Side::Client, 404, "not_found", None, None, InvalidArgument),
            (Box::new(|| ApiError::UnknownDetector("x".into()).wire()), Side::Client, 404, "unknown_detector", None, None, InvalidArgument),
            (
                Box::new(|| ApiError::MethodNotAllowed { allow: "GET", detail: "x".into() }.wire()),
                Side::Client,
                405,
                "method_not_allowed",
                None,
                None,
                InvalidArgument,
            ),
            (Box::new(|| ApiError::MalformedJson("x".into()).wire()), Side::Client, 400, "malformed_json", None, None, InvalidArgument),
            (Box::new(|| ApiError::InvalidRequest("x".into()).wire()), Side::Client, 400, "invalid_request", None, None, InvalidArgument),
            (Box::new(|| ApiError::TooLarge { limit: 1 }.wire()), Side::Client, 413, "body_too_large", None, None, InvalidArgument),
            (Box::new(|| ApiError::BodyRead(cause()).wire()), Side::Client, 400, "body_read_failed", None, None, InvalidArgument),
            (Box::new(|| ApiError::Unavailable("x".into()).wire()), Side::Internal, 503, "unavailable", None, None, Internal),
            (Box::new(|| ApiError::Forbidden("x".into()).wire()), Side::Client, 403, "admin_forbidden", None, None, InvalidArgument),
            (
                Box::new(|| ApiError::UnsupportedMediaType("x".into()).wire()),
                Side::Client,
                415,
                "unsupported_media_type",
                None,
                None,
                InvalidArgument,
            ),
        ];
        for (wire, side, status, code, waf_error, reason, grpc) in rows {
            let wire = wire();
            assert_eq!(
                (wire.side, wire.status.as_u16(), wire.code, wire.waf_error, wire.event_reason, wire.grpc_code()),
                (side, status, code, waf_error, reason, grpc),
                "{wire:?}"
            );
        }
    }

    #[test]
    fn details_keep_causes_where_the_client_may_see_them_and_hide_them_elsewhere() {
        let body = ApiError::BodyRead("connection reset".into()).wire();
        assert_eq!(body.detail, "cannot read the request body: connection reset");
        let upstream = UpstreamError::Connect("tcp connect error: 10.0.0.7:8080".into()).wire();
        assert!(!upstream.detail.contains("10.0.0.7"), "{upstream:?}");
        let scorer = ScoreError::Unreachable("tcp connect error: 10.0.0.9:8081".into()).wire();
        assert!(!scorer.detail.contains("10.0.0.9"), "{scorer:?}");
        assert_eq!(ApiError::MethodNotAllowed { allow: "GET, POST", detail: "x".into() }.wire().allow, Some("GET, POST"));
    }

    #[test]
    fn grpc_messages_carry_the_whole_cause_chain() {
        let status = ExchangeError::Scoring(ScoreError::Unreachable(cause())).grpc_status();
        assert_eq!(status.code(), tonic::Code::Unavailable);
        assert_eq!(status.message(), "rampart could not score the request: inference service unreachable: connection refused");
        let status = ExchangeError::NoPhase.grpc_status();
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        assert_eq!(status.message(), "rampart could not read the message: ProcessingRequest without a phase");
    }
}
