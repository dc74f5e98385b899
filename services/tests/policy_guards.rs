//! Client checks and the event-to-exclusion API over real sockets, on the real `rampart proxy`
//! executable: an IP deny list kills, an allow list forwards unscored, a per-client rate limit
//! answers 429 with Retry-After (counted), and `POST /api/exclusions` turns a logged kill into
//! an exclusion written to the policy file and in force at once.

mod common;
mod policy_fixtures;

use std::net::IpAddr;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Request};

use common::proxy::{get, metrics_text, sample, send, send_from, upstream};
use policy_fixtures::{get_at, start_policy_proxy, test_dir, write_policy, SCRIPT};

const POLICY: &str = r#"
[defaults]
kill_response = "forbidden"

[[scope]]
name = "blocked-clients"
deny_ips = ["127.0.0.3/32", "2001:db8::/32"]

[[scope]]
name = "trusted-scanner"
allow_ips = ["127.0.0.4"]

[[scope]]
name = "login-limit"
path = "/login"
rate_limit = { requests = 1, per_seconds = 60, burst = 3 }

[[scope]]
name = "api-key-limit"
path = "/api/v1"
rate_limit = { requests = 1, per_seconds = 60, burst = 2, key = "header:x-api-key" }
"#;

fn with_key(key: &str) -> Request<Full<Bytes>> {
    let mut req = get_at("shop.test", "/api/v1/items");
    req.headers_mut().insert("x-api-key", key.parse().unwrap());
    req
}

fn from(ip: &str) -> Option<IpAddr> {
    Some(ip.parse().unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn ip_lists_and_rate_limits() {
    let app = upstream().await;
    let dir = test_dir("guards");
    write_policy(&dir.join("policy.toml"), POLICY);
    let proxy = start_policy_proxy(&dir, app.addr, &[]);
    let addr = proxy.addr;

    // Deny: a benign request from a denied client is killed; other clients pass.
    let denied = send_from(addr, from("127.0.0.3"), get_at("shop.test", "/")).await.unwrap();
    assert_eq!(denied.status, 403);
    assert_eq!(send_from(addr, from("127.0.0.2"), get_at("shop.test", "/")).await.unwrap().status, 200);
    // Allow: an attack from the allowed client is forwarded unscored.
    let allowed = send_from(addr, from("127.0.0.4"), get_at("shop.test", &format!("/?q={SCRIPT}"))).await.unwrap();
    assert_eq!(allowed.status, 200);
    assert_eq!(send_from(addr, from("127.0.0.2"), get_at("shop.test", &format!("/?q={SCRIPT}"))).await.unwrap().status, 403);

    // Rate limit: a burst of 3, then 429 with Retry-After; another client has its own bucket.
    for _ in 0..3 {
        assert_eq!(send_from(addr, from("127.0.0.5"), get_at("shop.test", "/login")).await.unwrap().status, 200);
    }
    let limited = send_from(addr, from("127.0.0.5"), get_at("shop.test", "/login")).await.unwrap();
    assert_eq!(limited.status, 429, "{:?}", limited.body);
    let retry: u64 = limited.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    assert_eq!(send_from(addr, from("127.0.0.6"), get_at("shop.test", "/login")).await.unwrap().status, 200);
    // Other routes are not limited.
    assert_eq!(send_from(addr, from("127.0.0.5"), get_at("shop.test", "/home")).await.unwrap().status, 200);

    // Keyed by API key: one key's bucket empties whichever address sends it; another key (from
    // the same address) has its own.
    assert_eq!(send_from(addr, from("127.0.0.7"), with_key("k1")).await.unwrap().status, 200);
    assert_eq!(send_from(addr, from("127.0.0.8"), with_key("k1")).await.unwrap().status, 200);
    assert_eq!(send_from(addr, from("127.0.0.9"), with_key("k1")).await.unwrap().status, 429, "key k1 is spent");
    assert_eq!(send_from(addr, from("127.0.0.9"), with_key("k2")).await.unwrap().status, 200, "key k2 has its own bucket");

    let text = metrics_text(addr).await;
    assert_eq!(sample(&text, "waf_rate_limited_total"), 2.0, "{text}");
    assert!(text.contains("waf_kills_total{detector=\"rate-limit\",action=\"active_kill\"} 2"), "{text}");
    assert!(text.contains("waf_kills_total{detector=\"ip-deny\",action=\"active_kill\"} 1"), "{text}");
    let events = send(addr, get("/api/events/recent")).await.json();
    let reasons: Vec<&str> = events.as_array().unwrap().iter().filter_map(|e| e["reason"].as_str()).collect();
    assert!(reasons.contains(&"rate-limit") && reasons.contains(&"ip-deny"), "{reasons:?}");
}

fn admin_post(path: &str, body: &serde_json::Value) -> Request<Full<Bytes>> {
    Request::builder()
        .method(Method::POST)
        .uri(path)
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_exclusion_from_an_event_is_written_and_applied() {
    let app = upstream().await;
    let dir = test_dir("from-event");
    let file = dir.join("policy.toml");
    write_policy(&file, "# operator's comment stays\n[defaults]\nkill_response = \"forbidden\"\n");
    let proxy = start_policy_proxy(&dir, app.addr, &[]);
    let addr = proxy.addr;

    assert_eq!(send(addr, get_at("shop.test", &format!("/comments?text={SCRIPT}"))).await.status, 403);
    let events = send(addr, get("/api/events/recent")).await.json();
    let kill = events.as_array().unwrap().iter().rev().find(|e| e["path"] == "/comments").expect("the kill's event").clone();
    assert_eq!(kill["reason"], "xss:script-tag");
    let id = kill["request_id"].as_str().unwrap();

    // Proposed only: nothing changes.
    let reply = send(addr, admin_post("/api/exclusions", &serde_json::json!({ "event_id": id, "field": "query:text" }))).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let proposal = reply.json()["proposal"].as_str().unwrap().to_string();
    assert!(proposal.contains("rule = \"script-tag\", field = \"query:text\"") && proposal.contains("path = \"/comments\""), "{proposal}");
    assert_eq!(send(addr, get_at("shop.test", &format!("/comments?text={SCRIPT}"))).await.status, 403);

    // Bad input: a clear error, nothing written.
    let reply =
        send(addr, admin_post("/api/exclusions", &serde_json::json!({ "event_id": id, "field": "param:text", "confirm": true }))).await;
    assert_eq!(reply.status, 400);
    assert!(reply.json()["detail"].as_str().unwrap().contains("not a field"));
    let reply = send(addr, admin_post("/api/exclusions", &serde_json::json!({ "event_id": "nope" }))).await;
    assert_eq!(reply.status, 404);

    // Confirmed: written to the file (comments kept) and in force for the next request.
    let reply =
        send(addr, admin_post("/api/exclusions", &serde_json::json!({ "event_id": id, "field": "query:text", "confirm": true }))).await;
    assert_eq!(reply.status, 201, "{:?}", reply.body);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("# operator's comment stays") && text.contains(&format!("from event {id}")), "{text}");
    assert_eq!(send(addr, get_at("shop.test", &format!("/comments?text={SCRIPT}"))).await.status, 200);
    assert_eq!(send(addr, get_at("shop.test", &format!("/comments?other={SCRIPT}"))).await.status, 403);

    // From another address the API is closed.
    let outsider = send_from(addr, from("127.0.0.9"), admin_post("/api/exclusions", &serde_json::json!({ "event_id": id }))).await.unwrap();
    assert_eq!(outsider.status, 403);
}
