//! Operator policy over real sockets: the `rampart` executable with a policy file in front of
//! a real upstream; per-host mode, per-route settings, a per-route exclusion of one rule for
//! one parameter, and the `policy check` / `policy explain` commands.

mod common;
mod policy_fixtures;

use clap::Parser;
use std::process::Command;

use common::proxy::{send, upstream};
use policy_fixtures::{get_at, post_form, start_policy_proxy, test_dir, write_policy, SCRIPT};

const POLICY: &str = r#"
# Flags say active; the file answers kills with a 403 so the test can read them.
[defaults]
kill_response = "forbidden"

[[scope]]
name = "shadow-hosts"
host = "*.shadow.test"
mode = "shadow"

[[scope]]
name = "exact-host-active"
host = "live.shadow.test"
mode = "active"

[[scope]]
name = "search-q"
path = "/search"
methods = ["GET", "POST"]
exclusions = [{ rule = "script-tag", field = "query:q" }, { rule = "script-tag", field = "body:comment" }]

[[scope]]
name = "static-off"
path = "/static/**"
mode = "off"

[[scope]]
name = "legacy-reset"
path = "/legacy"
kill_response = "reset"
"#;

#[tokio::test(flavor = "multi_thread")]
async fn scopes_and_a_field_exclusion_decide_per_request() {
    let app = upstream().await;
    let dir = test_dir("scopes");
    write_policy(&dir.join("policy.toml"), POLICY);
    let proxy = start_policy_proxy(&dir, app.addr, &[]);
    let addr = proxy.addr;

    // The excluded rule in the excluded parameter on the excluded route: forwarded.
    let reply = send(addr, get_at("shop.test", &format!("/search?q={SCRIPT}"))).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(app.last().uri, format!("/search?q={SCRIPT}"));
    // The same payload in another parameter of the same route: killed.
    let reply = send(addr, get_at("shop.test", &format!("/search?name={SCRIPT}"))).await;
    assert_eq!(reply.status, 403);
    assert_eq!(reply.headers["x-waf-killed"], "true");
    // The same parameter on another route: killed.
    let reply = send(addr, get_at("shop.test", &format!("/profile?q={SCRIPT}"))).await;
    assert_eq!(reply.status, 403);
    // A body parameter is a field too.
    let reply = send(addr, post_form("shop.test", "/search", &format!("comment={SCRIPT}"))).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let reply = send(addr, post_form("shop.test", "/search", &format!("title={SCRIPT}"))).await;
    assert_eq!(reply.status, 403);
    // Another rule in the excluded parameter still counts.
    let reply = send(addr, get_at("shop.test", "/search?q=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E")).await;
    assert_eq!(reply.status, 403);

    // Per-host mode: a wildcard host is in shadow (forwarded, marked); the exact host beats it.
    let seen = app.count();
    let reply = send(addr, get_at("a.shadow.test:8080", &format!("/profile?q={SCRIPT}"))).await;
    assert_eq!(reply.status, 200);
    assert_eq!(app.count(), seen + 1);
    let stamped = app.last().headers;
    assert_eq!(stamped["x-waf-mode"], "shadow", "{stamped:?}");
    let reply = send(addr, get_at("live.shadow.test", &format!("/profile?q={SCRIPT}"))).await;
    assert_eq!(reply.status, 403);
    // The bare domain is not covered by `*.shadow.test`.
    assert_eq!(send(addr, get_at("shadow.test", &format!("/profile?q={SCRIPT}"))).await.status, 403);

    // `off`: forwarded unscored.
    let reply = send(addr, get_at("shop.test", &format!("/static/js/app.js?v={SCRIPT}"))).await;
    assert_eq!(reply.status, 200);
    // A route's kill style: the connection is reset, no 403.
    let reset = common::proxy::send_from(addr, None, get_at("shop.test", &format!("/legacy?q={SCRIPT}"))).await;
    assert!(reset.is_err(), "a reset, not an answer: {:?}", reset.map(|r| r.status));
    // Benign traffic everywhere passes.
    assert_eq!(send(addr, get_at("shop.test", "/search?q=blue+shoes")).await.status, 200);
}

#[test]
fn policy_check_prints_the_effective_policy_or_names_the_bad_line() {
    let dir = test_dir("check");
    let good = dir.join("good.toml");
    write_policy(&good, POLICY);
    let out = Command::new(env!("CARGO_BIN_EXE_rampart")).args(["policy", "check"]).arg(&good).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("kill_response: forbidden") && text.contains("search-q: any host, /search, GET,POST"), "{text}");

    let bad = dir.join("bad.toml");
    write_policy(&bad, "[[scope]]\npath = \"/a\"\nmode = \"blocking\"\n");
    let out = Command::new(env!("CARGO_BIN_EXE_rampart")).args(["policy", "check"]).arg(&bad).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("line 3") && err.contains("blocking") && err.contains("bad.toml"), "{err}");

    write_policy(&bad, "[[scope]]\npath = \"/a\"\nexclusions = [{ rule = \"x\", feild = \"query:q\" }]\n");
    let out = Command::new(env!("CARGO_BIN_EXE_rampart")).args(["policy", "check"]).arg(&bad).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("line 3") && err.contains("feild"), "{err}");
}

#[test]
fn policy_explain_names_the_scopes_that_apply() {
    let dir = test_dir("explain");
    let file = dir.join("policy.toml");
    write_policy(&file, POLICY);
    let explain = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_rampart")).args(["policy", "explain"]).arg(&file).args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let text = explain(&["GET", "http://a.shadow.test/search?q=1"]);
    assert!(text.contains("flags -> defaults -> shadow-hosts -> search-q"), "{text}");
    assert!(text.contains("mode: shadow") && text.contains("rule script-tag in query:q"), "{text}");
    let text = explain(&["DELETE", "/search", "--host", "live.shadow.test"]);
    assert!(text.contains("deciding scope: exact-host-active") && text.contains("exclusions: none"), "{text}");
}

/// The auth adapter judges under the same scopes: nginx's subrequest carries the adapter's own
/// Host, so the client's host arrives in X-Original-Host (deploy/nginx/auth-request.conf).
#[tokio::test(flavor = "multi_thread")]
async fn the_auth_adapter_resolves_host_scopes_from_x_original_host() {
    let dir = test_dir("auth-hosts");
    let policy = dir.join("policy.toml");
    write_policy(&policy, POLICY);
    let argv = ["rampart", "auth", "--auth-addr", "127.0.0.1:0", "--auth-metrics-addr", "127.0.0.1:0", "--audit-log", "off"];
    let policy_arg = policy.to_str().unwrap();
    let argv = argv.into_iter().chain(["--mode", "active", "--no-models", "--policy", policy_arg]);
    let auth = match services::cli::Cli::parse_from(argv).command {
        services::cli::Command::Auth(args) => services::run::start_auth(&args).expect("auth adapter starts"),
        _ => unreachable!(),
    };
    let check = |host: &str| {
        hyper::Request::builder()
            .method(hyper::Method::POST)
            .uri("/_waf/check")
            .header("host", "waf-adapter")
            .header("x-original-method", "GET")
            .header("x-original-uri", format!("/page?name={SCRIPT}"))
            .header("x-original-host", host)
            .body(http_body_util::Full::new(bytes::Bytes::new()))
            .unwrap()
    };
    // A host under the shadow wildcard: passed (200), marked as would-have-killed.
    let reply = send(auth.running.addr, check("a.shadow.test")).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    // The exact host that switches back to active: refused.
    let reply = send(auth.running.addr, check("live.shadow.test")).await;
    assert_eq!(reply.status, 403, "{:?}", reply.body);
    // No scope matches another host: the flags' active mode refuses.
    let reply = send(auth.running.addr, check("shop.test")).await;
    assert_eq!(reply.status, 403, "{:?}", reply.body);
}
