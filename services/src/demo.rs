//! The built-in demo upstream `rampart up` puts behind the proxy when TARGET_URL is unset:
//! a tiny shop/chat API that echoes what reached it, including the proxy's X-Waf-* verdict,
//! so the dashboard and a curl user can see what the application received.

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Request, Response, StatusCode};
use serde_json::json;

use crate::http::{json_response, read_body};

/// The demo reads at most this much of a body to echo its size.
const DEMO_BODY_LIMIT: usize = 1 << 20;

const INDEX: &str = "<!doctype html><meta charset=utf-8><title>Rampart demo app</title>\
<h1>Rampart demo app</h1><p>This is the application behind the firewall. Try \
<code>/search?q=running+shoes</code>, <code>POST /api/login</code>, <code>POST /api/chat</code>.</p>";

pub async fn handle(req: Request<Incoming>) -> Response<Full<Bytes>> {
    let method = req.method().to_string();
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let waf: serde_json::Map<String, serde_json::Value> = req
        .headers()
        .iter()
        .filter(|(name, _)| name.as_str().starts_with("x-waf-"))
        .map(|(name, value)| (name.as_str().to_string(), String::from_utf8_lossy(value.as_bytes()).into()))
        .collect();
    if method == "GET" && path == "/" {
        let mut resp = Response::new(Full::new(Bytes::from_static(INDEX.as_bytes())));
        resp.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
        return resp;
    }
    let body_bytes = match read_body(req.into_body(), DEMO_BODY_LIMIT).await {
        Ok(body) => body.len(),
        Err(err) => return err.into_response(),
    };
    let reply = match path.as_str() {
        "/search" => {
            json!({ "results": [{ "name": "Trail running shoes", "price": 89.0 }, { "name": "Road running shoes", "price": 119.0 }] })
        }
        "/api/login" => json!({ "login": "ok" }),
        "/api/chat" => json!({ "reply": "Thanks for your message. (The demo app does not call a model.)" }),
        _ => json!({ "ok": true }),
    };
    json_response(
        StatusCode::OK,
        &json!({ "app": "rampart-demo", "method": method, "path": path, "query": query, "body_bytes": body_bytes, "waf": waf, "reply": reply }),
    )
}
