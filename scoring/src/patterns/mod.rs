//! The pattern stage: ONE Hyperscan block database for every rule of every regex-backed
//! detector (and the model gates), scanned once per view.

mod compile;
pub mod db_cache;
mod field_local;
pub mod guard;
mod prefilter;
pub mod rules;

use std::path::Path;
use std::sync::Mutex;

use hyperscan::prelude::*;
use syntax::ByteSet;
use thiserror::Error;

use crate::detectors::{DetectorId, DETECTORS};
use crate::views::{Selected, View, ViewKind};
use compile::{compile_pattern, find_bad_rule, Compiled};
pub use rules::{Rule, RuleRole, ViewScope};

/// Errors of the pattern layer (all at start-up: scanning itself cannot fail on input).
#[derive(Debug, Error)]
pub enum PatternError {
    #[error("cannot read rules from {path}: {detail}")]
    Io { path: String, detail: String },
    #[error("bad rule file {file}: {detail}")]
    BadFile { file: String, detail: String },
    /// `file`: ` in <path>` when the rule came from a rules directory, else empty.
    #[error("rule `{reason}`{file} does not compile in Hyperscan: {detail}")]
    BadPattern { reason: String, file: String, detail: String },
    #[error("hyperscan: {0}")]
    Hyperscan(String),
}

/// What produced a hit: a pattern rule, or a code detector of the `syntax` crate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HitSource {
    /// Index into [`PatternStage::rules`].
    Rule(usize),
    /// A code detector's reason (`<slug>:<id>`).
    Code(&'static str),
}

/// The best match of one detector in one request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    pub source: HitSource,
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
    /// Best fallback hit per model-backed detector: its score when the model is missing.
    pub fallback: [Option<Hit>; DETECTORS.len()],
    /// The sensitivity level in force: rules of a higher level are ignored.
    pub sensitivity: u8,
    /// What the request's policy scope takes out (`exclusion.rs`): such hits are not recorded.
    pub excluded: crate::exclusion::Excluded,
}

impl Default for Hits {
    fn default() -> Self {
        Hits::at_level(1)
    }
}

impl Hits {
    /// No hits yet; rules and findings above `sensitivity` will not count.
    pub fn at_level(sensitivity: u8) -> Self {
        Hits {
            best: [None; DETECTORS.len()],
            gated: Vec::new(),
            fallback: [None; DETECTORS.len()],
            sensitivity,
            excluded: Default::default(),
        }
    }

    /// A code detector's finding in `field` (its level already checked by the caller).
    pub fn record_code(&mut self, detector: DetectorId, reason: &'static str, score: f32, decoded: bool, field: usize) {
        if self.excluded.skips(detector, None, field) {
            return;
        }
        let hit = Hit { source: HitSource::Code(reason), score, decoded, field };
        Self::keep_better(&mut self.best[detector], hit);
    }

    fn keep_better(slot: &mut Option<Hit>, hit: Hit) {
        let better = match slot {
            None => true,
            // Prefer the higher score; on a tie prefer a match that needed no decoding.
            Some(old) => hit.score > old.score || (hit.score == old.score && old.decoded && !hit.decoded),
        };
        if better {
            *slot = Some(hit);
        }
    }

    fn record(&mut self, rule_idx: usize, rule: &Rule, kind: ViewKind, field: usize) {
        if rule.level > self.sensitivity || self.excluded.skips(rule.detector, Some(&rule.id), field) {
            return;
        }
        match rule.role {
            RuleRole::Gate => {
                if !self.gated.contains(&(rule.detector, field)) {
                    self.gated.push((rule.detector, field));
                }
            }
            RuleRole::Detect | RuleRole::Fallback => {
                let hit = Hit { source: HitSource::Rule(rule_idx), score: rule.score, decoded: kind == ViewKind::Decoded, field };
                let slot = match rule.role {
                    RuleRole::Fallback => &mut self.fallback[rule.detector],
                    _ => &mut self.best[rule.detector],
                };
                Self::keep_better(slot, hit);
            }
        }
    }
}

/// One Hyperscan database and the bytes a view must hold for any of its rules to match.
struct GuardedDb {
    db: BlockDatabase,
    /// None: scanned on every view.
    guard: Option<ByteSet>,
    /// The level all its rules count at: below it the database is not scanned.
    level: u8,
}

impl GuardedDb {
    fn wanted(&self, bytes: &ByteSet) -> bool {
        self.guard.as_ref().is_none_or(|g| g.intersects(bytes))
    }
}

/// How far back a new candidate is compared with the pending ones (more than the prefiltered
/// rules that can match in one field; a duplicate beyond it is removed before confirming).
const PENDING_LOOKBACK: usize = 64;

/// What one concurrent scan needs: Hyperscan scratch sized for every database, a view to
/// copy the fields a guarded database must see into, and the prefiltered rules' candidates
/// waiting for confirmation (`prefilter.rs`): (rule index, start of its segment in the view).
struct ScanScratch {
    hs: Scratch,
    selected: View,
    pending: Vec<(usize, usize)>,
}

pub struct PatternStage {
    /// The rules split by byte guard (`guard.rs`): a benign view skips most databases.
    dbs: Vec<GuardedDb>,
    rules: Vec<Rule>,
    /// Per rule: it matches NUL on purpose, so its matches carry a start offset and are
    /// checked to lie within one field.
    checks_span: Vec<bool>,
    /// Per rule: the shared databases scan only a cheap part of it (its prefilter, or what
    /// follows its line-start window), and each field that part matches in is confirmed by
    /// scanning it with the whole rule, compiled alone here (`prefilter.rs`).
    confirm: Vec<Option<BlockDatabase>>,
    /// Hyperscan scratch is per concurrent scan; a small pool avoids reallocating it. Each
    /// scratch is sized for every database.
    scratch_pool: Mutex<Vec<ScanScratch>>,
}

impl PatternStage {
    /// Loads and compiles the rules (built-in, or from `rules_dir`).
    pub fn new(rules_dir: Option<&Path>) -> Result<Self, PatternError> {
        let (rules, files) = rules::load_rules_from(rules_dir)?;
        Self::from_rules(rules).map_err(|err| match err {
            // Name the file the refused rule came from (rules are in load order).
            PatternError::BadPattern { reason, detail, .. } => {
                let file = files.iter().find(|(_, reasons)| reasons.contains(&reason)).map(|(f, _)| format!(" in {f}")).unwrap_or_default();
                PatternError::BadPattern { reason, file, detail }
            }
            other => other,
        })
    }

    pub fn from_rules(rules: Vec<Rule>) -> Result<Self, PatternError> {
        Self::build(rules, true)
    }

    /// Every rule scanned whole in the shared databases, no prefilters, one match per rule
    /// (SINGLEMATCH): the reference the prefiltered stage is tested against field by field.
    /// Not for scoring: a first match the stage drops hides the later ones.
    pub fn from_rules_whole(rules: Vec<Rule>) -> Result<Self, PatternError> {
        Self::build(rules, false)
    }

    fn build(rules: Vec<Rule>, prefilters: bool) -> Result<Self, PatternError> {
        // Every match of the rule must hold its prefilter (`PatternStage::new` names the file).
        if let Some(bad) = rules.iter().find(|r| r.prefilter.as_ref().is_some_and(|p| !prefilter::is_factor_run(&r.pattern, p))) {
            return Err(PatternError::BadPattern {
                reason: bad.reason.clone(),
                file: String::new(),
                detail: "its prefilter is not a run of the pattern's top-level factors (pieces whose concatenation is the pattern), so a match need not hold it".into(),
            });
        }
        let compiled: Vec<Compiled> = rules.iter().enumerate().map(|(i, r)| compile_pattern(i, r, prefilters)).collect();
        let checks_span = compiled.iter().map(|c| c.matches_nul).collect();
        let mut confirm = Vec::with_capacity(rules.len());
        for (c, rule) in compiled.iter().zip(&rules) {
            let db = match &c.confirm {
                None => None,
                Some(whole) => Some(db_cache::build(vec![whole.clone()]).map_err(|err| PatternError::BadPattern {
                    reason: rule.reason.clone(),
                    file: String::new(),
                    detail: err.to_string(),
                })?),
            };
            confirm.push(db);
        }
        let patterns: Vec<Pattern> = compiled.into_iter().map(|c| c.scanned).collect();
        let guards: Vec<Option<ByteSet>> = rules.iter().map(|r| guard::required_bytes(&r.pattern, r.case_sensitive)).collect();
        let levels: Vec<u8> = rules.iter().map(|r| r.level).collect();
        let mut plans = guard::plan(&levels, &guards);
        if plans.is_empty() {
            // No rules: Hyperscan refuses an empty database, reported below like any error.
            plans.push(guard::DbPlan { level: 1, guard: None, members: Vec::new() });
        }
        let mut dbs = Vec::with_capacity(plans.len());
        for plan in plans {
            let group: Vec<Pattern> = plan.members.iter().map(|&i| patterns[i].clone()).collect();
            let db: BlockDatabase = match db_cache::build(group) {
                Ok(db) => db,
                Err(err) => return Err(find_bad_rule(&rules).unwrap_or(PatternError::Hyperscan(err.to_string()))),
            };
            dbs.push(GuardedDb { db, guard: plan.guard, level: plan.level });
        }
        let hs = alloc_scratch(&dbs, &confirm).map_err(|e| PatternError::Hyperscan(e.to_string()))?;
        let scratch = ScanScratch { hs, selected: View::default(), pending: Vec::new() };
        Ok(PatternStage { dbs, rules, checks_span, confirm, scratch_pool: Mutex::new(vec![scratch]) })
    }

    /// Rules whose shared scan looks only for a cheap part of them, then confirms.
    pub fn prefiltered_rules(&self) -> impl Iterator<Item = &Rule> {
        self.rules.iter().zip(&self.confirm).filter(|(_, c)| c.is_some()).map(|(r, _)| r)
    }

    /// How many databases the rules were split into, and how many rules have a byte guard.
    pub fn guard_summary(&self) -> (usize, usize) {
        (self.dbs.len(), self.dbs.iter().filter(|d| d.guard.is_some()).count())
    }

    /// How many databases a view holding `bytes` is scanned with at `sensitivity`.
    pub fn databases_for(&self, bytes: &ByteSet, sensitivity: u8) -> usize {
        self.dbs.iter().filter(|d| d.level <= sensitivity && d.wanted(bytes)).count()
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Rules compiled with start-of-match tracking (they match NUL on purpose); each costs.
    pub fn som_rules(&self) -> impl Iterator<Item = &Rule> {
        self.rules.iter().zip(&self.checks_span).filter(|(_, som)| **som).map(|(r, _)| r)
    }

    /// Number of detecting (non-gate) rules per detector.
    pub fn rule_count(&self, detector: DetectorId) -> usize {
        self.rules.iter().filter(|r| r.detector == detector && r.role == RuleRole::Detect).count()
    }

    /// Scans one view and records its matches at `hits.sensitivity`: databases of a higher
    /// level are skipped, and a guarded database sees only the fields that hold one of its
    /// guard bytes (most benign fields hold none).
    pub fn scan(&self, view: &View, kind: ViewKind, hits: &mut Hits) {
        if view.is_empty() {
            return;
        }
        let Some(mut scratch) = self.take_scratch() else { return };
        let sensitivity = hits.sensitivity;
        for guarded in self.dbs.iter().filter(|d| d.level <= sensitivity) {
            let target = match &guarded.guard {
                None => view,
                Some(guard) => match view.select(guard, &mut scratch.selected) {
                    Selected::None => continue,
                    Selected::All => view,
                    Selected::Some => &scratch.selected,
                },
            };
            self.scan_one(&guarded.db, target, kind, &scratch.hs, &mut scratch.pending, hits);
        }
        self.scratch_pool.lock().unwrap_or_else(|p| p.into_inner()).push(scratch);
    }

    fn scan_one(&self, db: &BlockDatabase, view: &View, kind: ViewKind, hs: &Scratch, pending: &mut Vec<(usize, usize)>, hits: &mut Hits) {
        let rules = &self.rules;
        let checks_span = &self.checks_span;
        pending.clear();
        let result = db.scan(view.text.as_bytes(), hs, |id: u32, from: u64, to: u64, _flags: u32| {
            let rule_idx = id as usize;
            if let Some(rule) = rules.get(rule_idx) {
                let spans_fields = checks_span[rule_idx] && !view.within_one_field(from as usize, to as usize);
                if !(spans_fields || rule.views == ViewScope::Decoded && kind == ViewKind::Plain) {
                    // `to` is one past the last matched byte.
                    let at = (to as usize).saturating_sub(1);
                    if self.confirm[rule_idx].is_some() {
                        // Hyperscan's scratch is busy until the scan returns: confirm after,
                        // once per (rule, segment). A rule's matches in one field arrive
                        // together, so a field full of the cheap part (`true true …`) adds
                        // one entry, not one per match.
                        let start = view.segment_range(at).start;
                        if !pending.iter().rev().take(PENDING_LOOKBACK).any(|&p| p == (rule_idx, start)) {
                            pending.push((rule_idx, start));
                        }
                    } else {
                        Self::record_match(rule_idx, rule, view, kind, at, hits);
                    }
                }
            }
            Matching::Continue
        });
        if let Err(err) = result {
            tracing::error!(error = %err, "hyperscan scan failed");
        }
        if !pending.is_empty() {
            self.confirm_pending(view, kind, hs, pending, hits);
        }
    }

    fn record_match(rule_idx: usize, rule: &Rule, view: &View, kind: ViewKind, at: usize, hits: &mut Hits) {
        let in_prose_only = rule.prose_level.is_some_and(|l| l > hits.sensitivity) && crate::prose::is_long_prose(view.segment_text(at));
        if !in_prose_only {
            hits.record(rule_idx, rule, kind, view.field_at(at));
        }
    }

    /// Confirms each (rule, segment) the cheap part of a prefiltered rule matched in by
    /// scanning the segment with the whole rule, once per pair, and records what it confirms.
    fn confirm_pending(&self, view: &View, kind: ViewKind, hs: &Scratch, pending: &mut Vec<(usize, usize)>, hits: &mut Hits) {
        pending.sort_unstable();
        pending.dedup();
        for &(rule_idx, start) in pending.iter() {
            let Some(whole) = &self.confirm[rule_idx] else { continue };
            let segment = view.segment_range(start);
            let mut matched = false;
            let result = whole.scan(&view.text.as_bytes()[segment], hs, |_: u32, _: u64, _: u64, _: u32| {
                matched = true;
                Matching::Terminate
            });
            // A scan the callback stopped (at the match) returns an error too.
            if let (Err(err), false) = (result, matched) {
                tracing::error!(error = %err, "hyperscan confirm scan failed");
            }
            if matched {
                Self::record_match(rule_idx, &self.rules[rule_idx], view, kind, start, hits);
            }
        }
    }

    /// Whether a gate rule of `detector` matches somewhere in `text` (one field's text, not
    /// a view): picks the lines of an Overflow chunk worth a model call.
    pub fn gates(&self, detector: DetectorId, text: &str) -> bool {
        self.gates_by(detector, text, |_| true)
    }

    /// Whether a gate rule of `detector` that selects pieces matches in `text` (a window of
    /// `sql_breakouts`, a suffix of a header value in `header_tails`).
    pub fn gates_piece(&self, detector: DetectorId, text: &str) -> bool {
        self.gates_by(detector, text, |rule| rule.selects_pieces)
    }

    fn gates_by(&self, detector: DetectorId, text: &str, counts: impl Fn(&Rule) -> bool) -> bool {
        if text.is_empty() {
            return false;
        }
        let Some(scratch) = self.take_scratch() else { return true };
        let mut gated = false;
        // Prefiltered gate rules whose cheap part matched: the whole rule decides, after.
        let mut to_confirm: Vec<usize> = Vec::new();
        let rules = &self.rules;
        let is_gate = |id: u32| rules.get(id as usize).is_some_and(|r| r.role == RuleRole::Gate && r.detector == detector && counts(r));
        let bytes = ByteSet::of(text);
        for guarded in self.dbs.iter().filter(|d| d.wanted(&bytes)) {
            let _ = guarded.db.scan(text.as_bytes(), &scratch.hs, |id: u32, _from: u64, _to: u64, _flags: u32| {
                if !is_gate(id) {
                    Matching::Continue
                } else if self.confirm[id as usize].is_some() {
                    if !to_confirm.contains(&(id as usize)) {
                        to_confirm.push(id as usize);
                    }
                    Matching::Continue
                } else {
                    gated = true;
                    Matching::Terminate
                }
            });
            if gated {
                break;
            }
        }
        for whole in to_confirm.iter().filter_map(|&r| self.confirm[r].as_ref()) {
            if gated {
                break;
            }
            let _ = whole.scan(text.as_bytes(), &scratch.hs, |_: u32, _: u64, _: u64, _: u32| {
                gated = true;
                Matching::Terminate
            });
        }
        self.scratch_pool.lock().unwrap_or_else(|p| p.into_inner()).push(scratch);
        gated
    }

    fn take_scratch(&self) -> Option<ScanScratch> {
        let pooled = self.scratch_pool.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match pooled {
            Some(s) => Some(s),
            None => match alloc_scratch(&self.dbs, &self.confirm) {
                Ok(hs) => Some(ScanScratch { hs, selected: View::default(), pending: Vec::new() }),
                Err(err) => {
                    tracing::error!(error = %err, "cannot allocate hyperscan scratch");
                    None
                }
            },
        }
    }
}

/// A scratch big enough for every database, the confirming one included.
fn alloc_scratch(dbs: &[GuardedDb], confirm: &[Option<BlockDatabase>]) -> Result<Scratch, hyperscan::Error> {
    let mut scratch = dbs[0].db.alloc_scratch()?;
    for db in dbs[1..].iter().map(|g| &g.db).chain(confirm.iter().flatten()) {
        db.realloc_scratch(&mut scratch)?;
    }
    Ok(scratch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gates_tells_one_text_apart() {
        let stage = PatternStage::new(None).unwrap();
        let sqli = detector_id("sqli").unwrap();
        assert!(stage.gates(sqli, "1; DROP TABLE users--"));
        assert!(stage.gates(sqli, "\"Hello\" - said Tom"));
        assert!(!stage.gates(sqli, "red running shoes size 42"));
        assert!(!stage.gates(detector_id("xss").unwrap(), "1; DROP TABLE users--"), "only that detector's gates");
        assert!(!stage.gates(sqli, ""));
    }
    use crate::detectors::detector_id;
    use crate::fields::{FieldKind, Fields};
    use crate::views::Views;

    fn rule(slug: &str, id: &str, pattern: &str) -> Rule {
        Rule {
            detector: detector_id(slug).unwrap(),
            id: id.into(),
            pattern: pattern.into(),
            score: 0.9,
            description: String::new(),
            views: ViewScope::All,
            role: RuleRole::Detect,
            case_sensitive: false,
            level: 1,
            prose_level: None,
            prefilter: None,
            reason: format!("{slug}:{id}"),
            selects_pieces: true,
        }
    }

    fn hits_for(stage: &PatternStage, values: &[&str]) -> Hits {
        let mut fields = Fields::default();
        for v in values {
            fields.push(FieldKind::QueryValue, "q", v);
        }
        let views = Views::build(&fields);
        let mut hits = Hits::default();
        stage.scan(&views.plain, ViewKind::Plain, &mut hits);
        hits
    }

    #[test]
    fn matches_never_span_two_fields() {
        let stage = PatternStage::from_rules(vec![
            rule("path-traversal", "nul-after-ext", r"\.jsp\x00"),
            rule("xss", "tag-then-handler", r"<img.{0,40}onerror"),
            rule("ssti", "negated", r"\{\{[^}]{0,20}\}\}"),
        ])
        .unwrap();
        let pt = detector_id("path-traversal").unwrap();
        let xss = detector_id("xss").unwrap();
        let ssti = detector_id("ssti").unwrap();
        // Each piece is benign; only the separator between them could complete a match.
        let hits = hits_for(&stage, &["/shop/index.jsp", "<img", "onerror is a word", "{{name", "}}"]);
        assert_eq!(hits.best[pt], None);
        assert_eq!(hits.best[xss], None);
        assert_eq!(hits.best[ssti], None);
        // Anchors are field edges: a comment terminator at the end of a middle field counts.
        let sqli_end = PatternStage::from_rules(vec![rule("path-traversal", "end", r"/etc/passwd$")]).unwrap();
        let hits = hits_for(&sqli_end, &["a", "../../etc/passwd", "b"]);
        assert_eq!(hits.best[pt].map(|h| h.field), Some(1));
        let hits = hits_for(&sqli_end, &["a", "/etc/passwd.bak", "b"]);
        assert_eq!(hits.best[pt], None);
        // Inside one field the same rules fire, NUL rule included, and the field is reported.
        let hits = hits_for(&stage, &["benign", "/download/report.jsp\0.png", "<img src=x onerror=alert(1)>"]);
        assert_eq!(hits.best[pt].map(|h| h.field), Some(1));
        assert_eq!(hits.best[xss].map(|h| h.field), Some(2));
    }

    /// A prose-level rule skips a match inside a long prose field, but a real match in a later
    /// field still counts (the rule reports every match, not only the first).
    #[test]
    fn prose_level_skips_only_the_prose_field() {
        let mut r = rule("path-traversal", "dotdot", r"\.\./\.\./");
        r.prose_level = Some(2);
        let stage = PatternStage::from_rules(vec![r]).unwrap();
        let pt = detector_id("path-traversal").unwrap();
        let chat = "in my react app I import the button like this from ../../components/Button and it fails, why is that";
        assert_eq!(hits_for(&stage, &[chat]).best[pt], None);
        assert_eq!(hits_for(&stage, &[chat, "../../../etc/passwd"]).best[pt].map(|h| h.field), Some(1));
        let mut at_two = Hits::at_level(2);
        let mut fields = Fields::default();
        fields.push(FieldKind::QueryValue, "q", chat);
        stage.scan(&Views::build(&fields).plain, ViewKind::Plain, &mut at_two);
        assert!(at_two.best[pt].is_some(), "counts at its prose level");
    }

    /// A gate selects every field it matches: a decoy in an earlier field must not keep the
    /// attack's field from the model (rules once reported only their first match).
    #[test]
    fn a_gate_selects_every_field_it_matches() {
        let mut gate = rule("sqli", "or-true", r"\bor\s+true\b");
        gate.role = RuleRole::Gate;
        let stage = PatternStage::from_rules(vec![gate]).unwrap();
        let hits = hits_for(&stage, &["this or true", "benign", "1' or true -- "]);
        let sqli = detector_id("sqli").unwrap();
        assert_eq!(hits.gated, vec![(sqli, 0), (sqli, 2)]);
    }

    /// A field full of a prefilter's part is confirmed once, and its candidates take one
    /// entry, not one per match (a request cannot grow the pending list with repetition).
    #[test]
    fn a_field_full_of_the_cheap_part_is_confirmed_once() {
        let mut r = rule("sqli", "or-true", r"\bor\s*true\b");
        r.prefilter = Some(r"true\b".into());
        let stage = PatternStage::from_rules(vec![r.clone()]).unwrap();
        let sqli = detector_id("sqli").unwrap();
        let padding = "true ".repeat(2000);
        let hits = hits_for(&stage, &[&padding, "x or true", &padding]);
        assert_eq!(hits.best[sqli].map(|h| h.field), Some(1));
        let scratch = stage.take_scratch().unwrap();
        assert_eq!(scratch.pending, vec![(0, 0), (0, 10_001), (0, 10_011)], "one entry per (rule, field)");
        r.prefilter = Some("or true".into());
        assert!(PatternStage::from_rules(vec![r]).is_err(), "not a run of factors: refused");
    }

    #[test]
    fn a_bad_pattern_is_named_at_start_up() {
        let err = PatternStage::from_rules(vec![rule("xss", "ok", "<script"), rule("xss", "broken", r"(a")]).err().unwrap();
        assert!(err.to_string().contains("xss:broken"), "{err}");
    }
}
