//! One ext_proc stream = one HTTP request passing through Envoy. Envoy sends the request's
//! phases in order; each gets exactly one answer. What is scored and when (spec 4.5):
//! headers with end_of_stream → score at once; otherwise CONTINUE and score the body (the
//! whole body in BUFFERED mode; chunks are gathered in STREAMED mode and scored at the end,
//! or at the trailers). Response phases are passed through untouched.

use proto::processing_request::Request as Phase;
use proto::processing_response::Response as Answer;
use proto::{
    BodyResponse, CommonResponse, HeaderMutation, HeaderValue, HeaderValueOption, HeadersResponse, HttpHeaders, HttpStatus,
    ImmediateResponse, ProcessingRequest, ProcessingResponse, TrailersResponse,
};

use gate::decision::Effect;
use gate::errors::{ExchangeError, ScoreError};
use gate::gate::Ruling;
use gate::scored_request::HttpRequest;
use gate::scorer::ScoreQuery;

/// `HeaderValueOption.append_action`: replace an existing value or add one.
const OVERWRITE_IF_EXISTS_OR_ADD: i32 = 2;

/// What the exchange needs from its service: a ruling on a composed request.
pub trait Judge {
    /// Scores `query` and decides; `Err` when scoring failed and the fail mode lets the
    /// request go on (the stream then ends with a gRPC error and Envoy's failure_mode_allow
    /// decides).
    /// `body_truncated`: more body arrived than the limit, so `query` holds a prefix of it.
    fn judge(
        &self,
        query: ScoreQuery,
        request: &RequestLine,
        body_truncated: bool,
    ) -> impl std::future::Future<Output = Result<Ruling, ScoreError>> + Send;

    /// The body bytes to gather for `request` (its policy scope's limit), known from its headers.
    fn body_limit(&self, _request: &RequestLine, door: usize) -> usize {
        door
    }
}

/// The request as Envoy described it.
#[derive(Default)]
pub struct RequestLine {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    /// `:authority` (pseudo-headers are not kept among `headers`).
    pub authority: String,
}

impl RequestLine {
    /// The path without its query string, and the query.
    pub fn path_and_query(&self) -> (&str, &str) {
        self.path.split_once('?').unwrap_or((self.path.as_str(), ""))
    }

    /// `:authority` (or a plain `host`), for the policy's host scopes.
    pub fn host(&self) -> &str {
        if !self.authority.is_empty() {
            return &self.authority;
        }
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("host")).map_or("", |(_, v)| v.as_str())
    }
}

#[derive(Default)]
pub struct Exchange {
    request: RequestLine,
    body: Vec<u8>,
    body_chunks: usize,
    body_limit: usize,
    /// More body arrived than `body_limit`; `body` is a prefix.
    body_truncated: bool,
    /// The body is still to come; scoring waits for it.
    awaiting_body: bool,
    /// This stream's share of the process's body budget (none: unbounded, unit tests).
    reservation: Option<gate::budget::Reservation>,
    /// A body chunk did not fit the budget: the verdict is partial (`body-budget`).
    over_budget: bool,
}

impl Exchange {
    pub fn new(body_limit: usize) -> Self {
        Exchange { body_limit, ..Default::default() }
    }

    /// Buffers bodies within `budget`; a chunk that does not fit is left unscored.
    pub fn budgeted(mut self, budget: &std::sync::Arc<gate::budget::BodyBudget>) -> Self {
        self.reservation = Some(budget.reserve());
        self
    }

    /// The answer to one message.
    pub async fn answer(&mut self, message: ProcessingRequest, judge: &impl Judge) -> Result<ProcessingResponse, ExchangeError> {
        let answer = match message.request {
            Some(Phase::RequestHeaders(headers)) => {
                self.read_headers(&headers);
                self.body_limit = judge.body_limit(&self.request, self.body_limit);
                if headers.end_of_stream {
                    let ruling = self.judge(judge).await?;
                    headers_or_block(ruling, self.forged_headers())
                } else {
                    self.awaiting_body = true;
                    Answer::RequestHeaders(HeadersResponse::default())
                }
            }
            Some(Phase::RequestBody(body)) => {
                self.body_chunks += 1;
                let room = self.body_limit.saturating_sub(self.body.len());
                self.body_truncated |= body.body.len() > room;
                let take = body.body.len().min(room);
                let fits = self.reservation.as_mut().is_none_or(|r| r.grow(take));
                if fits && !self.over_budget {
                    self.body.extend_from_slice(&body.body[..take]);
                } else {
                    self.over_budget = true;
                }
                if body.end_of_stream && self.awaiting_body {
                    self.awaiting_body = false;
                    let ruling = self.judge(judge).await?;
                    // Header mutations ride on a body answer only while Envoy still holds the
                    // headers: a body that came whole (BUFFERED). Streamed chunks already let
                    // the headers go; a block still works then.
                    body_or_block(ruling, self.body_chunks == 1, self.forged_headers())
                } else {
                    Answer::RequestBody(BodyResponse::default())
                }
            }
            Some(Phase::RequestTrailers(_)) => {
                if self.awaiting_body {
                    self.awaiting_body = false;
                    let ruling = self.judge(judge).await?;
                    stop(&ruling).unwrap_or_else(|| Answer::RequestTrailers(TrailersResponse::default()))
                } else {
                    Answer::RequestTrailers(TrailersResponse::default())
                }
            }
            Some(Phase::ResponseHeaders(_)) => Answer::ResponseHeaders(HeadersResponse::default()),
            Some(Phase::ResponseBody(_)) => Answer::ResponseBody(BodyResponse::default()),
            Some(Phase::ResponseTrailers(_)) => Answer::ResponseTrailers(TrailersResponse::default()),
            None => return Err(ExchangeError::NoPhase),
        };
        Ok(ProcessingResponse { response: Some(answer), ..Default::default() })
    }

    fn read_headers(&mut self, headers: &HttpHeaders) {
        let pairs = headers.headers.iter().flat_map(|map| map.headers.iter());
        for header in pairs {
            let value =
                if header.raw_value.is_empty() { header.value.clone() } else { String::from_utf8_lossy(&header.raw_value).into_owned() };
            match header.key.as_str() {
                ":method" => self.request.method = value,
                ":path" => self.request.path = value,
                ":authority" => self.request.authority = value,
                key if key.starts_with(':') => {}
                key => self.request.headers.push((key.to_ascii_lowercase(), value)),
            }
        }
    }

    fn forged_headers(&self) -> Vec<String> {
        self.request.headers.iter().filter(|(name, _)| name.starts_with("x-waf-")).map(|(name, _)| name.clone()).collect()
    }

    async fn judge(&self, judge: &impl Judge) -> Result<Ruling, ScoreError> {
        let (path, query) = self.request.path.split_once('?').unwrap_or((self.request.path.as_str(), ""));
        let headers: Vec<(&str, &[u8])> = self.request.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())).collect();
        let mut scored = ScoreQuery::from_http(HttpRequest {
            method: &self.request.method,
            path,
            query,
            headers: &headers,
            body: &self.body,
            body_truncated: self.body_truncated,
            body_limit: self.body_limit,
        });
        if self.over_budget {
            scored.partial.push("body-budget".into());
        }
        judge.judge(scored, &self.request, self.body_truncated).await
    }
}

/// Adds the verdict headers and removes whatever X-Waf-* headers the client sent, so an
/// attacker cannot pre-stamp a request as clean.
fn mutation(ruling: &Ruling, forged: Vec<String>) -> Option<CommonResponse> {
    let set_headers = ruling
        .headers
        .iter()
        .map(|(name, value)| HeaderValueOption {
            header: Some(HeaderValue { key: name.to_string(), raw_value: value.clone().into_bytes(), ..Default::default() }),
            append_action: OVERWRITE_IF_EXISTS_OR_ADD,
            ..Default::default()
        })
        .collect();
    let remove_headers = forged.into_iter().filter(|name| !ruling.headers.iter().any(|(set, _)| set == name)).collect();
    Some(CommonResponse { header_mutation: Some(HeaderMutation { set_headers, remove_headers }), ..Default::default() })
}

fn headers_or_block(ruling: Ruling, forged: Vec<String>) -> Answer {
    if let Some(stop) = stop(&ruling) {
        return stop;
    }
    Answer::RequestHeaders(HeadersResponse { response: mutation(&ruling, forged) })
}

fn body_or_block(ruling: Ruling, headers_held: bool, forged: Vec<String>) -> Answer {
    if let Some(stop) = stop(&ruling) {
        return stop;
    }
    Answer::RequestBody(BodyResponse { response: headers_held.then(|| mutation(&ruling, forged)).flatten() })
}

/// Spec 4.5: a kill is an immediate_response 403 with the block body (spec 2.9). A refusal
/// (fail-closed) is an immediate 503 rather than a gRPC error, which Envoy's
/// failure_mode_allow would turn into a pass. None when the request goes on.
fn stop(ruling: &Ruling) -> Option<Answer> {
    let body = ruling.stop_body()?.json();
    Some(match ruling.effect() {
        Effect::Refuse => immediate(503, body, "rampart_scoring_unavailable"),
        _ => immediate(403, body, "rampart_blocked"),
    })
}

fn immediate(code: u32, body: Vec<u8>, details: &str) -> Answer {
    let content_type = HeaderValueOption {
        header: Some(HeaderValue { key: "content-type".into(), raw_value: b"application/json".to_vec(), ..Default::default() }),
        append_action: OVERWRITE_IF_EXISTS_OR_ADD,
        ..Default::default()
    };
    Answer::ImmediateResponse(ImmediateResponse {
        status: Some(HttpStatus { code: code as i32 }),
        headers: Some(HeaderMutation { set_headers: vec![content_type], ..Default::default() }),
        body,
        details: details.into(),
        ..Default::default()
    })
}
