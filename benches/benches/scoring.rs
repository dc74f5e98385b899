//! Criterion benches for the scoring hot path. They print figures; nothing here asserts time.
//!
//! `cargo bench -p rampart-benches` (or `make bench`). The `score_all/*` groups run with models
//! disabled (pattern stage only: what every request pays); `sqli_model/*` (one field through the
//! SQLi model's queue, quoted in `models/sqli/CARD.md`) and `score_all_models/*` load the real
//! ONNX models when the ONNX Runtime library is present.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rampart_benches::{form_1k, json_1k, ATTACKS};
use scoring::fields::FieldLimits;
use scoring::model::onnx::{init_runtime, OnnxExecutor};
use scoring::model::{BatchConfig, BatchQueue};
use scoring::normalize;
use scoring::patterns::{Hits, PatternStage};
use scoring::request::parse_request;
use scoring::views::{ViewKind, Views};
use scoring::{Engine, EngineConfig, ScoreInput};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn pattern_engine() -> Engine {
    Engine::new(EngineConfig { models_dir: None, ..EngineConfig::default() }).expect("engine")
}

fn bench_normaliser(c: &mut Criterion) {
    let mut g = c.benchmark_group("normaliser");
    let encoded = "%253Cscript%253Ealert(1)%253C%252Fscript%253E&#x3C;img src=x onerror=alert(1)&#62;\\u003csvg onload=alert(1)\\u003e";
    let plain = "Please leave the parcel with the neighbour at no. 12 if nobody is home, thanks!";
    let mut out = String::new();
    g.bench_function("decode_deep/encoded_attack", |b| b.iter(|| normalize::decode_deep(black_box(encoded), &mut out)));
    g.bench_function("decode_deep/plain_text", |b| b.iter(|| normalize::decode_deep(black_box(plain), &mut out)));
    g.bench_function("collapse/sql_comments", |b| {
        b.iter(|| normalize::collapse(black_box("SeLeCt/**/password/**/FrOm/**/users  WHERE   id=1"), &mut out))
    });
    let form = form_1k();
    g.throughput(Throughput::Bytes(form.len() as u64));
    g.bench_function("parse_and_views/form_1k", |b| {
        b.iter(|| {
            let req = parse_request(&ScoreInput { request_text: black_box(&form), headers: &[] }, FieldLimits::default());
            Views::build(&req.fields)
        })
    });
    g.finish();
}

fn bench_patterns(c: &mut Criterion) {
    let stage = PatternStage::new(None).expect("rules compile");
    let mut g = c.benchmark_group("pattern_stage");
    for (name, text) in [("form_1k", form_1k()), ("json_1k", json_1k())] {
        let req = parse_request(&ScoreInput { request_text: &text, headers: &[] }, FieldLimits::default());
        let views = Views::build(&req.fields);
        g.throughput(Throughput::Bytes(views.plain.text.len() as u64));
        g.bench_function(format!("scan_plain/{name}"), |b| {
            b.iter(|| {
                let mut hits = Hits::default();
                stage.scan(black_box(&views.plain), ViewKind::Plain, &mut hits);
                hits
            })
        });
    }
    g.finish();
}

fn bench_score_all(c: &mut Criterion) {
    let engine = pattern_engine();
    let mut g = c.benchmark_group("score_all");
    for (name, text) in [("benign_form_1k", form_1k()), ("benign_json_1k", json_1k())] {
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(name, |b| b.iter(|| engine.score_patterns(&ScoreInput { request_text: black_box(&text), headers: &[] })));
    }
    for (name, text) in ATTACKS {
        g.bench_function(format!("attack/{name}"), |b| {
            b.iter(|| engine.score_patterns(&ScoreInput { request_text: black_box(text), headers: &[] }))
        });
    }
    g.finish();
}

/// The ONNX Runtime library, or None (with a note) when it is missing or RAMPART_BENCH_MODELS=0
/// (scripts/bench-quick: a criterion filter skips a bench, not its model loading): the model
/// benches skip.
fn ort_dylib(group: &str) -> Option<PathBuf> {
    if std::env::var_os("RAMPART_BENCH_MODELS").is_some_and(|v| v == "0") {
        eprintln!("{group}: RAMPART_BENCH_MODELS=0, skipped");
        return None;
    }
    let ort = std::env::var("ORT_DYLIB_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root().join("vendor/onnxruntime/lib/libonnxruntime.so.1.22.1"));
    if ort.exists() {
        Some(ort)
    } else {
        eprintln!("{group}: {} missing, skipped (run scripts/bootstrap)", ort.display());
        None
    }
}

/// The SQLi model per single field, as the engine calls it: one text through the model's
/// `BatchQueue` (default config, greedy batching, so a lone field forms a batch of one) to its
/// `OnnxExecutor` on the model thread, featurizer included. The model card quotes the medians
/// (p50) of `sqli_model/field_*` (`models/train/card.py --criterion target/criterion`).
fn bench_sqli_model(c: &mut Criterion) {
    let Some(ort) = ort_dylib("sqli_model") else { return };
    init_runtime(&ort).expect("ONNX Runtime");
    let executor = OnnxExecutor::load(&root().join("models/sqli"), 1).expect("sqli model");
    // The score cache is off: these figures are the model's cost, not a cache lookup's.
    let queue = BatchQueue::spawn("sqli", executor, BatchConfig { cache_entries: 0, ..BatchConfig::default() });
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let prose = "please leave the parcel with the neighbour at no. 12 if nobody is home, thanks! \
                 we need to union the two sets and select the max; 5 < 6 and 7 > 3. -- o'brien";
    let long = "1' and (select 1 from (select count(*), concat(version(), floor(rand(0)*2)) x \
                from information_schema.tables group by x) a)-- "
        .repeat(40);
    let mut g = c.benchmark_group("sqli_model");
    // Field values as the normaliser hands them to the model (decoded, lower-cased).
    for (name, text) in [
        ("field_short_attack", "1' and sleep(5)-- "),
        ("field_name", "siobhan o'brien"),
        ("field_prose_160b", prose),
        ("field_attack_4k", &long[..4096]),
    ] {
        g.bench_function(name, |b| b.iter(|| rt.block_on(queue.score(black_box(text).to_string())).unwrap()));
    }
    // Traffic does not repeat one text: a new input shape (K) on every call, as in production.
    let mixed = ["1' and sleep(5)-- ", "siobhan o'brien", prose, "42", "john.smith@example.com", "order by 3"];
    let mut i = 0;
    g.bench_function("field_mixed_cycle", |b| {
        b.iter(|| {
            i = (i + 1) % mixed.len();
            rt.block_on(queue.score(black_box(mixed[i]).to_string())).unwrap()
        })
    });
    g.finish();
}

/// Full `score_all` with the ONNX models (skipped when the runtime library is missing).
fn bench_score_all_models(c: &mut Criterion) {
    let Some(ort) = ort_dylib("score_all_models") else { return };
    // Cache off: every iteration pays for the models (a cache hit is ~1 µs).
    let mut config = EngineConfig { models_dir: Some(root().join("models")), ort_dylib: ort, ..EngineConfig::default() };
    config.batch.cache_entries = 0;
    let engine = Engine::new(config).expect("engine");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !engine.ready() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    if !engine.ready() {
        eprintln!("score_all_models: models not ready: {:?}", engine.model_status());
        return;
    }
    let mut g = c.benchmark_group("score_all_models");
    let chat = r#"POST /v1/chat/completions
{"model":"x","messages":[{"role":"system","content":"You are a helpful shop assistant."},{"role":"user","content":"Which of your rain jackets would suit a week of hiking in Scotland in October?"}]}"#;
    let sqli = "GET /item?id=1%27%20AND%20SLEEP(5)--%20\n";
    let form = form_1k();
    for (name, text) in [("chat_prompt", chat), ("sqli_field", sqli), ("benign_form_1k", form.as_str())] {
        g.bench_function(name, |b| b.iter(|| rt.block_on(engine.score_all(&ScoreInput { request_text: black_box(text), headers: &[] }))));
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = bench_normaliser, bench_patterns, bench_score_all, bench_sqli_model, bench_score_all_models
}
criterion_main!(benches);
