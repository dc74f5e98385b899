//! Tallies and the printed report of `rampart eval`.

use std::collections::BTreeMap;
use std::time::Duration;

use scoring::detectors::{Backing, DETECTORS};
use scoring::model::ModelError;
use scoring::verdict::ScoreAll;
use scoring::{Engine, ScoreInput};

use super::data::{request_for, Row};
use super::{EvalArgs, Placement};

/// What the engine said about one row.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub score: f32,
    pub detector: &'static str,
    /// Set only when the request was flagged (score above the threshold).
    pub reason: String,
    /// Why a model gave no opinion on this row (its fallback rules scored instead), if so.
    pub model_error: Option<String>,
}

impl Outcome {
    pub fn from_result(result: &ScoreAll) -> Self {
        let model_error = result.model_error.as_ref().map(model_error_code);
        Outcome { score: result.score, detector: result.detector, reason: result.reason.clone(), model_error }
    }

    pub fn flagged(&self) -> bool {
        !self.reason.is_empty()
    }
}

#[derive(Default)]
struct ClassTally {
    rows: usize,
    flagged: usize,
    own: usize,
    no_payload: usize,
}

#[derive(Default)]
pub struct Report {
    threshold: f32,
    classes: BTreeMap<String, ClassTally>,
    benign_rows: usize,
    benign_flagged: usize,
    benign_flagged_patterns: usize,
    fp_by_detector: BTreeMap<&'static str, usize>,
    confusion: BTreeMap<String, BTreeMap<&'static str, usize>>,
    by_source: BTreeMap<String, (usize, usize)>,
    model_errors: BTreeMap<String, usize>,
}

impl Report {
    pub fn new(threshold: f32) -> Self {
        Report { threshold, ..Default::default() }
    }

    pub fn add(&mut self, row: &Row, outcome: &Outcome) {
        if let Some(code) = &outcome.model_error {
            *self.model_errors.entry(code.clone()).or_default() += 1;
        }
        let flagged = outcome.flagged();
        let winner = if flagged { outcome.detector } else { "pass" };
        *self.confusion.entry(row.label.clone()).or_default().entry(winner).or_default() += 1;
        let src = self.by_source.entry(format!("{} [{}]", row.source, row.label)).or_default();
        src.0 += 1;
        src.1 += flagged as usize;
        if row.is_attack() {
            let tally = self.classes.entry(row.label.clone()).or_default();
            if row.has_no_payload() {
                tally.no_payload += 1;
                return;
            }
            tally.rows += 1;
            tally.flagged += flagged as usize;
            tally.own += (flagged && outcome.detector == row.label) as usize;
        } else {
            self.benign_rows += 1;
            if flagged {
                self.benign_flagged += 1;
                *self.fp_by_detector.entry(outcome.detector).or_default() += 1;
                if scoring::detectors::detector_id(outcome.detector).is_some_and(|d| DETECTORS[d].backing == Backing::Regex) {
                    self.benign_flagged_patterns += 1;
                }
            }
        }
    }

    pub fn print(&self, args: &EvalArgs, rows: &[Row], outcomes: &[Outcome], hard: &[(String, Outcome)], elapsed: Duration) {
        let pct = |n: usize, d: usize| if d == 0 { 0.0 } else { 100.0 * n as f64 / d as f64 };
        println!(
            "\n== rampart eval: {} rows, placement {:?}, split {:?}, threshold {:.2}, {:.1} s ({:.0} rows/s)",
            rows.len(),
            args.placement,
            args.split,
            self.threshold,
            elapsed.as_secs_f64(),
            rows.len() as f64 / elapsed.as_secs_f64().max(1e-9)
        );
        println!("\nAttack classes (TPR: flagged by any detector; own: won by the class's own detector)");
        println!("{:<20} {:>7} {:>9} {:>9} {:>11}", "label", "rows", "TPR %", "own %", "no-payload");
        for (label, t) in &self.classes {
            println!("{:<20} {:>7} {:>9.2} {:>9.2} {:>11}", label, t.rows, pct(t.flagged, t.rows), pct(t.own, t.rows), t.no_payload);
        }
        println!(
            "\nBenign: {} rows; FPR all detectors {:.3}% ({}); pattern detectors only {:.3}% ({})",
            self.benign_rows,
            pct(self.benign_flagged, self.benign_rows),
            self.benign_flagged,
            pct(self.benign_flagged_patterns, self.benign_rows),
            self.benign_flagged_patterns
        );
        for (det, n) in &self.fp_by_detector {
            println!("  FPR {:<18} {:>7.3}% ({n})", det, pct(*n, self.benign_rows));
        }
        // A row a model did not score is judged by its fallback rules alone: the figures above
        // are only the models' figures when this says 0.
        let missing: usize = self.model_errors.values().sum();
        println!("\nModel errors (rows a model did not score; its fallback rules scored): {missing}");
        for (code, n) in &self.model_errors {
            println!("  {code:<40} {n}");
        }
        self.print_confusion();
        println!("\nPer source (flagged / rows)");
        for (src, (n, f)) in &self.by_source {
            println!("  {:<58} {:>6} / {:<6} {:>7.2}%", src, f, n, pct(*f, *n));
        }
        println!("\nHard negatives (must pass)");
        for (text, outcome) in hard {
            let verdict = if outcome.flagged() { format!("FLAGGED {}", outcome.reason) } else { "pass".into() };
            println!("  {:<8.4} {:<40} {}", outcome.score, verdict, text);
        }
        let show = |want_attack: bool, limit: usize, label: Option<&str>| {
            rows.iter()
                .zip(outcomes)
                .filter(|(r, o)| r.is_attack() == want_attack && o.flagged() != want_attack)
                .filter(|(r, _)| label.is_none_or(|l| r.label == l) && !r.has_no_payload())
                .take(limit)
                .for_each(|(r, o)| {
                    let text: String = r.text.chars().take(160).collect();
                    println!("  [{}] [{}] {:.3} {} | {}", r.source, r.label, o.score, o.reason, text.replace('\n', "\\n"));
                })
        };
        if args.show_fp > 0 {
            println!("\nFalse positives (first {})", args.show_fp);
            show(false, args.show_fp, None);
        }
        if args.show_fn > 0 {
            println!("\nFalse negatives (first {})", args.show_fn);
            show(true, args.show_fn, args.fn_label.as_deref());
        }
    }

    fn print_confusion(&self) {
        let mut cols: Vec<&'static str> = vec!["pass"];
        cols.extend(DETECTORS.iter().map(|d| d.slug));
        let cols: Vec<&'static str> = cols.into_iter().filter(|c| self.confusion.values().any(|m| m.contains_key(c))).collect();
        println!("\nConfusion (rows: true label; columns: winning detector, `pass` = not flagged)");
        print!("{:<18}", "");
        for c in &cols {
            print!(" {:>8}", abbreviate(c));
        }
        println!();
        for (label, m) in &self.confusion {
            print!("{:<18}", abbreviate(label));
            for c in &cols {
                print!(" {:>8}", m.get(c).copied().unwrap_or(0));
            }
            println!();
        }
    }
}

fn abbreviate(s: &str) -> String {
    s.chars().take(8).collect()
}

/// The issue's hard negatives plus a few of our own; all must pass.
pub const HARD_NEGATIVES: &[&str] = &[
    "O'Brien",
    "Sinéad O'Connor-D'Arcy",
    "select a size from the drop-down menu",
    "5 < 6 and 7 > 3",
    "50% off -- today only!",
    "We need to union the two sets and select the max",
    r"C:\Users\Public\Documents\report.docx",
    r#"{"comment": "I tried to update my order but the page said to select a different date; can you help? Thanks -- Pat"}"#,
    "Please ignore the previous email, the meeting moved to 3pm.",
    "https://example.com/page?x=1&y=2",
];

pub async fn hard_negatives(engine: &Engine, placement: Placement) -> Vec<(String, Outcome)> {
    let mut out = Vec::new();
    for text in HARD_NEGATIVES {
        let row = Row { text: text.to_string(), label: "benign".into(), source: "hard-negative".into(), part: None, caveat: None };
        let (request_text, headers) = request_for(&row, placement);
        let result = engine.score_all(&ScoreInput { request_text: &request_text, headers: &headers }).await;
        out.push((text.to_string(), Outcome::from_result(&result)));
    }
    out
}

/// A short code for why a model gave no opinion, with the model's name.
fn model_error_code(err: &ModelError) -> String {
    match err {
        ModelError::Loading(m) => format!("{m}: loading"),
        ModelError::LoadFailed { model, .. } => format!("{model}: load-failed"),
        ModelError::QueueFull(m) => format!("{m}: queue-full"),
        ModelError::ClientQueueFull(m) => format!("{m}: client-queue-full"),
        ModelError::DeadlineExceeded(m) => format!("{m}: deadline"),
        ModelError::ExecutorGone(m) => format!("{m}: executor-gone"),
        ModelError::Inference(_) => "inference-failed".to_string(),
    }
}
