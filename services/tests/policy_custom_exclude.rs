//! Exclusions naming a custom rule's id, over real sockets: the `rampart proxy` executable
//! with a policy whose `[[rules]]` virtual patch is excluded in one parameter of one route and
//! everywhere on another, exactly as a built-in rule would be.

mod common;
mod policy_fixtures;

use common::proxy::{send, upstream};
use policy_fixtures::{get_at, post_form, start_policy_proxy, test_dir, write_policy};

const POLICY: &str = r#"
[defaults]
kill_response = "forbidden"

[[rules]]
id = "vp-export"
literal = "zzqvirtual"
score = 0.9

[[scope]]
name = "export-q"
path = "/export"
exclusions = [{ rule = "vp-export", field = "query:q" }, { rule = "vp-export", field = "body:note" }]

[[scope]]
name = "reports"
path = "/reports"
exclusions = [{ rule = "vp-export" }]
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_custom_rule_is_excluded_by_id_in_one_field_or_a_whole_scope() {
    let app = upstream().await;
    let dir = test_dir("custom-exclude");
    write_policy(&dir.join("policy.toml"), POLICY);
    let proxy = start_policy_proxy(&dir, app.addr, &[]);
    let addr = proxy.addr;
    let get = |path: &str| get_at("shop.test", path);

    // In force everywhere else.
    assert_eq!(send(addr, get("/search?q=zzqvirtual")).await.status, 403);
    // Excluded in `q` (and the form field `note`) on /export only.
    assert_eq!(send(addr, get("/export?q=zzqvirtual")).await.status, 200);
    assert_eq!(app.last().uri, "/export?q=zzqvirtual");
    assert_eq!(send(addr, post_form("shop.test", "/export", "note=zzqvirtual")).await.status, 200);
    // The same value in another parameter of the route, or in a header: still killed.
    assert_eq!(send(addr, get("/export?name=zzqvirtual")).await.status, 403);
    assert_eq!(send(addr, get("/export?q=zzqvirtual&name=zzqvirtual")).await.status, 403);
    assert_eq!(send(addr, post_form("shop.test", "/export", "title=zzqvirtual")).await.status, 403);
    let mut header = get("/export?q=1");
    header.headers_mut().insert("x-note", "zzqvirtual".parse().unwrap());
    assert_eq!(send(addr, header).await.status, 403);
    // Excluded everywhere on /reports.
    assert_eq!(send(addr, get("/reports?q=zzqvirtual&name=zzqvirtual")).await.status, 200);
}
