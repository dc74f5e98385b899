//! One gate for every front door, over real sockets with real peers: `rampart up` (in this
//! process) with real nginx asking its auth adapter (deploy/nginx/auth-request.conf) and real
//! Envoy asking its ext_proc service (deploy/envoy/envoy.yaml), all in front of one recording
//! upstream. Every door's verdict reaches the one event stream, one `POST /api/mode` switches
//! all three, and the decision services' fail mode is the setting the proxy's is.

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use clap::Parser;
use common::envoy::Envoy;
use common::nginx::{self, Config};
use common::proxy::{get, metrics_text, request, sample, send, set_mode, upstream, SQLI};
use hyper::Method;
use services::cli::{Cli, Command};
use services::run::{start_auth, start_extproc, start_up, Stack};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// `rampart up` as an operator would start it, every listener on a free loopback port, in
/// front of `target`; returns once the models are loaded.
async fn up(target: SocketAddr) -> Stack {
    let root = common::workspace_root();
    let models = root.join("models").display().to_string();
    let ort = std::env::var("ORT_DYLIB_PATH")
        .unwrap_or_else(|_| root.join("vendor/onnxruntime/lib/libonnxruntime.so.1.22.1").display().to_string());
    let target = format!("http://{target}");
    let mut argv = vec!["rampart", "up", "--target-url", target.as_str(), "--audit-log", "off", "--kill-response", "forbidden"];
    for flag in ["--proxy-addr", "--inference-addr", "--auth-addr", "--extproc-addr", "--management-addr"] {
        argv.extend([flag, "127.0.0.1:0"]);
    }
    argv.extend(["--models-dir", models.as_str(), "--ort-dylib", ort.as_str()]);
    let args = match Cli::parse_from(argv).command {
        Command::Up(args) => args,
        _ => unreachable!(),
    };
    let stack = start_up(&args).expect("rampart up starts");
    let deadline = Instant::now() + Duration::from_secs(90);
    while send(stack.proxy.running.addr, get("/_waf/health")).await.json()["scorer"] != "ok" {
        assert!(Instant::now() < deadline, "models did not load");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stack
}

/// The events the proxy's `/api/events/recent` holds for `path`, by component.
async fn events_for(proxy: SocketAddr, path: &str) -> Vec<serde_json::Value> {
    let recent = send(proxy, request(Method::GET, "/api/events/recent", "")).await.json();
    recent.as_array().unwrap().iter().filter(|e| e["path"] == path).cloned().collect()
}

fn action_of(events: &[serde_json::Value], component: &str) -> Vec<String> {
    events.iter().filter(|e| e["component"] == component).map(|e| e["action"].as_str().unwrap().to_string()).collect()
}

/// Reads `/api/events` (the dashboard's feed) until `wanted` all appear in it, or 10 s pass.
async fn sse_until(proxy: SocketAddr, wanted: &[&str]) -> String {
    let mut stream = tokio::net::TcpStream::connect(proxy).await.unwrap();
    stream.write_all(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await.unwrap();
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut chunk = [0u8; 8192];
    loop {
        let text = String::from_utf8_lossy(&seen).into_owned();
        if wanted.iter().all(|w| text.contains(w)) {
            return text;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => seen.extend_from_slice(&chunk[..n]),
            _ => panic!("the event stream never showed {wanted:?}: {text}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_up_every_door_records_to_one_stream_and_one_mode_switch_applies_to_all() {
    let app = upstream().await;
    let stack = up(app.addr).await;
    let proxy = stack.proxy.running.addr;
    let nginx = nginx::start(Config::HeaderOnly, stack.auth.addr, app.addr);
    let envoy = Envoy::start(stack.extproc.addr, app.addr).await;

    // Shadow (the default): every door lets the attack through, marked.
    for (door, addr) in [("proxy", proxy), ("nginx", nginx.addr), ("envoy", envoy.addr)] {
        let reply = send(addr, get(SQLI)).await;
        assert_eq!(reply.status, 200, "{door} in shadow mode: {:?}", reply.body);
        assert_eq!(app.last().headers["x-waf-would-have-killed"], "true", "{door}");
    }
    assert_eq!(app.count(), 3);
    let path = SQLI.split_once('?').unwrap().0;
    let events = events_for(proxy, path).await;
    for component in ["proxy", "auth", "extproc"] {
        assert_eq!(action_of(&events, component), ["shadow_kill"], "{component}'s verdict in /api/events/recent: {events:?}");
    }
    // Every door names its request with its own id (the one in its span and audit line).
    let ids: std::collections::BTreeSet<&str> = events.iter().map(|e| e["request_id"].as_str().unwrap_or("")).collect();
    assert!(ids.len() == events.len() && ids.iter().all(|id| id.len() == 20), "{events:?}");
    let feed = sse_until(proxy, &[r#""component":"auth""#, r#""component":"extproc""#, r#""component":"proxy""#]).await;
    assert!(feed.contains(r#""action":"shadow_kill""#), "{feed}");
    let metrics = metrics_text(stack.management.addr).await;
    assert_eq!(sample(&metrics, "waf_requests_total{action=\"shadow_kill\"}"), 3.0, "one registry counts every door");

    // One switch on the proxy: all three doors block now.
    set_mode(proxy, "active").await;
    assert_eq!(send(stack.management.addr, get("/api/mode")).await.json()["mode"], "active", "ext_proc's port shows the one mode");
    let refused = send(stack.management.addr, request(Method::POST, "/api/mode", r#"{"mode":"shadow"}"#)).await;
    assert_eq!(refused.status, 405, "ext_proc's own port still does not switch (spec 4.4)");
    for (door, addr) in [("proxy", proxy), ("nginx", nginx.addr), ("envoy", envoy.addr)] {
        let reply = send(addr, get(SQLI)).await;
        assert_eq!(reply.status, 403, "{door} in active mode: {:?}", reply.body);
    }
    assert_eq!(app.count(), 3, "no blocked request reached the upstream");
    let events = events_for(proxy, path).await;
    for component in ["proxy", "auth", "extproc"] {
        assert_eq!(action_of(&events, component), ["shadow_kill", "active_kill"], "{component}: {events:?}");
    }

    // And back: every door forwards the attack marked again.
    set_mode(proxy, "shadow").await;
    for addr in [proxy, nginx.addr, envoy.addr] {
        assert_eq!(send(addr, get(SQLI)).await.status, 200);
        assert_eq!(app.last().headers["x-waf-mode"], "shadow");
    }
}

fn auth_with(inference: &str, extra: &[&str]) -> services::run::AuthServer {
    let mut argv = vec!["rampart", "auth", "--auth-addr", "127.0.0.1:0", "--auth-metrics-addr", "127.0.0.1:0", "--audit-log", "off"];
    argv.extend(["--mode", "active", "--inference-url", inference, "--inference-timeout-ms", "500"]);
    argv.extend(extra);
    match Cli::parse_from(argv).command {
        Command::Auth(args) => start_auth(&args).expect("auth adapter starts"),
        _ => unreachable!(),
    }
}

fn extproc_with(inference: &str, extra: &[&str]) -> services::run::ExtprocServer {
    let mut argv = vec!["rampart", "extproc", "--extproc-addr", "127.0.0.1:0", "--extproc-http-addr", "127.0.0.1:0"];
    argv.extend(["--audit-log", "off", "--mode", "active", "--inference-url", inference, "--inference-timeout-ms", "500"]);
    argv.extend(extra);
    match Cli::parse_from(argv).command {
        Command::Extproc(args) => start_extproc(&args).expect("ext_proc starts"),
        _ => unreachable!(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_decision_services_fail_open_by_default_and_closed_when_configured() {
    let closed = nginx::closed_addr();
    let dead = format!("http://{}", closed.addr);
    let app = upstream().await;

    // Auth adapter behind nginx. Default (spec 7 rule 1): the unscored request passes.
    let open = auth_with(&dead, &[]);
    let nginx_open = nginx::start(Config::HeaderOnly, open.running.addr, app.addr);
    let reply = send(nginx_open.addr, get("/search?q=shoes")).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(app.last().headers["x-waf-error"], "scorer-unreachable");
    // WAF_ON_SCORING_ERROR=closed: the gate refuses, the adapter answers 403, nginx blocks.
    let closed = auth_with(&dead, &["--on-scoring-error", "closed"]);
    let direct = send(closed.running.addr, {
        let mut check = request(Method::GET, "/_waf/check", "");
        check.headers_mut().insert("x-original-uri", "/search?q=shoes".parse().unwrap());
        check
    })
    .await;
    assert_eq!(direct.status, 403);
    assert_eq!(direct.json()["error"], "scoring_unavailable");
    assert_eq!(direct.headers["x-waf-error"], "scorer-unreachable");
    let nginx_closed = nginx::start(Config::HeaderOnly, closed.running.addr, app.addr);
    let reply = send(nginx_closed.addr, get("/search?q=shoes")).await;
    assert_eq!(reply.status, 403, "{:?}", reply.body);
    assert_eq!(app.count(), 1, "the refused request never reached the upstream");
    let metrics = metrics_text(closed.metrics.addr).await;
    assert_eq!(sample(&metrics, "waf_requests_total{action=\"error\"}"), 2.0);

    // ext_proc behind Envoy. Default: UNAVAILABLE, and Envoy's failure_mode_allow passes it.
    let open = extproc_with(&dead, &[]);
    let envoy_open = Envoy::start(open.grpc.addr, app.addr).await;
    let reply = send(envoy_open.addr, get("/search?q=shoes")).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(app.count(), 2);
    // Closed: an immediate 503 with the scoring_unavailable body, whatever failure_mode_allow says.
    let closed = extproc_with(&dead, &["--on-scoring-error", "closed"]);
    let envoy_closed = Envoy::start(closed.grpc.addr, app.addr).await;
    let reply = send(envoy_closed.addr, get("/search?q=shoes")).await;
    assert_eq!(reply.status, 503, "{:?}", reply.body);
    assert_eq!(reply.json()["error"], "scoring_unavailable");
    assert_eq!(app.count(), 2, "the refused request never reached the upstream");
}
