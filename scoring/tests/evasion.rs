//! The generative evasion suite, bounded sample (`make test`): every registered family of the
//! `evasion` crate, `PER_FAMILY` seeded variants each, placed round-robin over every placement
//! (query, form, JSON, header, cookie, XML, multipart) and scored by the full engine (models
//! included) at the default sensitivity. Each family must reach 95 % recall. The full run,
//! with per-mutation and per-level tables, is `rampart eval --evasion` (docs/EVAL.md).

mod common;

use evasion::place::{to_request, Placement};
use evasion::{families, sample, Variant};
use scoring::ScoreInput;

const PER_FAMILY: usize = 140;
const SEED: u64 = 20_261_124;
const TARGET: f64 = 0.95;

fn input_parts(variant: &Variant, index: usize) -> (String, Vec<(String, String)>) {
    let placement = Placement::ALL[index % Placement::ALL.len()];
    let request = to_request(variant, placement);
    (request.request_text(), request.headers.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_family_meets_its_recall_target() {
    let engine = common::engine_with_models();
    let mut failures = Vec::new();
    assert!(!families().is_empty(), "no evasion family is registered");
    for family in families() {
        let variants = sample(*family, SEED, PER_FAMILY);
        let mut caught = 0;
        let mut misses = Vec::new();
        for (i, variant) in variants.iter().enumerate() {
            let (text, headers) = input_parts(variant, i);
            let verdict = engine.score_all(&ScoreInput { request_text: &text, headers: &headers }).await;
            if verdict.score > engine.threshold() || !verdict.partial.is_empty() {
                caught += 1;
            } else if misses.len() < 5 {
                misses.push(format!("{} [{}] {:?}", variant.mutation, Placement::ALL[i % Placement::ALL.len()].name(), variant.payload));
            }
        }
        let recall = caught as f64 / variants.len() as f64;
        println!("{:<22} {:>4}/{:<4} {:>6.1}%", family.name(), caught, variants.len(), recall * 100.0);
        if recall < TARGET {
            failures.push(format!("{}: {:.1}% < 95%; first misses:\n    {}", family.name(), recall * 100.0, misses.join("\n    ")));
        }
    }
    assert!(failures.is_empty(), "families under target:\n{}", failures.join("\n"));
}

/// The same sample is the same at every run: a miss can be reproduced from the seed.
#[test]
fn samples_are_reproducible() {
    for family in families() {
        assert_eq!(sample(*family, SEED, 8), sample(*family, SEED, 8), "{}", family.name());
    }
}

/// The red-team families whose detection is pattern rules (no model behind them): with the
/// models off they still reach the target, so a rule edit that reopens a gap the red team
/// found (`)(&)` filters, XInclude in an XML body, scheme-relative private hosts, a `$where`
/// busy loop) fails here and not only in the eval. SQLi and XPath tautologies are the SQLi
/// model's (the test above, models on).
#[test]
fn redteam_rule_families_hold_without_models() {
    let engine = common::patterns_only();
    let mut failures = Vec::new();
    for name in ["redteam-ldap", "redteam-xxe", "redteam-ssrf", "redteam-nosqli", "redteam-ssti"] {
        let family = evasion::family(name).expect("registered");
        let variants = sample(family, SEED ^ 0x5eed, 400);
        let mut misses = Vec::new();
        for (i, variant) in variants.iter().enumerate() {
            let (text, headers) = input_parts(variant, i);
            let verdict = engine.score_patterns(&ScoreInput { request_text: &text, headers: &headers });
            if verdict.score <= engine.threshold() {
                misses.push(format!("{} {:?}", variant.mutation, variant.payload));
            }
        }
        let recall = 1.0 - misses.len() as f64 / variants.len() as f64;
        println!("{name:<16} {:>6.1}% (patterns only)", recall * 100.0);
        if recall < TARGET {
            failures.push(format!(
                "{name}: {:.1}%; first misses:\n    {}",
                recall * 100.0,
                misses.iter().take(5).cloned().collect::<Vec<_>>().join("\n    ")
            ));
        }
    }
    assert!(failures.is_empty(), "red-team families under target without models:\n{}", failures.join("\n"));
}
