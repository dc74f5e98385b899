//! Scoring one request at every sensitivity level: one full pass (models included) at the
//! configured level, then the pattern and code detectors at each level 1..=4. Models do not
//! change with the level, so a model verdict of the full pass is carried to every level.

use scoring::detectors::{Backing, DETECTORS};
use scoring::{Engine, ScoreInput};

use crate::scorer::ScoreQuery;

/// Sensitivity levels reported.
pub const LEVELS: [u8; 4] = [1, 2, 3, 4];

/// What the engine said about one request at each level.
#[derive(Clone, Debug, Default)]
pub struct LevelOutcome {
    /// The full verdict at the configured level (models included).
    pub score: f32,
    pub detector: &'static str,
    pub reason: String,
    /// Per level (index 0 = level 1): flagged, and every detector's reason above the
    /// threshold (`<slug>:<rule>`, without the ` (decoded)` suffix; one per detector: its best).
    pub flagged: [bool; 4],
    pub reasons: [Vec<String>; 4],
    /// The front door or the engine named something it could not score (policy decides).
    pub partial: Vec<String>,
    /// A model could not score (missing, failed, past the deadline): its verdict is absent.
    pub model_error: bool,
}

impl LevelOutcome {
    pub fn flagged_at_config(&self) -> bool {
        !self.reason.is_empty()
    }
}

/// Scores `query` fully once and with patterns at each level.
pub async fn score_levels(engine: &Engine, query: &ScoreQuery) -> LevelOutcome {
    let input = ScoreInput { request_text: &query.request_text, headers: &query.headers };
    let full = engine.score_all(&input).await;
    let threshold = engine.threshold();
    // Model detectors above the threshold in the full pass (skipped models count as silent: a
    // pattern already flagged the request at the configured level).
    let model_reasons: Vec<String> = DETECTORS
        .iter()
        .enumerate()
        .filter(|(id, d)| d.backing == Backing::Model && full.breakdown.0[*id] > threshold)
        .map(|(_, d)| format!("{}:model", d.slug))
        .collect();
    let mut out = LevelOutcome {
        score: full.score,
        detector: full.detector,
        reason: full.reason.clone(),
        partial: query.partial.iter().cloned().chain(full.partial.iter().cloned()).collect(),
        model_error: full.model_error.is_some(),
        ..Default::default()
    };
    for (i, level) in LEVELS.iter().enumerate() {
        let analysis = engine.analyze_at(&input, *level);
        let mut reasons = model_reasons.clone();
        for (id, d) in DETECTORS.iter().enumerate() {
            if d.backing != Backing::Regex {
                continue;
            }
            let (score, reason) = engine.pattern_score(&analysis, id);
            if score > threshold {
                reasons.push(reason.trim_end_matches(" (decoded)").to_string());
            }
        }
        // The configured level's verdict is the full one (it can differ from the pattern pass
        // only through the models, which are carried over above).
        let at_config = *level == engine.sensitivity() && out.flagged_at_config();
        out.flagged[i] = at_config || !reasons.is_empty();
        out.reasons[i] = reasons;
    }
    out
}

/// Scores many queries, `concurrency` tasks at a time, in order.
pub async fn score_many(engine: &std::sync::Arc<Engine>, queries: Vec<ScoreQuery>, concurrency: usize) -> Vec<LevelOutcome> {
    let mut outcomes = Vec::with_capacity(queries.len());
    let mut queries = queries.into_iter().peekable();
    while queries.peek().is_some() {
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..concurrency.max(1) {
            let part: Vec<ScoreQuery> = queries.by_ref().take(16).collect();
            if part.is_empty() {
                break;
            }
            let engine = engine.clone();
            tasks.spawn(async move {
                let mut out = Vec::with_capacity(part.len());
                for q in &part {
                    out.push(score_levels(&engine, q).await);
                }
                (i, out)
            });
        }
        let mut parts: Vec<(usize, Vec<LevelOutcome>)> = tasks.join_all().await;
        parts.sort_by_key(|(i, _)| *i);
        outcomes.extend(parts.into_iter().flat_map(|(_, o)| o));
    }
    outcomes
}

pub fn pct(n: usize, d: usize) -> f64 {
    if d == 0 {
        0.0
    } else {
        100.0 * n as f64 / d as f64
    }
}
