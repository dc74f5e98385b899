//! Which rules make the pattern stage slow: compiles each rule alone and times scanning the
//! plain view of the benign 1 KB bodies. Prints the costliest rules; asserts nothing.
//!
//! `cargo run --release -p rampart-benches --bin rule_cost [-- N]`
//! `rule_cost try PATTERN...` times candidate patterns alone (a rewrite of a costly rule is
//! judged by this before the eval decides whether it matches the same).

use std::time::Instant;

use rampart_benches::{form_1k, json_1k};
use scoring::fields::FieldLimits;
use scoring::patterns::{rules::load_rules, Hits, PatternStage};
use scoring::request::parse_request;
use scoring::views::{ViewKind, Views};
use scoring::ScoreInput;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let top: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(20);
    let rules = load_rules(None).expect("rules load");
    let candidates = if args.first().map(String::as_str) == Some("try") { &args[1..] } else { &[][..] };
    let bodies = [form_1k(), json_1k()];
    let views: Vec<Views> = bodies
        .iter()
        .map(|t| Views::build(&parse_request(&ScoreInput { request_text: t, headers: &[] }, FieldLimits::default()).fields))
        .collect();
    let time = |stage: &PatternStage| {
        let iters = 2000;
        let start = Instant::now();
        for _ in 0..iters {
            for v in &views {
                let mut hits = Hits::default();
                stage.scan(&v.plain, ViewKind::Plain, &mut hits);
            }
        }
        start.elapsed().as_nanos() as f64 / iters as f64 / views.len() as f64
    };
    if !candidates.is_empty() {
        let template = rules[0].clone();
        for pattern in candidates {
            let rule = scoring::patterns::rules::Rule { pattern: pattern.clone(), level: 1, ..template.clone() };
            match PatternStage::from_rules(vec![rule]) {
                Ok(stage) => println!("{:>7.0}  {pattern}", time(&stage)),
                Err(err) => println!("  error  {pattern}: {err}"),
            }
        }
        return;
    }
    let all = PatternStage::from_rules(rules.clone()).expect("rules compile");
    let empty = PatternStage::from_rules(vec![]).ok();
    println!("all {} rules together, scanned at level 1: {:.0} ns per 1 KB view", rules.len(), time(&all));
    if let Some(empty) = empty {
        println!("no rules (call overhead): {:.0} ns", time(&empty));
    }
    let som: Vec<&str> = all.som_rules().map(|r| r.reason.as_str()).collect();
    println!("rules with start-of-match tracking ({}): {}", som.len(), som.join(", "));
    println!("\ncost per database (its rules alone, guards applied, ns per 1 KB view):");
    let guards: Vec<_> = rules.iter().map(|r| scoring::patterns::guard::required_bytes(&r.pattern, r.case_sensitive)).collect();
    let levels: Vec<u8> = rules.iter().map(|r| r.level).collect();
    for plan in scoring::patterns::guard::plan(&levels, &guards) {
        let shown: String = plan.guard.map_or("(always)".into(), |g| (0..=255u8).filter(|&b| g.contains(b)).map(char::from).collect());
        // Timed at the database's own level: a level-2 database is not scanned at level 1.
        let own: Vec<_> = plan.members.iter().map(|&i| scoring::patterns::rules::Rule { level: 1, ..rules[i].clone() }).collect();
        let stage = PatternStage::from_rules(own).expect("rules compile");
        println!("{:>7.0}  L{} {shown:<16} {} rules", time(&stage), plan.level, plan.members.len());
    }
    // Alone, every rule is timed as if its level were in force.
    let rules: Vec<_> = rules.into_iter().map(|r| scoring::patterns::rules::Rule { level: 1, ..r }).collect();
    println!("\ncost per detector (its rules alone, ns per 1 KB view):");
    let mut slugs: Vec<&str> = rules.iter().map(|r| r.reason.split(':').next().unwrap_or("")).collect();
    slugs.dedup();
    for slug in slugs {
        let own: Vec<_> = rules.iter().filter(|r| r.reason.starts_with(&format!("{slug}:"))).cloned().collect();
        let n = own.len();
        let stage = PatternStage::from_rules(own).expect("rules compile");
        println!("{:>7.0}  {slug} ({n} rules)", time(&stage));
    }
    let mut costs: Vec<(f64, String, String)> = rules
        .iter()
        .map(|r| (time(&PatternStage::from_rules(vec![r.clone()]).expect("rule compiles")), r.reason.clone(), r.pattern.clone()))
        .collect();
    costs.sort_by(|a, b| b.0.total_cmp(&a.0));
    // A prefilter must pay for itself: each prefiltered rule alone, scanned whole and with it.
    println!("\nprefiltered rules (ns per 1 KB view, with the prefilter / scanned whole):");
    for rule in all.prefiltered_rules() {
        let cheap = time(&PatternStage::from_rules(vec![rule.clone()]).expect("rule compiles"));
        let whole = time(&PatternStage::from_rules_whole(vec![rule.clone()]).expect("rule compiles"));
        let verdict = if cheap > whole * 1.15 + 10.0 { "  ! slower with its prefilter" } else { "" };
        println!("{cheap:>7.0} / {whole:>5.0}  {}{verdict}", rule.reason);
    }
    println!("\ncostliest rules alone (ns per 1 KB view):");
    for (ns, reason, pattern) in costs.iter().take(top) {
        let p: String = pattern.chars().take(80).collect();
        println!("{ns:>7.0}  {reason:<45} {p}");
    }
}
