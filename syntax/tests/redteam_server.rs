//! Server-side red team and the families added with it (remote file inclusion, restricted
//! files, smuggled requests in values, encoding abuse): recall of the code checks on generated
//! variants per mutation, hard negatives, and an `#[ignore]` dump of the variants as eval rows
//! for `rampart eval --data` (rules and checks together).

use std::collections::BTreeMap;

mod new_families_support;

use evasion::{place::to_request, Carrier, Placement};
use new_families_support::detect;

/// Recall of the syntax checks alone (the rules add to it in the full engine) on `n` variants
/// of `family`, with the per-mutation table printed.
fn recall(family: &str, n: usize, level: u8) -> f64 {
    let fam = evasion::family(family).expect("family registered");
    let variants = evasion::sample(fam, 12, n);
    let mut per_mutation: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut caught = 0;
    let mut misses = Vec::new();
    let mut missed_texts = String::new();
    for (k, v) in variants.iter().enumerate() {
        let placement = Placement::ALL[k % Placement::ALL.len()];
        let request = to_request(v, placement);
        let hit = detect(&request, level).iter().any(|(reason, _)| reason.starts_with(&format!("{}:", fam.detector())));
        let entry = per_mutation.entry(v.mutation.clone()).or_default();
        entry.1 += 1;
        if hit {
            entry.0 += 1;
            caught += 1;
        } else {
            missed_texts.push_str(&format!("{}\n", evasion::place::json_string(&v.payload)));
            if misses.len() < 12 {
                misses.push(format!("{} [{}] {:?}", v.mutation, placement.name(), v.payload.chars().take(160).collect::<String>()));
            }
        }
    }
    if let Ok(dir) = std::env::var("RAMPART_MISSES") {
        std::fs::write(format!("{dir}/{family}.missed"), missed_texts).unwrap();
    }
    let rate = caught as f64 / n as f64;
    println!("{family} (level {level}): recall {caught}/{n} = {:.1} %", rate * 100.0);
    for (m, (c, t)) in &per_mutation {
        if *c < *t {
            println!("  {m:<50} {c}/{t}");
        }
    }
    for m in misses {
        println!("  miss: {m}");
    }
    rate
}

/// Writes each red-team family's variants as eval rows (`{"text","label","source"}`) under
/// `RAMPART_GEN_OUT` (default /tmp/redteam), one file per family, with a `.tsv` of each row's
/// mutation beside it, for `rampart eval --data <dir> --sources <stem> --show-fn N`.
/// A whole-request variant is written as its path and query (the eval places rows in a
/// query value, so these are approximate; `rampart eval --evasion` replays them exactly).
#[test]
#[ignore]
fn dump_redteam_for_eval() {
    let out: std::path::PathBuf = std::env::var("RAMPART_GEN_OUT").unwrap_or_else(|_| "/tmp/redteam".into()).into();
    std::fs::create_dir_all(&out).unwrap();
    for name in ["redteam-cmdi-unix", "redteam-cmdi-windows", "redteam-path-traversal"] {
        let fam = evasion::family(name).unwrap();
        let stem = name.replace('-', "_");
        let (mut lines, mut tsv) = (String::new(), String::new());
        for v in evasion::sample(fam, 12, 2000) {
            let text = match &v.carrier {
                Carrier::Request(r) => r.path.clone(),
                _ => v.payload.clone(),
            };
            lines.push_str(&format!(
                "{{\"text\":{},\"label\":\"{}\",\"source\":\"{stem}\"}}\n",
                evasion::place::json_string(&text),
                fam.detector()
            ));
            tsv.push_str(&format!("{}\t{}\n", v.mutation, evasion::place::json_string(&text)));
        }
        std::fs::write(out.join(format!("{stem}.jsonl")), lines).unwrap();
        std::fs::write(out.join(format!("{stem}.tsv")), tsv).unwrap();
    }
}

#[test]
#[ignore]
fn redteam_syntax_recall_report() {
    for name in ["redteam-cmdi-unix", "redteam-cmdi-windows", "redteam-path-traversal"] {
        recall(name, 2000, 1);
    }
}

/// Prints every check's finding on each line of `RAMPART_PROBE` (a file), at level 4.
#[test]
#[ignore]
fn probe() {
    let Ok(path) = std::env::var("RAMPART_PROBE") else { return };
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let mut input = syntax::Input::new(line);
        input.sensitivity = 4;
        let found: Vec<_> = syntax::inspect_all(&input).map(|f| format!("{}@{}", f.reason, f.level)).collect();
        println!("{line:?} => {found:?}");
    }
}

#[test]
fn remote_file_include_recall() {
    assert!(recall("remote-file-include", 1000, 1) >= 0.95);
}

#[test]
fn restricted_file_recall() {
    assert!(recall("restricted-file", 1000, 1) >= 0.95);
}

#[test]
fn smuggled_request_recall() {
    assert!(recall("smuggled-request", 1000, 1) >= 0.95);
}

#[test]
fn encoding_abuse_recall() {
    assert!(recall("encoding-abuse", 1000, 1) >= 0.95);
}

/// Realistic benign requests that hold the new families' raw material (URLs in page
/// parameters, dot-files in prose, `HTTP/1.1` in text, percent signs) pass at level 1.
#[test]
fn new_families_hard_negatives() {
    use evasion::Request;
    let form = |body: &str| Request::new("POST", "/api/notes").header("Content-Type", "application/x-www-form-urlencoded").body(body);
    let json = |body: &str| Request::new("POST", "/api/v1/events").header("Content-Type", "application/json").body(body);
    let requests = [
        Request::new("GET", "/collect?v=1&page=https%3A%2F%2Fwww.example.com%2Fproducts%3Fid%3D3&dt=Shoes"),
        Request::new("GET", "/download?file=https%3A%2F%2Fcdn.example.org%2Freports%2Fq3.pdf"),
        Request::new("GET", "/blog/git-tips-for-teams"),
        Request::new("GET", "/docs/v1.2/environment-variables"),
        Request::new("GET", "/static/js/app.3f2a1c.js"),
        Request::new("GET", "/search?q=50%25+off+shoes"),
        Request::new("GET", "/search?q=how+to+use+.env+files+with+docker"),
        form("note=We+upgraded+to+HTTP%2F1.1+and+then+HTTP%2F2+last+year"),
        form("text=Hello+%25s%2C+you+have+%25d+new+messages"),
        json(r#"{"event":"page_view","url":"https://shop.example.com/cart?step=2","ref":"https://www.google.com/"}"#),
        json(r#"{"template":"invoice-default","lang":"fr-FR","theme":"dark"}"#),
        json(r#"{"log":"GET /api/items HTTP/1.1 200 512 0.003"}"#),
        Request::new("GET", "/share?url=http%3A%2F%2F203.0.113.5%2Fphotos%2F12"),
    ];
    let mut fired = Vec::new();
    for r in &requests {
        let found: Vec<_> = detect(r, 1)
            .into_iter()
            .filter(|(reason, _)| {
                ["path-traversal:remote-file-include", "path-traversal:restricted-file", "protocol:smuggled-request", "protocol:null-byte"]
                    .contains(reason)
                    || reason.starts_with("protocol:double-encoding")
                    || reason.starts_with("protocol:invalid-percent")
            })
            .collect();
        if !found.is_empty() {
            fired.push(format!("{} {}: {found:?}", r.method, r.path));
        }
    }
    assert!(fired.is_empty(), "benign requests flagged:\n{}", fired.join("\n"));
}
