//! The pattern stage: ONE Hyperscan block database for every rule of every regex-backed
//! detector (and the model gates), scanned once per view.

pub mod rules;

use std::path::Path;
use std::sync::Mutex;

use hyperscan::prelude::*;
use thiserror::Error;

use crate::detectors::{DetectorId, DETECTORS};
use crate::views::{View, ViewKind};
pub use rules::{Rule, RuleRole, ViewScope};

/// Errors of the pattern layer (all at start-up: scanning itself cannot fail on input).
#[derive(Debug, Error)]
pub enum PatternError {
    #[error("cannot read rules from {path}: {detail}")]
    Io { path: String, detail: String },
    #[error("bad rule file {file}: {detail}")]
    BadFile { file: String, detail: String },
    #[error("rule `{reason}` does not compile in Hyperscan: {detail}")]
    BadPattern { reason: String, detail: String },
    #[error("hyperscan: {0}")]
    Hyperscan(String),
}

/// The best match of one detector in one request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    pub rule: usize,
    pub score: f32,
    /// The rule matched only after deep decoding.
    pub decoded: bool,
    pub field: usize,
}

/// What one request's scans found.
#[derive(Debug)]
pub struct Hits {
    /// Best hit per detector (indexed by DetectorId).
    pub best: [Option<Hit>; DETECTORS.len()],
    /// Fields selected by a model gate: (detector, field index), deduplicated.
    pub gated: Vec<(DetectorId, usize)>,
}

impl Default for Hits {
    fn default() -> Self {
        Hits { best: [None; DETECTORS.len()], gated: Vec::new() }
    }
}

impl Hits {
    fn record(&mut self, rule_idx: usize, rule: &Rule, kind: ViewKind, field: usize) {
        match rule.role {
            RuleRole::Gate => {
                if !self.gated.contains(&(rule.detector, field)) {
                    self.gated.push((rule.detector, field));
                }
            }
            RuleRole::Detect => {
                let hit = Hit { rule: rule_idx, score: rule.score, decoded: kind == ViewKind::Decoded, field };
                let slot = &mut self.best[rule.detector];
                let better = match slot {
                    None => true,
                    // Prefer the higher score; on a tie prefer a match that needed no decoding.
                    Some(old) => hit.score > old.score || (hit.score == old.score && old.decoded && !hit.decoded),
                };
                if better {
                    *slot = Some(hit);
                }
            }
        }
    }
}

pub struct PatternStage {
    db: BlockDatabase,
    rules: Vec<Rule>,
    /// Hyperscan scratch is per concurrent scan; a small pool avoids reallocating it.
    scratch_pool: Mutex<Vec<Scratch>>,
}

impl PatternStage {
    /// Loads and compiles the rules (built-in, or from `rules_dir`).
    pub fn new(rules_dir: Option<&Path>) -> Result<Self, PatternError> {
        let rules = rules::load_rules(rules_dir)?;
        Self::from_rules(rules)
    }

    pub fn from_rules(rules: Vec<Rule>) -> Result<Self, PatternError> {
        let patterns: Vec<Pattern> = rules.iter().enumerate().map(|(i, r)| compile_pattern(i, r)).collect();
        let db: BlockDatabase = match Patterns(patterns).build() {
            Ok(db) => db,
            Err(err) => return Err(find_bad_rule(&rules).unwrap_or(PatternError::Hyperscan(err.to_string()))),
        };
        let first = db.alloc_scratch().map_err(|e| PatternError::Hyperscan(e.to_string()))?;
        Ok(PatternStage { db, rules, scratch_pool: Mutex::new(vec![first]) })
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Number of detecting (non-gate) rules per detector.
    pub fn rule_count(&self, detector: DetectorId) -> usize {
        self.rules.iter().filter(|r| r.detector == detector && r.role == RuleRole::Detect).count()
    }

    /// Scans one view and records its matches.
    pub fn scan(&self, view: &View, kind: ViewKind, hits: &mut Hits) {
        if view.is_empty() {
            return;
        }
        let scratch = self.take_scratch();
        let Some(scratch) = scratch else { return };
        let rules = &self.rules;
        let result = self.db.scan(view.text.as_bytes(), &scratch, |id: u32, _from: u64, to: u64, _flags: u32| {
            let rule_idx = id as usize;
            if let Some(rule) = rules.get(rule_idx) {
                if !(rule.views == ViewScope::Decoded && kind == ViewKind::Plain) {
                    // `to` is one past the last matched byte.
                    let field = view.field_at((to as usize).saturating_sub(1));
                    hits.record(rule_idx, rule, kind, field);
                }
            }
            Matching::Continue
        });
        if let Err(err) = result {
            tracing::error!(error = %err, "hyperscan scan failed");
        }
        self.scratch_pool.lock().unwrap_or_else(|p| p.into_inner()).push(scratch);
    }

    fn take_scratch(&self) -> Option<Scratch> {
        let pooled = self.scratch_pool.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match pooled {
            Some(s) => Some(s),
            None => match self.db.alloc_scratch() {
                Ok(s) => Some(s),
                Err(err) => {
                    tracing::error!(error = %err, "cannot allocate hyperscan scratch");
                    None
                }
            },
        }
    }
}

fn compile_pattern(id: usize, rule: &Rule) -> Pattern {
    Pattern {
        expression: rule.pattern.clone(),
        flags: CompileFlags::CASELESS | CompileFlags::SINGLEMATCH,
        id: Some(id),
        ext: Default::default(),
        som: None,
    }
}

/// After a failed multi-pattern compile, compiles rules one by one to name the culprit.
fn find_bad_rule(rules: &[Rule]) -> Option<PatternError> {
    rules.iter().enumerate().find_map(|(i, r)| {
        let one: Result<BlockDatabase, _> = compile_pattern(i, r).build();
        one.err().map(|e| PatternError::BadPattern { reason: r.reason.clone(), detail: e.to_string() })
    })
}
