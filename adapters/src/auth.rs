//! The auth adapter (spec 4.3): nginx's `auth_request` asks `/_waf/check` whether the request
//! it is holding may pass. nginx sends the original method and URI in headers (the subrequest's
//! own line is `/_waf/check`), the client's headers as they were, and — when configured to
//! (deploy/nginx/auth-request-body.conf) — the buffered body. The answer is 200 or 403; the
//! verdict rides on X-Waf-* response headers for `auth_request_set`, and on one audit line.

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use net::ConnInfo;
use serde_json::json;
use tracing::Instrument;

use gate::adapter_door::AdapterDoor;
use gate::gate::{Component, RequestSummary};
use gate::http::{json_response, ApiError, HttpResponse};
use gate::observe::{Emit, LimitHit};
use gate::policy::body::Oversize;
use gate::request_id::{request_span, RequestId};
use gate::scored_request::HttpRequest;
use gate::scorer::ScoreQuery;
use gate::waf_headers::stamp;

use crate::original::Original;

pub struct AuthAdapter {
    door: AdapterDoor,
}

impl AuthAdapter {
    pub fn new(door: AdapterDoor) -> Self {
        AuthAdapter { door }
    }

    pub async fn handle(&self, req: Request<Incoming>, conn: ConnInfo) -> HttpResponse {
        let id = RequestId::next();
        let span = request_span(&id, Component::Auth.as_str(), conn.peer);
        self.route(req, conn, &id).instrument(span).await
    }

    async fn route(&self, req: Request<Incoming>, conn: ConnInfo, id: &RequestId) -> HttpResponse {
        let answer = match (req.uri().path(), req.method()) {
            // Preflight: answered at once, never scored, and no CORS headers (server-to-server).
            ("/_waf/check", &Method::OPTIONS) => Ok(empty(StatusCode::NO_CONTENT)),
            ("/_waf/check", _) => self.check(req, conn, id).await,
            ("/_waf/health", &Method::GET | &Method::HEAD) => Ok(json_response(StatusCode::OK, &json!({ "status": "ok" }))),
            ("/_waf/health", _) => Err(ApiError::MethodNotAllowed { allow: "GET", detail: "/_waf/health accepts GET".into() }),
            (path, _) => Err(ApiError::NotFound(format!("no route for {path}; nginx should call /_waf/check"))),
        };
        answer.unwrap_or_else(ApiError::into_response)
    }

    async fn check(&self, req: Request<Incoming>, conn: ConnInfo, id: &RequestId) -> Result<HttpResponse, ApiError> {
        let (parts, body) = req.into_parts();
        let original = Original::read(&parts.headers, &parts.method)?;
        let (method, host) = (original.method.as_str(), original.host.as_str());
        let (path, query) = original.path_and_query();
        // The scope is known before the body: its body limit and oversize behaviour apply.
        let scoped = self.door.gate.scope(host, method, path);
        // nginx forwards the client's own body here only when configured to; a prefix is
        // scored, the rest ignored (this answer does not carry the body anywhere).
        let limit = scoped.resolved.body.limit_or(self.door.body_limit);
        // Over the process's body budget the adapter scores what fit and marks the verdict
        // partial: nginx only understands 200/403, so a refusal here would be unexplained.
        let mut over_budget = false;
        let (body, body_truncated) = match gate::body::buffer_prefix(body, limit, &self.door.budget).await {
            Ok(buffered) => {
                over_budget = buffered.budget_hit;
                (buffered.prefix.slice(..buffered.prefix.len().min(limit)), buffered.oversize)
            }
            // A broken-off body: score what there is (nginx gave up on this request anyway).
            Err(_) => (Bytes::new(), false),
        };
        if over_budget {
            LimitHit { limit: "body-budget" }.emit(self.door.gate.metrics());
        }
        let scored_headers = original.scored_headers(&parts.headers);
        let mut score_query = ScoreQuery::from_http(HttpRequest {
            method,
            path,
            query,
            headers: &scored_headers,
            body: &body,
            body_truncated,
            body_limit: limit,
        });
        if over_budget {
            score_query.partial.push("body-budget".into());
        }

        // Spec 4.3 rule 1: an unreachable inference service passes (200) by default;
        // WAF_ON_SCORING_ERROR=closed refuses instead, decided by the gate like the proxy's.
        let client = self.door.client(&parts.headers, conn.peer.ip());
        let mut summary = RequestSummary {
            request_id: id,
            component: Component::Auth,
            method,
            path,
            query,
            client,
            scored: score_query,
            preset: None,
            demo: None,
        };
        // The adapter has no oversize flag: without a scope saying otherwise it scores the prefix.
        scoped.resolved.body.on_oversize(Oversize::ScorePrefix, body_truncated, &mut summary.scored, &mut summary.preset);
        let ruling = self.door.gate.inspect_scoped(summary, host, scoped).await;

        // nginx's auth_request knows 2xx, 401 and 403 only: a refusal (fail-closed) is a 403
        // whose body says why.
        let mut resp = match ruling.stop_body() {
            Some(body) => forbidden(body.json()),
            None => empty(StatusCode::OK),
        };
        stamp(resp.headers_mut(), &ruling.headers);
        Ok(resp)
    }
}

fn forbidden(body: Vec<u8>) -> HttpResponse {
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    *resp.status_mut() = StatusCode::FORBIDDEN;
    resp.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

fn empty(status: StatusCode) -> HttpResponse {
    let mut resp = Response::new(Full::new(Bytes::new()));
    *resp.status_mut() = status;
    resp
}
