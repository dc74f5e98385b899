//! The proxy's own endpoints: health, metrics, mode, events.

use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use net::ConnInfo;
use serde::Serialize;

use super::admin::{require_json, AdminAsk};
use super::{boxed, Proxy, ProxyBody};
use crate::dashboard;
use gate::client_ip::canonical;
use gate::gate::WafMode;
use gate::http::{json_response, read_body, ApiError};

pub enum Routed {
    Answered(Response<ProxyBody>),
    NotReserved(Request<Incoming>),
}

#[derive(Serialize)]
struct Health {
    service: &'static str,
    status: &'static str,
    mode: &'static str,
    threshold: f32,
    /// Internal addresses: shown to admin peers only (an outsider learns nothing to aim at).
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    inference: Option<String>,
    /// Beyond the spec: whether the scorer is ready (models loaded) — `loading` until then.
    scorer: &'static str,
}

#[derive(Serialize)]
struct ModeBody {
    mode: String,
}

/// Mode changes carry a few bytes; anything larger is not one.
const MODE_BODY_LIMIT: usize = 4096;

pub async fn route(proxy: &Proxy, req: Request<Incoming>, conn: ConnInfo) -> Routed {
    let path = req.uri().path();
    let answer = match path {
        "/_waf/health" => only_get(&req, |req| {
            let admin = proxy.admin.check(&AdminAsk::of(canonical(conn.peer.ip()), req)).is_ok();
            Ok(health(proxy, admin))
        }),
        "/metrics" => only_get(&req, |_| Ok(metrics(proxy))),
        "/_waf/ready" => only_get(&req, |_| Ok(boxed(gate::lifecycle::readiness("proxy", proxy.gate.scorer().ready())))),
        "/api/events" => only_get(&req, |req| {
            proxy.admin.check(&AdminAsk::of(canonical(conn.peer.ip()), req))?;
            events_stream(proxy)
        }),
        "/api/events/recent" => only_get(&req, |req| {
            proxy.admin.check(&AdminAsk::of(canonical(conn.peer.ip()), req))?;
            Ok(recent(proxy))
        }),
        "/api/stats" => match *req.method() {
            Method::GET | Method::HEAD => match proxy.admin.check(&AdminAsk::of(canonical(conn.peer.ip()), &req)) {
                Ok(()) => Ok(stats(proxy).await),
                Err(err) => Err(err),
            },
            _ => Err(ApiError::MethodNotAllowed { allow: "GET", detail: "/api/stats accepts GET".into() }),
        },
        p if p == dashboard::PREFIX || p.starts_with("/_waf/dashboard/") => only_get(&req, |req| dashboard_asset(proxy, req, conn)),
        "/api/mode" => match *req.method() {
            Method::GET | Method::HEAD => Ok(mode_response(proxy)),
            Method::POST => set_mode(proxy, req, conn).await,
            _ => Err(ApiError::MethodNotAllowed { allow: "GET, POST", detail: "/api/mode accepts GET and POST".into() }),
        },
        // Reserved only while a policy file is in use: without one the path is the
        // application's, as it always was.
        "/api/exclusions" if proxy.gate.policy().source().is_some() => match *req.method() {
            Method::POST => add_exclusion(proxy, req, conn).await,
            _ => Err(ApiError::MethodNotAllowed { allow: "POST", detail: "/api/exclusions accepts POST".into() }),
        },
        _ => return Routed::NotReserved(req),
    };
    Routed::Answered(answer.unwrap_or_else(|err| boxed(err.into_response())))
}

fn dashboard_asset(proxy: &Proxy, req: &Request<Incoming>, conn: ConnInfo) -> Result<Response<ProxyBody>, ApiError> {
    let path = req.uri().path();
    let token = req.uri().query().and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("token=")));
    if let Some(token) = token {
        if proxy.admin.token_matches(token) {
            return Ok(boxed(dashboard::login_redirect(token, proxy.came_over_tls(req.headers(), conn))));
        }
    }
    proxy.admin.check(&AdminAsk::of(canonical(conn.peer.ip()), req))?;
    if path == dashboard::POLICY_INFO {
        return Ok(boxed(dashboard::policy_info(proxy.gate.policy().source())));
    }
    let (body, content_type) = dashboard::asset(path).ok_or_else(|| ApiError::NotFound(format!("no dashboard asset {path}")))?;
    Ok(boxed(dashboard::asset_response(body, content_type)))
}

/// `/api/stats`: the dashboard's tiles and chart (figures kept server-side, spec 1.8).
async fn stats(proxy: &Proxy) -> Response<ProxyBody> {
    #[derive(Serialize)]
    struct Stats {
        mode: &'static str,
        threshold: f32,
        detectors: std::collections::BTreeMap<String, String>,
        #[serde(flatten)]
        figures: gate::stats::Snapshot,
    }
    let body = Stats {
        mode: proxy.mode().as_str(),
        threshold: proxy.gate.threshold(),
        detectors: proxy.gate.scorer().detectors().await,
        figures: proxy.gate.stats().snapshot(),
    };
    boxed(json_response(StatusCode::OK, &body))
}

fn only_get(
    req: &Request<Incoming>,
    answer: impl FnOnce(&Request<Incoming>) -> Result<Response<ProxyBody>, ApiError>,
) -> Result<Response<ProxyBody>, ApiError> {
    match *req.method() {
        Method::GET | Method::HEAD => answer(req),
        _ => Err(ApiError::MethodNotAllowed { allow: "GET", detail: format!("{} accepts GET", req.uri().path()) }),
    }
}

fn health(proxy: &Proxy, admin: bool) -> Response<ProxyBody> {
    let body = Health {
        service: "proxy",
        status: "ok",
        mode: proxy.mode().as_str(),
        threshold: proxy.gate.threshold(),
        target: admin.then(|| proxy.upstream.origin()),
        inference: admin.then(|| proxy.gate.scorer().location()),
        scorer: if proxy.gate.scorer().ready() { "ok" } else { "loading" },
    };
    boxed(json_response(StatusCode::OK, &body))
}

fn metrics(proxy: &Proxy) -> Response<ProxyBody> {
    boxed(gate::metrics::metrics_response(proxy.gate.metrics()))
}

fn mode_response(proxy: &Proxy) -> Response<ProxyBody> {
    boxed(json_response(StatusCode::OK, &ModeBody { mode: proxy.mode().as_str().to_string() }))
}

async fn set_mode(proxy: &Proxy, req: Request<Incoming>, conn: ConnInfo) -> Result<Response<ProxyBody>, ApiError> {
    proxy.admin.check(&AdminAsk::of(canonical(conn.peer.ip()), &req))?;
    require_json(req.headers())?;
    let body = read_body(req.into_body(), MODE_BODY_LIMIT).await?;
    const EXPECTED: &str = "expected {\"mode\": \"shadow\" | \"active\"}";
    let parsed: serde_json::Value = serde_json::from_slice(&body).map_err(|e| ApiError::MalformedJson(format!("{e}; {EXPECTED}")))?;
    let requested = parsed
        .as_object()
        .and_then(|o| o.get("mode"))
        .and_then(|m| m.as_str())
        .ok_or_else(|| ApiError::InvalidRequest(format!("no string field `mode`; {EXPECTED}")))?;
    let mode = match requested {
        "shadow" => WafMode::Shadow,
        "active" => WafMode::Active,
        other => return Err(ApiError::InvalidRequest(format!("mode `{other}` is not one of: shadow, active"))),
    };
    // The one mode of the process: under `rampart up` the auth adapter and ext_proc follow.
    let before = proxy.gate.set_mode(mode);
    tracing::warn!(from = before.as_str(), to = mode.as_str(), peer = %conn.peer, "mode changed");
    Ok(mode_response(proxy))
}

fn events_stream(proxy: &Proxy) -> Result<Response<ProxyBody>, ApiError> {
    let Some(stream) = proxy.gate.events().subscribe() else {
        let most = gate::events::MAX_SUBSCRIBERS;
        return Err(ApiError::Unavailable(format!("{most} event streams are open already; use /api/events/recent or retry later")));
    };
    let body = stream.map_err(|never| match never {}).boxed_unsync();
    let mut resp = Response::new(body);
    let headers = resp.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // nginx in front must not buffer the stream.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(resp)
}

fn recent(proxy: &Proxy) -> Response<ProxyBody> {
    let mut resp = Response::new(Full::new(proxy.gate.events().recent_json()));
    resp.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    boxed(resp)
}

/// `POST /api/exclusions {"event_id", "field"?, "confirm"?}`: the exclusion a logged event
/// calls for (docs/POLICY.md). Without `confirm: true` it is only proposed; confirmed, it is
/// appended to the policy file and put in force at once (the file watcher sees the same file).
async fn add_exclusion(proxy: &Proxy, req: Request<Incoming>, conn: ConnInfo) -> Result<Response<ProxyBody>, ApiError> {
    use gate::policy::from_event::{propose, EventFacts};
    use gate::policy::PolicySet;
    proxy.admin.check(&AdminAsk::of(canonical(conn.peer.ip()), &req))?;
    require_json(req.headers())?;
    let body = read_body(req.into_body(), MODE_BODY_LIMIT).await?;
    const EXPECTED: &str = "expected {\"event_id\": \"<request_id>\", \"field\": \"query:q\" (optional), \"confirm\": true (optional)}";
    let parsed: serde_json::Value = serde_json::from_slice(&body).map_err(|e| ApiError::MalformedJson(format!("{e}; {EXPECTED}")))?;
    let event_id = parsed
        .get("event_id")
        .and_then(|v| v.as_str())
        .ok_or_else(|| ApiError::InvalidRequest(format!("no string field `event_id`; {EXPECTED}")))?;
    let field = parsed.get("field").and_then(|v| v.as_str());
    let confirm = parsed.get("confirm").and_then(|v| v.as_bool()).unwrap_or(false);
    let event = proxy.gate.events().find(event_id).ok_or_else(|| ApiError::NotFound(format!("no recent event {event_id}")))?;
    let facts = EventFacts::of(&event).ok_or_else(|| ApiError::InvalidRequest(format!("event {event_id} lacks its request line")))?;
    let policy = proxy.gate.policy();
    let path = policy.source().map(std::path::Path::to_path_buf);
    let current = match &path {
        Some(p) => {
            std::fs::read_to_string(p).map_err(|e| ApiError::Unavailable(format!("cannot read the policy file {}: {e}", p.display())))?
        }
        None => String::new(),
    };
    let proposal = propose(&facts, field, &current, proxy.gate.baseline()).map_err(ApiError::InvalidRequest)?;
    if !confirm {
        return Ok(boxed(json_response(StatusCode::OK, &serde_json::json!({ "applied": false, "proposal": proposal }))));
    }
    let Some(path) = path else {
        return Err(ApiError::InvalidRequest(
            "no policy file is in use (start with --policy / WAF_POLICY) to write the exclusion to".into(),
        ));
    };
    let text = format!("{current}{proposal}");
    let set = PolicySet::parse(&text, proxy.gate.baseline()).map_err(ApiError::InvalidRequest)?;
    // A new file renamed over the old one: the file watcher never reads a half-written policy.
    let staged = path.with_extension("rampart-new");
    std::fs::write(&staged, &text)
        .and_then(|()| std::fs::rename(&staged, &path))
        .map_err(|e| ApiError::Unavailable(format!("cannot write the policy file {}: {e}", path.display())))?;
    proxy.gate.install_policy(set.with_source(path));
    tracing::warn!(event_id, peer = %conn.peer, "exclusion added to the policy file");
    Ok(boxed(json_response(StatusCode::CREATED, &serde_json::json!({ "applied": true, "proposal": proposal }))))
}
