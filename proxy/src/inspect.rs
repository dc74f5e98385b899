//! The proxy as a front door: buffer the body prefix, summarise the request for the gate
//! (which scores, decides and records), then render its ruling: forward (annotated), kill
//! (RST / RST_STREAM / 403) or refuse (503).

use std::time::Instant;

use http_body_util::BodyExt;
use hyper::body::{Body, Incoming};
use hyper::header::HeaderValue;
use hyper::{Request, Response, StatusCode};
use net::{ConnInfo, Outcome};

use super::forward::{strip_hop_by_hop, ClientFacts};
use super::{boxed, Proxy, ProxyBody};
use gate::body::{buffer_prefix, ReplayBody};
use gate::client_ip::{any_contains, canonical, source_ip};
use gate::decision::Effect;
use gate::errors::BodyError;
use gate::gate::KillResponse;
use gate::gate::{Component, RequestSummary, Ruling};
use gate::http::{error_response, json_response};
use gate::limits::OnBodyBudget;
use gate::metrics::Metrics;
use gate::observe::{Emit, LimitHit, UpstreamFailed};
use gate::request_id::RequestId;
use gate::scored_request::HttpRequest;
use gate::scorer::ScoreQuery;
use gate::stats::Demo;
use gate::waf_headers::{format_score, stamp, BLOCK_BODY, UNAVAILABLE_BODY};

impl Proxy {
    pub(super) async fn inspect(&self, req: Request<Incoming>, conn: ConnInfo, id: &RequestId) -> Outcome<ProxyBody> {
        let started = Instant::now();
        let (mut parts, body) = req.into_parts();
        let demo = parts.headers.remove(Demo::HEADER).and_then(|v| Demo::from_header(v.as_bytes()));
        super::admin::strip_admin_cookie(&mut parts.headers);
        let client = source_ip(&parts.headers, conn.peer.ip(), &self.client_ip).to_string();
        let summary = |client: String| RequestSummary {
            request_id: id,
            component: Component::Proxy,
            method: parts.method.as_str(),
            path: parts.uri.path(),
            query: parts.uri.query().unwrap_or(""),
            client,
            scored: ScoreQuery::default(),
            preset: None,
            demo,
        };
        // HTTP/2 names the host in :authority, HTTP/1.1 in Host: policy scopes match either.
        let host = parts
            .uri
            .authority()
            .map(|a| a.as_str().to_string())
            .or_else(|| parts.headers.get(hyper::header::HOST).and_then(|h| h.to_str().ok()).map(str::to_string))
            .unwrap_or_default();
        // The scope is known before the body: its body limit decides how much is read.
        let scoped = self.gate.scope(&host, parts.method.as_str(), parts.uri.path());
        let body_limit = scoped.resolved.body.limit_or(self.body_limit);
        // The client broke off or stalled mid-body: nothing complete to score. It still gets an
        // event: a stream of these is worth seeing on the dashboard.
        // A body already complete (every GET) cannot stall: no timer to arm and disarm.
        let complete = body.is_end_stream();
        let read = buffer_prefix(body, body_limit, &self.budget);
        let read = if complete { Ok(read.await) } else { tokio::time::timeout(self.body_read_timeout, read).await };
        let buffered = match read {
            Ok(Ok(b)) => b,
            Ok(Err(err)) => return Outcome::Respond(self.refuse_unscored(summary(client), BodyError::Read(Box::new(err)))),
            Err(_) => return Outcome::Respond(self.refuse_unscored(summary(client), BodyError::Timeout(self.body_read_timeout))),
        };
        if buffered.budget_hit {
            LimitHit { limit: "body-budget" }.emit(self.gate.metrics());
            if self.on_body_budget == OnBodyBudget::Refuse {
                return Outcome::Respond(self.refuse_unscored(summary(client), BodyError::BudgetExhausted));
            }
        }
        let scored_body = &buffered.prefix[..buffered.prefix.len().min(body_limit)];
        let headers: Vec<(&str, &[u8])> = parts.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())).collect();
        let mut request = summary(client);
        request.scored = ScoreQuery::from_http(HttpRequest {
            method: parts.method.as_str(),
            path: parts.uri.path(),
            query: parts.uri.query().unwrap_or(""),
            headers: &headers,
            body: scored_body,
            body_truncated: buffered.oversize,
            body_limit,
        });
        if buffered.budget_hit {
            request.scored.partial.push("body-budget".into());
        }
        // The scope's oversize behaviour, else WAF_OVERSIZE_BODY.
        scoped.resolved.body.on_oversize(self.oversize_body.into(), buffered.oversize, &mut request.scored, &mut request.preset);
        let ruling = self.gate.inspect_scoped(request, &host, scoped).await;
        drop(headers);

        let grpc = super::grpc_status::is_grpc(&parts.headers);
        let outcome = match ruling.effect() {
            Effect::Kill => self.kill(&ruling),
            Effect::Refuse => Outcome::Respond(boxed(json_response(StatusCode::SERVICE_UNAVAILABLE, &UNAVAILABLE_BODY))),
            Effect::Forward => {
                let peer = canonical(conn.peer.ip());
                let peer_trusted = any_contains(&self.client_ip.trusted, peer);
                // Strip first, stamp last: hop-by-hop removal (which honours the client's
                // Connection header) must run before the verdict is written.
                self.upstream.prepare(&mut parts, ClientFacts { peer, peer_trusted });
                stamp(&mut parts.headers, &ruling.headers);
                Outcome::Respond(self.forward(Request::from_parts(parts, buffered.body), id).await)
            }
        };
        Metrics::observe(&self.gate.metrics().total_seconds, started.elapsed());
        match outcome {
            // Rampart's own answer (the upstream's are Forward): said as a gRPC status.
            Outcome::Respond(resp) if grpc && ruling.effect() != Effect::Forward => Outcome::Respond(super::grpc_status::answer(resp)),
            outcome => outcome,
        }
    }

    /// Records the request the door could not score (an `error` event) and answers the error.
    fn refuse_unscored(&self, summary: RequestSummary<'_>, err: BodyError) -> Response<ProxyBody> {
        self.gate.refuse_unscored(summary, &err);
        boxed(error_response(&err))
    }

    fn kill(&self, ruling: &Ruling) -> Outcome<ProxyBody> {
        if let Some(wait) = ruling.retry_after {
            return Outcome::Respond(boxed(too_many_requests(wait)));
        }
        match ruling.kill_response.unwrap_or(self.kill_response) {
            KillResponse::Reset => Outcome::Kill,
            KillResponse::Forbidden => {
                let mut resp = json_response(StatusCode::FORBIDDEN, &BLOCK_BODY);
                resp.headers_mut().insert("x-waf-killed", HeaderValue::from_static("true"));
                if let Ok(v) = &ruling.verdict {
                    if let Ok(score) = HeaderValue::from_str(&format_score(v.score)) {
                        resp.headers_mut().insert("x-waf-score", score);
                    }
                }
                Outcome::Respond(boxed(resp))
            }
        }
    }

    async fn forward(&self, req: Request<ReplayBody>, id: &RequestId) -> Response<ProxyBody> {
        let sent = Instant::now();
        match self.upstream.send(req).await {
            Ok(resp) => {
                Metrics::observe(&self.gate.metrics().upstream_seconds, sent.elapsed());
                let (mut parts, body) = resp.into_parts();
                strip_hop_by_hop(&mut parts.headers);
                // An HTTP/1.0 upstream must not downgrade the client's connection; hyper
                // writes the response in the client's own protocol version.
                parts.version = hyper::Version::HTTP_11;
                Response::from_parts(parts, body.map_err(|e| Box::new(e) as super::BoxError).boxed_unsync())
            }
            Err(err) => {
                UpstreamFailed { request_id: id.as_str(), error: &err }.emit(self.gate.metrics());
                boxed(error_response(&err))
            }
        }
    }
}

/// A scope's rate limit: 429 with Retry-After in whole seconds (at least 1).
fn too_many_requests(wait: std::time::Duration) -> gate::http::HttpResponse {
    let body = serde_json::json!({ "error": "rate_limited", "detail": "Too many requests from this client; retry after the Retry-After seconds." });
    let mut resp = json_response(StatusCode::TOO_MANY_REQUESTS, &body);
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    resp.headers_mut().insert(hyper::header::RETRY_AFTER, HeaderValue::from(secs.max(1)));
    resp
}
