//! The path of a proxied request: buffer the body prefix, score, decide, record the event,
//! then forward (annotated), kill, or refuse.

use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::HeaderValue;
use hyper::{Request, Response, StatusCode};
use net::{ConnInfo, Outcome};
use serde::Serialize;

use super::body::{buffer_prefix, ReplayBody};
use crate::client_ip::{any_contains, canonical, source_ip};
use super::forward::{strip_hop_by_hop, ClientFacts};
use super::{boxed, Proxy, ProxyBody};
use crate::config::{KillResponse, OversizeBody, WafMode};
use crate::limits::OnBodyBudget;
use crate::decision::{decide, Action, Decision, Effect};
use crate::events::{Event, RequestFacts};
use crate::http::json_response;
use crate::waf_headers::{format_score, stamp, verdict_headers, BLOCK_BODY, UNAVAILABLE_BODY};
use crate::metrics::Metrics;
use crate::stats::Demo;
use crate::scored_request::HttpRequest;
use crate::scorer::{ScoreError, ScoreQuery, Verdict};

/// What an event records besides the request and the verdict.
struct RecordContext {
    /// The mode the decision was taken in: the same value goes to X-Waf-Mode and the event
    /// even if the mode is switched while the request is in flight.
    mode: WafMode,
    latency_ms: f64,
    demo: Option<Demo>,
}

impl Proxy {
    pub(super) async fn inspect(&self, req: Request<Incoming>, conn: ConnInfo) -> Outcome<ProxyBody> {
        let started = Instant::now();
        let (mut parts, body) = req.into_parts();
        let mode = self.mode();
        let demo = parts.headers.remove(Demo::HEADER).and_then(|v| Demo::from_header(v.as_bytes()));
        super::admin::strip_admin_cookie(&mut parts.headers);
        let buffered = match tokio::time::timeout(self.body_read_timeout, buffer_prefix(body, self.body_limit, &self.budget)).await {
            Ok(Ok(b)) => b,
            failed => {
                // The client broke off or stalled mid-body: nothing complete to score. It still
                // gets an event: a stream of these is worth seeing on the dashboard.
                let (status, code, why) = match failed {
                    Err(_) => (StatusCode::REQUEST_TIMEOUT, "body_timeout", "client:body-timeout"),
                    _ => (StatusCode::BAD_REQUEST, "body_read_failed", "client:body-read-failed"),
                };
                let decision = Decision { action: Action::Error, effect: Effect::Refuse, cause: None };
                let verdict = Ok(Verdict { score: 0.0, reason: why.into(), detector: String::new(), incomplete: None, partial: None });
                self.record(&parts, conn, &verdict, decision, RecordContext { mode, latency_ms: 0.0, demo });
                return Outcome::Respond(plain_error(status, code, "the request body could not be read"));
            }
        };
        if buffered.budget_hit {
            self.metrics.count_limit("body-budget");
            if self.on_body_budget == OnBodyBudget::Refuse {
                let decision = Decision { action: Action::Error, effect: Effect::Refuse, cause: None };
                let verdict = Ok(Verdict { score: 0.0, reason: "limit:body-budget".into(), detector: String::new(), incomplete: None, partial: Some("body-budget".into()) });
                self.record(&parts, conn, &verdict, decision, RecordContext { mode, latency_ms: 0.0, demo });
                return Outcome::Respond(plain_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "body_budget_exhausted",
                    "too many request bodies are buffered for inspection right now (WAF_BODY_BUDGET_BYTES); retry later",
                ));
            }
        }
        let scored_body = &buffered.prefix[..buffered.prefix.len().min(self.body_limit)];
        let headers: Vec<(&str, &[u8])> = parts.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())).collect();
        let mut query = ScoreQuery::from_http(HttpRequest {
            method: parts.method.as_str(),
            path: parts.uri.path(),
            query: parts.uri.query().unwrap_or(""),
            headers: &headers,
            body: scored_body,
            body_truncated: buffered.oversize,
            body_limit: self.body_limit,
        });
        // The model queue's fair share is per client: the address the events show.
        query.client = Some(source_ip(&parts.headers, conn.peer.ip(), &self.client_ip).to_string());
        if buffered.budget_hit {
            query.partial.push("body-budget".into());
        }
        let scoring_started = Instant::now();
        let verdict = if buffered.oversize && self.oversize_body == OversizeBody::Block {
            Ok(Verdict {
                score: 1.0,
                reason: "body-limit:exceeded".into(),
                detector: "body-limit".into(),
                incomplete: None,
                partial: None,
            })
        } else {
            self.scorer.score(&query).await
        };
        let inference = scoring_started.elapsed();
        let decision = decide(mode, self.threshold, &self.policy, &verdict);
        if let Err(err) = &verdict {
            tracing::warn!(error = %err, "scoring failed");
        }
        Metrics::observe(&self.metrics.inference_seconds, inference);
        let latency_ms = inference.as_secs_f64() * 1000.0;
        self.record(&parts, conn, &verdict, decision, RecordContext { mode, latency_ms, demo });

        let outcome = match decision.effect {
            Effect::Kill => self.kill(&verdict),
            Effect::Refuse => {
                Outcome::Respond(plain_error(StatusCode::SERVICE_UNAVAILABLE, UNAVAILABLE_BODY.error, UNAVAILABLE_BODY.detail))
            }
            Effect::Forward => {
                let peer = canonical(conn.peer.ip());
                let peer_trusted = any_contains(&self.client_ip.trusted, peer);
                // Strip first, stamp last: hop-by-hop removal (which honours the client's
                // Connection header) must run before the verdict is written.
                self.upstream.prepare(&mut parts, ClientFacts { peer, peer_trusted });
                stamp(&mut parts.headers, &verdict_headers(&verdict, decision, mode));
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
        self.metrics.count_decision(decision, verdict);
        let request = RequestFacts {
            method: parts.method.as_str(),
            path: parts.uri.path(),
            query: parts.uri.query().unwrap_or(""),
            source_ip: source_ip(&parts.headers, conn.peer.ip(), &self.client_ip).to_string(),
        };
        let event = Event::new(request, verdict, decision, context.mode, context.latency_ms);
        self.stats.record(&event, context.demo);
        self.events.publish(&event);
    }

    fn kill(&self, verdict: &Result<Verdict, ScoreError>) -> Outcome<ProxyBody> {
        match self.kill_response {
            KillResponse::Reset => Outcome::Kill,
            KillResponse::Forbidden => {
                let mut resp = json_response(StatusCode::FORBIDDEN, &BLOCK_BODY);
                resp.headers_mut().insert("x-waf-killed", HeaderValue::from_static("true"));
                if let Ok(v) = verdict {
                    if let Ok(score) = HeaderValue::from_str(&format_score(v.score)) {
                        resp.headers_mut().insert("x-waf-score", score);
                    }
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

fn plain_error(status: StatusCode, code: &'static str, detail: &'static str) -> Response<ProxyBody> {
    #[derive(Serialize)]
    struct ErrorBody {
        error: &'static str,
        detail: &'static str,
    }
    let resp = json_response(status, &ErrorBody { error: code, detail });
    resp.map(|b: Full<Bytes>| b.map_err(|never| match never {}).boxed_unsync())
}
