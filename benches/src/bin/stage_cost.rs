//! Where `score_patterns` spends its time on the benign 1 KB bodies: parsing, the views, each
//! pattern scan, the code-detector stage, and each code detector alone. Prints ns per body;
//! asserts nothing (the budget is checked by reading the figures, docs/rules.md).
//!
//! `cargo run --release -p rampart-benches --bin stage_cost`
//!
//! Figures are this thread's CPU time (not wall time), best of three rounds: on a shared,
//! loaded machine wall time counts the time other processes hold the core. Per check, two
//! columns: each field's plain text as `Input::new` builds it, and the inputs the code stage
//! really builds (plain and decoded text, place and name).
//! `stage_cost whole [N]` only runs `score_patterns` on json_1k N times (instruction counts).
//! `stage_cost profile [N]` only runs the code stage on json_1k N times (for callgrind / perf).
//! `stage_cost prompt [N]` only builds the prompt-injection texts of both bodies N times.
//! `stage_cost list` prints the fields of both bodies.

use std::hint::black_box;

use rampart_benches::{form_1k, json_1k};
use scoring::fields::FieldLimits;
use scoring::patterns::{Hits, PatternStage};
use scoring::request::parse_request;
use scoring::views::{ViewKind, Views};
use scoring::{Engine, EngineConfig, ScoreInput};

const ITERS: u32 = 20_000;

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}

extern "C" {
    // From the C library std already links; no new dependency.
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

/// CPU time of this thread in ns (CLOCK_THREAD_CPUTIME_ID = 3 on Linux).
fn cpu_ns() -> u128 {
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    unsafe { clock_gettime(3, &mut ts) };
    ts.sec as u128 * 1_000_000_000 + ts.nsec as u128
}

fn ns(mut f: impl FnMut()) -> f64 {
    for _ in 0..ITERS / 10 {
        f();
    }
    let mut best = f64::MAX;
    for _ in 0..3 {
        let start = cpu_ns();
        for _ in 0..ITERS / 2 {
            f();
        }
        best = best.min((cpu_ns() - start) as f64 / (ITERS / 2) as f64);
    }
    best
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("profile") {
        let n: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100_000);
        let text = json_1k();
        let input = ScoreInput { request_text: &text, headers: &[] };
        let parsed = parse_request(&input, FieldLimits::default());
        let views = Views::build(&parsed.fields);
        for _ in 0..n {
            let mut hits = Hits::default();
            scoring::code_stage::inspect_fields(&parsed.fields, &views, "POST", &mut hits);
            black_box(hits);
        }
        return;
    }
    if args.get(1).map(String::as_str) == Some("views") {
        // `valgrind --tool=callgrind stage_cost views N`: parse + views only.
        let n: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
        let text = json_1k();
        let input = ScoreInput { request_text: &text, headers: &[] };
        for _ in 0..n {
            let parsed = parse_request(&input, FieldLimits::default());
            black_box(Views::build(&parsed.fields));
        }
        return;
    }
    if args.get(1).map(String::as_str) == Some("whole") {
        // `valgrind --tool=callgrind stage_cost whole N`: instructions of score_patterns on
        // json_1k, independent of machine load (subtract a run with N = 0).
        let n: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
        let engine = Engine::new(EngineConfig { models_dir: None, ..EngineConfig::default() }).expect("engine");
        let text = json_1k();
        let input = ScoreInput { request_text: &text, headers: &[] };
        for _ in 0..n {
            black_box(engine.score_patterns(&input));
        }
        return;
    }
    if args.get(1).map(String::as_str) == Some("prompt") {
        // `valgrind --tool=callgrind stage_cost prompt N`: the prompt-injection model's texts
        // of both bodies (asked on every request when that model is loaded), without a model.
        let n: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
        let engine = Engine::new(EngineConfig { models_dir: None, ..EngineConfig::default() }).expect("engine");
        let bodies = [form_1k(), json_1k()];
        let analyses: Vec<_> = bodies.iter().map(|text| engine.analyze(&ScoreInput { request_text: text, headers: &[] })).collect();
        for _ in 0..n {
            for analysis in &analyses {
                black_box(engine.prompt_texts(analysis));
            }
        }
        return;
    }
    if args.get(1).map(String::as_str) == Some("list") {
        // The fields of both bodies as the checks see them: kind, name, value.
        for text in [form_1k(), json_1k()] {
            let input = ScoreInput { request_text: &text, headers: &[] };
            for f in parse_request(&input, FieldLimits::default()).fields.iter() {
                println!("{:?} {:?} {:?}", f.kind, f.name, f.value);
            }
        }
        return;
    }
    if args.get(1).map(String::as_str) == Some("fields") {
        // The dearest (check, field) pairs of json_1k that the triggers admit: where a benign
        // body's time goes.
        let text = json_1k();
        let input = ScoreInput { request_text: &text, headers: &[] };
        let parsed = parse_request(&input, FieldLimits::default());
        let mut rows = Vec::new();
        for f in parsed.fields.iter() {
            let mut i = syntax::Input::new(f.value);
            i.place = syntax::Place::from(f.kind);
            i.name = f.name;
            i.method = "POST";
            for (k, (check, trigger)) in syntax::checks().iter().zip(syntax::registry_triggers()).enumerate() {
                // The code stage never calls a check its trigger refuses.
                if !trigger.admits(&i) {
                    continue;
                }
                let cost = ns(|| {
                    black_box(check.inspect(black_box(&i)));
                });
                rows.push((cost, k, check.detector(), f.value.chars().take(50).collect::<String>()));
            }
        }
        rows.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (cost, k, det, text) in rows.iter().take(30) {
            println!("{cost:>8.0} ns  #{k:<2} {det:<18} {text:?}");
        }
        return;
    }
    let engine = Engine::new(EngineConfig { models_dir: None, ..EngineConfig::default() }).expect("engine");
    let stage = PatternStage::new(None).expect("rules");
    for (name, text) in [("form_1k", form_1k()), ("json_1k", json_1k())] {
        let input = ScoreInput { request_text: &text, headers: &[] };
        let parsed = parse_request(&input, FieldLimits::default());
        let views = Views::build(&parsed.fields);
        let decoded = views.decoded_fields.iter().filter(|d| d.is_some()).count();
        println!("{name}: {} fields ({decoded} with a decoded text)", parsed.fields.len());
        let (dbs, guarded) = stage.guard_summary();
        let bytes: String = (0..=255u8).filter(|&b| views.plain.bytes.contains(b) && b.is_ascii_punctuation()).map(char::from).collect();
        println!(
            "  pattern databases: {dbs} ({guarded} guarded); scanned for this plain view at level 1: {} (its punctuation: {bytes})",
            stage.databases_for(&views.plain.bytes, 1)
        );
        println!("  score_patterns        {:>8.0} ns", ns(|| drop(black_box(engine.score_patterns(&input)))));
        println!("  parse                 {:>8.0} ns", ns(|| drop(black_box(parse_request(&input, FieldLimits::default())))));
        println!("  views                 {:>8.0} ns", ns(|| drop(black_box(Views::build(&parsed.fields)))));
        println!(
            "  scan plain + decoded  {:>8.0} ns",
            ns(|| {
                let mut hits = Hits::default();
                stage.scan(&views.plain, ViewKind::Plain, &mut hits);
                stage.scan(&views.decoded, ViewKind::Decoded, &mut hits);
                black_box(hits);
            })
        );
        println!(
            "  code stage            {:>8.0} ns",
            ns(|| {
                let mut hits = Hits::default();
                scoring::code_stage::inspect_fields(&parsed.fields, &views, "POST", &mut hits);
                black_box(hits);
            })
        );
        let plain: Vec<syntax::Input> = parsed.fields.iter().map(|f| syntax::Input::new(f.value)).collect();
        let mut staged = Vec::new();
        for (idx, f) in parsed.fields.iter().enumerate() {
            let mut input = syntax::Input::new(f.value);
            input.place = syntax::Place::from(f.kind);
            input.name = f.name;
            input.method = "POST";
            staged.push(input);
            if let Some(Some(d)) = views.decoded_fields.get(idx) {
                let mut input = syntax::Input::new(d);
                input.place = syntax::Place::from(f.kind);
                input.name = f.name;
                input.method = "POST";
                input.decoded = true;
                staged.push(input);
            }
        }
        println!("    {:<20} {:>8} {:>8}", "check", "plain", "stage");
        for check in syntax::checks() {
            let cost = |inputs: &[syntax::Input]| {
                ns(|| {
                    for i in inputs {
                        black_box(check.inspect(black_box(i)));
                    }
                })
            };
            println!("    {:<20} {:>8.0} {:>8.0}", check.detector(), cost(&plain), cost(&staged));
        }
    }
}
