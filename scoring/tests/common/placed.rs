//! One attack value in the placements the red-team tests use (a query parameter, a form field
//! and a JSON string leaf), scored by the patterns-only engine.
#![allow(dead_code)]

use scoring::ScoreInput;

use super::patterns_only;

/// Every byte but ASCII letters and digits percent-encoded, as a browser's form would send it.
pub fn encode(value: &str) -> String {
    value.bytes().map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") }).collect()
}

/// `value` as a query parameter, a form field and a JSON string leaf.
pub fn placements(value: &str) -> Vec<(String, Vec<(String, String)>)> {
    let json = serde_json::json!({ "name": value, "id": 7 }).to_string();
    let content_type = |ct: &str| vec![("content-type".to_string(), ct.to_string())];
    vec![
        (format!("GET /export?name={}\n", encode(value)), Vec::new()),
        (format!("POST /export\nname={}&id=7", encode(value)), content_type("application/x-www-form-urlencoded")),
        (format!("POST /export\n{json}"), content_type("application/json")),
    ]
}

/// Each value is flagged with `reason` above the threshold at level 1 in every placement.
pub fn assert_flagged(reason: &str, values: &[&str]) {
    let engine = patterns_only();
    for value in values {
        for (text, headers) in placements(value) {
            let r = engine.score_patterns(&ScoreInput { request_text: &text, headers: &headers });
            assert_eq!(r.reason, reason, "{text:?}: {r:?}");
            assert!(r.score > engine.threshold(), "{text:?}: {r:?}");
        }
    }
}

/// No value is flagged at level 1 in any placement.
pub fn assert_passed(values: &[&str]) {
    let engine = patterns_only();
    for value in values {
        for (text, headers) in placements(value) {
            let r = engine.score_patterns(&ScoreInput { request_text: &text, headers: &headers });
            assert!(r.score <= engine.threshold(), "{text:?} is benign: {r:?}");
        }
    }
}
