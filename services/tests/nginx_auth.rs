//! Real nginx in front of a recording upstream, asking the real auth adapter (`rampart auth`)
//! through the operator configs of deploy/nginx/ (docs/NGINX.md):
//! - `auth-request.conf`: plain `auth_request`, method + URI + headers, no body;
//! - `auth-request-body.conf`: a Lua access handler that sends the buffered body along.
//!
//! nginx, and for the body config its Lua module, must be installed (scripts/bootstrap): a
//! missing one fails these tests, it does not skip them.

mod common;

use std::net::SocketAddr;

use bytes::Bytes;
use clap::Parser;
use common::nginx::{self, Config, Nginx};
use common::proxy::{get, request, send, upstream, Reply, Seen, Upstream, SQLI};
use http_body_util::Full;
use hyper::{Method, Request};
use services::cli::{Cli, Command};
use services::config::AuthArgs;
use services::run::{start_auth, AuthServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const BOTH: [Config; 2] = [Config::HeaderOnly, Config::WithBody];
const SQLI_FORM: &str = "user=admin%27%20OR%20%271%27%3D%271%27--&password=x";
const BENIGN_FORM: &str = "first=Siobhan&last=O%27Brien&comment=It%27s+great%2C+isn%27t+it%3F";
const BENIGN_QUERY: &str = "/search?q=O%27Brien&sort=name";

fn auth_args(mode: &str, inference: &str) -> AuthArgs {
    let argv = [
        "rampart",
        "auth",
        "--auth-addr",
        "127.0.0.1:0",
        "--auth-metrics-addr",
        "127.0.0.1:0",
        "--mode",
        mode,
        "--inference-url",
        inference,
        "--inference-timeout-ms",
        "3000",
        "--audit-log",
        "off",
    ];
    match Cli::parse_from(argv).command {
        Command::Auth(args) => args,
        _ => unreachable!(),
    }
}

/// The real adapter, scoring with the shared inference service.
fn adapter(mode: &str) -> AuthServer {
    start_auth(&auth_args(mode, common::shared_base())).expect("auth adapter starts")
}

/// Everything a test needs: the upstream, the adapter (unless it is meant to be down) and
/// nginx in front of the upstream, asking the adapter.
struct Stack {
    app: Upstream,
    nginx: Nginx,
    _auth: Option<AuthServer>,
    _closed: Option<nginx::ClosedAddr>,
}

async fn stack(config: Config, mode: &str) -> Stack {
    let app = upstream().await;
    let auth = adapter(mode);
    let nginx = nginx::start(config, auth.running.addr, app.addr);
    Stack { app, nginx, _auth: Some(auth), _closed: None }
}

async fn stack_without_adapter(config: Config) -> Stack {
    let app = upstream().await;
    let closed = nginx::closed_addr();
    let nginx = nginx::start(config, closed.addr, app.addr);
    Stack { app, nginx, _auth: None, _closed: Some(closed) }
}

fn form(method: Method, path: &str, body: &str) -> Request<Full<Bytes>> {
    let mut req = request(method, path, body);
    req.headers_mut().insert("content-type", "application/x-www-form-urlencoded".parse().unwrap());
    req
}

fn header<'a>(seen: &'a Seen, name: &str) -> Option<&'a str> {
    seen.headers.get(name).map(|v| v.to_str().unwrap())
}

fn score_of(seen: &Seen) -> f32 {
    let score = header(seen, "x-waf-score").unwrap_or_else(|| panic!("no X-Waf-Score at the upstream: {:?}", seen.headers));
    let (whole, frac) = score.split_once('.').unwrap_or(("", ""));
    assert!(whole.len() == 1 && frac.len() == 4, "four decimals: {score}");
    score.parse().unwrap()
}

fn assert_blocked(reply: &Reply, nginx: &Nginx, what: &str) {
    assert_eq!(reply.status, 403, "{what} ({}): {:?}\n{}", nginx.config.file_name(), reply.body, nginx.error_log());
    assert_eq!(reply.headers["content-type"], "application/json", "{what}");
    assert_eq!(
        reply.body,
        services::waf_headers::block_body_json(),
        "{what}: the spec 2.9 block body, byte for byte the adapter's ({})",
        nginx.config.file_name()
    );
    assert!(
        reply.headers.keys().all(|k| !k.as_str().starts_with("x-waf-")),
        "{what}: the verdict is not shown to the client: {:?}",
        reply.headers
    );
}

/// A clean request reached the upstream carrying the adapter's verdict.
fn assert_passed_clean(reply: &Reply, stack: &Stack, mode: &str, what: &str) -> Seen {
    assert_eq!(reply.status, 200, "{what} ({}): {:?}\n{}", stack.nginx.config.file_name(), reply.body, stack.nginx.error_log());
    assert_eq!(reply.body, "upstream ok", "{what}");
    let seen = stack.app.last();
    let score = score_of(&seen);
    assert!(score <= 0.5, "{what} must pass: {score}");
    assert_eq!(header(&seen, "x-waf-mode"), Some(mode), "{what}");
    assert_eq!(header(&seen, "x-waf-would-have-killed"), None, "{what}");
    assert_eq!(header(&seen, "x-waf-error"), None, "{what}");
    seen
}

#[tokio::test]
async fn sqli_in_the_query_is_blocked_with_the_block_body_in_active_mode() {
    for config in BOTH {
        let stack = stack(config, "active").await;
        let reply = send(stack.nginx.addr, get(SQLI)).await;
        assert_blocked(&reply, &stack.nginx, "SQLi in the query");
        // Any client method is scored: the adapter's 204 for OPTIONS is about the subrequest's
        // own method, which nginx always sends as POST.
        let reply = send(stack.nginx.addr, request(Method::OPTIONS, SQLI, "")).await;
        assert_blocked(&reply, &stack.nginx, "SQLi in an OPTIONS query");
        assert_eq!(stack.app.count(), 0, "{}: the upstream saw nothing", config.file_name());
        assert!(stack.nginx.access_log().contains("waf_reason=\"sqli:"), "{}", stack.nginx.access_log());
    }
}

#[tokio::test]
async fn benign_apostrophes_pass_with_the_verdict_headers() {
    for config in BOTH {
        let stack = stack(config, "active").await;
        // A client must not be able to pre-stamp its request as clean.
        let mut req = get(BENIGN_QUERY);
        req.headers_mut().insert("x-waf-score", "0.0000".parse().unwrap());
        req.headers_mut().insert("x-waf-would-have-killed", "false".parse().unwrap());
        req.headers_mut().insert("x-waf-error", "none".parse().unwrap());
        let reply = send(stack.nginx.addr, req).await;
        let seen = assert_passed_clean(&reply, &stack, "active", "O'Brien in the query");
        assert_eq!(seen.method, "GET");
        assert_eq!(seen.uri, BENIGN_QUERY);
        assert_eq!(header(&seen, "host"), Some("shop.example"));
        assert_eq!(header(&seen, "x-real-ip"), Some("127.0.0.1"));

        let reply = send(stack.nginx.addr, form(Method::POST, "/signup?ref=mail", BENIGN_FORM)).await;
        let seen = assert_passed_clean(&reply, &stack, "active", "O'Brien in a form body");
        assert_eq!(seen.method, "POST");
        assert_eq!(seen.body, BENIGN_FORM, "the body reaches the upstream unchanged");
        assert_eq!(header(&seen, "content-type"), Some("application/x-www-form-urlencoded"));
        assert_eq!(stack.app.count(), 2);
    }
}

#[tokio::test]
async fn sqli_in_a_post_body_is_blocked_by_the_body_config() {
    let stack = stack(Config::WithBody, "active").await;
    let reply = send(stack.nginx.addr, form(Method::POST, "/login", SQLI_FORM)).await;
    assert_blocked(&reply, &stack.nginx, "SQLi in a form body");
    let reply = send(stack.nginx.addr, form(Method::PUT, "/profile", SQLI_FORM)).await;
    assert_blocked(&reply, &stack.nginx, "SQLi in a PUT body");
    assert_eq!(stack.app.count(), 0, "the upstream saw nothing");
}

#[tokio::test]
async fn a_chunked_body_is_scored_whole_by_the_body_config() {
    let stack = stack(Config::WithBody, "active").await;
    let (half1, half2) = SQLI_FORM.split_at(20);
    let raw = format!(
        "POST /login HTTP/1.1\r\nHost: shop.example\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n{:x}\r\n{half1}\r\n{:x}\r\n{half2}\r\n0\r\n\r\n",
        half1.len(),
        half2.len()
    );
    let answer = raw_exchange(stack.nginx.addr, raw.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 403 "), "{answer}");
    assert!(answer.ends_with(std::str::from_utf8(&services::waf_headers::block_body_json()).unwrap()), "{answer}");
    assert_eq!(stack.app.count(), 0);
}

#[tokio::test]
async fn the_header_only_config_does_not_see_bodies() {
    // Documented limit of auth-request.conf: nginx sends no body to an auth_request
    // subrequest, so an attack confined to the body passes.
    let stack = stack(Config::HeaderOnly, "active").await;
    let reply = send(stack.nginx.addr, form(Method::POST, "/login", SQLI_FORM)).await;
    let seen = assert_passed_clean(&reply, &stack, "active", "SQLi in a body, header-only config");
    assert_eq!(seen.body, SQLI_FORM);
}

#[tokio::test]
async fn bodies_over_the_limit_are_refused_by_nginx() {
    // auth-request-body.conf holds bodies in memory up to client_max_body_size (1 MiB).
    let stack = stack(Config::WithBody, "active").await;
    let at_limit = "a".repeat(1 << 20);
    let reply = send(stack.nginx.addr, form(Method::POST, "/upload", &at_limit)).await;
    assert_eq!(reply.status, 200, "1 MiB is accepted and scored: {}", stack.nginx.error_log());
    assert_eq!(stack.app.last().body.len(), 1 << 20);
    let over = "a".repeat((1 << 20) + 1);
    let reply = send(stack.nginx.addr, form(Method::POST, "/upload", &over)).await;
    assert_eq!(reply.status, 413);
    assert_eq!(stack.app.count(), 1);
}

#[tokio::test]
async fn shadow_mode_forwards_attacks_marked_would_have_killed() {
    for config in BOTH {
        let stack = stack(config, "shadow").await;
        let mut cases = vec![get(SQLI)];
        if config == Config::WithBody {
            cases.push(form(Method::POST, "/login", SQLI_FORM));
        }
        for req in cases {
            let what = format!("{} {} ({})", req.method(), req.uri(), config.file_name());
            let reply = send(stack.nginx.addr, req).await;
            assert_eq!(reply.status, 200, "{what}: {:?}", reply.body);
            assert_eq!(reply.body, "upstream ok");
            let seen = stack.app.last();
            assert_eq!(header(&seen, "x-waf-would-have-killed"), Some("true"), "{what}: {:?}", seen.headers);
            assert_eq!(header(&seen, "x-waf-mode"), Some("shadow"), "{what}");
            assert!(score_of(&seen) > 0.5, "{what}");
            assert!(header(&seen, "x-waf-reason").unwrap_or("").starts_with("sqli:"), "{what}: {:?}", seen.headers);
        }
        let reply = send(stack.nginx.addr, get(BENIGN_QUERY)).await;
        assert_passed_clean(&reply, &stack, "shadow", "O'Brien in shadow mode");
    }
}

#[tokio::test]
async fn an_unreachable_adapter_fails_open() {
    for config in BOTH {
        let stack = stack_without_adapter(config).await;
        let started = std::time::Instant::now();
        let reply = send(stack.nginx.addr, get(SQLI)).await;
        assert_eq!(reply.status, 200, "{}: fail-open: {:?}\n{}", config.file_name(), reply.body, stack.nginx.error_log());
        assert_eq!(reply.body, "upstream ok");
        assert!(started.elapsed().as_secs() < 3, "no waiting on a refused connection");
        let seen = stack.app.last();
        assert_eq!(seen.uri, SQLI);
        assert_eq!(header(&seen, "x-waf-error"), Some("adapter-unavailable"), "{}: {:?}", config.file_name(), seen.headers);
        assert_eq!(header(&seen, "x-waf-score"), None);
        assert_eq!(header(&seen, "x-waf-mode"), None);
        if config == Config::WithBody {
            let reply = send(stack.nginx.addr, form(Method::POST, "/login", SQLI_FORM)).await;
            assert_eq!(reply.status, 200);
            assert_eq!(stack.app.last().body, SQLI_FORM);
        }
    }
}

#[tokio::test]
async fn an_adapter_that_stops_fails_open() {
    for config in BOTH {
        let app = upstream().await;
        let auth = adapter("active");
        let nginx = nginx::start(config, auth.running.addr, app.addr);
        assert_eq!(send(nginx.addr, get(SQLI)).await.status, 403);
        auth.running.stop().await;
        let reply = send(nginx.addr, get(SQLI)).await;
        assert_eq!(reply.status, 200, "{}: fail-open once the adapter is gone\n{}", config.file_name(), nginx.error_log());
        assert_eq!(header(&app.last(), "x-waf-error"), Some("adapter-unavailable"));
    }
}

#[tokio::test]
async fn an_unreachable_inference_service_passes_marked_by_the_adapter() {
    // Spec 7, fail-open rule 1: the adapter answers 200; nginx forwards its X-Waf-Error.
    for config in BOTH {
        let app = upstream().await;
        let closed = nginx::closed_addr();
        let dead = format!("http://{}", closed.addr);
        let auth = start_auth(&auth_args("active", &dead)).expect("auth adapter starts");
        let nginx = nginx::start(config, auth.running.addr, app.addr);
        let reply = send(nginx.addr, get(SQLI)).await;
        assert_eq!(reply.status, 200, "{}", config.file_name());
        let seen = app.last();
        assert_eq!(header(&seen, "x-waf-error"), Some("scorer-unreachable"), "{}: {:?}", config.file_name(), seen.headers);
        assert_eq!(header(&seen, "x-waf-mode"), Some("active"));
    }
}

/// Writes `raw` on a fresh connection and reads until the server closes it.
async fn raw_exchange(addr: SocketAddr, raw: &[u8]) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(raw).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(std::time::Duration::from_secs(5), stream.read_to_end(&mut answer))
        .await
        .expect("nginx answers and closes")
        .unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

#[test]
fn the_guide_shows_the_configs_as_shipped() {
    let guide = std::fs::read_to_string(common::workspace_root().join("docs/NGINX.md")).unwrap();
    for config in BOTH {
        let file = std::fs::read_to_string(config.path()).unwrap();
        assert!(
            guide.contains(&format!("```nginx\n{file}```")),
            "docs/NGINX.md must show deploy/nginx/{} verbatim: copy the file into the guide",
            config.file_name()
        );
    }
}
