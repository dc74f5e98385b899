//! The engine: parse → views → one pattern scan per view → models on the fields where they
//! matter → one verdict. Spec 4.2 rules 4 and 5.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use thiserror::Error;

use crate::context::ScoreContext;
use crate::detectors::{detector_id, Backing, DetectorId, DETECTORS, PROMPT_INJECTION, SQLI, XSS, XSS_MATCH_SCORE};
pub use crate::engine_config::EngineConfig;
use crate::exclusion::{Excluded, ScoringScope};
use crate::fields::{FieldKind, Fields};
use crate::model::ModelError;
use crate::models::{ModelSet, ModelStatus};
use crate::patterns::{HitSource, Hits, PatternError, PatternStage};
use crate::prompt_fields::PromptSource;
use crate::request::{parse_request, ParsedRequest, ScoreInput};
use crate::verdict::{Breakdown, DetectorScore, ScoreAll};
use crate::views::{ViewKind, Views};

#[derive(Debug, Error)]
pub enum EngineError {
    #[error(transparent)]
    Patterns(#[from] PatternError),
    #[error("unknown detector `{0}`")]
    UnknownDetector(String),
    /// Checked at start so that a misplaced install fails loudly instead of running with every
    /// model "failed" (and, with the default fail-closed policy, refusing every text).
    #[error("models folder `{}` not found: set RAMPART_MODELS_DIR (--models-dir) to the folder holding sqli/ and prompt-injection/, or RAMPART_NO_MODELS=true to run without models", .0.display())]
    ModelsDirMissing(PathBuf),
    #[error("ONNX Runtime library `{}` not found: set ORT_DYLIB_PATH (--ort-dylib) to libonnxruntime.so (scripts/bootstrap fetches it), or RAMPART_NO_MODELS=true to run without models", .0.display())]
    OrtLibraryMissing(PathBuf),
}

/// Everything the synchronous stages learnt about one request.
pub struct Analysis {
    /// The rule set the request was scanned with: its hits index these rules, even when a
    /// rules reload swaps in another set before the request is scored.
    pub patterns: Arc<PatternStage>,
    pub request: ParsedRequest,
    pub views: Views,
    pub hits: Hits,
}

pub struct Engine {
    /// Swapped whole by [`Engine::reload_rules`]; each analysis holds the set it started with.
    patterns: arc_swap::ArcSwap<PatternStage>,
    models: Arc<ModelSet>,
    config: EngineConfig,
}

impl Engine {
    /// Compiles the rules at once; models load in the background (see [`Engine::model_status`]).
    /// A models folder or ONNX Runtime library that does not exist is an error here; a model
    /// that exists but fails to load is reported by `model_status` and decided by policy.
    pub fn new(config: EngineConfig) -> Result<Self, EngineError> {
        if let Some(dir) = &config.models_dir {
            if !dir.is_dir() {
                return Err(EngineError::ModelsDirMissing(dir.clone()));
            }
            if !config.ort_dylib.is_file() {
                return Err(EngineError::OrtLibraryMissing(config.ort_dylib.clone()));
            }
        }
        crate::patterns::db_cache::configure(&config.db_cache);
        let patterns = PatternStage::new(config.rules_dir.as_deref())?;
        let models = ModelSet::start(config.models_dir.as_deref(), &config);
        Ok(Engine { patterns: arc_swap::ArcSwap::from_pointee(patterns), models, config })
    }

    pub fn threshold(&self) -> f32 {
        self.config.threshold
    }

    /// The rule set in force.
    pub fn patterns(&self) -> Arc<PatternStage> {
        self.patterns.load_full()
    }

    /// Loads and compiles the rules of `rules_dir` (None: the built-in rules) and puts them in
    /// force for the next request; requests being scored finish on the set they started with.
    /// Compiling takes a while: call it off the request path. On an error (a bad file, a rule
    /// Hyperscan refuses) the rules in force stay. Returns how many rules are now in force.
    pub fn reload_rules(&self, rules_dir: Option<&Path>) -> Result<usize, PatternError> {
        let stage = PatternStage::new(rules_dir)?;
        let count = stage.rules().len();
        self.patterns.store(Arc::new(stage));
        Ok(count)
    }

    pub fn model_status(&self) -> [(DetectorId, ModelStatus); 2] {
        [(SQLI, self.models.status(SQLI)), (PROMPT_INJECTION, self.models.status(PROMPT_INJECTION))]
    }

    pub fn model_path(&self, detector: DetectorId) -> Option<&Path> {
        self.models.path(detector)
    }

    /// True once every model has loaded (or models are disabled).
    pub fn ready(&self) -> bool {
        self.models.all_ready()
    }

    /// Every enabled detector with its backing: the pattern detectors, and the model ones
    /// whose model is not disabled (a model still loading counts: it is armed once loaded).
    pub fn enabled_detectors(&self) -> Vec<(&'static str, crate::detectors::Backing)> {
        let statuses = self.model_status();
        crate::detectors::DETECTORS
            .iter()
            .enumerate()
            .filter(|(id, d)| {
                d.backing == crate::detectors::Backing::Regex
                    || statuses.iter().any(|(mid, s)| mid == id && *s != crate::models::ModelStatus::Disabled)
            })
            .map(|(_, d)| (d.slug, d.backing))
            .collect()
    }

    pub fn detector(&self, slug: &str) -> Result<DetectorId, EngineError> {
        detector_id(slug).ok_or_else(|| EngineError::UnknownDetector(slug.to_string()))
    }

    pub fn sensitivity(&self) -> u8 {
        self.config.sensitivity
    }

    /// Parse, normalise, scan and run the code detectors: the synchronous part of every score.
    pub fn analyze(&self, input: &ScoreInput<'_>) -> Analysis {
        self.analyze_at(input, self.config.sensitivity)
    }

    /// [`Engine::analyze`] at another sensitivity level (the eval prints every level).
    pub fn analyze_at(&self, input: &ScoreInput<'_>, sensitivity: u8) -> Analysis {
        self.analyze_scoped(input, sensitivity, None)
    }

    /// [`Engine::analyze_at`] with a policy scope's exclusions dropped as hits are recorded.
    fn analyze_scoped(&self, input: &ScoreInput<'_>, sensitivity: u8, scope: Option<&ScoringScope>) -> Analysis {
        let request = parse_request(input, self.config.limits.clone());
        let views = Views::build(&request.fields);
        let mut hits = Hits::at_level(sensitivity);
        if let Some(scope) = scope {
            hits.excluded = Excluded::resolve(scope, &request.fields);
        }
        let patterns = self.patterns.load_full();
        patterns.scan(&views.plain, ViewKind::Plain, &mut hits);
        patterns.scan(&views.decoded, ViewKind::Decoded, &mut hits);
        crate::code_stage::inspect_fields(&request.fields, &views, &request.method, &mut hits);
        crate::request_checks::inspect_request(input, &request.fields, &mut hits);
        Analysis { patterns, request, views, hits }
    }

    /// Pattern score and reason of one regex-backed detector.
    pub fn pattern_score(&self, analysis: &Analysis, detector: DetectorId) -> (f32, String) {
        match analysis.hits.best[detector] {
            None => (0.0, String::new()),
            Some(hit) => {
                let score = if detector == XSS { XSS_MATCH_SCORE } else { hit.score };
                let reason = match hit.source {
                    HitSource::Rule(idx) => analysis.patterns.rules()[idx].reason.as_str(),
                    HitSource::Code(reason) => reason,
                };
                let reason = if hit.decoded { format!("{reason} (decoded)") } else { reason.to_string() };
                (score, reason)
            }
        }
    }

    /// Spec 4.2 rules 4–5: every detector after one normalisation pass; patterns first, models
    /// skipped when a pattern already crossed the threshold.
    pub async fn score_all(&self, input: &ScoreInput<'_>) -> ScoreAll {
        self.score_all_with(input, &ScoreContext::default()).await
    }

    /// [`Engine::score_all`] for one client within one deadline: the model queue shares work
    /// fairly between clients and drops work past its deadline (the verdict then carries a
    /// `DeadlineExceeded` model error, which the front door's policy turns into a refusal).
    pub async fn score_all_with(&self, input: &ScoreInput<'_>, context: &ScoreContext) -> ScoreAll {
        let own_deadline = Instant::now() + self.config.scoring_deadline;
        let scope = context.scope.clone();
        let context = ScoreContext {
            client: context.client.clone(),
            // The caller's deadline, never later than the engine's own.
            deadline: Some(context.deadline.map_or(own_deadline, |d| d.min(own_deadline))),
            scope: None,
        };
        let scope = scope.as_deref();
        let sensitivity = scope.and_then(|s| s.sensitivity).unwrap_or(self.config.sensitivity);
        let analysis = self.analyze_scoped(input, sensitivity, scope);
        let (mut breakdown, mut reasons) = self.pattern_breakdown(&analysis);
        let mut fields = analysis.hits.best.map(|hit| hit.map(|h| h.field));
        let pattern_max = breakdown.0.iter().cloned().fold(0.0, f32::max);
        let models_skipped = pattern_max > scope.and_then(|s| s.threshold).unwrap_or(self.config.threshold);
        let mut model_error = None;
        let mut partial = analysis_partial(&analysis);
        if !models_skipped {
            let (sqli, pi) =
                tokio::join!(self.model_score(&analysis, SQLI, &context), self.model_score(&analysis, PROMPT_INJECTION, &context));
            for (id, result) in [(SQLI, sqli), (PROMPT_INJECTION, pi)] {
                match result {
                    Ok(scored) => {
                        breakdown.0[id] = scored.score.score;
                        reasons[id] = scored.score.reason;
                        fields[id] = scored.field;
                        if scored.budget_hit {
                            partial.push(format!("model-budget:{}", DETECTORS[id].slug));
                        }
                    }
                    Err(err) => {
                        // The model is missing: its pattern fallback (rules/<slug>.fallback.toml)
                        // still scores, so losing the model is not losing the detector.
                        if let Some((score, reason)) = self.fallback_score(&analysis, id) {
                            breakdown.0[id] = score;
                            reasons[id] = reason;
                            fields[id] = analysis.hits.fallback[id].map(|h| h.field);
                        }
                        model_error = Some(err);
                    }
                }
            }
        }
        let evidence = crate::verdict::top_evidence(&breakdown, &reasons, &fields, &analysis.request.fields);
        let mut verdict = self.verdict(breakdown, reasons, models_skipped, model_error);
        verdict.partial = partial;
        verdict.evidence = evidence;
        verdict
    }

    /// One detector (spec 4.2 `/score/{detector}`); model detectors always run their model.
    pub async fn score_detector(&self, detector: DetectorId, input: &ScoreInput<'_>) -> Result<DetectorScore, ModelError> {
        let analysis = self.analyze(input);
        let scored = match DETECTORS[detector].backing {
            Backing::Regex => {
                let (score, reason) = self.pattern_score(&analysis, detector);
                DetectorScore { score, reason }
            }
            Backing::Model => self.model_score(&analysis, detector, &ScoreContext::default()).await?.score,
        };
        let reason = if scored.score > self.config.threshold { scored.reason } else { String::new() };
        Ok(DetectorScore { score: scored.score, reason })
    }

    /// Pattern and code detectors only: what the request costs when no model runs (benches,
    /// eval).
    pub fn score_patterns(&self, input: &ScoreInput<'_>) -> ScoreAll {
        self.score_patterns_at(input, self.config.sensitivity)
    }

    /// [`Engine::score_patterns`] at another sensitivity level.
    pub fn score_patterns_at(&self, input: &ScoreInput<'_>, sensitivity: u8) -> ScoreAll {
        let analysis = self.analyze_at(input, sensitivity);
        let (breakdown, reasons) = self.pattern_breakdown(&analysis);
        let fields = analysis.hits.best.map(|hit| hit.map(|h| h.field));
        let evidence = crate::verdict::top_evidence(&breakdown, &reasons, &fields, &analysis.request.fields);
        let mut verdict = self.verdict(breakdown, reasons, true, None);
        verdict.partial = analysis_partial(&analysis);
        verdict.evidence = evidence;
        verdict
    }

    /// A model-backed detector's pattern fallback: `<slug>:fallback:<rule>`; None without a hit.
    pub fn fallback_score(&self, analysis: &Analysis, detector: DetectorId) -> Option<(f32, String)> {
        let hit = analysis.hits.fallback[detector]?;
        let HitSource::Rule(idx) = hit.source else { return None };
        let rule = &analysis.patterns.rules()[idx];
        let decoded = if hit.decoded { " (decoded)" } else { "" };
        Some((hit.score, format!("{}:fallback:{}{decoded}", DETECTORS[detector].slug, rule.id)))
    }

    /// Scores and reasons of every regex-backed detector (model detectors left at 0).
    fn pattern_breakdown(&self, analysis: &Analysis) -> (Breakdown, [String; DETECTORS.len()]) {
        let mut breakdown = Breakdown::default();
        let mut reasons: [String; DETECTORS.len()] = Default::default();
        for (id, info) in DETECTORS.iter().enumerate() {
            if info.backing == Backing::Regex {
                let (score, reason) = self.pattern_score(analysis, id);
                breakdown.0[id] = score;
                reasons[id] = reason;
            }
        }
        (breakdown, reasons)
    }

    fn verdict(
        &self,
        breakdown: Breakdown,
        mut reasons: [String; DETECTORS.len()],
        models_skipped: bool,
        model_error: Option<ModelError>,
    ) -> ScoreAll {
        let (winner, score) =
            breakdown.0.iter().enumerate().fold((None, 0.0f32), |(w, best), (id, &s)| if s > best { (Some(id), s) } else { (w, best) });
        let clean = score <= self.config.threshold;
        let reason = match winner {
            Some(id) if !clean => std::mem::take(&mut reasons[id]),
            _ => String::new(),
        };
        ScoreAll {
            score,
            reason,
            detector: winner.map(|id| DETECTORS[id].slug).unwrap_or(""),
            breakdown,
            models_skipped,
            model_error,
            partial: Vec::new(),
            evidence: Vec::new(),
        }
    }

    /// Runs a model on the fields where it can matter; the detector score is the max. Long
    /// texts go in overlapping windows (the SQLi featurizer reads 4 KiB; prompt-injection
    /// texts are cut into 2 KiB prose chunks), so no byte of a candidate is left unread
    /// unless the per-request budget is spent, which the result says.
    async fn model_score(&self, analysis: &Analysis, detector: DetectorId, context: &ScoreContext) -> Result<ModelScore, ModelError> {
        let candidates = self.model_texts(analysis, detector);
        if candidates.is_empty() {
            return Ok(ModelScore::default());
        }
        let fields = &analysis.request.fields;
        let window = if detector == PROMPT_INJECTION { PROMPT_WINDOW } else { SQLI_WINDOW };
        let budget = self.config.max_model_fields.max(1);
        let mut texts: Vec<String> = Vec::new();
        // For each text, the index into `candidates` it came from.
        let mut origin: Vec<usize> = Vec::new();
        // The score each text must reach to count (break-out windows: `sql_breakouts`).
        let mut min_scores: Vec<f32> = Vec::new();
        let mut budget_hit = false;
        'fields: for (ci, candidate) in candidates.iter().enumerate() {
            for (piece, min_score) in self.model_pieces(fields, candidate, detector, window, &mut budget_hit) {
                if texts.len() == budget {
                    budget_hit = true;
                    break 'fields;
                }
                // After cutting: an Overflow chunk is cut at its line breaks first.
                texts.push(if detector == SQLI { sql_spaces(piece) } else { piece.to_string() });
                origin.push(ci);
                min_scores.push(min_score);
            }
        }
        let mut scores = self.models.score_many_with(detector, texts, context).await?;
        for (score, _) in scores.iter_mut().zip(&min_scores).filter(|(score, min_score)| **score < **min_score) {
            *score = 0.0;
        }
        let (best_idx, best) = scores.iter().enumerate().fold((0, 0.0f32), |(bi, b), (i, &s)| if s > b { (i, s) } else { (bi, b) });
        let decoded = candidates.get(origin.get(best_idx).copied().unwrap_or(0)).is_some_and(|c| c.decoded);
        let slug = DETECTORS[detector].slug;
        let reason = if decoded { format!("{slug}:model (decoded)") } else { format!("{slug}:model") };
        let field = candidates.get(origin.get(best_idx).copied().unwrap_or(0)).map(|c| c.field);
        Ok(ModelScore { score: DetectorScore { score: best, reason }, budget_hit, field })
    }

    /// The texts `detector`'s model reads, with their fields. SQLi: the gated fields (decoded
    /// view) and the text of their base64 segments — the gate saw that text in the decoded
    /// view, and the field's own text is base64. Prompt injection: `prompt_fields`.
    fn model_texts(&self, analysis: &Analysis, detector: DetectorId) -> Vec<ModelText> {
        let fields = &analysis.request.fields;
        let views = &analysis.views;
        if detector == PROMPT_INJECTION {
            return crate::prompt_fields::prompt_texts(fields, views, self.config.min_prompt_words)
                .into_iter()
                .filter(|t| !analysis.hits.excluded.skips(PROMPT_INJECTION, None, t.field))
                .map(|t| ModelText { field: t.field, decoded: t.source != PromptSource::Field, text: t.text, base64: false })
                .collect();
        }
        let mut out = Vec::new();
        for f in analysis.hits.gated.iter().filter(|(d, _)| *d == detector).map(|(_, f)| *f) {
            let decoded = views.decoded_fields.get(f).is_some_and(|d| d.is_some());
            out.push(ModelText { field: f, text: views.model_text(fields, f).to_string(), decoded, base64: false });
            for (_, text) in views.base64_texts.iter().filter(|(idx, _)| *idx == f) {
                out.push(ModelText { field: f, text: text.clone(), decoded, base64: true });
            }
        }
        self.sql_readings(analysis, &mut out);
        out
    }

    /// Adds the SQL reading (`Views::sql_text`: comments and stray IIS percents gone) of every
    /// field where it differs and is gated, after the texts above so the budget serves those
    /// first. A reading is one more text, never a replacement: the detector score is the max.
    /// `union#x\nselect` and `se%lect` hide from the gate as well as from the model's n-grams,
    /// so the gate is asked again on the reading.
    fn sql_readings(&self, analysis: &Analysis, out: &mut Vec<ModelText>) {
        let fields = &analysis.request.fields;
        let gated = out.len();
        for (f, field) in fields.iter().enumerate() {
            if field.kind == FieldKind::Overflow || analysis.hits.excluded.skips(SQLI, None, f) {
                continue;
            }
            let Some(text) = analysis.views.sql_text(fields, f) else { continue };
            if out[..gated].iter().any(|t| t.field == f) || analysis.patterns.gates(SQLI, &text) {
                out.push(ModelText { field: f, text, decoded: true, base64: false });
            }
        }
    }

    /// The pieces a model reads of one text ([`Self::field_pieces`]) and, for the SQLi model,
    /// the string break-outs inside them (`sql_breakouts`: prose in front of a quote dilutes
    /// the injection after it), each with the score it must reach to count (0 for the
    /// others). `cut` is set when a text had more break-outs than are read.
    fn model_pieces<'t>(
        &self,
        fields: &Fields,
        candidate: &'t ModelText,
        detector: DetectorId,
        window: Window,
        cut: &mut bool,
    ) -> Vec<(&'t str, f32)> {
        let pieces = self.field_pieces(fields, candidate, detector, window);
        let mut out: Vec<(&str, f32)> = pieces.iter().map(|&piece| (piece, 0.0)).collect();
        // Header and cookie values have their own tails (`header_tails`); a base64 text
        // decoded from one does not.
        let header = !candidate.base64
            && fields.get(candidate.field).is_some_and(|field| matches!(field.kind, FieldKind::Header | FieldKind::Cookie));
        if detector == SQLI && !header {
            let patterns = self.patterns.load();
            for &piece in &pieces {
                let (breakouts, unread) = crate::sql_breakouts::breakout_windows(piece, |w| patterns.gates_piece(SQLI, w));
                *cut |= unread;
                for breakout in breakouts {
                    if !out.iter().any(|&(text, _)| text == breakout.text) {
                        out.push((breakout.text, breakout.min_score));
                    }
                }
            }
        }
        out
    }

    /// The pieces of one text: an Overflow chunk goes to the SQLi model line by line, only
    /// the lines its gate selects (`overflow_lines`); anything else in windows, plus a
    /// header's tails and a path's segments for the SQLi model.
    fn field_pieces<'t>(&self, fields: &Fields, candidate: &'t ModelText, detector: DetectorId, window: Window) -> Vec<&'t str> {
        let text = candidate.text.as_str();
        if candidate.base64 {
            return windows(text, window);
        }
        let f = candidate.field;
        let overflow = fields.get(f).is_some_and(|field| field.kind == FieldKind::Overflow);
        if detector == SQLI && overflow {
            let patterns = self.patterns.load();
            let lines = crate::overflow_lines::sqli_texts(text, |line| patterns.gates(SQLI, line));
            if !lines.is_empty() {
                return lines.into_iter().flat_map(|line| windows(line, window)).collect();
            }
        }
        let mut pieces = windows(text, window);
        // A header carries its payload after the client's own value (a 100-byte browser
        // User-Agent, then `' OR 1=1--`): read whole, the prefix dilutes the injection's
        // n-grams. The model also reads the value from its first quote, and its tail.
        let header = fields.get(f).is_some_and(|field| matches!(field.kind, FieldKind::Header | FieldKind::Cookie));
        if detector == SQLI && header {
            let patterns = self.patterns.load();
            let tails = crate::header_tails::header_sql_tails(text, |suffix| patterns.gates_piece(SQLI, suffix));
            pieces.extend(tails.into_iter().flat_map(|tail| windows(tail, window)));
        }
        let path = fields.get(f).is_some_and(|field| field.kind == FieldKind::Path);
        if detector == SQLI && path {
            let patterns = self.patterns.load();
            let segments = crate::path_segments::path_sql_segments(text, |segment| patterns.gates(SQLI, segment));
            pieces.extend(segments.into_iter().flat_map(|segment| windows(segment, window)));
        }
        pieces
    }

    /// The texts the prompt-injection model reads for a request (the eval and benches count
    /// them; `prompt_fields` says which).
    pub fn prompt_texts(&self, analysis: &Analysis) -> Vec<crate::prompt_fields::PromptText> {
        crate::prompt_fields::prompt_texts(&analysis.request.fields, &analysis.views, self.config.min_prompt_words)
    }
}

/// One text for a model and the field it came from.
struct ModelText {
    field: usize,
    text: String,
    /// Decoded or otherwise transformed from the field's value (said in the reason).
    decoded: bool,
    /// A base64 segment's text (read in plain windows).
    base64: bool,
}

/// One model's result for a request, and whether its text budget ran out.
#[derive(Default)]
struct ModelScore {
    score: DetectorScore,
    budget_hit: bool,
    /// The field of the best-scoring text.
    field: Option<usize>,
}

/// Window of a long text: `size` bytes, consecutive windows overlapping by `overlap`.
#[derive(Clone, Copy)]
struct Window {
    size: usize,
    overlap: usize,
}

/// The SQLi featurizer reads the first 4 KiB of a text: longer texts go in 4 KiB windows
/// every 2 KiB.
const SQLI_WINDOW: Window = Window { size: 4096, overlap: 2048 };

/// Prompt-injection prose in 2 KiB chunks overlapping 512 bytes: each chunk stays within the
/// transformer's window cap, so none of it is skipped by window subsampling.
const PROMPT_WINDOW: Window = Window { size: 2048, overlap: 512 };

/// The pieces the prompt-injection model reads of one long text (the eval replays them).
pub fn prompt_pieces(text: &str) -> Vec<&str> {
    windows(text, PROMPT_WINDOW)
}

/// `text` cut into overlapping windows on char boundaries; a short text is one window.
fn windows(text: &str, window: Window) -> Vec<&str> {
    if text.len() <= window.size {
        return vec![text];
    }
    let step = window.size - window.overlap;
    let mut out = Vec::new();
    let mut start = 0;
    loop {
        let mut end = (start + window.size).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        out.push(&text[start..end]);
        if end == text.len() {
            return out;
        }
        let mut next = start + step;
        while !text.is_char_boundary(next) {
            next += 1;
        }
        start = next;
    }
}

/// The SQLi model's text with every whitespace byte SQL engines accept between tokens (tab,
/// LF, vertical tab, form feed, CR) as a plain space: `OR\x0b1=1` is `OR 1=1` to MySQL, and
/// the model's n-grams were learnt on spaces.
fn sql_spaces(text: &str) -> String {
    text.chars().map(|c| if matches!(c, '\t' | '\n' | '\u{b}' | '\u{c}' | '\r') { ' ' } else { c }).collect()
}

/// Partial-coverage slugs of the synchronous stages: bounds that left input unread.
fn analysis_partial(analysis: &Analysis) -> Vec<String> {
    let mut partial = Vec::new();
    if analysis.request.fields.arena_capped {
        partial.push("arena-cap".to_string());
    }
    if analysis.views.decode_rounds_hit {
        partial.push("decode-rounds".to_string());
    }
    if analysis.views.base64_budget_hit {
        partial.push("base64-budget".to_string());
    }
    partial
}

#[cfg(test)]
mod tests {
    use super::{prompt_pieces, windows, SQLI_WINDOW};

    #[test]
    fn prompt_pieces_cover_the_text_on_char_boundaries() {
        let text = "é".repeat(3000);
        let parts = prompt_pieces(&text);
        assert!(parts.len() > 1);
        assert!(parts.iter().all(|p| p.len() <= 2048 && p.chars().all(|c| c == 'é')));
        assert!(text.ends_with(parts.last().unwrap()) && text.starts_with(parts[0]));
        assert_eq!(prompt_pieces("short"), ["short"]);
    }

    #[test]
    fn long_texts_are_windowed_without_gaps() {
        let text: String = (0..10_000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        let parts = windows(&text, SQLI_WINDOW);
        assert_eq!(parts.len(), 4);
        assert!(parts.iter().all(|p| p.len() <= 4096));
        assert!(parts.last().unwrap().ends_with(&text[9_000..]));
        assert_eq!(windows("short", SQLI_WINDOW), ["short"]);
        let accents = "é".repeat(3000);
        assert!(windows(&accents, SQLI_WINDOW).iter().all(|p| p.chars().all(|c| c == 'é')));
    }
}
