//! Scoring under a policy scope that changes what the engine does (sensitivity, detectors
//! off, exclusions): the gate asks the in-process engine directly with the scope in the
//! context. Without an engine in the process (INFERENCE_URL) these settings cannot travel
//! and the plain scorer answers; the process warns once when a policy asks for them.

use std::sync::Arc;

use scoring::exclusion::ScoringScope;
use scoring::{Engine, ScoreContext, ScoreInput};

use crate::scorer::{join_partial, missing_model_code, ScoreError, ScoreQuery, Verdict};

pub async fn score(engine: &Engine, query: &ScoreQuery, scope: &Arc<ScoringScope>) -> Result<Verdict, ScoreError> {
    let input = ScoreInput { request_text: &query.request_text, headers: &query.headers };
    let mut context = ScoreContext::new(query.client.clone(), None);
    context.scope = Some(scope.clone());
    let all = engine.score_all_with(&input, &context).await;
    Ok(Verdict {
        score: all.score,
        reason: all.reason,
        detector: all.detector.to_string(),
        incomplete: all.model_error.as_ref().map(|e| missing_model_code(e).to_string()),
        partial: join_partial(&query.partial, &all.partial),
    })
}
