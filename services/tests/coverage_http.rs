//! Issue 11 findings 1 and 2 over real sockets: attacks behind 1,100 padding fields and in
//! headers the scanner used to skip are blocked in active mode, and the recording upstream
//! sees nothing — over HTTP/1.1, h2c, and through the auth adapter.

mod common;

use bytes::Bytes;
use clap::Parser;
use common::proxy::*;
use http_body_util::{Empty, Full};
use hyper::{Method, Request};
use hyper_util::rt::{TokioExecutor, TokioIo};
use services::cli::{Cli, Command};
use services::config::AuthArgs;
use services::run::start_auth;
use tokio::net::TcpStream;

fn padding(n: usize) -> String {
    vec!["a"; n].join("&")
}

/// Each attack: (what it is, method, path, headers, body).
type Attack = (&'static str, Method, String, Vec<(&'static str, String)>, String);

fn attacks() -> Vec<Attack> {
    let pad = padding(1_100);
    let items = vec!["\"a\""; 1_100].join(",");
    // base64 of `admin' OR '1'='1' -- :secret`
    let basic = "Basic YWRtaW4nIE9SICcxJz0nMScgLS0gOnNlY3JldA==".to_string();
    let form = vec![("content-type", "application/x-www-form-urlencoded".to_string())];
    vec![
        (
            "xss after 1,024 bare fields",
            Method::GET,
            format!("/search?{}&q=%3Cscript%3Ealert(1)%3C/script%3E", padding(1_024)),
            vec![],
            String::new(),
        ),
        ("xss after 1,100 bare fields", Method::GET, format!("/search?{pad}&q=%3Cscript%3Ealert(1)%3C/script%3E"), vec![], String::new()),
        ("form sqli after 1,100 fields", Method::POST, "/login".into(), form.clone(), format!("{pad}&user=admin%27+OR+1%3D1--+&pass=x")),
        (
            "xss user-agent, padded query",
            Method::GET,
            format!("/search?{pad}"),
            vec![("user-agent", "<script>alert(1)</script>".into())],
            String::new(),
        ),
        (
            "json xss after 1,100 items",
            Method::POST,
            "/api".into(),
            vec![("content-type", "application/json".into())],
            format!("{{\"items\":[{items}],\"q\":\"<img src=x onerror=alert(1)>\"}}"),
        ),
        (
            "ognl content-type",
            Method::POST,
            "/upload".into(),
            vec![("content-type", "%{(#_='multipart/form-data').(#cmd='id').(#p=new java.lang.ProcessBuilder(#cmd)).(#p.start())}".into())],
            "x".into(),
        ),
        (
            "sqli accept-language",
            Method::GET,
            "/".into(),
            vec![("accept-language", "en' UNION SELECT password FROM users--".into())],
            String::new(),
        ),
        ("sqli if-none-match", Method::GET, "/".into(), vec![("if-none-match", "\"1' OR 1=1-- \"".into())], String::new()),
        ("xss sec-* header", Method::GET, "/".into(), vec![("sec-fetch-dest", "<img src=x onerror=alert(1)>".into())], String::new()),
        ("xss cache-control", Method::GET, "/".into(), vec![("cache-control", "<script>alert(1)</script>".into())], String::new()),
        ("sqli basic user name", Method::GET, "/account".into(), vec![("authorization", basic)], String::new()),
        ("xss cookie name", Method::GET, "/".into(), vec![("cookie", "sid=1; <script>alert(1)</script>=1".into())], String::new()),
    ]
}

fn build(method: &Method, uri: &str, headers: &[(&'static str, String)], body: &str) -> Request<Full<Bytes>> {
    let mut req = request(method.clone(), uri, body);
    for (name, value) in headers {
        req.headers_mut().insert(*name, value.parse().unwrap());
    }
    req
}

#[tokio::test]
async fn padded_and_header_attacks_are_blocked_before_the_upstream() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &["--mode", "active", "--kill-response", "forbidden"]);
    for (what, method, uri, headers, body) in attacks() {
        let reply = send(proxy.addr, build(&method, &uri, &headers, &body)).await;
        assert_eq!(reply.status, 403, "{what}: {:?} {:?}", reply.headers.get("x-waf-score"), reply.body);
    }
    assert_eq!(app.count(), 0, "the upstream saw none of the attacks");

    // The same shapes without the attack pass.
    let benign = build(&Method::GET, &format!("/search?{}&q=shoes", padding(1_100)), &[("accept-language", "en-US,en;q=0.9".into())], "");
    let reply = send(proxy.addr, benign).await;
    assert_eq!(reply.status, 200, "{:?}", reply.headers);
    assert_eq!(app.count(), 1);
}

#[tokio::test]
async fn h2c_padded_query_is_reset_and_never_forwarded() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &["--mode", "active"]);
    let stream = TcpStream::connect(proxy.addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream)).await.unwrap();
    tokio::spawn(conn);
    let path = format!("/search?{}&q=%3Cscript%3Ealert(1)%3C/script%3E", padding(1_100));
    let req = Request::get(format!("http://shop.example{path}")).body(Empty::<Bytes>::new()).unwrap();
    sender.send_request(req).await.expect_err("the attack stream is reset");
    let ok = Request::get("http://shop.example/search?q=shoes").body(Empty::<Bytes>::new()).unwrap();
    assert_eq!(sender.send_request(ok).await.expect("the connection survives").status(), 200);
    assert_eq!(app.count(), 1);
    assert!(app.seen.lock().unwrap().iter().all(|s| !s.uri.contains("script")));
}

fn auth_args(extra: &[&str]) -> AuthArgs {
    let mut argv = vec!["rampart", "auth", "--auth-addr", "127.0.0.1:0", "--auth-metrics-addr", "127.0.0.1:0", "--audit-log", "off"];
    argv.extend(["--inference-url", common::shared_base(), "--inference-timeout-ms", "5000"]);
    argv.extend(extra);
    match Cli::parse_from(argv).command {
        Command::Auth(args) => args,
        _ => unreachable!(),
    }
}

/// A subrequest as nginx sends it: the original line in X-Original-Method / X-Original-URI.
fn subrequest(method: &Method, uri: &str, headers: &[(&'static str, String)], body: &str) -> Request<Full<Bytes>> {
    let mut req = request(Method::POST, "/_waf/check", body);
    req.headers_mut().insert("x-original-method", method.as_str().parse().unwrap());
    req.headers_mut().insert("x-original-uri", uri.parse().unwrap());
    req.headers_mut().insert("x-real-ip", "203.0.113.7".parse().unwrap());
    req.headers_mut().insert("x-forwarded-for", "198.51.100.2, 203.0.113.7".parse().unwrap());
    for (name, value) in headers {
        req.headers_mut().insert(*name, value.parse().unwrap());
    }
    req
}

#[tokio::test]
async fn the_auth_adapter_blocks_the_same_attacks() {
    let auth = start_auth(&auth_args(&["--mode", "active"])).expect("auth adapter starts");
    for (what, method, uri, headers, body) in attacks() {
        let reply = send(auth.running.addr, subrequest(&method, &uri, &headers, &body)).await;
        assert_eq!(reply.status, 403, "{what}: {:?}", reply.headers.get("x-waf-reason"));
    }
    // Client-controlled forwarding headers reach the app: they are scored as the proxy does.
    for (name, value) in [
        ("x-forwarded-host", "<script>alert(1)</script>"),
        ("x-original-url", "/admin?q=<script>alert(1)</script>"),
        ("x-real-ip", "1' OR 1=1-- "),
    ] {
        let mut req = subrequest(&Method::GET, "/", &[], "");
        req.headers_mut().insert(name, value.parse().unwrap());
        let reply = send(auth.running.addr, req).await;
        assert_eq!(reply.status, 403, "{name}: {value}: {:?}", reply.headers.get("x-waf-score"));
    }
    // nginx's own headers are the request line, not extra input: a benign request passes.
    let reply = send(auth.running.addr, subrequest(&Method::GET, "/search?q=shoes", &[], "")).await;
    assert_eq!(reply.status, 200, "{:?}", reply.headers);
}
