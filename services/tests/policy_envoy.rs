//! The operator policy behind a real Envoy (deploy/envoy/envoy.yaml, BUFFERED bodies) asking
//! `rampart extproc --policy`: a route's `body_limit` and `oversize_body` decide for the body
//! Envoy sends, and host scopes follow `:authority`.

mod common;
mod policy_fixtures;

use clap::Parser;
use common::envoy::Envoy;
use common::proxy::{send, upstream};
use hyper::Method;
use policy_fixtures::{request_at as at, test_dir, write_policy, DOOR_POLICY as POLICY, SCRIPT};
use services::run::start_extproc;

#[tokio::test(flavor = "multi_thread")]
async fn body_limits_and_host_scopes_apply_to_ext_proc() {
    let dir = test_dir("envoy");
    let policy = dir.join("policy.toml");
    write_policy(&policy, POLICY);
    let argv = ["rampart", "extproc", "--extproc-addr", "127.0.0.1:0", "--extproc-http-addr", "127.0.0.1:0", "--audit-log", "off"];
    let argv = argv.into_iter().chain(["--mode", "active", "--no-models", "--policy", policy.to_str().unwrap()]);
    let extproc = match services::cli::Cli::parse_from(argv).command {
        services::cli::Command::Extproc(args) => start_extproc(&args).expect("ext_proc starts"),
        _ => unreachable!(),
    };
    let app = upstream().await;
    let envoy = Envoy::start(extproc.grpc.addr, app.addr).await;
    let addr = envoy.addr;
    let benign = format!("pad={}&comment=hello", "a".repeat(300));

    // Over /upload's 64 bytes with `block`: refused; the same body elsewhere: scored, passed.
    let reply = send(addr, at("shop.test", Method::POST, "/upload", &benign)).await;
    assert_eq!(reply.status, 403, "{:?}\n{}", reply.body, envoy.log_text());
    let reply = send(addr, at("shop.test", Method::POST, "/comments", &benign)).await;
    assert_eq!(reply.status, 200, "{:?}\n{}", reply.body, envoy.log_text());
    assert_eq!(send(addr, at("shop.test", Method::POST, "/upload", "comment=hello")).await.status, 200);
    // An attack past 64 bytes on the default route is read and killed.
    let deep = format!("pad={}&comment={SCRIPT}", "a".repeat(300));
    assert_eq!(send(addr, at("shop.test", Method::POST, "/comments", &deep)).await.status, 403);

    // :authority picks the host scope: shadow passes what active kills.
    let attack = format!("/page?name={SCRIPT}");
    assert_eq!(send(addr, at("a.shadow.test", Method::GET, &attack, "")).await.status, 200);
    assert_eq!(send(addr, at("shop.test", Method::GET, &attack, "")).await.status, 403);
}
