//! The inline reverse proxy (spec 4.1): every request is scored, then forwarded, annotated,
//! or killed. Reserved paths (`/_waf/health`, `/_waf/ready`, `/metrics`, `/api/mode`, `/api/events*`) are
//! answered here; everything else goes through [`inspect`] to the upstream.

mod admin;
mod api;
pub mod dashboard;
mod forward;
mod grpc_status;
mod inspect;
pub mod settings;
mod websocket;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::{Request, Uri};
use net::{ConnInfo, Outcome};
use tracing::Instrument;

pub use gate::client_ip::IpNet;
pub use settings::{AdminSettings, ProxySettings, UpstreamProtocol, UpstreamSettings, WsInspect};

use admin::AdminPolicy;
use forward::Upstream;
use gate::decision::OversizeBody;
use gate::events::AuditLog;
use gate::gate::{Component, Gate, GateParts, KillResponse, SharedMode, WafMode};
use gate::http::HttpResponse;
use gate::metrics::Metrics;
use gate::request_id::{request_span, RequestId};
use gate::scorer::Scorer;

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// Every proxy response body: JSON, the event stream, or the upstream's streamed body.
pub type ProxyBody = UnsyncBoxBody<Bytes, BoxError>;

/// What the proxy is built from besides its own settings.
pub struct ProxyParts {
    pub target: Uri,
    pub threshold: f32,
    pub scorer: Arc<dyn Scorer>,
    pub metrics: Arc<Metrics>,
    /// Where events are also written (opened from WAF_AUDIT_LOG by the caller).
    pub audit: Option<AuditLog>,
}

pub struct Proxy {
    /// Scores, decides, counts and records; holds the mode every door of the process shares.
    gate: Arc<Gate>,
    kill_response: KillResponse,
    body_limit: usize,
    body_read_timeout: Duration,
    oversize_body: OversizeBody,
    client_ip: gate::client_ip::ClientIpPolicy,
    /// Shared with every front door of the process: the buffered-body budget and what to do
    /// when it runs out.
    budget: Arc<gate::budget::BodyBudget>,
    on_body_budget: gate::limits::OnBodyBudget,
    admin: AdminPolicy,
    upstream: Upstream,
    /// WAF_WS_INSPECT and WAF_WS_MAX_MESSAGE: what happens to messages after a handshake.
    websocket: websocket::Settings,
}

impl Proxy {
    /// A proxy with its own gate built from `parts` and the proxy's policy settings.
    pub fn new(settings: ProxySettings, parts: ProxyParts, limits: &gate::limits::ProcessLimits) -> Self {
        let gate = Gate::new(GateParts {
            mode: SharedMode::new(settings.mode),
            threshold: parts.threshold,
            policy: settings.policy,
            scorer: parts.scorer,
            metrics: parts.metrics,
            audit: parts.audit,
            sse_keepalive: settings.sse_keepalive,
        });
        Proxy::with_gate(settings, &parts.target, Arc::new(gate), limits)
    }

    /// A proxy judging through `gate` (under `rampart up`, the gate of every door).
    pub fn with_gate(settings: ProxySettings, target: &Uri, gate: Arc<Gate>, limits: &gate::limits::ProcessLimits) -> Self {
        Proxy {
            gate,
            kill_response: settings.kill_response,
            body_limit: settings.body_limit,
            body_read_timeout: settings.body_read_timeout,
            oversize_body: settings.oversize_body,
            budget: limits.budget.clone(),
            on_body_budget: limits.on_body_budget,
            client_ip: settings.client_ip,
            admin: AdminPolicy::new(settings.admin.allow, settings.admin.token, settings.admin.hosts),
            upstream: Upstream::new(target, settings.upstream),
            websocket: websocket::Settings {
                inspect: settings.ws_inspect,
                max_message: settings.ws_max_message,
                budget: limits.budget.clone(),
            },
        }
    }

    pub fn mode(&self) -> WafMode {
        self.gate.mode()
    }

    pub fn gate(&self) -> &Arc<Gate> {
        &self.gate
    }

    /// A request came over TLS when the proxy terminates it, or when a trusted terminator in
    /// front says so.
    fn came_over_tls(&self, headers: &hyper::HeaderMap, conn: ConnInfo) -> bool {
        self.upstream.client_tls()
            || gate::client_ip::any_contains(&self.client_ip.trusted, gate::client_ip::canonical(conn.peer.ip()))
                && headers.get("x-forwarded-proto").is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"https"))
    }

    pub async fn handle(self: Arc<Self>, req: Request<Incoming>, conn: ConnInfo) -> Outcome<ProxyBody> {
        let id = RequestId::next();
        let span = request_span(&id, Component::Proxy.as_str(), conn.peer);
        let websocket = forward::wants_websocket(req.headers(), req.version());
        let mut req = req;
        if websocket {
            // The relay scores the messages with the handshake's host, path and client.
            let client = gate::client_ip::source_ip(req.headers(), conn.peer.ip(), &self.client_ip).to_string();
            if let Some(session) = self.websocket.session(&self.gate, &req, client) {
                req.extensions_mut().insert(session);
            }
        }
        async move {
            match api::route(&self, req, conn).await {
                api::Routed::Answered(resp) => Outcome::Respond(resp),
                // Boxed: the judged path's state machine is large, and hyper moves the
                // handler's future into place once per request (a memmove per request
                // otherwise, ~2.5 % of a benign GET's CPU in docs/perf).
                api::Routed::NotReserved(req) => match Box::pin(self.inspect(req, conn, &id)).await {
                    Outcome::Respond(resp) => Outcome::Respond(forward::reopen_upgrade(resp, websocket)),
                    Outcome::Kill => Outcome::Kill,
                },
            }
        }
        .instrument(span)
        .await
    }
}

/// Boxes a buffered JSON/text response into the proxy's body type.
fn boxed(resp: HttpResponse) -> hyper::Response<ProxyBody> {
    resp.map(|body| body.map_err(|never| match never {}).boxed_unsync())
}
