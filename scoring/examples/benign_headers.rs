//! False positives of the header policy on real benign traffic: every whole request of the
//! given `requests/*.jsonl` files (HAR fixtures, SOAP samples) is scored twice — with every
//! header the policy scores (now), and with only the headers the old skip list scored
//! (before) — and the flagged counts are printed, with the flagged requests' reasons.
//!
//! `cargo run -p rampart-scoring --example benign_headers -- FILE...` (models from `models/`
//! when `ORT_DYLIB_PATH` is set, patterns only otherwise).

use std::path::PathBuf;

use scoring::{Engine, EngineConfig, ScoreInput};

/// The skip list before issue 11 (for the "before" figure only).
const OLD_UNSCORED: &[&str] = &[
    "accept",
    "accept-encoding",
    "accept-language",
    "authorization",
    "cache-control",
    "connection",
    "content-length",
    "content-type",
    "host",
    "if-modified-since",
    "if-none-match",
    "keep-alive",
    "pragma",
    "proxy-authorization",
    "te",
    "upgrade-insecure-requests",
];

fn old_policy_scores(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    !(OLD_UNSCORED.contains(&lower.as_str()) || lower.starts_with("sec-") || lower.starts_with("x-waf-"))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    let models = std::env::var("ORT_DYLIB_PATH").ok().map(PathBuf::from);
    let config = match &models {
        Some(ort) => EngineConfig { ort_dylib: ort.clone(), ..Default::default() },
        None => EngineConfig { models_dir: None, ..Default::default() },
    };
    let engine = Engine::new(config).expect("engine starts");
    while !engine.ready() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (mut total, mut flagged_before, mut flagged_now) = (0, 0, 0);
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"));
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let row: serde_json::Value = serde_json::from_str(line).expect("JSON line");
            let method = row["method"].as_str().unwrap_or("GET");
            let path = row["path"].as_str().unwrap_or("/");
            let body = row["body"].as_str().unwrap_or("");
            let request_text = format!("{method} {path}\n{body}");
            let headers: Vec<(String, String)> = row["headers"]
                .as_object()
                .map(|h| h.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string())).collect())
                .unwrap_or_default();
            let old_headers: Vec<(String, String)> = headers
                .iter()
                .filter(|(name, _)| {
                    name.eq_ignore_ascii_case("content-type") || name.eq_ignore_ascii_case("cookie") || old_policy_scores(name)
                })
                .cloned()
                .collect();
            let before = engine.score_all(&ScoreInput { request_text: &request_text, headers: &old_headers }).await;
            let now = engine.score_all(&ScoreInput { request_text: &request_text, headers: &headers }).await;
            total += 1;
            let threshold = engine.threshold();
            flagged_before += usize::from(before.score > threshold);
            flagged_now += usize::from(now.score > threshold);
            if now.score > threshold && before.score <= threshold {
                println!(
                    "newly flagged: {} {method} {path:.80} -> {} ({:.3})",
                    file.rsplit('/').next().unwrap_or(file),
                    now.reason,
                    now.score
                );
            }
            if !now.partial.is_empty() {
                println!("partial: {method} {path:.80} -> {:?}", now.partial);
            }
        }
    }
    println!(
        "benign requests: {total}; flagged with the old header policy: {flagged_before}; flagged now: {flagged_now} ({})",
        if models.is_some() { "patterns + models" } else { "patterns only" }
    );
}
