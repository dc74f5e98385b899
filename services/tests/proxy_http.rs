//! The inline proxy over real sockets: a real upstream, real TCP resets, real HTTP/2.

mod common;

use std::io::ErrorKind;
use std::net::IpAddr;
use std::time::Duration;

use bytes::Bytes;
use common::proxy::*;
use http_body_util::{BodyExt, Empty, Full};
use hyper::{Method, Request};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn is_four_decimals(value: &str) -> bool {
    let (whole, frac) = value.split_once('.').unwrap_or(("", ""));
    whole.len() == 1 && frac.len() == 4 && value.chars().all(|c| c.is_ascii_digit() || c == '.')
}

#[tokio::test]
async fn benign_requests_are_forwarded_with_the_verdict_headers() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &[]);
    let form = "first=Miles&last=O%27Brien&comment=It%27s+great%2C+isn%27t+it%3F";
    let mut req = request(Method::POST, "/signup?ref=newsletter", form);
    req.headers_mut().insert("content-type", "application/x-www-form-urlencoded".parse().unwrap());
    // A client must not be able to pre-stamp its request as clean.
    req.headers_mut().insert("x-waf-score", "0.0000".parse().unwrap());
    req.headers_mut().insert("x-waf-would-have-killed", "false".parse().unwrap());
    req.headers_mut().insert("connection", "keep-alive, x-hop".parse().unwrap());
    req.headers_mut().insert("x-hop", "1".parse().unwrap());
    let reply = send(proxy.addr, req).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, "upstream ok");
    assert_eq!(reply.headers["x-upstream"], "yes");

    let seen = app.last();
    assert_eq!(seen.method, "POST");
    assert_eq!(seen.uri, "/signup?ref=newsletter");
    assert_eq!(seen.body, form, "the body reaches the upstream unchanged");
    let score = seen.headers["x-waf-score"].to_str().unwrap();
    assert!(is_four_decimals(score), "{score}");
    assert!(score.parse::<f32>().unwrap() <= 0.5, "O'Brien must pass: {score}");
    assert_eq!(seen.headers["x-waf-mode"], "shadow");
    assert!(seen.headers.contains_key("x-waf-reason"));
    assert!(!seen.headers.contains_key("x-waf-would-have-killed"));
    assert!(!seen.headers.contains_key("x-hop"), "fields named in Connection are hop-by-hop");
    assert_eq!(seen.headers["x-forwarded-for"], "127.0.0.1");
    assert_eq!(seen.headers["x-forwarded-proto"], "http");
    assert_eq!(seen.headers["host"], "shop.example");
}

#[tokio::test]
async fn shadow_kill_is_forwarded_and_annotated() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &[]);
    let reply = send(proxy.addr, get(SQLI)).await;
    assert_eq!(reply.status, 200, "shadow mode forwards");
    let seen = app.last();
    assert_eq!(seen.headers["x-waf-would-have-killed"], "true");
    assert_eq!(seen.headers["x-waf-mode"], "shadow");
    let score: f32 = seen.headers["x-waf-score"].to_str().unwrap().parse().unwrap();
    assert!(score > 0.5, "{score}");
    assert!(seen.headers["x-waf-reason"].to_str().unwrap().starts_with("sqli:"), "{:?}", seen.headers["x-waf-reason"]);
}

/// Writes one raw HTTP/1.1 request and reads until EOF or error.
async fn raw_exchange(addr: std::net::SocketAddr, raw: &[u8]) -> (Vec<u8>, Option<ErrorKind>) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(raw).await.unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut chunk)).await.expect("the proxy reacts") {
            Ok(0) => return (buf, None),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(err) => return (buf, Some(err.kind())),
        }
    }
}

#[tokio::test]
async fn active_kill_resets_the_connection_and_the_upstream_sees_nothing() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &[]);
    set_mode(proxy.addr, "active").await;
    assert_eq!(send(proxy.addr, get("/api/mode")).await.json()["mode"], "active");

    let raw = format!("GET {SQLI} HTTP/1.1\r\nHost: shop.example\r\n\r\n");
    let (bytes, err) = raw_exchange(proxy.addr, raw.as_bytes()).await;
    assert!(bytes.is_empty(), "no byte of a response: {:?}", String::from_utf8_lossy(&bytes));
    assert_eq!(err, Some(ErrorKind::ConnectionReset));
    let body = "username=admin&password=x%27%20OR%20%271%27%3D%271%27--";
    let raw = format!(
        "POST /login HTTP/1.1\r\nHost: shop.example\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let (bytes, err) = raw_exchange(proxy.addr, raw.as_bytes()).await;
    assert!(bytes.is_empty() && err == Some(ErrorKind::ConnectionReset), "{err:?} {:?}", String::from_utf8_lossy(&bytes));
    assert_eq!(app.count(), 0, "the upstream never saw the killed requests");

    // Benign traffic still flows in active mode.
    let reply = send(proxy.addr, get("/search?q=blue+running+shoes")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(app.last().headers["x-waf-mode"], "active");

    // Switching back at runtime: the same attack is forwarded again, annotated.
    set_mode(proxy.addr, "shadow").await;
    assert_eq!(send(proxy.addr, get(SQLI)).await.status, 200);
    assert_eq!(app.last().headers["x-waf-would-have-killed"], "true");

    let events = send(proxy.addr, get("/api/events/recent")).await.json();
    let actions: Vec<&str> = events.as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["active_kill", "active_kill", "passed", "shadow_kill"]);
    let kill = &events[0];
    assert_eq!(kill["mode"], "active");
    assert_eq!(kill["path"], "/search");
    assert_eq!(kill["method"], "GET");
    assert_eq!(kill["source_ip"], "127.0.0.1");
    assert!(kill["score"].as_f64().unwrap() > 0.5);
    assert!(kill["reason"].as_str().unwrap().starts_with("sqli:"));
    assert!(kill["latency_ms"].as_f64().unwrap() > 0.0);
    assert!(kill["timestamp"].as_str().unwrap().ends_with('Z'));
}

#[tokio::test]
async fn http2_kill_resets_only_the_attacking_stream() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &["--mode", "active"]);
    let stream = TcpStream::connect(proxy.addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream)).await.unwrap();
    tokio::spawn(conn);
    let req = |path: &str| Request::get(format!("http://shop.example{path}")).body(Empty::<Bytes>::new()).unwrap();
    let (killed, served) = tokio::join!(sender.send_request(req(SQLI)), sender.send_request(req("/search?q=shoes")));
    let err = killed.expect_err("the attack stream gets no response");
    let reason = std::error::Error::source(&err).and_then(|s| s.downcast_ref::<h2::Error>()).and_then(|e| e.reason());
    assert_eq!(reason, Some(h2::Reason::INTERNAL_ERROR), "{err:?}");
    let served = served.expect("the sibling stream is served");
    assert_eq!(served.status(), 200);
    assert_eq!(served.into_body().collect().await.unwrap().to_bytes(), "upstream ok");
    let again = sender.send_request(req("/cart")).await.expect("the connection survives the kill");
    assert_eq!(again.status(), 200);
    assert_eq!(app.count(), 2);
    assert!(app.seen.lock().unwrap().iter().all(|s| !s.uri.contains("union")));
    assert_eq!(app.last().headers["host"], "shop.example", ":authority becomes the upstream's Host");
}

#[tokio::test]
async fn forbidden_kill_response_sends_the_block_body() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &["--mode", "active", "--kill-response", "forbidden"]);
    let reply = send(proxy.addr, get(SQLI)).await;
    assert_eq!(reply.status, 403);
    assert_eq!(reply.headers["content-type"], "application/json");
    assert_eq!(reply.headers["x-waf-killed"], "true");
    assert!(is_four_decimals(reply.headers["x-waf-score"].to_str().unwrap()));
    let body = reply.json();
    assert_eq!(body.as_object().unwrap().len(), 2, "{body}");
    assert_eq!(body["error"], "forbidden");
    assert!(body["detail"].as_str().unwrap().contains("blocked"));
    assert_eq!(app.count(), 0);
}

#[tokio::test]
async fn mode_api_rejects_bad_input_and_keeps_the_mode() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &[]);
    for body in ["{\"mode\":\"blocking\"}", "{mode: active}", "", "[\"active\"]", "{\"mode\":1}"] {
        let reply = send(proxy.addr, request(Method::POST, "/api/mode", body)).await;
        assert_eq!(reply.status, 400, "{body:?} -> {:?}", reply.body);
        let json = reply.json();
        assert!(json["error"].is_string() && json["detail"].is_string(), "{json}");
    }
    assert_eq!(send(proxy.addr, get("/api/mode")).await.json()["mode"], "shadow");
    let reply = send(proxy.addr, request(Method::DELETE, "/api/mode", "")).await;
    assert_eq!(reply.status, 405);
}

const OTHER_LOOPBACK: &str = "127.0.0.2";

#[tokio::test]
async fn admin_endpoints_are_restricted_to_local_peers_or_a_token() {
    let app = upstream().await;
    let other: IpAddr = OTHER_LOOPBACK.parse().unwrap();
    let proxy = start_proxy(app.addr, &[]);
    let mode_post = || request(Method::POST, "/api/mode", "{\"mode\":\"active\"}");
    for req in [mode_post(), get("/api/events/recent"), get("/api/events")] {
        let reply = send_from(proxy.addr, Some(other), req).await.unwrap();
        assert_eq!(reply.status, 403, "{:?}", reply.body);
        assert_eq!(reply.json()["error"], "admin_forbidden");
    }
    // A forwarded header naming a local address changes nothing: only the socket counts.
    let mut spoofed = mode_post();
    spoofed.headers_mut().insert("x-forwarded-for", "127.0.0.1".parse().unwrap());
    spoofed.headers_mut().insert("x-real-ip", "127.0.0.1".parse().unwrap());
    assert_eq!(send_from(proxy.addr, Some(other), spoofed).await.unwrap().status, 403);
    // Reading the mode, health and metrics stay open.
    for path in ["/api/mode", "/_waf/health", "/metrics"] {
        assert_eq!(send_from(proxy.addr, Some(other), get(path)).await.unwrap().status, 200, "{path}");
    }
    assert_eq!(send(proxy.addr, get("/api/mode")).await.json()["mode"], "shadow");
    set_mode(proxy.addr, "active").await;

    let guarded = start_proxy(app.addr, &["--admin-token", "t0ken-123", "--admin-allow", ""]);
    let with_token = |token: &str| {
        let mut req = request(Method::POST, "/api/mode", "{\"mode\":\"active\"}");
        req.headers_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
        req
    };
    assert_eq!(send_from(guarded.addr, Some(other), with_token("wrong")).await.unwrap().status, 403);
    assert_eq!(send(guarded.addr, mode_post()).await.status, 403, "an empty allow-list requires the token even locally");
    let reply = send_from(guarded.addr, Some(other), with_token("t0ken-123")).await.unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["mode"], "active");
}

#[tokio::test]
async fn metrics_count_known_traffic() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &[]);
    send(proxy.addr, get("/")).await;
    send(proxy.addr, get("/search?q=red+shoes")).await;
    send(proxy.addr, get(SQLI)).await;
    set_mode(proxy.addr, "active").await;
    assert!(send_from(proxy.addr, None, get(SQLI)).await.is_err());
    let text = metrics_text(proxy.addr).await;
    assert!(text.contains("# HELP waf_requests_total Total requests processed by action"), "{text}");
    assert_eq!(sample(&text, "waf_requests_total{action=\"passed\"}"), 2.0);
    assert_eq!(sample(&text, "waf_requests_total{action=\"shadow_kill\"}"), 1.0);
    assert_eq!(sample(&text, "waf_requests_total{action=\"active_kill\"}"), 1.0);
    assert_eq!(sample(&text, "waf_requests_total{action=\"error\"}"), 0.0);
    assert_eq!(sample(&text, "waf_kills_total{detector=\"sqli\",action=\"shadow_kill\"}"), 1.0);
    assert_eq!(sample(&text, "waf_kills_total{detector=\"sqli\",action=\"active_kill\"}"), 1.0);
    assert_eq!(sample(&text, "waf_inference_latency_seconds_count"), 4.0);
    assert_eq!(sample(&text, "waf_upstream_latency_seconds_count"), 3.0);
    assert_eq!(sample(&text, "waf_request_duration_seconds_count"), 4.0);
    assert_eq!(sample(&text, "waf_sse_subscribers"), 0.0);

    let dead = start_proxy("127.0.0.1:9".parse().unwrap(), &[]);
    let reply = send(dead.addr, get("/")).await;
    assert_eq!(reply.status, 502);
    assert_eq!(reply.json()["error"], "upstream_unavailable");
    let text = metrics_text(dead.addr).await;
    assert_eq!(sample(&text, "waf_upstream_errors_total{kind=\"connect\"}"), 1.0);
}

/// Reads SSE text until `done` says enough, or panics after `limit`.
async fn read_sse(body: &mut hyper::body::Incoming, buf: &mut String, limit: Duration, done: impl Fn(&str) -> bool) {
    let deadline = tokio::time::Instant::now() + limit;
    while !done(buf) {
        let frame = tokio::time::timeout_at(deadline, body.frame()).await.unwrap_or_else(|_| panic!("stream stalled; got:\n{buf}"));
        let frame = frame.expect("stream open").expect("frame");
        if let Ok(data) = frame.into_data() {
            buf.push_str(std::str::from_utf8(&data).unwrap());
        }
    }
}

/// Paths of the complete `data:` messages in `text` (a trailing partial one is ignored).
fn data_paths(text: &str) -> Vec<String> {
    let complete = text.rfind("\n\n").map_or("", |end| &text[..end]);
    complete
        .split("\n\n")
        .filter_map(|m| m.strip_prefix("data: "))
        .map(|json| serde_json::from_str::<serde_json::Value>(json).unwrap()["path"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn events_recent_and_stream_replay_then_live_then_keepalive() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &["--sse-keepalive-secs", "1"]);
    for n in 0..520 {
        assert_eq!(send(proxy.addr, get(&format!("/r/{n}"))).await.status, 200);
    }
    let recent = send(proxy.addr, get("/api/events/recent")).await;
    assert_eq!(recent.headers["content-type"], "application/json");
    let recent = recent.json();
    let paths: Vec<&str> = recent.as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap()).collect();
    let expected: Vec<String> = (20..520).map(|n| format!("/r/{n}")).collect();
    assert_eq!(paths, expected, "the last 500, oldest first");

    let stream = TcpStream::connect(proxy.addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.unwrap();
    tokio::spawn(conn);
    let resp = sender.send_request(Request::get("/api/events").body(Full::new(Bytes::new())).unwrap()).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let mut body = resp.into_body();
    let mut text = String::new();
    read_sse(&mut body, &mut text, Duration::from_secs(10), |t| data_paths(t).len() >= 200).await;
    let replayed = data_paths(&text);
    let expected: Vec<String> = (320..520).map(|n| format!("/r/{n}")).collect();
    assert_eq!(replayed, expected, "200 most recent replayed, in order");

    for n in 0..3 {
        send(proxy.addr, get(&format!("/live/{n}"))).await;
    }
    read_sse(&mut body, &mut text, Duration::from_secs(10), |t| data_paths(t).len() >= 203).await;
    assert_eq!(&data_paths(&text)[200..], ["/live/0", "/live/1", "/live/2"]);
    assert!(!text.contains(": keepalive"), "no keepalive while events flow this fast");
    read_sse(&mut body, &mut text, Duration::from_secs(5), |t| t.contains(": keepalive\n\n")).await;
    assert_eq!(sample(&metrics_text(proxy.addr).await, "waf_sse_subscribers"), 1.0);
}

#[tokio::test]
async fn source_ip_honours_forwarded_headers_only_from_trusted_proxies() {
    let app = upstream().await;
    let forged = |proxy_addr| async move {
        let mut req = get("/whoami");
        req.headers_mut().insert("x-forwarded-for", "203.0.113.9".parse().unwrap());
        send(proxy_addr, req).await;
        send(proxy_addr, get("/api/events/recent")).await.json()[0]["source_ip"].as_str().unwrap().to_string()
    };
    let untrusting = start_proxy(app.addr, &[]);
    assert_eq!(forged(untrusting.addr).await, "127.0.0.1");
    let trusting = start_proxy(app.addr, &["--trusted-proxies", "127.0.0.1/32"]);
    assert_eq!(forged(trusting.addr).await, "203.0.113.9");
    assert_eq!(app.last().headers["x-forwarded-for"], "203.0.113.9, 127.0.0.1");
}

#[tokio::test]
async fn scoring_failure_fails_open_by_default_and_closed_when_asked() {
    let app = upstream().await;
    // Nothing listens on the discard port: every inference call fails.
    let open = start_remote_proxy(app.addr, "http://127.0.0.1:9", Duration::from_millis(500), &["--mode", "active"]);
    let reply = send(open.addr, get(SQLI)).await;
    assert_eq!(reply.status, 200, "fail-open forwards unscored");
    assert_eq!(app.last().headers["x-waf-error"], "scorer-unreachable");
    assert!(!app.last().headers.contains_key("x-waf-score"));
    let text = metrics_text(open.addr).await;
    assert_eq!(sample(&text, "waf_requests_total{action=\"error\"}"), 1.0);
    assert_eq!(sample(&text, "waf_scoring_errors_total{why=\"scorer-unreachable\"}"), 1.0);
    assert_eq!(sample(&text, "waf_scoring_errors_total{why=\"scorer-timeout\"}"), 0.0);
    let events = send(open.addr, get("/api/events/recent")).await.json();
    assert_eq!(events[0]["action"], "error");
    assert_eq!(events[0]["reason"], "error:scorer-unreachable");

    let closed = start_remote_proxy(
        app.addr,
        "http://127.0.0.1:9",
        Duration::from_millis(500),
        &["--mode", "active", "--on-scoring-error", "closed"],
    );
    let before = app.count();
    let reply = send(closed.addr, get("/search?q=shoes")).await;
    assert_eq!(reply.status, 503);
    assert_eq!(reply.json()["error"], "scoring_unavailable");
    assert_eq!(app.count(), before);
}

#[tokio::test]
async fn remote_scorer_uses_the_inference_service() {
    let app = upstream().await;
    let inference = common::shared_base();
    let proxy = start_remote_proxy(app.addr, inference, Duration::from_secs(5), &[]);
    assert_eq!(send(proxy.addr, get(SQLI)).await.status, 200);
    assert_eq!(app.last().headers["x-waf-would-have-killed"], "true");
    assert_eq!(send(proxy.addr, get("/search?q=O%27Brien")).await.status, 200);
    assert!(!app.last().headers.contains_key("x-waf-would-have-killed"));
    let health = send(proxy.addr, get("/_waf/health")).await.json();
    assert_eq!(health["inference"], inference);
    assert_eq!(health["service"], "proxy");
    assert_eq!(health["status"], "ok");
    assert_eq!(health["target"], format!("http://{}", app.addr));
    assert_eq!(health["threshold"], 0.5);
}

#[tokio::test]
async fn oversize_bodies_follow_the_configured_policy() {
    let app = upstream().await;
    // The attack sits past the scored prefix: score-prefix passes it (documented trade-off)
    // but the upstream still gets the whole body.
    let padding = "note=".to_string() + &"a".repeat(200);
    let body = format!("{padding}&q=1%27%20union%20select%20password%20from%20users--");
    let prefix = start_proxy(app.addr, &["--mode", "active", "--body-limit", "128"]);
    let mut req = request(Method::POST, "/comment", &body);
    req.headers_mut().insert("content-type", "application/x-www-form-urlencoded".parse().unwrap());
    assert_eq!(send(prefix.addr, req).await.status, 200);
    assert_eq!(app.last().body, body);

    let block =
        start_proxy(app.addr, &["--mode", "active", "--body-limit", "128", "--oversize-body", "block", "--kill-response", "forbidden"]);
    let reply = send(block.addr, request(Method::POST, "/upload", &"b".repeat(4096))).await;
    assert_eq!(reply.status, 403);
    let events = send(block.addr, get("/api/events/recent")).await.json();
    assert_eq!(events[0]["reason"], "body-limit:exceeded");
    let small = send(block.addr, request(Method::POST, "/upload", "small body")).await;
    assert_eq!(small.status, 200);

    // `partial`: the same padded attack is a partial verdict, which WAF_ON_PARTIAL decides
    // (blocked by default; forwarded marked when it says pass).
    let partial =
        start_proxy(app.addr, &["--mode", "active", "--body-limit", "128", "--oversize-body", "partial", "--kill-response", "forbidden"]);
    let mut req = request(Method::POST, "/comment", &body);
    req.headers_mut().insert("content-type", "application/x-www-form-urlencoded".parse().unwrap());
    assert_eq!(send(partial.addr, req).await.status, 403);
    let events = send(partial.addr, get("/api/events/recent")).await.json();
    assert_eq!(events[0]["reason"], "partial:body-limit");
    let passing = start_proxy(app.addr, &["--mode", "active", "--body-limit", "128", "--oversize-body", "partial", "--on-partial", "pass"]);
    assert_eq!(send(passing.addr, request(Method::POST, "/upload", &"c".repeat(4096))).await.status, 200);
    assert_eq!(app.last().headers["x-waf-partial"], "body-limit");
}

#[tokio::test]
async fn a_stalled_body_times_out_and_is_recorded() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &["--body-read-timeout-ms", "300"]);
    let raw = b"POST /comment HTTP/1.1\r\nHost: shop.example\r\nContent-Length: 100\r\n\r\nonly ten b";
    let (bytes, _) = raw_exchange(proxy.addr, raw).await;
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("body_timeout"), "{text}");
    assert_eq!(app.count(), 0);
    let events = send(proxy.addr, get("/api/events/recent")).await.json();
    assert_eq!(events[0]["action"], "error");
    assert_eq!(events[0]["reason"], "client:body-timeout");
    assert_eq!(sample(&metrics_text(proxy.addr).await, "waf_requests_total{action=\"error\"}"), 1.0);
}

#[tokio::test]
async fn each_event_carries_a_request_id_that_its_audit_line_repeats() {
    let app = upstream().await;
    let dir = std::env::temp_dir().join(format!("rampart-audit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("request-ids.jsonl");
    let _ = std::fs::remove_file(&path);
    let audit = services::run::open_audit(&services::events::AuditTarget::File(path.clone())).unwrap();
    let scorer: std::sync::Arc<dyn services::scorer::Scorer> = std::sync::Arc::new(services::scorer::InProcessScorer::new(shared_engine()));
    let metrics = std::sync::Arc::new(services::metrics::Metrics::new());
    let parts =
        services::proxy::ProxyParts { target: format!("http://{}", app.addr).parse().unwrap(), threshold: 0.5, scorer, metrics, audit };
    let server = services::run::start_proxy_with(&proxy_options(app.addr, &[]), parts).unwrap();
    let addr = server.running.addr;
    send(addr, get("/first")).await;
    send(addr, get(SQLI)).await;

    let events = send(addr, get("/api/events/recent")).await.json();
    let ids: Vec<String> = events.as_array().unwrap().iter().map(|e| e["request_id"].as_str().unwrap().to_string()).collect();
    assert_eq!(ids.len(), 2, "{events}");
    assert_ne!(ids[0], ids[1]);
    for id in &ids {
        assert!(id.len() == 20 && id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
    }
    // The audit writer is its own thread: wait for both lines.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let lines = loop {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        if lines.len() == 2 || std::time::Instant::now() > deadline {
            break lines;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let audit_ids: Vec<&str> = lines.iter().map(|l| l["request_id"].as_str().unwrap()).collect();
    assert_eq!(audit_ids, ids.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(lines[1]["path"], events[1]["path"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Under the default per-core runtime a body of 64 KiB or more is scored on the shared
/// runtime (`gate::scorer::offload`; the test's runtime is multi-threaded, as the binary's
/// is), and the verdict is the one inline scoring gives: the injection in the last of
/// 7,000 fields is killed, the same body without it is forwarded whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_bodies_are_judged_under_the_per_core_runtime() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &["--mode", "active", "--kill-response", "forbidden"]);
    let padding = "item=4711&".repeat(7000);
    let form = |last: &str| {
        let mut req = request(Method::POST, "/orders", &format!("{padding}{last}"));
        req.headers_mut().insert("content-type", "application/x-www-form-urlencoded".parse().unwrap());
        req
    };
    assert_eq!(send(proxy.addr, form("id=7")).await.status, 200);
    assert_eq!(app.last().body.len(), padding.len() + 4, "forwarded whole");
    let reply = send(proxy.addr, form("id=1%27%20union%20select%20password%20from%20users--")).await;
    assert_eq!(reply.status, 403);
    let events = send(proxy.addr, get("/api/events/recent")).await.json();
    assert!(events[1]["reason"].as_str().unwrap().starts_with("sqli:"), "{}", events[1]);
}
