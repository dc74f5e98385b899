//! The operator policy behind real nginx (deploy/nginx/ configs) asking the real auth adapter
//! (`rampart auth --policy`): host scopes follow the client's Host, which nginx passes in
//! X-Original-Host (the subrequest's own Host is the adapter's), a client cannot choose its
//! scope by sending X-Original-Host itself, and a route's body limit decides for the body
//! config.

mod common;
mod policy_fixtures;

use clap::Parser;
use common::nginx::{self, Config};
use common::proxy::{send, upstream};
use hyper::Method;
use policy_fixtures::{request_at as at, test_dir, write_policy, DOOR_POLICY as POLICY, SCRIPT};
use services::run::{start_auth, AuthServer};

/// `rampart auth --policy`, flags in active mode, pattern detectors only.
fn adapter(policy: &std::path::Path) -> AuthServer {
    let argv = ["rampart", "auth", "--auth-addr", "127.0.0.1:0", "--auth-metrics-addr", "127.0.0.1:0", "--audit-log", "off"];
    let argv = argv.into_iter().chain(["--mode", "active", "--no-models", "--policy", policy.to_str().unwrap()]);
    match services::cli::Cli::parse_from(argv).command {
        services::cli::Command::Auth(args) => start_auth(&args).expect("auth adapter starts"),
        _ => unreachable!(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn host_scopes_follow_the_clients_host_through_nginx() {
    let dir = test_dir("nginx-host");
    let policy = dir.join("policy.toml");
    write_policy(&policy, POLICY);
    let auth = adapter(&policy);
    for config in [Config::HeaderOnly, Config::WithBody] {
        let app = upstream().await;
        let nginx = nginx::start(config, auth.running.addr, app.addr);
        let attack = format!("/page?name={SCRIPT}");
        let name = config.file_name();
        // A host under the shadow wildcard: passed, marked as would-have-killed.
        let reply = send(nginx.addr, at("a.shadow.test", Method::GET, &attack, "")).await;
        assert_eq!(reply.status, 200, "{name}: {:?}\n{}", reply.body, nginx.error_log());
        let seen = app.last();
        assert_eq!(seen.headers.get("x-waf-would-have-killed").map(|v| v.as_bytes()), Some(&b"true"[..]), "{name}: {:?}", seen.headers);
        // Another host: the flags' active mode blocks.
        let reply = send(nginx.addr, at("shop.test", Method::GET, &attack, "")).await;
        assert_eq!(reply.status, 403, "{name}: {:?}", reply.body);
        // The client names a shadow host in X-Original-Host itself: nginx overwrites it with
        // the Host it routed on, so the request is still judged as shop.test's.
        let mut spoofed = at("shop.test", Method::GET, &attack, "");
        spoofed.headers_mut().insert("x-original-host", "a.shadow.test".parse().unwrap());
        spoofed.headers_mut().insert("x-forwarded-host", "a.shadow.test".parse().unwrap());
        let reply = send(nginx.addr, spoofed).await;
        assert_eq!(reply.status, 403, "{name}: a client-sent X-Original-Host must not pick the scope: {:?}", reply.body);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_routes_body_limit_decides_behind_nginx() {
    let dir = test_dir("nginx-body");
    let policy = dir.join("policy.toml");
    write_policy(&policy, POLICY);
    let auth = adapter(&policy);
    let app = upstream().await;
    let nginx = nginx::start(Config::WithBody, auth.running.addr, app.addr);
    let benign = format!("pad={}&comment=hello", "a".repeat(300));
    // Over /upload's 64 bytes with `block`: refused whatever it holds.
    let reply = send(nginx.addr, at("shop.test", Method::POST, "/upload", &benign)).await;
    assert_eq!(reply.status, 403, "{:?}\n{}", reply.body, nginx.error_log());
    // The same body on a route with the adapter's own limit: scored and passed.
    let reply = send(nginx.addr, at("shop.test", Method::POST, "/comments", &benign)).await;
    assert_eq!(reply.status, 200, "{:?}\n{}", reply.body, nginx.error_log());
    // A short body on /upload: scored as usual (an attack is still blocked, a clean one passes).
    assert_eq!(send(nginx.addr, at("shop.test", Method::POST, "/upload", "comment=hello")).await.status, 200);
    let attack = format!("comment={SCRIPT}");
    assert_eq!(send(nginx.addr, at("shop.test", Method::POST, "/upload", &attack)).await.status, 403);
}
