//! `rampart eval --real-traffic`: false positives on real benign traffic, at every
//! sensitivity level. Each set is replayed where it lives in real traffic (`wire`), scored once
//! with the models and once per level with the pattern and code detectors (`levels`).
//!
//! Targets (issue 12): FPR ≤ 0.05 % overall at level 1, no single reason above 0.01 %.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use scoring::Engine;

use super::data::{load_source, query_for, Row};
use super::levels::{pct, score_many, LevelOutcome, LEVELS};
use super::noise::label_noise;
use super::wire::load_requests;
use super::Placement;
use crate::scorer::ScoreQuery;

/// The real benign text sets (file stems of the pool).
pub const REAL_TEXT_SOURCES: &[&str] = &[
    "har_fixture_parts",
    "digitalocean_api_examples",
    "uap_core_user_agents",
    "fwaf_goodqueries_subset",
    "graphql_spec_examples",
    "otlp_json_examples",
    "sharegpt_user_messages",
    "csic2010_lines",
];

pub const OVERALL_TARGET_PCT: f64 = 0.05;
pub const REASON_TARGET_PCT: f64 = 0.01;

/// One benign request of the section.
struct Item {
    file: String,
    summary: String,
    query: ScoreQuery,
    /// Why the row is set apart as label noise (not benign after all), if it is.
    noise: Option<&'static str>,
}

/// Runs the section: `request_files` are whole-request files (the pool's `requests/*.jsonl`
/// when none are given).
pub async fn run(engine: &Arc<Engine>, data: &Path, request_files: &[PathBuf], concurrency: usize, show_fp: usize) -> Result<(), String> {
    let items = load_items(data, request_files)?;
    let started = Instant::now();
    let (noise, items): (Vec<Item>, Vec<Item>) = items.into_iter().partition(|i| i.noise.is_some());
    let queries: Vec<ScoreQuery> = items.iter().chain(noise.iter()).map(|i| i.query.clone()).collect();
    let mut outcomes = score_many(engine, queries, concurrency).await;
    let noise_outcomes = outcomes.split_off(items.len());
    println!(
        "\n== Real benign traffic: {} requests in {} sets, {:.1} s. Scored once with the models at the\n   \
         configured level {} and with the pattern/code detectors at each level; models do not change\n   \
         with the level, so a request a model flags counts as flagged at every level.\n   \
         Targets: overall FPR <= {OVERALL_TARGET_PCT} % at level 1 (`!` above), each reason <= {REASON_TARGET_PCT} % (`!` above).",
        items.len(),
        items.iter().map(|i| &i.file).collect::<std::collections::BTreeSet<_>>().len(),
        started.elapsed().as_secs_f64(),
        engine.sensitivity(),
    );
    for (li, level) in LEVELS.iter().enumerate() {
        print_level(*level, li, &items, &outcomes);
    }
    let partial = outcomes.iter().filter(|o| !o.partial.is_empty()).count();
    let mut partial_by: BTreeMap<&str, usize> = BTreeMap::new();
    for o in &outcomes {
        for p in &o.partial {
            *partial_by.entry(p.as_str()).or_default() += 1;
        }
    }
    println!("\nPartial verdicts (refused by the default policy WAF_ON_PARTIAL=block): {partial} of {}", outcomes.len());
    for (p, n) in &partial_by {
        println!("  {p:<40} {n}");
    }
    let model_errors = outcomes.iter().filter(|o| o.model_error).count();
    println!("Model errors (a model did not score: missing or failed; its fallback rules scored): {model_errors}");
    print_noise(&noise, &noise_outcomes);
    if show_fp > 0 {
        println!("\nFalse positives at level 1 (first {show_fp})");
        for (item, o) in items.iter().zip(&outcomes).filter(|(_, o)| o.flagged[0]).take(show_fp) {
            let text: String = item.summary.chars().take(200).collect();
            println!("  [{}] {:.3} {} | {}", item.file, o.score, o.reasons[0].join(","), text.replace('\n', "\\n"));
        }
    }
    Ok(())
}

fn load_items(data: &Path, request_files: &[PathBuf]) -> Result<Vec<Item>, String> {
    let mut items = Vec::new();
    let defaults: Vec<PathBuf>;
    let files = if request_files.is_empty() {
        defaults = default_request_files(data);
        &defaults
    } else {
        request_files
    };
    for path in files {
        let file = path.file_stem().and_then(|s| s.to_str()).unwrap_or("requests").to_string();
        for r in load_requests(path)?.into_iter().filter(|r| r.label == "benign") {
            items.push(Item { file: file.clone(), summary: r.summary, query: r.request.score_query(), noise: None });
        }
    }
    for source in REAL_TEXT_SOURCES {
        let rows: Vec<Row> = load_source(data, source)?.into_iter().filter(|r| !r.is_attack()).collect();
        for row in rows {
            let noise = label_noise(&row);
            let summary = format!("{}{}", row.part.as_deref().map(|p| format!("({p}) ")).unwrap_or_default(), row.text);
            items.push(Item { file: source.to_string(), summary, query: query_for(&row, Placement::Query), noise });
        }
    }
    Ok(items)
}

/// `<data>/requests/*.jsonl`, sorted.
pub fn default_request_files(data: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data.join("requests"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "jsonl")).collect())
        .unwrap_or_default();
    files.sort();
    files
}

fn print_level(level: u8, li: usize, items: &[Item], outcomes: &[LevelOutcome]) {
    let mut by_file: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut by_reason: BTreeMap<&str, (usize, BTreeMap<&str, usize>)> = BTreeMap::new();
    let (mut rows, mut flagged) = (0, 0);
    for (item, o) in items.iter().zip(outcomes) {
        let f = by_file.entry(item.file.as_str()).or_default();
        f.0 += 1;
        rows += 1;
        if o.flagged[li] {
            f.1 += 1;
            flagged += 1;
        }
        for r in &o.reasons[li] {
            let e = by_reason.entry(r.as_str()).or_default();
            e.0 += 1;
            *e.1.entry(item.file.as_str()).or_default() += 1;
        }
    }
    let overall = pct(flagged, rows);
    let mark = |over: bool| if over { "!" } else { " " };
    println!(
        "\n-- Level {level}: {rows} rows, {flagged} flagged, FPR {overall:.3} %{}",
        if overall > OVERALL_TARGET_PCT { "  ! above the 0.05 % target" } else { "" }
    );
    println!("  {:<30} {:>7} {:>8} {:>9}", "set", "rows", "flagged", "FPR %");
    for (file, (n, f)) in &by_file {
        let p = pct(*f, *n);
        println!("  {:<30} {:>7} {:>8} {:>9.3} {}", file, n, f, p, mark(p > OVERALL_TARGET_PCT));
    }
    if by_reason.is_empty() {
        println!("  no reason fired");
        return;
    }
    println!("  {:<48} {:>6} {:>9}   sets", "reason (each detector's best, per request)", "count", "% rows");
    let mut reasons: Vec<_> = by_reason.into_iter().collect();
    reasons.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
    for (reason, (n, files)) in reasons {
        let p = pct(n, rows);
        let sets: Vec<String> = files.iter().map(|(f, c)| format!("{f} {c}")).collect();
        println!("  {:<48} {:>6} {:>9.4} {} {}", reason, n, p, mark(p > REASON_TARGET_PCT), sets.join(", "));
    }
}

fn print_noise(noise: &[Item], outcomes: &[LevelOutcome]) {
    println!(
        "\nLabel noise: {} rows labelled benign that are attack probes by the rule of `noise::label_noise`\n  \
         (not counted above; flagged at level 1: {})",
        noise.len(),
        outcomes.iter().filter(|o| o.flagged[0]).count()
    );
    let mut by_why: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (item, o) in noise.iter().zip(outcomes) {
        let e = by_why.entry(item.noise.unwrap_or("")).or_default();
        e.0 += 1;
        e.1 += o.flagged[0] as usize;
    }
    for (why, (n, f)) in &by_why {
        println!("  {why:<60} {n:>5} rows, {f:>5} flagged");
    }
    for (item, o) in noise.iter().zip(outcomes).take(12) {
        let text: String = item.summary.chars().take(120).collect();
        println!("  [{}] {} | {}", item.file, if o.flagged[0] { o.reasons[0].join(",") } else { "pass".into() }, text);
    }
}
