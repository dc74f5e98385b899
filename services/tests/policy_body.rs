//! Per-scope body limits over real sockets: the `rampart` executable (flag limit 1 KiB) with a
//! policy whose routes set their own `body_limit` and `oversize_body`. The same body is killed
//! for its size on one route, passed as partial on another, scored whole on the default route,
//! and a route that raises the limit scores an attack the flag's limit would have left unread.

mod common;
mod policy_fixtures;

use common::proxy::{send, upstream};
use policy_fixtures::{post_form, start_policy_proxy, test_dir, wait_for_audit_lines, write_policy, SCRIPT};

const POLICY: &str = r#"
[defaults]
kill_response = "forbidden"

[[scope]]
name = "small-block"
path = "/small-block"
body_limit = 64
oversize_body = "block"

[[scope]]
name = "small-pass"
path = "/small-pass"
body_limit = 64
oversize_body = "partial"
on_partial = "pass"

[[scope]]
name = "small-partial"
path = "/small-partial"
body_limit = 64
oversize_body = "partial"

[[scope]]
name = "big"
path = "/big"
body_limit = 4096
"#;

/// A form whose attack sits after `pad` bytes of benign text.
fn form_with_tail_attack(pad: usize) -> String {
    format!("pad={}&comment={SCRIPT}", "a".repeat(pad))
}

#[tokio::test(flavor = "multi_thread")]
async fn each_route_reads_and_judges_its_own_body_limit() {
    let app = upstream().await;
    let dir = test_dir("body");
    write_policy(&dir.join("policy.toml"), POLICY);
    let audit = dir.join("audit.jsonl");
    let audit_arg = audit.to_string_lossy().into_owned();
    let proxy = start_policy_proxy(&dir, app.addr, &["--audit-log", &audit_arg, "--body-limit", "1024"]);
    let addr = proxy.addr;
    let attack = form_with_tail_attack(300);
    let benign = format!("pad={}&comment=hello", "a".repeat(300));

    // The default route (flag limit 1 KiB) reads the whole body and finds the attack.
    assert_eq!(send(addr, post_form("shop.test", "/default", &attack)).await.status, 403);
    assert_eq!(send(addr, post_form("shop.test", "/default", &benign)).await.status, 200);
    // 64 bytes and `block`: over the limit is a kill, attack or not.
    assert_eq!(send(addr, post_form("shop.test", "/small-block", &benign)).await.status, 403);
    assert_eq!(send(addr, post_form("shop.test", "/small-block", "comment=hello")).await.status, 200, "under the limit: scored");
    // 64 bytes, `partial`, `on_partial = "pass"`: forwarded whole, marked partial.
    let before = app.count();
    let reply = send(addr, post_form("shop.test", "/small-pass", &attack)).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(app.count(), before + 1);
    let seen = app.last();
    assert_eq!(seen.body.len(), attack.len(), "the whole body goes upstream");
    let partial = seen.headers.get("x-waf-partial").and_then(|v| v.to_str().ok()).unwrap_or("");
    assert!(partial.contains("body-limit"), "the upstream is told the tail was not scored: {:?}", seen.headers);
    // `partial` with the default `on_partial = "block"`: killed as partial.
    assert_eq!(send(addr, post_form("shop.test", "/small-partial", &benign)).await.status, 403);

    // An attack after 2000 bytes: past the flag's 1 KiB (score-prefix forwards the unread tail,
    // as WAF_OVERSIZE_BODY documents) but inside /big's 4 KiB, which reads and kills it.
    let deep = form_with_tail_attack(2000);
    assert_eq!(send(addr, post_form("shop.test", "/default", &deep)).await.status, 200);
    assert_eq!(send(addr, post_form("shop.test", "/big", &deep)).await.status, 403);

    let lines = wait_for_audit_lines(&audit, 8);
    let reasons: Vec<(String, String, String)> = lines
        .iter()
        .map(|l| (l["path"].as_str().unwrap_or("").to_string(), l["reason"].as_str().unwrap_or("").to_string(), l["scope"].to_string()))
        .collect();
    let reason_of = |path: &str, nth: usize| reasons.iter().filter(|(p, _, _)| p == path).nth(nth).map(|(_, r, _)| r.clone());
    assert_eq!(reason_of("/small-block", 0).as_deref(), Some("body-limit:exceeded"), "{reasons:?}");
    assert_eq!(reason_of("/small-partial", 0).as_deref(), Some("partial:body-limit"), "{reasons:?}");
    assert!(reason_of("/big", 0).is_some_and(|r| r.starts_with("xss:")), "{reasons:?}");
    assert!(reason_of("/default", 0).is_some_and(|r| r.starts_with("xss:")), "{reasons:?}");
    println!("audit reasons: {reasons:?}");
}

#[test]
fn policy_check_prints_the_body_settings_and_rejects_a_bad_limit() {
    let dir = test_dir("body-check");
    let file = dir.join("policy.toml");
    write_policy(&file, POLICY);
    let rampart = env!("CARGO_BIN_EXE_rampart");
    let out =
        std::process::Command::new(rampart).args(["policy", "explain"]).arg(&file).args(["POST", "http://x/small-pass"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("body_limit: 64 bytes") && text.contains("oversize_body: partial"), "{text}");
    write_policy(&file, "[[scope]]\npath = \"/a\"\nbody_limit = 0\n");
    let out = std::process::Command::new(rampart).args(["policy", "check"]).arg(&file).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success() && text.contains("line 3") && text.contains("body_limit 0"), "{text}");
    write_policy(&file, "[[scope]]\npath = \"/a\"\noversize_body = \"drop\"\n");
    let out = std::process::Command::new(rampart).args(["policy", "check"]).arg(&file).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success() && text.contains("line 3") && text.contains("score-prefix"), "{text}");
}
