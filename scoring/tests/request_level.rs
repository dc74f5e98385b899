//! Request-level findings (issue 12): shapes no single field shows. Request smuggling through
//! the framing headers read together (one of them, `Content-Length: 5`, is exempt from scoring
//! and is no field at all), and GraphQL batching as a JSON array of documents, each harmless
//! on its own.

mod common;

use common::patterns_only;
use scoring::ScoreInput;

fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
}

fn reason_of(request_text: &str, pairs: &[(&str, &str)]) -> String {
    let hs = headers(pairs);
    let r = patterns_only().score_patterns(&ScoreInput { request_text, headers: &hs });
    assert!(r.score > patterns_only().threshold() || r.reason.is_empty(), "{r:?}");
    r.reason
}

const SMUGGLED: &str = "POST /api/cart\n0\r\n\r\nGET /admin HTTP/1.1\r\nHost: localhost\r\n\r\n";

#[test]
fn smuggling_shapes_are_protocol_findings() {
    for (pairs, expected) in [
        (vec![("Content-Length", "6"), ("Transfer-Encoding", "chunked")], "protocol:te-and-cl"),
        (vec![("Content-Length", "6"), ("Content-Length", "44")], "protocol:content-length-conflict"),
        (vec![("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")], "protocol:transfer-encoding-repeated"),
        (vec![("Transfer-Encoding ", "chunked")], "protocol:framing-header-name"),
        (vec![("Content_Length", "44")], "protocol:framing-header-name"),
        (vec![("Transfer-Encoding", "chunked ")], "protocol:transfer-encoding"),
        (vec![("Transfer-Encoding", "\tchunked")], "protocol:transfer-encoding"),
        (vec![("Transfer-Encoding", "xchunked")], "protocol:transfer-encoding"),
        (vec![("Transfer-Encoding", "chunked, identity")], "protocol:transfer-encoding"),
        (vec![("Content-Length", "6, 44")], "protocol:content-length"),
    ] {
        let mut all = vec![("Host", "shop.example.com"), ("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0")];
        all.extend(pairs.iter().copied());
        assert_eq!(reason_of(SMUGGLED, &all), expected, "{pairs:?}");
    }
}

#[test]
fn ordinary_framing_is_clean() {
    let body = "POST /api/cart\n{\"item\":42}";
    assert_eq!(reason_of(body, &[("Content-Length", "11"), ("Content-Type", "application/json")]), "");
    assert_eq!(reason_of(body, &[("Transfer-Encoding", "chunked"), ("Content-Type", "application/json")]), "");
}

fn batch(n: usize) -> String {
    let items: Vec<String> = (0..n)
        .map(|k| format!("{{\"operationName\":\"q{k}\",\"variables\":{{\"id\":{k}}},\"query\":\"query q{k}($id: ID!) {{ user(id: $id) {{ id name }} }}\"}}"))
        .collect();
    format!("POST /graphql\n[{}]", items.join(","))
}

#[test]
fn a_json_array_of_many_documents_is_batching() {
    let json = [("Content-Type", "application/json")];
    assert_eq!(reason_of(&batch(11), &json), "graphql:batched-operations");
    assert_eq!(reason_of(&batch(200), &json), "graphql:batched-operations");
    // Apollo's BatchHttpLink sends at most 10 operations per batch by default.
    assert_eq!(reason_of(&batch(10), &json), "");
    assert_eq!(reason_of(&batch(2), &json), "");
    // Anonymous documents count one operation each.
    let anon: Vec<String> = (0..12).map(|k| format!("{{\"query\":\"{{ product(id: {k}) {{ price }} }}\"}}")).collect();
    assert_eq!(reason_of(&format!("POST /graphql\n[{}]", anon.join(",")), &json), "graphql:batched-operations");
}

#[test]
fn alias_batching_in_one_document() {
    let aliases: String =
        (0..25).map(|k| format!("a{k}: login(input: {{email: \\\"a@b.c\\\", password: \\\"pw{k}\\\"}}) {{ token }} ")).collect();
    let body = format!("POST /graphql\n{{\"query\":\"mutation {{ {aliases} }}\"}}");
    assert_eq!(reason_of(&body, &[("Content-Type", "application/json")]), "graphql:alias-overloading");
}
