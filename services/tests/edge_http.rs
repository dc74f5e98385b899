//! Issue 11, the proxy's edges over real sockets: verdict headers a client cannot strip (4),
//! admin CSRF and DNS rebinding (5), bounded events (6), internals shown to admins only (8)
//! and the client-IP header setting (9).

mod common;

use std::net::IpAddr;

use bytes::Bytes;
use clap::Parser;
use common::proxy::*;
use http_body_util::Full;
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use services::cli::{Cli, Command};

fn last_event(events: &serde_json::Value) -> serde_json::Value {
    events.as_array().and_then(|a| a.last()).cloned().unwrap_or_else(|| panic!("no event in {events}"))
}

#[tokio::test]
async fn a_client_connection_header_cannot_strip_the_verdict_headers() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &[]);
    let mut req = get(SQLI);
    req.headers_mut().insert(
        "connection",
        "keep-alive, x-waf-score, X-Waf-Reason, x-waf-would-have-killed, x-waf-mode, x-forwarded-for, x-hop".parse().unwrap(),
    );
    req.headers_mut().insert("x-hop", "1".parse().unwrap());
    req.headers_mut().insert("x-waf-forged", "clean".parse().unwrap());
    let reply = send(proxy.addr, req).await;
    assert_eq!(reply.status, 200, "shadow mode forwards");
    let seen = app.last();
    let score: f32 = seen.headers["x-waf-score"].to_str().unwrap().parse().unwrap();
    assert!(score > 0.5, "{score}");
    // The Connection header naming verdict headers is itself a protocol anomaly now; either
    // way the verdict reaches the upstream.
    let reason = seen.headers["x-waf-reason"].to_str().unwrap();
    assert!(reason.starts_with("sqli:") || reason.starts_with("protocol:connection"), "{:?}", seen.headers);
    assert_eq!(seen.headers["x-waf-would-have-killed"], "true");
    assert_eq!(seen.headers["x-waf-mode"], "shadow");
    assert_eq!(seen.headers["x-forwarded-for"], "127.0.0.1");
    assert!(!seen.headers.contains_key("x-hop"), "other named fields are still hop-by-hop");
    assert!(!seen.headers.contains_key("x-waf-forged"), "client-sent x-waf-* never reach the upstream");
}

fn mode_post(content_type: &str) -> Request<Full<Bytes>> {
    let mut req = request(Method::POST, "/api/mode", "{\"mode\":\"active\"}");
    req.headers_mut().insert("content-type", content_type.parse().unwrap());
    req
}

#[tokio::test]
async fn admin_endpoints_refuse_csrf_and_dns_rebinding() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &["--admin-hosts", "waf.internal"]);

    // The probe: a cross-site text/plain POST from a browser on the machine.
    let mut csrf = mode_post("text/plain");
    csrf.headers_mut().insert("origin", "http://evil.example".parse().unwrap());
    csrf.headers_mut().insert("sec-fetch-site", "cross-site".parse().unwrap());
    let reply = send(proxy.addr, csrf).await;
    assert_eq!(reply.status, 403, "{:?}", reply.body);
    assert_eq!(reply.json()["error"], "admin_forbidden");
    let reply = send(proxy.addr, mode_post("text/plain")).await;
    assert_eq!(reply.status, 415, "{:?}", reply.body);
    assert_eq!(reply.json()["error"], "unsupported_media_type");
    let mut json_cross = mode_post("application/json");
    json_cross.headers_mut().insert("origin", "http://evil.example".parse().unwrap());
    assert_eq!(send(proxy.addr, json_cross).await.status, 403);
    let mut same_site = mode_post("application/json");
    same_site.headers_mut().insert("sec-fetch-site", "same-site".parse().unwrap());
    assert_eq!(send(proxy.addr, same_site).await.status, 403);
    assert_eq!(send(proxy.addr, get("/api/mode")).await.json()["mode"], "shadow", "nothing switched the mode");

    // The dashboard's own request: same origin, JSON.
    let mut dashboard = mode_post("application/json; charset=utf-8");
    dashboard.headers_mut().insert("origin", format!("http://127.0.0.1:{}", proxy.addr.port()).parse().unwrap());
    dashboard.headers_mut().insert("host", format!("127.0.0.1:{}", proxy.addr.port()).parse().unwrap());
    dashboard.headers_mut().insert("sec-fetch-site", "same-origin".parse().unwrap());
    let reply = send(proxy.addr, dashboard).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.json()["mode"], "active");

    // DNS rebinding: the attacker's name now points at 127.0.0.1.
    send(proxy.addr, get("/some/page")).await;
    for path in ["/api/events/recent", "/api/events", "/api/stats", "/_waf/dashboard"] {
        let mut rebind = get(path);
        rebind.headers_mut().insert("host", format!("rebind.attacker.example:{}", proxy.addr.port()).parse().unwrap());
        let reply = send(proxy.addr, rebind).await;
        assert_eq!(reply.status, 403, "{path}: {:?}", reply.body);
        assert!(reply.json()["detail"].as_str().unwrap().contains("WAF_ADMIN_HOSTS"));
    }
    for host in ["localhost", "waf.internal:8080", "[::1]:9", "10.0.0.7"] {
        let mut named = get("/api/events/recent");
        named.headers_mut().insert("host", host.parse().unwrap());
        assert_eq!(send(proxy.addr, named).await.status, 200, "{host}");
    }
}

#[tokio::test]
async fn the_admin_cookie_is_scoped_to_rampart_paths_and_secure_over_tls() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &["--admin-token", "t0ken-9", "--trusted-proxies", "127.0.0.1"]);
    let reply = send(proxy.addr, get("/_waf/dashboard?token=t0ken-9")).await;
    assert_eq!(reply.status, 303);
    let cookies: Vec<&str> = reply.headers.get_all("set-cookie").iter().map(|v| v.to_str().unwrap()).collect();
    assert_eq!(cookies.len(), 2, "{cookies:?}");
    for (cookie, path) in cookies.iter().zip(["/_waf", "/api"]) {
        assert!(cookie.starts_with("rampart_admin=t0ken-9;"), "{cookie}");
        assert!(cookie.contains(&format!("Path={path};")) && cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
        assert!(!cookie.contains("Secure"), "plain HTTP: {cookie}");
    }
    let mut over_tls = get("/_waf/dashboard?token=t0ken-9");
    over_tls.headers_mut().insert("x-forwarded-proto", "https".parse().unwrap());
    let reply = send(proxy.addr, over_tls).await;
    assert!(reply.headers.get_all("set-cookie").iter().all(|v| v.to_str().unwrap().ends_with("; Secure")));
}

#[tokio::test]
async fn huge_methods_and_paths_make_bounded_events() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &[]);
    // Heads over WAF_MAX_HEADER_BYTES (64 KiB) are refused with 431 before any event; the
    // largest head that gets scored is what an event must bound: 20 KB each of method, path
    // and query.
    let method = "A".repeat(20_000);
    let path = format!("/{}", "p".repeat(20_000));
    let query = "q=".to_string() + &"x".repeat(20_000);
    let req = Request::builder()
        .method(Method::from_bytes(method.as_bytes()).unwrap())
        .uri(format!("{path}?{query}"))
        .header("host", "shop.example")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let answer = send_from(proxy.addr, None, req).await.map(|r| r.status);
    println!("the huge request was answered {answer:?}");
    let recent = send(proxy.addr, get("/api/events/recent")).await;
    let event = last_event(&recent.json());
    assert_eq!(event["truncated"], serde_json::json!(["method", "path", "query"]), "{event}");
    assert!(event["method"].as_str().unwrap().len() <= services::events::caps::METHOD);
    assert!(event["path"].as_str().unwrap().len() <= services::events::caps::PATH);
    let line = serde_json::to_vec(&event).unwrap();
    println!("event line for a 60 KB request line: {} bytes; /recent with one event: {} bytes", line.len(), recent.body.len());
    assert!(line.len() <= services::events::caps::MAX_EVENT_BYTES, "{} bytes", line.len());
    assert!(recent.body.len() <= services::events::caps::MAX_EVENT_BYTES + 2);
}

#[tokio::test]
async fn event_streams_are_capped_with_a_503() {
    let app = upstream().await;
    // A closed stream is noticed when the keepalive comment cannot be written.
    let proxy = start_proxy(app.addr, &["--sse-keepalive-secs", "1"]);
    let mut open = Vec::new();
    for _ in 0..services::events::MAX_SUBSCRIBERS {
        let stream = connect(proxy.addr, None).await.unwrap();
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.unwrap();
        tokio::spawn(conn);
        let resp = sender.send_request(get("/api/events")).await.unwrap();
        assert_eq!(resp.status(), 200);
        open.push((sender, resp));
    }
    let reply = send(proxy.addr, get("/api/events")).await;
    assert_eq!(reply.status, 503, "{:?}", reply.body);
    assert!(reply.json()["error"].is_string());
    open.pop();
    // The freed slot is noticed at the next subscribe (closed channels are pruned).
    let mut reopened = false;
    for _ in 0..500 {
        let stream = connect(proxy.addr, None).await.unwrap();
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.unwrap();
        tokio::spawn(conn);
        let resp = sender.send_request(get("/api/events")).await.unwrap();
        if resp.status() == 200 {
            reopened = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(reopened, "a closed stream frees its slot");
}

const OUTSIDER: &str = "127.0.0.2";

#[tokio::test]
async fn health_shows_internal_urls_to_admin_peers_only_and_internals_default_to_loopback() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &[]);
    let outsider: IpAddr = OUTSIDER.parse().unwrap();
    let health = send_from(proxy.addr, Some(outsider), get("/_waf/health")).await.unwrap().json();
    assert_eq!(health["status"], "ok");
    assert!(health.get("target").is_none() && health.get("inference").is_none(), "{health}");
    let health = send(proxy.addr, get("/_waf/health")).await.json();
    assert_eq!(health["target"], format!("http://{}", app.addr));
    assert!(health["inference"].is_string());

    let Command::Up(up) = Cli::parse_from(["rampart", "up"]).command else { unreachable!() };
    assert!(up.proxy.addr.ip().is_unspecified(), "the proxy is the public entry point");
    for (name, addr) in [("AUTH_ADDR", up.auth_addr), ("EXTPROC_ADDR", up.extproc_addr), ("MANAGEMENT_ADDR", up.management_addr)] {
        assert!(addr.ip().is_loopback(), "{name} defaults to {addr}");
    }
    for argv in [["rampart", "auth"], ["rampart", "extproc"]] {
        match Cli::parse_from(argv).command {
            Command::Auth(a) => assert!(a.addr.ip().is_loopback() && a.metrics_addr.ip().is_loopback()),
            Command::Extproc(e) => assert!(e.addr.ip().is_loopback() && e.http_addr.ip().is_loopback()),
            _ => unreachable!(),
        }
    }
}

#[tokio::test]
async fn the_client_ip_header_is_a_setting_and_others_cannot_outrank_it() {
    let app = upstream().await;
    let spoofed = |req: &mut Request<Full<Bytes>>| {
        req.headers_mut().insert("x-forwarded-for", "203.0.113.7".parse().unwrap());
        req.headers_mut().insert("cf-connecting-ip", "6.6.6.6".parse().unwrap());
        req.headers_mut().insert("x-real-ip", "7.7.7.7".parse().unwrap());
    };
    for (header, expected) in
        [("x-forwarded-for", "203.0.113.7"), ("cf-connecting-ip", "6.6.6.6"), ("x-real-ip", "7.7.7.7"), ("none", "127.0.0.1")]
    {
        let proxy = start_proxy(app.addr, &["--trusted-proxies", "127.0.0.1", "--client-ip-header", header]);
        let mut req = get("/ip-probe");
        spoofed(&mut req);
        send(proxy.addr, req).await;
        let event = last_event(&send(proxy.addr, get("/api/events/recent")).await.json());
        assert_eq!(event["source_ip"], expected, "WAF_CLIENT_IP_HEADER={header}");
    }
    // The default is X-Forwarded-For: a client-added CF-Connecting-IP does not win.
    let proxy = start_proxy(app.addr, &["--trusted-proxies", "127.0.0.1"]);
    let mut req = get("/ip-probe");
    spoofed(&mut req);
    send(proxy.addr, req).await;
    let event = last_event(&send(proxy.addr, get("/api/events/recent")).await.json());
    assert_eq!(event["source_ip"], "203.0.113.7");
}
