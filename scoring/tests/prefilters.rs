//! Prefiltered rules (`patterns/prefilter.rs`) scan a cheap part of the pattern and confirm each
//! field it matches in with the whole rule. That must never change what a rule matches. For
//! every prefiltered rule, its stage with the prefilter and its stage scanned whole are given
//! the same requests (generated attacks of every evasion family, benign texts that hold the
//! cheap parts, and both placed after padding of every length around a window's bound, on a
//! second line, and among other fields) and must report the same hit in the same field.

use scoring::fields::{FieldKind, Fields};
use scoring::patterns::rules::{load_rules, Rule, RuleRole};
use scoring::patterns::{Hits, PatternStage};
use scoring::views::{ViewKind, Views};

mod common;

/// Benign texts that hold the parts the prefilters look for (`like`, `true`, `../`, `=`).
const BENIGN: &[&str] = &[
    "I would like a refund, or a replacement if that is not possible",
    "true",
    "is it true or false that null values sort first",
    "see ../docs/readme.md and ../../lib for the rest",
    "a=1 and b<2 or c>3",
    "weather in (city) between 9 and 5",
    "order by 2 -- comments",
    "....../......",
    "{{ name }} and {% block %}",
];

fn texts() -> Vec<String> {
    let mut out = common::attack_texts(11, 40);
    out.extend(BENIGN.iter().map(|s| s.to_string()));
    out
}

/// Requests made of one text: alone, after padding of lengths around the windows' bounds
/// (16, 40, 60, 64), after a newline, and between other fields.
fn placements(text: &str) -> Vec<Vec<String>> {
    let mut out = vec![vec![text.to_string()]];
    for pad in [1, 15, 16, 17, 39, 41, 59, 61, 63, 64, 65, 80] {
        out.push(vec![format!("{}{text}", "a".repeat(pad))]);
        out.push(vec![format!("{} {text}", "word ".repeat(pad / 5 + 1))]);
    }
    out.push(vec![format!("first line\n{text}")]);
    out.push(vec![format!("{text}\nsecond line")]);
    out.push(vec!["benign value".into(), text.into(), "true".into()]);
    out.push(vec![BENIGN[0].into(), format!("xx{text}"), text.into()]);
    out
}

fn views_of(values: &[String]) -> Views {
    let mut fields = Fields::default();
    for v in values {
        fields.push(FieldKind::QueryValue, "q", v);
    }
    Views::build(&fields)
}

/// The fields a single-rule stage reports in one view of the request: a gate reports every
/// field it selects, a scoring rule its best (first) field.
fn reported(stage: &PatternStage, views: &Views, kind: ViewKind, level: u8) -> Vec<usize> {
    let mut hits = Hits::at_level(level);
    stage.scan(if kind == ViewKind::Plain { &views.plain } else { &views.decoded }, kind, &mut hits);
    let mut fields: Vec<usize> = hits.gated.iter().map(|&(_, f)| f).collect();
    fields.extend(hits.best.iter().chain(&hits.fallback).flatten().map(|h| h.field));
    fields.sort();
    fields
}

/// What the whole pattern matches in each field scanned alone (where one match per rule is
/// all there is to find), as the stage would report it for the request.
fn expected(whole: &PatternStage, role: RuleRole, values: &[String], kind: ViewKind, level: u8) -> Vec<usize> {
    let matched: Vec<usize> =
        (0..values.len()).filter(|&i| !reported(whole, &views_of(std::slice::from_ref(&values[i])), kind, level).is_empty()).collect();
    match role {
        RuleRole::Gate => matched,
        _ => matched.into_iter().take(1).collect(),
    }
}

#[test]
fn a_prefiltered_rule_matches_exactly_what_its_whole_pattern_matches() {
    let rules: Vec<Rule> = load_rules(None).expect("rules load");
    let all = PatternStage::from_rules(rules.clone()).expect("rules compile");
    let prefiltered: Vec<&Rule> = all.prefiltered_rules().collect();
    assert!(prefiltered.len() >= 10, "windows and named prefilters found ({})", prefiltered.len());
    let texts = texts();
    let mut compared = 0;
    let mut matched = 0;
    for rule in prefiltered {
        let cheap = PatternStage::from_rules(vec![rule.clone()]).expect("compiles");
        let whole = PatternStage::from_rules_whole(vec![rule.clone()]).expect("compiles");
        assert_eq!(cheap.prefiltered_rules().count(), 1);
        for text in &texts {
            for request in placements(text) {
                let views = views_of(&request);
                for (kind, level) in [(ViewKind::Plain, 4), (ViewKind::Decoded, 4), (ViewKind::Plain, 1)] {
                    let want = expected(&whole, rule.role, &request, kind, level);
                    assert_eq!(
                        reported(&cheap, &views, kind, level),
                        want,
                        "rule {} ({kind:?}, level {level}) on {request:?}",
                        rule.reason
                    );
                    compared += 1;
                    matched += usize::from(!want.is_empty());
                }
            }
        }
    }
    // The comparison means something only if the rules did match a good share of requests.
    assert!(matched > 2_000, "{matched} of {compared} requests matched a prefiltered rule");
}

/// Best score per detector (and per fallback): with many rules a tie between two rules of
/// one detector may record either, depending on the order matches arrive in.
fn scores(stage: &PatternStage, values: &[String]) -> String {
    let views = views_of(values);
    let mut hits = Hits::at_level(4);
    stage.scan(&views.plain, ViewKind::Plain, &mut hits);
    stage.scan(&views.decoded, ViewKind::Decoded, &mut hits);
    let score = |h: &Option<scoring::patterns::Hit>| h.map(|h| (h.score, h.decoded));
    format!("{:?} {:?}", hits.best.iter().map(score).collect::<Vec<_>>(), hits.fallback.iter().map(score).collect::<Vec<_>>())
}

#[test]
fn the_whole_rule_set_scores_the_same_with_and_without_prefilters() {
    let rules = load_rules(None).expect("rules load");
    let cheap = PatternStage::from_rules(rules.clone()).expect("compiles");
    let whole = PatternStage::from_rules_whole(rules).expect("compiles");
    for text in texts() {
        for request in placements(&text).into_iter().take(6) {
            assert_eq!(scores(&cheap, &request), scores(&whole, &request), "{request:?}");
        }
    }
}
