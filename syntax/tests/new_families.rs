//! The five families without a detector before issue 12 (ssi, graphql, mail-injection,
//! scanner, protocol): recall of the code checks on generated variants (per mutation), hard
//! negatives, an `#[ignore]` false-positive scan over the real benign files, and an
//! `#[ignore]` dump of the rule-backed families' variants for `rampart eval`.
//!
//! Requests are cut into fields here the way the engine does (query values, form and JSON
//! leaves, multipart part names and filenames, headers with their lower-case names), with a
//! small approximation of the decoded view, so the checks see what they would see in scoring.

use std::collections::BTreeMap;

mod new_families_support;

use evasion::{place::to_request, Carrier, Placement, Request};
use new_families_support::{decoded_view, detect, fields_of, parse_json, Field, Json};
use syntax::{checks, Input};

// ---- recall ----

fn recall(family: &str, n: usize) -> f64 {
    recall_of(family, n, |_| true)
}

/// Recall on the variants whose mutation passes `keep`.
fn recall_of(family: &str, n: usize, keep: impl Fn(&str) -> bool) -> f64 {
    let fam = evasion::family(family).expect("family registered");
    let variants: Vec<_> = evasion::sample(fam, 12, n).into_iter().filter(|v| keep(&v.mutation)).collect();
    let n = variants.len();
    let mut per_mutation: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut caught = 0;
    let mut misses = Vec::new();
    for (k, v) in variants.iter().enumerate() {
        let placement = Placement::ALL[k % Placement::ALL.len()];
        let request = to_request(v, placement);
        let hit = detect(&request, 1).iter().any(|(reason, _)| reason.starts_with(&format!("{}:", fam.detector())));
        let entry = per_mutation.entry(v.mutation.clone()).or_default();
        entry.1 += 1;
        if hit {
            entry.0 += 1;
            caught += 1;
        } else if misses.len() < 8 {
            misses.push(format!("{} [{}] {:?}", v.mutation, placement.name(), v.payload.chars().take(160).collect::<String>()));
        }
    }
    let rate = caught as f64 / n as f64;
    println!("{family}: recall {caught}/{n} = {:.1} %", rate * 100.0);
    for (m, (c, t)) in &per_mutation {
        if *c < *t || per_mutation.len() <= 30 {
            println!("  {m:<50} {c}/{t}");
        }
    }
    for m in misses {
        println!("  miss: {m}");
    }
    rate
}

#[test]
fn graphql_recall() {
    assert!(recall("graphql", 1000) >= 0.95);
}

/// CRLF under every encoding layer; the code check alone (raw breaks in a body value followed
/// by an attack-specific header are the rules' part, so they are left out here).
#[test]
fn crlf_recall() {
    assert!(recall_of("crlf", 2000, |m| !m.contains("raw-")) >= 0.95);
}

#[test]
fn mail_injection_recall() {
    assert!(recall("mail-injection", 1000) >= 0.95);
}

/// SSI is mostly rules (measured with `rampart eval`); the code check covers what the rules
/// cannot see: directives still encoded in the plain view (the decoded view drops comments).
#[test]
fn ssi_encoded_recall() {
    let encoded = |m: &str| !m.contains("esi") && m.split('+').any(|x| matches!(x, "url" | "double-url" | "url-all"));
    assert!(recall_of("ssi", 2000, encoded) >= 0.95);
}

/// Scanner is mostly rules (measured with `rampart eval`); the code check covers the marker
/// headers, whose names the rules never see.
#[test]
fn scanner_marker_header_recall() {
    assert!(recall_of("scanner", 1000, |m| m == "marker-header") >= 0.95);
}

#[test]
fn protocol_recall() {
    assert!(recall("protocol", 1000) >= 0.95);
}

// ---- hard negatives ----

fn value_request(method: &str, name: &str, value: &str) -> Request {
    let mut r = Request::new(method, "/api/x").header("Content-Type", "application/json");
    r.body = format!("{{\"{name}\":{}}}", evasion::place::json_string(value));
    r
}

#[test]
fn hard_negatives_pass_at_level_1() {
    let mut requests = vec![
        // GraphQL an application sends.
        value_request("POST", "query", "query Hero($episode: Episode, $withFriends: Boolean!) { hero(episode: $episode) { name friends @include(if: $withFriends) { name } } }"),
        value_request("POST", "query", "{ user(id: 4) { id name smallPic: profilePic(size: 64) bigPic: profilePic(size: 1024) } }"),
        value_request("POST", "query", "query { __schema { types { name } } }"),
        value_request("POST", "query", "{ __type(name: \"User\") { name fields { name type { name } } } }"),
        value_request("POST", "query", "query { viewer { ...UserParts } } fragment UserParts on User { id ...Avatar } fragment Avatar on User { avatarUrl }"),
        value_request("POST", "query", "type Query { me: User users(first: Int): [User] } type User { id: ID! name: String email: String a: String b: String c: String d: String e: String f: String g: String h: String i: String }"),
        value_request("POST", "query", "mutation CreateReview($ep: Episode!, $review: ReviewInput!) { createReview(episode: $ep, review: $review) { stars commentary } }"),
        value_request("POST", "code", "function f(a) { if (a) { for (;;) { while (x) { try { g({a: {b: {c: {d: {e: {f: {g: {h: 1}}}}}}}}) } catch (e) {} } } } }"),
        // Multi-line text and mail forms.
        value_request("POST", "message", "Hi team,\nData from last week is attached.\nQuit worrying about the deadline.\nThanks"),
        value_request("POST", "message", "Please review:\nTo: the whole team\nSubject to approval by legal"),
        value_request("POST", "to", "alice@example.com, bob@example.com"),
        value_request("POST", "address", "Flat 2\r\n10 Downing Street\r\nLondon"),
        value_request("POST", "notes", "Steps:\n1 select the file\n2 delete it\n3 close the window"),
        value_request("POST", "message", "Can you make this email sound more professional? I want it to be short and friendly.\nFrom: alice@example.com\nTo: bob@example.com\nSubject: Lunch\n\nHey Bob, want to grab lunch on Friday at noon near the office?"),
        value_request("POST", "csv", "name,email\nAlice,alice@example.com\nBob,bob@example.com"),
        value_request("POST", "code", "printf(\"From: %s\\n\", sender);\nputs(\"DATA\");"),
        // Protocol use that is normal.
        Request::new("POST", "/posts/7").header("Content-Type", "application/x-www-form-urlencoded").body("_method=delete&authenticity_token=abc"),
        Request::new("POST", "/v1/items:search").header("X-HTTP-Method-Override", "GET"),
        Request::new("POST", "/items/7").header("X-HTTP-Method-Override", "PATCH"),
        Request::new("GET", "/video.mp4").header("Range", "bytes=0-"),
        Request::new("GET", "/file.bin").header("Range", "bytes=0-499,1000-1499,-500"),
        Request::new("GET", "/").header("Connection", "keep-alive"),
        Request::new("GET", "/ws").header("Connection", "Upgrade").header("Upgrade", "websocket"),
        Request::new("POST", "/upload").header("Transfer-Encoding", "chunked"),
        Request::new("POST", "/upload").header("Content-Length", "348"),
    ];
    let multipart = "--b\r\nContent-Disposition: form-data; name=\"user[address][city]\"\r\n\r\nParis\r\n--b\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"IMG 2024 (1).jpg\"\r\n\r\nxx\r\n--b\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"résumé v1.2..final.pdf\"\r\n\r\nyy\r\n--b--\r\n";
    requests.push(Request::new("POST", "/upload").header("Content-Type", "multipart/form-data; boundary=b").body(multipart));
    requests.push(value_request("POST", "user.name", "x"));
    let mut failures = Vec::new();
    for r in &requests {
        let found = detect(r, 1);
        let own: Vec<_> = found
            .iter()
            .filter(|(reason, _)| {
                ["graphql:", "mail-injection:", "protocol:", "ssi:", "scanner:", "crlf:"].iter().any(|p| reason.starts_with(p))
            })
            .collect();
        if !own.is_empty() {
            failures.push(format!("{} {} {:?}: {:?}", r.method, r.path, r.headers, own));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn probes_count_at_level_2() {
    let r = value_request("POST", "query", "{ __schema { queryType { name } } }");
    assert!(detect(&r, 1).iter().all(|(reason, _)| !reason.starts_with("graphql:")));
    assert!(detect(&r, 2).iter().any(|(reason, _)| *reason == "graphql:schema-probe"));
}

// ---- the real benign files ----

fn data_dir() -> std::path::PathBuf {
    std::env::var("RAMPART_DATA").unwrap_or_else(|_| "/work/shared/datasets".into()).into()
}

fn rows(file: &str) -> Vec<Json> {
    let path = data_dir().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().filter_map(parse_json).collect()
}

fn text_of(row: &Json) -> String {
    row.get("text").and_then(Json::str).unwrap_or("").to_string()
}

/// The request a benign row stands for.
fn benign_requests(file: &str, row: &Json) -> Vec<Request> {
    let text = text_of(row);
    let ua = "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0";
    match file {
        "graphql_spec_examples.jsonl" => vec![
            value_request("POST", "query", &text),
            Request::new("POST", "/graphql").header("Content-Type", "application/graphql").body(&text),
        ],
        "uap_core_user_agents.jsonl" => vec![Request::new("GET", "/").header("User-Agent", &text)],
        "sharegpt_user_messages.jsonl" => vec![value_request("POST", "content", &text)],
        "har_fixture_parts.jsonl" => match row.get("part").and_then(Json::str).unwrap_or("") {
            "url" => {
                let path = text.split_once("://").map(|(_, rest)| rest.find('/').map_or("/", |i| &rest[i..])).unwrap_or(&text);
                vec![Request::new("GET", path).header("User-Agent", ua)]
            }
            "query" => vec![Request::new("GET", &format!("/x?{text}"))],
            "cookie" => vec![Request::new("GET", "/").header("Cookie", &text)],
            "user-agent" => vec![Request::new("GET", "/").header("User-Agent", &text)],
            "referer" => vec![Request::new("GET", "/").header("Referer", &text)],
            _ => vec![
                Request::new("POST", "/x").header("Content-Type", "application/json").body(&text),
                Request::new("POST", "/x").header("Content-Type", "application/x-www-form-urlencoded").body(&text),
            ],
        },
        _ => {
            // Whole-request files.
            let mut r =
                Request::new(row.get("method").and_then(Json::str).unwrap_or("GET"), row.get("path").and_then(Json::str).unwrap_or("/"));
            if let Some(Json::Obj(headers)) = row.get("headers") {
                for (n, v) in headers {
                    match v {
                        // A header sent several times is recorded as a list.
                        Json::Arr(values) => values.iter().filter_map(Json::str).for_each(|v| r.headers.push((n.clone(), v.to_string()))),
                        _ => r.headers.push((n.clone(), v.str().unwrap_or("").to_string())),
                    }
                }
            }
            r.body = row.get("body").and_then(Json::str).unwrap_or("").to_string();
            vec![r]
        }
    }
}

/// False positives of the three code checks on every real benign file, at levels 1 and 2.
/// `cargo test -p rampart-syntax --test new_families -- --ignored --nocapture fp_scan`
#[test]
#[ignore]
fn fp_scan() {
    let files = [
        "graphql_spec_examples.jsonl",
        "uap_core_user_agents.jsonl",
        "har_fixture_parts.jsonl",
        "requests/har_fixture_requests.jsonl",
        "requests/node_soap_requests.jsonl",
        "sharegpt_user_messages.jsonl",
    ];
    let mut level1_total = 0;
    for file in files {
        let rows = rows(file);
        let mut by_level = [0usize; 3];
        let mut shown = 0;
        for row in &rows {
            let requests = benign_requests(file, row);
            for level in [1u8, 2] {
                let hits: Vec<_> = requests
                    .iter()
                    .flat_map(|r| detect(r, level))
                    .filter(|(reason, _)| {
                        ["graphql:", "mail-injection:", "protocol:", "ssi:", "scanner:", "crlf:"].iter().any(|p| reason.starts_with(p))
                    })
                    .collect();
                if let Some((reason, text)) = hits.first() {
                    by_level[level as usize] += 1;
                    if shown < 12 {
                        shown += 1;
                        println!("  L{level} {file} {reason}: {text:?}");
                    }
                }
            }
        }
        level1_total += by_level[1];
        println!("{file}: {} rows, flagged at level 1: {}, at level 2: {}", rows.len(), by_level[1], by_level[2]);
    }
    println!("level-1 flags in all files: {level1_total}");
}

/// Writes every family's variants as eval rows (`{"text","label","source":"gen"}`), one file
/// per family under `RAMPART_GEN_OUT` (default /tmp/families), for `rampart eval --data`.
#[test]
#[ignore]
fn dump_variants_for_eval() {
    let out: std::path::PathBuf = std::env::var("RAMPART_GEN_OUT").unwrap_or_else(|_| "/tmp/families".into()).into();
    std::fs::create_dir_all(&out).unwrap();
    for name in ["ssi", "scanner", "mail-injection", "graphql", "crlf", "jndi", "path-traversal", "sqli-bypass"] {
        let fam = evasion::family(name).unwrap();
        let mut lines = String::new();
        for v in evasion::sample(fam, 12, 1000) {
            let text = match &v.carrier {
                Carrier::Request(_) => v.payload.clone(),
                _ => v.payload.clone(),
            };
            lines.push_str(&format!(
                "{{\"text\":{},\"label\":\"{}\",\"source\":\"gen_{}\",\"mutation\":{}}}\n",
                evasion::place::json_string(&text),
                fam.detector(),
                name.replace('-', "_"),
                evasion::place::json_string(&v.mutation)
            ));
        }
        std::fs::write(out.join(format!("gen_{}.jsonl", name.replace('-', "_"))), lines).unwrap();
    }
}

/// Cost of the five families' checks on a benign 1 KB JSON body (every leaf, plain and
/// decoded): `cargo test --release -p rampart-syntax --test new_families -- --ignored --nocapture cost`
#[test]
#[ignore]
fn cost_on_benign_json() {
    let body = r#"{"user":{"id":42,"name":"Alex Martin","email":"alex.martin@example.com","bio":"Backend developer & coffee fan. Writes Rust, Go and some TypeScript; runs 10k on Sundays (50% of the time)."},"address":{"street":"12 Rue de la Paix","city":"Paris","zip":"75002","country":"FR"},"preferences":{"newsletter":true,"theme":"dark","language":"fr-FR","timezone":"Europe/Paris"},"cart":[{"sku":"TSHIRT-RED-M","qty":2,"price":19.99,"note":"gift wrap, please"},{"sku":"MUG-BLUE","qty":1,"price":9.5,"note":"no rush\nthanks!"}],"comment":"Please deliver after 6pm, the concierge is away until then. Call +33 1 23 45 67 89 if needed.","coupon":"SPRING-2024","referrer":"https://www.example.org/blog/posts/123?utm_source=newsletter&utm_medium=email"}"#;
    let request = Request::new("POST", "/api/v1/orders").header("Content-Type", "application/json").body(body);
    let fields: Vec<(Field, String)> = fields_of(&request)
        .into_iter()
        .map(|f| {
            let d = decoded_view(&f.text);
            (f, d)
        })
        .collect();
    let inputs: Vec<Input> = fields
        .iter()
        .flat_map(|(f, d)| {
            [(&f.text, false), (d, true)].map(|(t, decoded)| {
                let mut i = Input::new(t);
                i.place = f.place;
                i.name = &f.name;
                i.method = "POST";
                i.decoded = decoded;
                i
            })
        })
        .collect();
    // The best of five timings: the machine is shared, so the minimum is the cost.
    let rounds = 5_000;
    let time = |run: &dyn Fn() -> usize| {
        (0..5)
            .map(|_| {
                let start = std::time::Instant::now();
                for _ in 0..rounds {
                    std::hint::black_box(run());
                }
                start.elapsed() / rounds
            })
            .min()
            .unwrap()
    };
    let all = time(&|| inputs.iter().map(|i| checks().iter().filter(|c| c.inspect(std::hint::black_box(i)).is_some()).count()).sum());
    println!("{} bytes, {} inputs, {} checks: {all:?} per request", body.len(), inputs.len(), checks().len());
    for check in checks() {
        let one = time(&|| inputs.iter().filter(|i| check.inspect(std::hint::black_box(i)).is_some()).count());
        println!("  {:<16} {one:?}", check.detector());
    }
}
