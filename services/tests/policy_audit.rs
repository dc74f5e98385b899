//! The audit log for SIEMs over real sockets: the `rampart` executable writes its audit log to
//! a file; every line is validated against docs/audit-event.schema.json, and each attack's
//! line names the field it was found in, its rule, the host, the user agent and the policy
//! scope that decided.

mod common;
mod policy_fixtures;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Request};
use serde_json::Value;

use common::proxy::{send, upstream};
use common::workspace_root;
use policy_fixtures::{get_at, post_form, start_policy_proxy, test_dir, wait_for_audit_lines, write_policy, SCRIPT};

const POLICY: &str = r#"
[defaults]
kill_response = "forbidden"

[[scope]]
name = "shop-search"
host = "shop.test"
path = "/search"
"#;

const UA: &str = "audit-test/1.0 (SIEM)";

fn request(method: Method, path: &str, headers: &[(&str, &str)], body: &str) -> Request<Full<Bytes>> {
    let mut builder = Request::builder().method(method).uri(path).header("host", "shop.test").header("user-agent", UA);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(Full::new(Bytes::from(body.to_string()))).unwrap()
}

fn with_ua(mut req: Request<Full<Bytes>>) -> Request<Full<Bytes>> {
    req.headers_mut().insert("user-agent", UA.parse().unwrap());
    req
}

#[tokio::test(flavor = "multi_thread")]
async fn every_audit_line_fits_the_schema_and_names_field_rule_and_scope() {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(workspace_root().join("docs/audit-event.schema.json")).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");

    let app = upstream().await;
    let dir = test_dir("audit");
    write_policy(&dir.join("policy.toml"), POLICY);
    let audit = dir.join("audit.jsonl");
    let audit_arg = audit.to_string_lossy().into_owned();
    let proxy = start_policy_proxy(&dir, app.addr, &["--audit-log", &audit_arg]);
    let addr = proxy.addr;
    let tag = "<script>x</script>";

    let mut ua_get = get_at("shop.test", &format!("/search?page=1&q={SCRIPT}"));
    ua_get.headers_mut().insert("user-agent", UA.parse().unwrap());
    // (path, what the request is, the field its line must name)
    let cases: Vec<(&str, Request<Full<Bytes>>, &str)> = vec![
        ("/search", ua_get, "query:q"),
        ("/form", with_ua(post_form("shop.test", "/form", &format!("title={SCRIPT}"))), "body:title"),
        (
            "/json",
            request(Method::POST, "/json", &[("content-type", "application/json")], &format!("{{\"page\":{{\"text\":\"{tag}\"}}}}")),
            "body:text",
        ),
        ("/header", request(Method::GET, "/header", &[("x-note", tag)], ""), "header:x-note"),
        ("/cookie", request(Method::GET, "/cookie", &[("cookie", "theme=dark; prefs=<script>x</script>")], ""), "cookie:prefs"),
        ("/p/%3Cscript%3Ex%3C/script%3E", request(Method::GET, "/p/%3Cscript%3Ex%3C/script%3E", &[], ""), "path"),
    ];
    let mut expected = Vec::new();
    for (path, req, field) in cases {
        let reply = send(addr, req).await;
        assert_eq!(reply.status, 403, "{path} is killed: {:?}", reply.body);
        expected.push((path, field));
    }
    assert_eq!(send(addr, request(Method::GET, "/search?q=blue+shoes", &[], "")).await.status, 200);

    let lines = wait_for_audit_lines(&audit, expected.len() + 1);
    for line in &lines {
        let errors: Vec<String> = validator.iter_errors(line).map(|e| format!("{} at {}", e, e.instance_path())).collect();
        assert!(errors.is_empty(), "an audit line breaks the schema: {errors:?}\n{line}");
        assert_eq!(line["event_id"], line["request_id"]);
        assert_eq!(line["host"], "shop.test");
    }
    for (path, field) in expected {
        let line = lines.iter().find(|l| l["path"] == path).unwrap_or_else(|| panic!("no line for {path}: {lines:?}"));
        assert_eq!(line["action"], "active_kill", "{line}");
        assert_eq!(line["field"], field, "{line}");
        assert_eq!(line["detector"], "xss", "{line}");
        assert!(line["rule"].as_str().is_some_and(|r| !r.is_empty() && line["reason"].as_str().unwrap().contains(r)), "{line}");
        let top = line["top_detectors"].as_array().unwrap();
        assert_eq!(top[0]["detector"], "xss", "{line}");
        assert_eq!(top[0]["field"], field, "{line}");
        assert_eq!(line["user_agent"], UA, "{line}");
        let scope = if path == "/search" { "shop-search" } else { "defaults" };
        assert_eq!(line["scope"], scope, "{line}");
    }
    let clean = lines.iter().find(|l| l["query"] == "q=blue+shoes").expect("the benign request has a line");
    assert_eq!((&clean["action"], &clean["field"], &clean["rule"]), (&Value::from("passed"), &Value::from(""), &Value::from("")));
    assert_eq!(clean["top_detectors"], Value::Array(vec![]));
    println!("{} audit lines valid against docs/audit-event.schema.json; sample: {}", lines.len(), lines[0]);
}
