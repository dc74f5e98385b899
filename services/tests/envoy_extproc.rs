//! `rampart extproc` behind a real Envoy (scripts/bootstrap-envoy) running the shipped
//! deploy/envoy/envoy.yaml: real sockets, a recording upstream, the shared inference service.

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::Parser;
use common::envoy::{render, validate, Envoy};
use common::proxy::*;
use common::workspace_root;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request};
use hyper_util::rt::{TokioExecutor, TokioIo};
use services::cli::{Cli, Command};
use services::config::ExtprocArgs;
use services::run::{start_extproc, ExtprocServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A loopback port nothing listens on.
fn closed_port() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

#[test]
fn the_deploy_config_validates() {
    let addr: SocketAddr = "127.0.0.1:50051".parse().unwrap();
    let config = render(8000, 9901, addr, "127.0.0.1:3000".parse().unwrap());
    validate(&config).unwrap_or_else(|out| panic!("envoy --mode validate:\n{out}"));
    // DNS names work too (the clusters are STRICT_DNS), as in a deployment.
    let named = config.replace("address: 127.0.0.1, port_value: 50051", "address: rampart-extproc, port_value: 50051");
    assert_ne!(named, config);
    validate(&named).unwrap_or_else(|out| panic!("envoy --mode validate:\n{out}"));
}

/// The Istio EnvoyFilter carries the same filter settings as the Envoy config.
#[test]
fn the_istio_filter_matches_the_envoy_config() {
    let envoy = std::fs::read_to_string(workspace_root().join("deploy/envoy/envoy.yaml")).unwrap();
    let istio = std::fs::read_to_string(workspace_root().join("deploy/kubernetes/overlays/istio-extproc/envoyfilter.yaml")).unwrap();
    const KEYS: &[&str] = &[
        "failure_mode_allow:",
        "message_timeout:",
        "request_header_mode:",
        "request_body_mode:",
        "request_trailer_mode:",
        "response_header_mode:",
        "response_body_mode:",
        "response_trailer_mode:",
        "key_matcher:",
        "\"@type\":",
        "per_connection_buffer_limit_bytes:",
        "initial_stream_window_size:",
    ];
    let settings = |text: &str| -> Vec<String> {
        text.lines().map(str::trim).filter(|l| KEYS.iter().any(|k| l.starts_with(k))).map(String::from).collect()
    };
    let from_envoy = settings(&envoy);
    let from_istio = settings(&istio);
    for line in &from_istio {
        assert!(from_envoy.contains(line), "the EnvoyFilter has `{line}`, deploy/envoy does not");
    }
    for key in KEYS {
        assert!(from_istio.iter().any(|l| l.starts_with(key)), "the EnvoyFilter lacks `{key}`");
    }
    assert!(from_istio.iter().any(|l| l == "failure_mode_allow: true") && from_istio.iter().any(|l| l == "request_body_mode: BUFFERED"));
    assert!(istio.contains("context: SIDECAR_INBOUND") && istio.contains("operation: INSERT_BEFORE"));
}

/// Nothing listens on the ext_proc port: Envoy lets every request through (failure_mode_allow),
/// without the client's own X-Waf-* headers.
#[tokio::test]
async fn extproc_unreachable_fails_open() {
    let app = upstream().await;
    let envoy = Envoy::start(closed_port(), app.addr).await;

    let mut attack = get(SQLI);
    attack.headers_mut().insert("x-waf-would-have-killed", "false".parse().unwrap());
    attack.headers_mut().insert("X-Waf-Score", "0.0000".parse().unwrap());
    let reply = send(envoy.addr, attack).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.body, "upstream ok");
    let seen = app.last();
    assert_eq!(seen.uri, SQLI);
    assert!(!seen.headers.keys().any(|k| k.as_str().starts_with("x-waf-")), "a client cannot pre-stamp its request: {:?}", seen.headers);

    let reply = send(envoy.addr, request(Method::POST, "/comment", "text=1%27%20OR%201%3D1--")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(app.last().body, "text=1%27%20OR%201%3D1--");
    assert_eq!(app.count(), 2);
    assert_eq!(envoy.stat("http.ingress_http.ext_proc.failure_mode_allowed").await, 2);
}

/// A processor that accepts the connection and never answers: after message_timeout the
/// request passes.
#[tokio::test]
async fn extproc_that_never_answers_fails_open_after_message_timeout() {
    let app = upstream().await;
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_addr = silent.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((conn, _)) = silent.accept().await {
            held.push(conn);
        }
    });
    let envoy = Envoy::start(silent_addr, app.addr).await;
    let started = Instant::now();
    let reply = tokio::time::timeout(Duration::from_secs(15), send(envoy.addr, get("/search?q=shoes")))
        .await
        .expect("envoy answers after message_timeout");
    let waited = started.elapsed();
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert!(waited >= Duration::from_millis(1900), "answered before message_timeout (2 s): {waited:?}");
    assert_eq!(app.count(), 1);
    assert_eq!(envoy.stat("http.ingress_http.ext_proc.message_timeouts").await, 1);
    assert_eq!(envoy.stat("http.ingress_http.ext_proc.failure_mode_allowed").await, 1);
}

// ---- with `rampart extproc` ------------------------------------------------------------------

/// `rampart extproc` settings as an operator would pass them, on free loopback ports, scoring
/// through the shared inference service.
async fn extproc_args(mode: &str) -> ExtprocArgs {
    let inference = tokio::task::spawn_blocking(common::shared_base).await.unwrap();
    let argv = [
        "rampart",
        "extproc",
        "--extproc-addr",
        "127.0.0.1:0",
        "--extproc-http-addr",
        "127.0.0.1:0",
        "--mode",
        mode,
        "--inference-url",
        inference,
        "--audit-log",
        "off",
    ];
    match Cli::parse_from(argv).command {
        Command::Extproc(args) => args,
        _ => unreachable!(),
    }
}

/// Envoy (deploy/envoy/envoy.yaml) → recording upstream, asking a fresh `rampart extproc`.
/// Fields drop in order: Envoy first.
struct Stack {
    envoy: Envoy,
    extproc: ExtprocServer,
    app: Upstream,
}

async fn stack(mode: &str) -> Stack {
    let app = upstream().await;
    let extproc = start_extproc(&extproc_args(mode).await).expect("rampart extproc starts");
    let envoy = Envoy::start(extproc.grpc.addr, app.addr).await;
    Stack { envoy, extproc, app }
}

fn is_four_decimals(value: &str) -> bool {
    let (whole, frac) = value.split_once('.').unwrap_or(("", ""));
    whole.len() == 1 && frac.len() == 4 && value.chars().all(|c| c.is_ascii_digit() || c == '.')
}

fn with_content_type(mut req: Request<Full<Bytes>>, content_type: &str) -> Request<Full<Bytes>> {
    req.headers_mut().insert("content-type", content_type.parse().unwrap());
    req
}

fn assert_block(reply: &Reply) {
    assert_eq!(reply.status, 403, "{:?}", String::from_utf8_lossy(&reply.body));
    assert_eq!(reply.headers["content-type"], "application/json");
    let body = reply.json();
    assert_eq!(body.as_object().map(|o| o.len()), Some(2), "{body}");
    assert_eq!(body["error"], "forbidden");
    assert!(body["detail"].as_str().unwrap().contains("blocked"), "{body}");
}

/// The verdict headers of a clean request, as the upstream received them.
fn assert_clean(seen: &Seen, mode: &str) {
    let scores: Vec<_> = seen.headers.get_all("x-waf-score").iter().collect();
    assert_eq!(scores.len(), 1, "{:?}", seen.headers);
    let score = scores[0].to_str().unwrap();
    assert!(is_four_decimals(score), "{score}");
    assert!(score.parse::<f32>().unwrap() <= 0.5, "{} {}: {score} {:?}", seen.method, seen.uri, seen.headers.get("x-waf-reason"));
    assert_eq!(seen.headers["x-waf-mode"], mode);
    assert!(seen.headers.contains_key("x-waf-reason"), "{:?}", seen.headers);
    assert!(!seen.headers.contains_key("x-waf-would-have-killed"), "{:?}", seen.headers);
}

#[tokio::test]
async fn sqli_in_the_query_is_blocked_in_active_mode() {
    let s = stack("active").await;
    let reply = send(s.envoy.addr, get(SQLI)).await;
    assert_block(&reply);
    let reply = send(s.envoy.addr, request(Method::DELETE, "/items?id=1%20OR%201%3D1--", "")).await;
    assert_block(&reply);
    assert_eq!(s.app.count(), 0, "a blocked request never reaches the application");
    assert_eq!(s.envoy.stat("http.ingress_http.ext_proc.immediate_responses_sent").await, 2);
}

#[tokio::test]
async fn attacks_in_a_post_body_are_blocked() {
    let s = stack("active").await;
    let form = "username=admin&password=x%27%20OR%20%271%27%3D%271%27--";
    let reply = send(s.envoy.addr, with_content_type(request(Method::POST, "/login", form), "application/x-www-form-urlencoded")).await;
    assert_block(&reply);
    let json = r#"{"query":"1' union select password from users--"}"#;
    let reply = send(s.envoy.addr, with_content_type(request(Method::POST, "/api/search", json), "application/json")).await;
    assert_block(&reply);
    // The attack at the end of a 256 KiB body: the whole body is scored.
    let padded = format!("notes={}&q=1%27%20union%20select%20password%20from%20users--", "a".repeat(256 << 10));
    let reply = send(s.envoy.addr, with_content_type(request(Method::PUT, "/notes/7", &padded), "application/x-www-form-urlencoded")).await;
    assert_block(&reply);
    assert_eq!(s.app.count(), 0);
}

/// BUFFERED: an attack split across two chunks of a chunked body is scored as one text, and
/// nothing of it reaches the application first.
#[tokio::test]
async fn an_attack_split_across_body_chunks_is_scored_whole() {
    let s = stack("active").await;
    let mut conn = tokio::net::TcpStream::connect(s.envoy.addr).await.unwrap();
    conn.write_all(b"POST /comment HTTP/1.1\r\nHost: shop.example\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n").await.unwrap();
    let first = "text=1%27%20union%20sel";
    conn.write_all(format!("{:x}\r\n{first}\r\n", first.len()).as_bytes()).await.unwrap();
    conn.flush().await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(s.app.count(), 0, "nothing is forwarded before the body is scored");
    let second = "ect%20password%20from%20users--";
    conn.write_all(format!("{:x}\r\n{second}\r\n0\r\n\r\n", second.len()).as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), conn.read(&mut buf)).await.expect("envoy answers").unwrap();
        assert!(n > 0, "closed early: {:?}", String::from_utf8_lossy(&head));
        head.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&head);
    assert!(head.starts_with("HTTP/1.1 403"), "{head}");
    assert_eq!(s.app.count(), 0);
}

#[tokio::test]
async fn benign_apostrophes_pass_with_the_verdict_headers() {
    let s = stack("active").await;

    let mut req = get("/people?name=O%27Brien&note=it%27s%20fine");
    // Forged verdicts are dropped before Rampart adds the real ones.
    req.headers_mut().insert("x-waf-score", "0.0000".parse().unwrap());
    req.headers_mut().insert("x-waf-would-have-killed", "false".parse().unwrap());
    let reply = send(s.envoy.addr, req).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.body, "upstream ok");
    let seen = s.app.last();
    assert_eq!(seen.uri, "/people?name=O%27Brien&note=it%27s%20fine");
    assert_clean(&seen, "active");

    let json = r#"{"name":"Miles O'Brien","comment":"It's great, isn't it?"}"#;
    let reply = send(s.envoy.addr, with_content_type(request(Method::POST, "/signup?ref=newsletter", json), "application/json")).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let seen = s.app.last();
    assert_eq!((seen.method.as_str(), seen.uri.as_str()), ("POST", "/signup?ref=newsletter"));
    assert_eq!(seen.body, json, "the body reaches the upstream unchanged");
    assert_clean(&seen, "active");

    let form = "first=Miles&last=O%27Brien&comment=It%27s+great%2C+isn%27t+it%3F";
    let reply = send(s.envoy.addr, with_content_type(request(Method::POST, "/signup", form), "application/x-www-form-urlencoded")).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let seen = s.app.last();
    assert_eq!(seen.body, form);
    assert_clean(&seen, "active");
    assert_eq!(s.app.count(), 3);
}

#[tokio::test]
async fn shadow_mode_forwards_attacks_marked() {
    let s = stack("shadow").await;
    let reply = send(s.envoy.addr, get(SQLI)).await;
    assert_eq!(reply.status, 200, "shadow mode forwards: {:?}", reply.body);
    let seen = s.app.last();
    assert_eq!(seen.uri, SQLI);
    assert_eq!(seen.headers["x-waf-would-have-killed"], "true");
    assert_eq!(seen.headers["x-waf-mode"], "shadow");
    let score: f32 = seen.headers["x-waf-score"].to_str().unwrap().parse().unwrap();
    assert!(score > 0.5, "{score}");
    assert!(seen.headers["x-waf-reason"].to_str().unwrap().starts_with("sqli:"), "{:?}", seen.headers["x-waf-reason"]);

    let form = "username=admin&password=x%27%20OR%20%271%27%3D%271%27--";
    let reply = send(s.envoy.addr, with_content_type(request(Method::POST, "/login", form), "application/x-www-form-urlencoded")).await;
    assert_eq!(reply.status, 200);
    let seen = s.app.last();
    assert_eq!(seen.body, form);
    assert_eq!(seen.headers["x-waf-would-have-killed"], "true");

    let reply = send(s.envoy.addr, get("/people?name=O%27Brien")).await;
    assert_eq!(reply.status, 200);
    assert_clean(&s.app.last(), "shadow");
    assert_eq!(s.app.count(), 3);
}

/// In BUFFERED mode the whole body must fit Envoy's buffer (1 MiB): above it Envoy answers 413
/// itself, before Rampart or the application see anything.
#[tokio::test]
async fn a_body_over_envoys_buffer_limit_is_refused_by_envoy() {
    let s = stack("active").await;
    let reply = send(s.envoy.addr, request(Method::POST, "/upload", &"b".repeat((1 << 20) + 1))).await;
    assert_eq!(reply.status, 413, "{:?}", String::from_utf8_lossy(&reply.body));
    assert_eq!(s.app.count(), 0);
    // At the limit it is scored and forwarded.
    let reply = send(s.envoy.addr, request(Method::POST, "/upload", &"b".repeat(1 << 20))).await;
    assert_eq!(reply.status, 200, "{:?}", String::from_utf8_lossy(&reply.body));
    assert_eq!(s.app.last().body.len(), 1 << 20);
    assert_clean(&s.app.last(), "active");
}

/// Rampart stops: Envoy lets requests through unscored (failure_mode_allow).
#[tokio::test]
async fn stopping_extproc_fails_open() {
    let Stack { envoy, extproc, app } = stack("active").await;
    assert_eq!(send(envoy.addr, get(SQLI)).await.status, 403);
    let ExtprocServer { grpc, http } = extproc;
    tokio::time::timeout(Duration::from_secs(15), grpc.stop()).await.expect("the gRPC server stops while Envoy is connected");
    http.stop().await;

    let reply = send(envoy.addr, get(SQLI)).await;
    assert_eq!(reply.status, 200, "fail open: {:?}", reply.body);
    let seen = app.last();
    assert_eq!(seen.uri, SQLI);
    assert!(!seen.headers.keys().any(|k| k.as_str().starts_with("x-waf-")), "unscored: {:?}", seen.headers);
    let reply = send(envoy.addr, request(Method::POST, "/comment", "text=hello")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(app.count(), 2);
    assert_eq!(envoy.stat("http.ingress_http.ext_proc.failure_mode_allowed").await, 2);
}

#[tokio::test]
async fn the_http_port_serves_health_mode_and_metrics() {
    for mode in ["active", "shadow"] {
        let extproc = start_extproc(&extproc_args(mode).await).expect("rampart extproc starts");
        let base = format!("http://{}", extproc.http.addr);

        let (status, health, headers) = common::get(&base, "/_waf/health").await;
        assert_eq!(status, 200);
        assert!(headers["content-type"].to_str().unwrap().starts_with("application/json"));
        assert_eq!(health["service"], "extproc", "{health}");
        assert_eq!(health["status"], "ok", "{health}");
        assert_eq!(health["mode"], mode, "{health}");

        let (status, body, _) = common::get(&base, "/api/mode").await;
        assert_eq!(status, 200);
        assert_eq!(body, serde_json::json!({ "mode": mode }));

        let other = if mode == "active" { "shadow" } else { "active" };
        let (status, _, _) = common::request(&base, Method::POST, "/api/mode", format!("{{\"mode\":\"{other}\"}}").into_bytes()).await;
        assert_eq!(status, 405, "the mode is fixed at start-up");
        assert_eq!(common::get(&base, "/api/mode").await.1["mode"], mode);

        let (status, metrics, _) = common::get(&base, "/metrics").await;
        assert_eq!(status, 200);
        assert!(metrics.as_str().is_some_and(|t| t.contains("# TYPE")), "{metrics}");
    }
}

/// HTTP/2 clients (h2c here) get the same verdicts, and the same 1 MiB body limit: an HTTP/2
/// request's buffer is its stream window, set to 1 MiB in the deploy config.
#[tokio::test]
async fn http2_clients_get_the_same_verdicts_and_body_limit() {
    let s = stack("active").await;
    let stream = tokio::net::TcpStream::connect(s.envoy.addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream)).await.unwrap();
    tokio::spawn(conn);
    let req = |method: Method, path: &str, body: Vec<u8>| {
        Request::builder().method(method).uri(format!("http://shop.example{path}")).body(Full::new(Bytes::from(body))).unwrap()
    };
    let read = |resp: hyper::Response<hyper::body::Incoming>| async move {
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        Reply { status, headers, body: resp.into_body().collect().await.unwrap().to_bytes() }
    };

    let blocked = read(sender.send_request(req(Method::GET, SQLI, Vec::new())).await.unwrap()).await;
    assert_block(&blocked);
    let passed = read(sender.send_request(req(Method::POST, "/people", b"name=O%27Brien".to_vec())).await.unwrap()).await;
    assert_eq!(passed.status, 200, "{:?}", passed.body);
    assert_eq!(s.app.last().body, "name=O%27Brien");
    assert_clean(&s.app.last(), "active");

    let at_limit = read(sender.send_request(req(Method::POST, "/upload", vec![b'b'; 1 << 20])).await.unwrap()).await;
    assert_eq!(at_limit.status, 200);
    let over = read(sender.send_request(req(Method::POST, "/upload", vec![b'b'; (1 << 20) + 1])).await.unwrap()).await;
    assert_eq!(over.status, 413, "{:?}", String::from_utf8_lossy(&over.body));
    assert_eq!(s.app.count(), 2);
}

/// Envoy's buffer raised to 8 MiB by an operator, a 5 MiB body starting with an attack: the
/// body message is over the gRPC server's default 4 MiB decode limit.
#[tokio::test]
async fn a_body_over_the_grpc_message_limit_is_not_forwarded_unscored() {
    let app = upstream().await;
    let extproc = start_extproc(&extproc_args("active").await).expect("rampart extproc starts");
    let envoy = Envoy::start_with(extproc.grpc.addr, app.addr, |config| config.replace("1048576", "8388608")).await;
    let body = format!("q=1%27%20union%20select%20password%20from%20users--&pad={}", "a".repeat(5 << 20));
    let reply = send(envoy.addr, request(Method::POST, "/upload", &body)).await;
    assert_eq!(app.count(), 0, "forwarded with {:?}", app.last().headers);
    assert_block(&reply);
}

/// Envoy removes a Referer that is not a valid URI (RFC 3986: no spaces, quotes, `<`...) or
/// has no host or has user info, before ext_proc or the application sees it: such an attack never reaches the application
/// (invariance gaps `envoy-extproc header-referer`). A Referer that is a URI reaches both,
/// and is scored.
#[tokio::test]
async fn an_invalid_referer_never_reaches_the_application_and_a_valid_one_is_scored() {
    let s = stack("active").await;
    for attack in ["admin' OR '1'='1'--", "<script>alert(1)</script>", "1; DROP TABLE users--", "%0d%0aSet-Cookie:%20session=attacker"] {
        let mut req = get("/");
        req.headers_mut().insert("referer", attack.parse().unwrap());
        let reply = send(s.envoy.addr, req).await;
        assert_eq!(reply.status, 200, "{attack}");
        let seen = s.app.last();
        assert_eq!(seen.headers.get("referer"), None, "Envoy forwarded the Referer {attack:?}");
        assert_clean(&seen, "active");
    }
    // Envoy also drops URIs with no host or with user info (`javascript:`, `file:///`, `https://a@b`).
    for attack in ["javascript:alert(document.domain)", "file:///etc/passwd", "https://shop.example@evil.example/login"] {
        let mut req = get("/");
        req.headers_mut().insert("referer", attack.parse().unwrap());
        assert_eq!(send(s.envoy.addr, req).await.status, 200, "{attack}");
        assert_eq!(s.app.last().headers.get("referer"), None, "Envoy forwarded the Referer {attack:?}");
    }
    let passed = s.app.count();
    for attack in [
        "https://shop.example/search?q=1%27%20UNION%20SELECT%20username,password%20FROM%20users--",
        "../../../../etc/passwd",
        "gopher://127.0.0.1:6379/_FLUSHALL",
    ] {
        let mut req = get("/");
        req.headers_mut().insert("referer", attack.parse().unwrap());
        assert_block(&send(s.envoy.addr, req).await);
    }
    assert_eq!(s.app.count(), passed, "a Referer Envoy keeps is scored");
    // The same spaced value in another header is forwarded, so it is scored and blocked.
    let mut req = get("/");
    req.headers_mut().insert("user-agent", "admin' OR '1'='1'--".parse().unwrap());
    assert_block(&send(s.envoy.addr, req).await);
}

/// Past the field cap the query's fields share 4 KiB Overflow chunks with the headers Envoy
/// adds; the SQLi model reads such a chunk line by line, so a thousand padding fields do not
/// dilute an injection after them (invariance `query-after-1100-fields`).
#[tokio::test]
async fn sqli_after_1100_query_fields_is_blocked() {
    let s = stack("active").await;
    for attack in [
        "1%27%20UNION%20SELECT%20username,%20password%20FROM%20users--",
        "1;%20DROP%20TABLE%20users--",
        "admin%27%20OR%20%271%27=%271%27--",
    ] {
        let reply = send(s.envoy.addr, get(&format!("/search?{}q={attack}", "a&".repeat(1_100)))).await;
        assert_block(&reply);
    }
    assert_eq!(s.app.count(), 0);
    let reply = send(s.envoy.addr, get(&format!("/search?{}q=red%20running%20shoes", "a&".repeat(1_100)))).await;
    assert_eq!(reply.status, 200, "{:?}", String::from_utf8_lossy(&reply.body));
}
