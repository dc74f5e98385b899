//! The SQLi pattern fallback (rules/sqli.fallback.toml): scores only when the SQLi model gave
//! no opinion, so losing the model does not mean zero SQLi coverage.

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use scoring::detectors::SQLI;
use scoring::models::ModelStatus;
use scoring::{Engine, EngineConfig, ScoreInput};

/// An engine whose models failed to load (their folder holds none).
fn engine_without_models() -> Engine {
    let empty = std::env::temp_dir().join(format!("rampart-empty-models-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let config = EngineConfig { models_dir: Some(empty), ort_dylib: common::ort_dylib(), ..Default::default() };
    let engine = Engine::new(config).expect("engine starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !matches!(engine.model_status()[0].1, ModelStatus::Failed(_)) {
        assert!(Instant::now() < deadline, "{:?}", engine.model_status());
        std::thread::sleep(Duration::from_millis(10));
    }
    engine
}

fn query(value: &str) -> String {
    let encoded: String = value
        .bytes()
        .map(|b| if b.is_ascii_alphanumeric() || b"-_.".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect();
    format!("GET /search?q={encoded}\n")
}

#[tokio::test]
async fn a_missing_sqli_model_falls_back_to_patterns() {
    let engine = engine_without_models();
    for attack in ["1' union select password from users--", "x' or 'a'='a", "1; drop table users --", "1' and sleep(5)#"] {
        let all = engine.score_all(&ScoreInput { request_text: &query(attack), headers: &[] }).await;
        assert!(all.model_error.is_some(), "the model is missing: the verdict must say so");
        assert!(all.score > 0.5, "{attack}: {all:?}");
        assert!(all.reason.starts_with("sqli:fallback:"), "{attack}: {}", all.reason);
    }
    for benign in ["O'Brien", "rock 'n' roll", "select a size from the list", "tom & jerry's union hall"] {
        let all = engine.score_all(&ScoreInput { request_text: &query(benign), headers: &[] }).await;
        assert!(all.score <= 0.5, "{benign}: {all:?}");
    }
}

/// Recall and FPR of the fallback per source file of the data pool (prints; asserts nothing
/// beyond the files being readable). `cargo test -p rampart-scoring --test sqli_fallback --
/// --ignored --nocapture` (data folder: RAMPART_DATA, default ../shared/datasets).
#[test]
#[ignore]
fn fallback_recall_and_fpr_per_source() {
    let engine = Engine::new(EngineConfig { models_dir: None, ..Default::default() }).expect("engine starts");
    // The data pool lives beside the checkout (../shared/datasets); RAMPART_DATA overrides it.
    let dir = std::env::var_os("RAMPART_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/datasets"));
    let files = [
        "kaggle_sqli_modified",
        "kaggle_sqli_sajid576",
        "httpparams",
        "modsec_learn_dataset",
        "payloadbox",
        "payloadsallthethings",
        "fuzzdb",
        "csic2010_lines",
        "fwaf_goodqueries_subset",
        "har_fixture_parts",
        "uap_core_user_agents",
        "benign_prompts_alpaca_eval",
        "kaggle_xss_syedsaqlain",
    ];
    for file in files {
        let Ok(text) = std::fs::read_to_string(dir.join(format!("{file}.jsonl"))) else { continue };
        let (mut attacks, mut caught, mut benign, mut flagged) = (0, 0, 0, 0);
        for line in text.lines().take(20_000) {
            let Ok(row) = serde_json::from_str::<serde_json::Value>(line) else { continue };
            let (Some(value), Some(label)) = (row["text"].as_str(), row["label"].as_str()) else { continue };
            let analysis = engine.analyze(&ScoreInput { request_text: &query(value), headers: &[] });
            let hit = engine.fallback_score(&analysis, SQLI).is_some_and(|(s, _)| s > 0.5);
            match label {
                "sqli" => {
                    attacks += 1;
                    caught += usize::from(hit);
                }
                "benign" => {
                    benign += 1;
                    flagged += usize::from(hit);
                }
                _ => {}
            }
        }
        let pct = |a: usize, b: usize| if b == 0 { f64::NAN } else { 100.0 * a as f64 / b as f64 };
        println!(
            "{file:28} sqli recall {caught:6}/{attacks:<6} ({:5.1}%)  benign FPR {flagged:5}/{benign:<6} ({:5.2}%)",
            pct(caught, attacks),
            pct(flagged, benign)
        );
    }
}
