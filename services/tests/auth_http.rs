//! The auth adapter over real sockets, called the way nginx's auth_request calls it (the
//! real-nginx tests are in nginx_auth.rs).

mod common;

use std::time::Duration;

use clap::Parser;
use common::proxy::{send, Reply};
use hyper::{Method, Request};
use services::cli::{Cli, Command};
use services::config::AuthArgs;
use services::run::{start_auth, AuthServer};

fn auth_args(inference: &str, extra: &[&str]) -> AuthArgs {
    let mut argv = vec!["rampart", "auth", "--auth-addr", "127.0.0.1:0", "--auth-metrics-addr", "127.0.0.1:0", "--audit-log", "off"];
    argv.extend(["--inference-url", inference]);
    if !extra.contains(&"--inference-timeout-ms") {
        argv.extend(["--inference-timeout-ms", "2000"]);
    }
    argv.extend(extra);
    match Cli::parse_from(argv).command {
        Command::Auth(args) => args,
        _ => unreachable!(),
    }
}

fn start(extra: &[&str]) -> AuthServer {
    start_auth(&auth_args(common::shared_base(), extra)).expect("auth adapter starts")
}

/// A subrequest as nginx sends it: its own line is `/_waf/check`, the original request is in
/// X-Original-Method / X-Original-URI.
fn check(method: &str, uri: &str, body: &str) -> Request<http_body_util::Full<bytes::Bytes>> {
    Request::builder()
        .method(Method::POST)
        .uri("/_waf/check")
        .header("host", "shop.example")
        .header("x-original-method", method)
        .header("x-original-uri", uri)
        .header("user-agent", "Mozilla/5.0")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(http_body_util::Full::new(bytes::Bytes::from(body.to_string())))
        .unwrap()
}

fn assert_no_cors(reply: &Reply) {
    assert!(reply.headers.keys().all(|k| !k.as_str().starts_with("access-control-")), "{:?}", reply.headers);
}

#[tokio::test]
async fn active_mode_blocks_attacks_with_the_block_body_and_passes_the_rest() {
    let auth = start(&["--mode", "active"]);
    let reply = send(auth.running.addr, check("GET", "/search?q=1%27%20union%20select%20password%20from%20users--", "")).await;
    assert_eq!(reply.status, 403);
    assert_eq!(reply.headers["content-type"], "application/json");
    let body = reply.json();
    assert_eq!(body["error"], "forbidden");
    assert_eq!(body.as_object().unwrap().len(), 2, "no score or reason in the body: {body}");
    assert!(reply.headers["x-waf-reason"].to_str().unwrap().starts_with("sqli:"));
    assert!(reply.headers["x-waf-score"].to_str().unwrap().parse::<f32>().unwrap() > 0.5);
    assert_eq!(reply.headers["x-waf-mode"], "active");
    assert_no_cors(&reply);

    let reply = send(auth.running.addr, check("POST", "/login", "user=admin%27%20OR%20%271%27%3D%271%27--&password=x")).await;
    assert_eq!(reply.status, 403, "an attack in the forwarded body");

    let reply = send(auth.running.addr, check("POST", "/signup?ref=mail", "first=Siobhan&last=O%27Brien")).await;
    assert_eq!(reply.status, 200);
    assert!(reply.body.is_empty());
    assert_eq!(reply.headers["x-waf-mode"], "active");
    assert!(reply.headers["x-waf-score"].to_str().unwrap().parse::<f32>().unwrap() <= 0.5);
    assert!(!reply.headers.contains_key("x-waf-would-have-killed"));
    assert_no_cors(&reply);
}

#[tokio::test]
async fn shadow_mode_passes_with_the_would_have_killed_header() {
    let auth = start(&["--mode", "shadow"]);
    let reply = send(auth.running.addr, check("GET", "/item?id=1%27%20AND%20SLEEP(5)--", "")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.headers["x-waf-would-have-killed"], "true");
    assert_eq!(reply.headers["x-waf-mode"], "shadow");
}

#[tokio::test]
async fn options_health_metrics_and_bad_subrequests() {
    let auth = start(&["--mode", "active"]);
    let mut preflight = check("GET", "/search?q=1%27%20union%20select%201--", "");
    *preflight.method_mut() = Method::OPTIONS;
    let reply = send(auth.running.addr, preflight).await;
    assert_eq!(reply.status, 204);
    assert_no_cors(&reply);
    assert!(!reply.headers.contains_key("x-waf-score"), "OPTIONS is not scored");

    let health = send(auth.running.addr, common::proxy::get("/_waf/health")).await;
    assert_eq!(health.status, 200);
    assert_eq!(health.json(), serde_json::json!({ "status": "ok" }));

    let mut no_uri = check("GET", "/", "");
    no_uri.headers_mut().remove("x-original-uri");
    let reply = send(auth.running.addr, no_uri).await;
    assert_eq!(reply.status, 400);
    assert!(reply.json()["detail"].as_str().unwrap().contains("X-Original-URI"));

    let text = common::proxy::metrics_text(auth.metrics.addr).await;
    assert!(text.contains("# HELP waf_requests_total Total requests processed by action"), "{text}");
    assert_eq!(common::proxy::sample(&text, "waf_requests_total{action=\"passed\"}"), 0.0);
}

#[tokio::test]
async fn unreachable_inference_fails_open() {
    let auth = start_auth(&auth_args("http://127.0.0.1:9", &["--mode", "active", "--inference-timeout-ms", "500"])).unwrap();
    let started = std::time::Instant::now();
    let reply = send(auth.running.addr, check("GET", "/search?q=1%27%20union%20select%20password%20from%20users--", "")).await;
    assert_eq!(reply.status, 200, "spec 4.3 rule 1: fail-open");
    assert_eq!(reply.headers["x-waf-error"], "scorer-unreachable");
    assert!(started.elapsed() < Duration::from_secs(5));
    let text = common::proxy::metrics_text(auth.metrics.addr).await;
    assert_eq!(common::proxy::sample(&text, "waf_requests_total{action=\"error\"}"), 1.0);
}
