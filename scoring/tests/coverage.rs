//! Coverage: every byte of the request is scored (issue 11, findings 1, 2 and 10). Padding past
//! the field cap, headers that used to be skipped, and case-sensitive serialization magic.

mod common;

use base64::Engine as _;
use common::{engine_with_models, patterns_only};
use scoring::detectors::SQLI;
use scoring::fields::{FieldKind, FieldLimits, Fields};
use scoring::patterns::{rules::load_rules, Hits, PatternStage};
use scoring::views::{ViewKind, Views};
use scoring::{Engine, EngineConfig, ScoreInput};

fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
}

fn padding(n: usize) -> String {
    vec!["a"; n].join("&")
}

#[test]
fn a_payload_after_the_field_cap_is_scored() {
    let engine = patterns_only();
    for pad in [1_023, 1_024, 1_100, 5_000] {
        let text = format!("GET /search?{}&q=%3Cscript%3Ealert(1)%3C/script%3E\n", padding(pad));
        let r = engine.score_patterns(&ScoreInput { request_text: &text, headers: &[] });
        assert_eq!(r.detector, "xss", "{pad} padding fields: {r:?}");
        assert!(r.partial.is_empty(), "{:?}", r.partial);
    }
}

#[test]
fn a_header_after_a_padded_query_is_scored() {
    let engine = patterns_only();
    let text = format!("GET /search?{}\n", padding(1_100));
    let hs = headers(&[("User-Agent", "<script>alert(1)</script>")]);
    let r = engine.score_patterns(&ScoreInput { request_text: &text, headers: &hs });
    assert_eq!(r.detector, "xss", "{r:?}");
}

#[test]
fn a_json_attack_after_1100_array_items_is_scored() {
    let engine = patterns_only();
    let items = vec!["\"a\""; 1_100].join(",");
    let text = format!("POST /api\n{{\"items\":[{items}],\"q\":\"<img src=x onerror=alert(1)>\"}}");
    let hs = headers(&[("Content-Type", "application/json")]);
    let r = engine.score_patterns(&ScoreInput { request_text: &text, headers: &hs });
    assert_eq!(r.detector, "xss", "{r:?}");
}

#[tokio::test]
async fn a_form_sqli_after_1100_padding_fields_is_scored() {
    let engine = engine_with_models();
    let text = format!("POST /login\n{}&user=admin%27+OR+1%3D1--+&pass=x", padding(1_100));
    let hs = headers(&[("Content-Type", "application/x-www-form-urlencoded")]);
    let r = engine.score_all(&ScoreInput { request_text: &text, headers: &hs }).await;
    assert_eq!(r.detector, "sqli", "{r:?}");
    assert!(r.score > engine.threshold());
}

#[test]
fn overflow_chunks_stay_bounded_and_overlap_long_values() {
    let limits = FieldLimits { max_fields: 4, ..Default::default() };
    let mut fields = Fields::with_limits(limits);
    for i in 0..4 {
        fields.push(FieldKind::QueryValue, "k", &i.to_string());
    }
    for _ in 0..3_000 {
        fields.push(FieldKind::QueryValue, "a", "1");
    }
    let long = format!("{}<script>{}", "x".repeat(4_090), "y".repeat(10_000));
    fields.push(FieldKind::BodyValue, "", &long);
    let overflow: Vec<&str> = fields.iter().filter(|f| f.kind == FieldKind::Overflow).map(|f| f.value).collect();
    assert!(overflow.iter().all(|v| v.len() <= 4_096), "chunks are bounded");
    assert!(overflow.iter().any(|v| v.contains("<script>")), "a payload cut by a chunk edge is whole in the next chunk");
    assert_eq!(overflow.iter().filter(|v| v.contains("a=1")).map(|v| v.matches("a=1").count()).sum::<usize>(), 3_000);
    assert!(!fields.arena_capped);
}

#[test]
fn the_arena_cap_is_reported_as_partial() {
    let engine = Engine::new(EngineConfig {
        models_dir: None,
        limits: FieldLimits { max_arena_bytes: 1_000, ..Default::default() },
        ..Default::default()
    })
    .unwrap();
    let text = format!("POST /x\n{}", "lorem ipsum ".repeat(200));
    let r = engine.score_patterns(&ScoreInput { request_text: &text, headers: &[] });
    assert_eq!(r.partial, ["arena-cap"]);
    let r = engine.score_patterns(&ScoreInput { request_text: "GET /x?q=hello\n", headers: &[] });
    assert!(r.partial.is_empty());
}

#[test]
fn decoding_past_the_round_bound_is_reported_as_partial() {
    let engine = patterns_only();
    // Percent-encoding whose `%` is a JS escape whose backslash is escaped again, six times:
    // each layer needs one more decode round than decode_deep runs.
    let mut payload = "%3Cscript%3E".replace('%', "\\x25");
    for _ in 0..6 {
        payload = payload.replace('\\', "\\x5c");
    }
    let mut decoded = String::new();
    assert!(scoring::normalize::decode_deep_bounded(&payload, &mut decoded).bound_hit, "{decoded}");
    let text = format!("GET /x?q={}\n", payload.replace('\\', "%5C"));
    let r = engine.score_patterns(&ScoreInput { request_text: &text, headers: &[] });
    assert!(r.partial.iter().any(|p| p == "decode-rounds"), "{r:?}");
    let r = engine.score_patterns(&ScoreInput { request_text: "GET /x?q=%253Cb%253E\n", headers: &[] });
    assert!(r.partial.is_empty(), "{r:?}");
}

#[test]
fn formerly_skipped_headers_carry_pattern_attacks() {
    let engine = patterns_only();
    let ognl = "%{(#_='multipart/form-data').(#cmd='id').(#p=new java.lang.ProcessBuilder(#cmd)).(#p.start())}";
    for (name, value, detector) in [
        ("Content-Type", ognl, "ssti"),
        ("Cache-Control", "<script>alert(1)</script>", "xss"),
        ("Host", "<script>alert(1)</script>", "xss"),
        ("Sec-Fetch-Dest", "<img src=x onerror=alert(1)>", "xss"),
        ("Accept", "../../../../etc/passwd", "path-traversal"),
        ("Cookie", "<script>alert(1)</script>=1", "xss"),
    ] {
        let hs = headers(&[(name, value)]);
        let r = engine.score_patterns(&ScoreInput { request_text: "GET /\n", headers: &hs });
        assert_eq!(r.detector, detector, "{name}: {value}: {r:?}");
    }
    let benign = headers(&[
        ("Content-Type", "application/json; charset=utf-8"),
        ("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
        ("Accept-Language", "en-US,en;q=0.5"),
        ("Cache-Control", "max-age=0"),
        ("Host", "localhost:8080"),
        ("Sec-Fetch-Site", "same-origin"),
        ("Sec-Ch-Ua", "\"Chromium\";v=\"118\", \"Google Chrome\";v=\"118\", \"Not=A?Brand\";v=\"99\""),
        ("If-None-Match", "W/\"1a2b-3c4d\""),
    ]);
    let r = engine.score_patterns(&ScoreInput { request_text: "GET /\n", headers: &benign });
    assert_eq!(r.score, 0.0, "{r:?}");
}

#[tokio::test]
async fn sqli_in_formerly_skipped_headers_reaches_the_model() {
    let engine = engine_with_models();
    let basic = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("admin' OR '1'='1' -- :secret"));
    for (name, value) in [
        ("Accept-Language", "en' UNION SELECT password FROM users--"),
        ("If-None-Match", "\"1' OR 1=1-- \""),
        ("Authorization", basic.as_str()),
    ] {
        let hs = headers(&[(name, value)]);
        let r = engine.score_all(&ScoreInput { request_text: "GET /\n", headers: &hs }).await;
        assert!(r.breakdown.get(SQLI) > engine.threshold(), "{name}: {value}: {r:?}");
    }
}

/// What the model reads is not diluted or cut away by the views: an injection as one segment
/// of a routed path (read whole, the route's words dilute it), and an injection behind a `/*`
/// the application's string literal swallows (the decoded view strips `/* ... */` and an
/// unterminated `/*` to the end; to the database inside a literal it is no comment).
#[tokio::test]
async fn sqli_in_a_path_segment_or_behind_a_literal_comment_reaches_the_model() {
    let engine = engine_with_models();
    for text in [
        "GET /products/1'%20or%20'1'='1/reviews\n",
        "GET /api/v2/orders/9%20union%20select%20username,password%20from%20users--%20-/items\n",
        "GET /search?q=x/*'%20or%201=1--\n",
        "GET /search?q=/*'%20union%20select%20password%20from%20users--%20*/\n",
        "GET /search?q=/*%2527%2520union%2520select%2520password%2520from%2520users--\n",
    ] {
        let r = engine.score_all(&ScoreInput { request_text: text, headers: &[] }).await;
        assert!(r.breakdown.get(SQLI) > engine.threshold(), "{text}: {r:?}");
    }
}

/// Seeded xorshift: the same blobs on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Deserialization hits on `count` random base64 blobs (64 B – 64 KiB), each a JSON value.
fn deserialization_hits(stage: &PatternStage, count: usize) -> usize {
    let mut rng = Rng(0x5eed_1234_abcd_9876);
    let deser = scoring::detectors::detector_id("deserialization").unwrap();
    let mut hits_total = 0;
    for _ in 0..count {
        let len = 64 + (rng.next() % (64 * 1024 - 64)) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let blob = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let mut fields = Fields::default();
        fields.push(FieldKind::BodyValue, "file", &blob);
        let views = Views::build(&fields);
        let mut hits = Hits::default();
        stage.scan(&views.plain, ViewKind::Plain, &mut hits);
        stage.scan(&views.decoded, ViewKind::Decoded, &mut hits);
        hits_total += usize::from(hits.best[deser].is_some());
    }
    hits_total
}

/// `deserialization:python-pickle` as it was before the case-sensitive flag.
const OLD_PICKLE: &str = r"(?:\bc(?:os|posix|nt|subprocess|builtins|__builtin__)\n(?:system|popen|exec|eval|getattr|check_output)\n|\bcos\\nsystem\\n|gASV[A-Za-z0-9+/]{10,}|\bcposix\nsystem)";

#[test]
fn random_base64_uploads_are_not_serialized_objects() {
    const BLOBS: usize = 300;
    // Before: every rule caseless, and the pickle rule as it was.
    let caseless: Vec<_> = load_rules(None)
        .unwrap()
        .into_iter()
        .map(|mut r| {
            r.case_sensitive = false;
            if r.reason == "deserialization:python-pickle" {
                r.pattern = OLD_PICKLE.to_string();
            }
            r
        })
        .collect();
    let before = deserialization_hits(&PatternStage::from_rules(caseless).unwrap(), BLOBS);
    let after = deserialization_hits(&PatternStage::new(None).unwrap(), BLOBS);
    println!("random base64 blobs (64 B - 64 KiB, n={BLOBS}) flagged as deserialization: caseless {before} ({:.1}%), case-sensitive {after} ({:.1}%)",
        before as f64 * 100.0 / BLOBS as f64, after as f64 * 100.0 / BLOBS as f64);
    assert!(after * 100 <= BLOBS, "at most 1% of random blobs: {after}/{BLOBS}");
    assert!(before > after, "the flag is what removes them: {before} vs {after}");

    // The real magic still matches, in its own case only.
    let engine = patterns_only();
    // A protocol-4 pickle as Python writes it: PROTO 4, FRAME with an 8-byte length, then the
    // GLOBAL posix.system.
    let pickle = base64::engine::general_purpose::STANDARD
        .encode(b"\x80\x04\x95\x1f\x00\x00\x00\x00\x00\x00\x00\x8c\x05posix\x94\x8c\x06system\x94\x93");
    for (value, caught) in [
        (pickle.as_str(), true),
        ("rO0ABXNyABFqYXZhLnV0aWwuSGFzaE1hcA", true),
        ("AAEAAAD/////AQAAAAAAAAAMAgAAAF", true),
        ("ro0abxnyabfqyxzhlnv0awwusgfzae1hca", false),
        ("gasvlqaaaaaaaacmbxbvc2l4lg", false),
    ] {
        let text = format!("POST /up\n{{\"file\":\"{value}\"}}");
        let hs = headers(&[("Content-Type", "application/json")]);
        let r = engine.score_patterns(&ScoreInput { request_text: &text, headers: &hs });
        assert_eq!(r.detector == "deserialization", caught, "{value}: {r:?}");
    }
}
