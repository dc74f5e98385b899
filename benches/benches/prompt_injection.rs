//! Criterion bench for the prompt-injection transformer: one chat message alone (latency) and
//! batches of 32 texts of ~128 tokens (throughput). Prints figures; asserts nothing.
//!
//! `cargo bench -p rampart-benches --bench prompt_injection`

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use scoring::model::onnx::init_runtime;
use scoring::model::transformer::{Manifest, TransformerExecutor};
use scoring::model::Executor;

fn executor() -> Option<TransformerExecutor> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let lib = std::env::var_os("ORT_DYLIB_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("vendor/onnxruntime/lib/libonnxruntime.so.1.22.1"));
    if let Err(e) = init_runtime(&lib) {
        eprintln!("prompt_injection bench skipped: {e} (run scripts/bootstrap)");
        return None;
    }
    let dir = root.join("models/prompt-injection");
    let manifest = Manifest::read(&dir).ok().flatten()?;
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    Some(TransformerExecutor::load(&dir, manifest, threads).expect("loading the prompt-injection model"))
}

fn bench_prompt_injection(c: &mut Criterion) {
    let Some(mut exec) = executor() else { return };
    // ~128 WordPiece tokens of ordinary English (126 content tokens fill one window)
    let long = "please review the attached draft and tell me whether the argument holds up ".repeat(8);
    let short = "Can you suggest a quick vegetarian dinner with lentils and spinach?";
    let mut g = c.benchmark_group("prompt_injection");
    g.measurement_time(Duration::from_secs(8));
    g.sample_size(20);
    g.bench_function("one_message_16_tokens", |b| b.iter(|| exec.infer(black_box(&[short])).unwrap()));
    g.bench_function("one_text_128_tokens", |b| b.iter(|| exec.infer(black_box(&[long.as_str()])).unwrap()));
    let batch: Vec<&str> = vec![long.as_str(); 32];
    g.throughput(Throughput::Elements(batch.len() as u64));
    g.bench_function("batch32_128_tokens", |b| b.iter(|| exec.infer(black_box(&batch)).unwrap()));
    g.finish();
}

criterion_group!(benches, bench_prompt_injection);
criterion_main!(benches);
