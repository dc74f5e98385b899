//! Where `score_patterns` spends its time on the benign 1 KB bodies: parsing, the views, each
//! pattern scan, the code-detector stage, and each code detector alone. Prints ns per body;
//! asserts nothing (the budget is checked by reading the figures, docs/rules.md).
//!
//! `cargo run --release -p rampart-benches --bin stage_cost`

use std::hint::black_box;
use std::time::Instant;

use rampart_benches::{form_1k, json_1k};
use scoring::fields::FieldLimits;
use scoring::patterns::{Hits, PatternStage};
use scoring::request::parse_request;
use scoring::views::{ViewKind, Views};
use scoring::{Engine, EngineConfig, ScoreInput};

const ITERS: u32 = 20_000;

fn ns(mut f: impl FnMut()) -> f64 {
    for _ in 0..ITERS / 10 {
        f();
    }
    let start = Instant::now();
    for _ in 0..ITERS {
        f();
    }
    start.elapsed().as_nanos() as f64 / ITERS as f64
}

fn main() {
    let engine = Engine::new(EngineConfig { models_dir: None, ..EngineConfig::default() }).expect("engine");
    let stage = PatternStage::new(None).expect("rules");
    for (name, text) in [("form_1k", form_1k()), ("json_1k", json_1k())] {
        let input = ScoreInput { request_text: &text, headers: &[] };
        let parsed = parse_request(&input, FieldLimits::default());
        let views = Views::build(&parsed.fields);
        println!("{name}: {} fields", parsed.fields.len());
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
        for check in syntax::checks() {
            let inputs: Vec<syntax::Input> = parsed.fields.iter().map(|f| syntax::Input::new(f.value)).collect();
            let cost = ns(|| {
                for i in &inputs {
                    black_box(check.inspect(black_box(i)));
                }
            });
            println!("    {:<20} {:>8.0} ns", check.detector(), cost);
        }
    }
}
