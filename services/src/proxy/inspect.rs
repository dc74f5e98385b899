//! The path of a proxied request: buffer the body prefix, score, decide, record the event,
//! then forward (annotated), kill, or refuse.

use std::time::{Instant, SystemTime};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{HeaderMap, Request, Response, StatusCode};
use net::{ConnInfo, Outcome};
use serde::Serialize;

use super::body::{buffer_prefix, ReplayBody};
use super::client_ip::{any_contains, canonical, source_ip};
use super::forward::{strip_hop_by_hop, ClientFacts};
use super::{boxed, Proxy, ProxyBody};
use crate::config::{KillResponse, OversizeBody, WafMode};
use crate::decision::{decide, Action, Decision, Effect};
use crate::events::{rfc3339_utc, Event};
use crate::http::json_response;
use crate::metrics::Metrics;
use crate::scorer::{ScoreError, ScoreQuery, Verdict};

/// Spec 2.9: the block body never carries the score or the reason.
#[derive(Serialize)]
pub struct BlockBody {
    pub error: &'static str,
    pub detail: &'static str,
}

pub const BLOCK_BODY: BlockBody =
    BlockBody { error: "forbidden", detail: "This request was blocked by the web application firewall." };

/// Events keep this much of a path or query: enough to read an attack, bounded memory.
const EVENT_TEXT_LIMIT: usize = 2048;

/// What an event records besides the request and the verdict.
struct RecordContext {
    /// The mode the decision was taken in: the same value goes to X-Waf-Mode and the event
    /// even if the mode is switched while the request is in flight.
    mode: WafMode,
    latency_ms: f64,
}

impl Proxy {
    pub(super) async fn inspect(&self, req: Request<Incoming>, conn: ConnInfo) -> Outcome<ProxyBody> {
        let started = Instant::now();
        let (mut parts, body) = req.into_parts();
        let mode = self.mode();
        let buffered = match tokio::time::timeout(self.body_read_timeout, buffer_prefix(body, self.body_limit)).await {
            Ok(Ok(b)) => b,
            failed => {
                // The client broke off or stalled mid-body: nothing complete to score. It still
                // gets an event: a stream of these is worth seeing on the dashboard.
                let (status, code, why) = match failed {
                    Err(_) => (StatusCode::REQUEST_TIMEOUT, "body_timeout", "client:body-timeout"),
                    _ => (StatusCode::BAD_REQUEST, "body_read_failed", "client:body-read-failed"),
                };
                let decision = Decision { action: Action::Error, effect: Effect::Refuse };
                let verdict = Ok(Verdict { score: 0.0, reason: why.into(), detector: String::new(), incomplete: None });
                self.record(&parts, conn, &verdict, decision, RecordContext { mode, latency_ms: 0.0 });
                return Outcome::Respond(plain_error(status, code, "the request body could not be read"));
            }
        };
        let scored_body = &buffered.prefix[..buffered.prefix.len().min(self.body_limit)];
        let query = ScoreQuery::with_headers(
            request_text(&parts, scored_body),
            parts.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())),
        );
        let scoring_started = Instant::now();
        let verdict = if buffered.oversize && self.oversize_body == OversizeBody::Block {
            Ok(Verdict {
                score: 1.0,
                reason: "body-limit:exceeded".into(),
                detector: "body-limit".into(),
                incomplete: None,
            })
        } else {
            self.scorer.score(&query).await
        };
        let inference = scoring_started.elapsed();
        let decision = decide(mode, self.threshold, self.on_scoring_error, &verdict);
        if let Err(err) = &verdict {
            tracing::warn!(error = %err, "scoring failed");
        }
        Metrics::observe(&self.metrics.inference_seconds, inference);
        self.record(&parts, conn, &verdict, decision, RecordContext { mode, latency_ms: inference.as_secs_f64() * 1000.0 });

        let outcome = match decision.effect {
            Effect::Kill => self.kill(&verdict),
            Effect::Refuse => Outcome::Respond(plain_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "scoring_unavailable",
                "the request could not be inspected and the firewall fails closed",
            )),
            Effect::Forward => {
                annotate(&mut parts.headers, &verdict, decision, mode.as_str());
                let peer = canonical(conn.peer.ip());
                let peer_trusted = any_contains(&self.trusted_proxies, peer);
                self.upstream.prepare(&mut parts, ClientFacts { peer, peer_trusted });
                Outcome::Respond(self.forward(Request::from_parts(parts, buffered.body)).await)
            }
        };
        Metrics::observe(&self.metrics.total_seconds, started.elapsed());
        outcome
    }

    fn record(
        &self,
        parts: &hyper::http::request::Parts,
        conn: ConnInfo,
        verdict: &Result<Verdict, ScoreError>,
        decision: Decision,
        context: RecordContext,
    ) {
        self.metrics.count_request(decision.action.as_str());
        let (score, reason, detector) = match verdict {
            Ok(v) => (v.score, v.reason.clone(), v.detector.clone()),
            Err(err) => (0.0, format!("error:{}", error_code(err)), String::new()),
        };
        if matches!(decision.action, Action::ShadowKill | Action::ActiveKill) {
            self.metrics.count_kill(&detector, decision.action.as_str());
        }
        let event = Event {
            timestamp: rfc3339_utc(SystemTime::now()),
            method: parts.method.as_str().to_string(),
            path: truncate(parts.uri.path()),
            source_ip: source_ip(&parts.headers, conn.peer.ip(), &self.trusted_proxies).to_string(),
            score: scoring::verdict::round4(score),
            reason,
            mode: context.mode.as_str(),
            action: decision.action.as_str(),
            latency_ms: (context.latency_ms * 1000.0).round() / 1000.0,
            detector,
            query: truncate(parts.uri.query().unwrap_or("")),
        };
        self.events.publish(&event);
    }

    fn kill(&self, verdict: &Result<Verdict, ScoreError>) -> Outcome<ProxyBody> {
        match self.kill_response {
            KillResponse::Reset => Outcome::Kill,
            KillResponse::Forbidden => {
                let mut resp = json_response(StatusCode::FORBIDDEN, &BLOCK_BODY);
                resp.headers_mut().insert("x-waf-killed", HeaderValue::from_static("true"));
                if let Ok(v) = verdict {
                    insert_score(resp.headers_mut(), v.score);
                }
                Outcome::Respond(boxed(resp))
            }
        }
    }

    async fn forward(&self, req: Request<ReplayBody>) -> Response<ProxyBody> {
        let sent = Instant::now();
        match self.upstream.send(req).await {
            Ok(resp) => {
                Metrics::observe(&self.metrics.upstream_seconds, sent.elapsed());
                let (mut parts, body) = resp.into_parts();
                strip_hop_by_hop(&mut parts.headers);
                // An HTTP/1.0 upstream must not downgrade the client's connection; hyper
                // writes the response in the client's own protocol version.
                parts.version = hyper::Version::HTTP_11;
                Response::from_parts(parts, body.map_err(|e| Box::new(e) as super::BoxError).boxed_unsync())
            }
            Err(err) => {
                self.metrics.count_upstream_error(err.kind());
                tracing::warn!(error = %err, "upstream failed");
                let status = match err {
                    super::forward::UpstreamError::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
                    _ => StatusCode::BAD_GATEWAY,
                };
                plain_error(status, "upstream_unavailable", "the upstream application did not answer")
            }
        }
    }
}

/// Spec 4.2 rule 1: `{METHOD} {path}?{query}`, a newline, then the body. The `?` is left out
/// when there is no query.
pub fn request_text(parts: &hyper::http::request::Parts, body: &[u8]) -> String {
    let path = parts.uri.path();
    let query = parts.uri.query().unwrap_or("");
    let mut text = String::with_capacity(parts.method.as_str().len() + path.len() + query.len() + body.len() + 3);
    text.push_str(parts.method.as_str());
    text.push(' ');
    text.push_str(path);
    if !query.is_empty() {
        text.push('?');
        text.push_str(query);
    }
    text.push('\n');
    text.push_str(&String::from_utf8_lossy(body));
    text
}

/// X-Waf-* headers for the upstream; whatever the client sent under those names is dropped
/// first, so an attacker cannot pre-stamp a request as clean.
fn annotate(headers: &mut HeaderMap, verdict: &Result<Verdict, ScoreError>, decision: Decision, mode: &'static str) {
    let forged: Vec<HeaderName> = headers.keys().filter(|n| n.as_str().starts_with("x-waf-")).cloned().collect();
    for name in forged {
        headers.remove(name);
    }
    headers.insert("x-waf-mode", HeaderValue::from_static(mode));
    match verdict {
        Ok(v) => {
            insert_score(headers, v.score);
            headers.insert("x-waf-reason", header_text(&v.reason));
            if v.incomplete.is_some() && decision.action == Action::Error {
                headers.insert("x-waf-error", HeaderValue::from_static("scoring-incomplete"));
            }
        }
        Err(err) => {
            headers.insert("x-waf-error", HeaderValue::from_static(error_code(err)));
        }
    }
    if decision.would_have_killed() {
        headers.insert("x-waf-would-have-killed", HeaderValue::from_static("true"));
    }
}

fn insert_score(headers: &mut HeaderMap, score: f32) {
    if let Ok(v) = HeaderValue::from_str(&format!("{score:.4}")) {
        headers.insert("x-waf-score", v);
    }
}

/// Reasons are ASCII by construction; anything else is replaced rather than dropped.
fn header_text(text: &str) -> HeaderValue {
    let clean: String = text.chars().map(|c| if c.is_ascii_graphic() || c == ' ' { c } else { '?' }).collect();
    HeaderValue::from_str(&clean).unwrap_or_else(|_| HeaderValue::from_static(""))
}

fn error_code(err: &ScoreError) -> &'static str {
    match err {
        ScoreError::Unreachable(_) => "scorer-unreachable",
        ScoreError::Timeout(_) => "scorer-timeout",
        ScoreError::BadStatus { .. } | ScoreError::BadAnswer(_) => "scorer-bad-answer",
    }
}

fn truncate(text: &str) -> String {
    if text.len() <= EVENT_TEXT_LIMIT {
        return text.to_string();
    }
    let mut end = EVENT_TEXT_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

fn plain_error(status: StatusCode, code: &'static str, detail: &'static str) -> Response<ProxyBody> {
    #[derive(Serialize)]
    struct ErrorBody {
        error: &'static str,
        detail: &'static str,
    }
    let resp = json_response(status, &ErrorBody { error: code, detail });
    resp.map(|b: Full<Bytes>| b.map_err(|never| match never {}).boxed_unsync())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_text_follows_the_spec() {
        let (parts, _) = Request::post("http://x/login?next=%2Fhome").body(()).unwrap().into_parts();
        assert_eq!(request_text(&parts, b"user=o'brien"), "POST /login?next=%2Fhome\nuser=o'brien");
        let (parts, _) = Request::get("/").body(()).unwrap().into_parts();
        assert_eq!(request_text(&parts, b""), "GET /\n");
    }

    #[test]
    fn client_cannot_forge_the_verdict_headers() {
        let mut headers = HeaderMap::new();
        headers.insert("x-waf-score", "0.0000".parse().unwrap());
        headers.insert("x-waf-would-have-killed", "false".parse().unwrap());
        let verdict = Ok(Verdict { score: 0.97, reason: "sqli:union".into(), detector: "sqli".into(), incomplete: None });
        let decision = Decision { action: Action::ShadowKill, effect: Effect::Forward };
        annotate(&mut headers, &verdict, decision, "shadow");
        assert_eq!(headers["x-waf-score"], "0.9700");
        assert_eq!(headers["x-waf-reason"], "sqli:union");
        assert_eq!(headers["x-waf-mode"], "shadow");
        assert_eq!(headers["x-waf-would-have-killed"], "true");
    }
}
