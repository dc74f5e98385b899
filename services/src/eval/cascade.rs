//! `rampart eval`, cascade section: what the prompt-injection cascade (scoring/src/model/
//! cascade.rs) saves and what it costs, on sets it was never trained or calibrated on.
//!
//! Every text is placed as the user message of a JSON chat body and goes the request path to
//! the model (`prompt::RequestPath`: the engine's analysis and `Engine::prompt_texts`, 2 KiB
//! pieces), then each piece through BOTH stages: stage 1 and the transformer alone.
//! Printed per set:
//! - skip rate: share of pieces stage 1 decides alone (never sent to the transformer);
//! - recall loss: of the pieces (and texts) the transformer flags (> threshold), the share
//!   the cascade passes because stage 1 skipped them.
//!
//! ShareGPT held-out part: the prompt-injection split of issue 13 (models/train/pi_heldout.py):
//! `sha1("sharegpt:" + text)` first 32 bits / 2^32 < 0.4. Stage 1 trains only on >= 0.5.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use scoring::model::StageScores;
use scoring::models::ModelSet;
use scoring::{EngineConfig, ScoreContext};

use super::data::{load_source, sha1_prefix};

const SHAREGPT_TEST: f64 = 0.4;
/// Pieces per call and calls in flight: batches stay full; the section runs with the eval's
/// offline queue bounds (`offline_config`), so the lane never refuses them.
pub(super) const CHUNK: usize = 32;
pub(super) const IN_FLIGHT: usize = 4;

/// One evaluated set: file stem, label, and which rows belong to it.
struct EvalSet {
    name: &'static str,
    file: &'static str,
    label: &'static str,
    pick: fn(&str) -> bool,
}

fn sharegpt_held_out(text: &str) -> bool {
    let salted = format!("sharegpt:{text}");
    (sha1_prefix(salted.as_bytes()) as f64 / 4_294_967_296.0) < SHAREGPT_TEST
}

const SETS: &[EvalSet] = &[
    EvalSet { name: "sharegpt held-out (benign chat)", file: "sharegpt_user_messages", label: "benign", pick: sharegpt_held_out },
    EvalSet { name: "alpaca_eval (benign)", file: "benign_prompts_alpaca_eval", label: "benign", pick: |_| true },
    EvalSet { name: "jailbreakbench (attack)", file: "jailbreakbench_artifacts", label: "prompt-injection", pick: |_| true },
];

pub async fn run(data: &Path, config: &EngineConfig) -> Result<(), String> {
    let Some(models_dir) = config.models_dir.as_deref() else {
        println!("\n== Prompt-injection cascade: models disabled, nothing to measure");
        return Ok(());
    };
    let models = ModelSet::start(Some(models_dir), config);
    super::quality::wait_ready(&models).await?;
    let Some(skip_below) = models.cascade_skip_below() else {
        println!("\n== Prompt-injection cascade: not in use (RAMPART_PI_CASCADE=off, no stage1/ folder, or stage 1 calibrated against another transformer: see the log)");
        return Ok(());
    };
    println!(
        "\n== Prompt-injection cascade: stage 1 skips pieces scoring < {skip_below:.5}; each piece is also scored by the\n   \
         transformer alone. skip = pieces stage 1 decides alone; loss = transformer-flagged (> {}) pieces/texts the\n   \
         cascade passes. Target: recall loss <= 0.5 %.",
        config.threshold
    );
    println!(
        "  {:<34} {:>6} {:>7} {:>8} {:>9} {:>11} {:>9} {:>11}",
        "set", "texts", "pieces", "skip %", "flagged", "loss piece", "flagged", "loss text"
    );
    let models = Arc::new(models);
    let request_path = super::prompt::RequestPath::new(config)?;
    for set in SETS {
        let rows: Vec<String> =
            load_source(data, set.file)?.into_iter().filter(|r| r.label == set.label && (set.pick)(&r.text)).map(|r| r.text).collect();
        let (pieces, origin) = request_path.chat_pieces(rows.iter().map(String::as_str));
        let started = Instant::now();
        let stages = both_stages(&models, pieces).await?;
        print_set(set.name, rows.len(), &stages, &origin, config.threshold);
        tracing::debug!(set = set.name, secs = started.elapsed().as_secs_f64(), "cascade set scored");
    }
    Ok(())
}

async fn both_stages(models: &Arc<ModelSet>, pieces: Vec<String>) -> Result<Vec<StageScores>, String> {
    let chunks: Vec<Vec<String>> = pieces.chunks(CHUNK).map(|c| c.to_vec()).collect();
    let mut results: Vec<Option<Vec<StageScores>>> = vec![None; chunks.len()];
    let mut tasks = tokio::task::JoinSet::new();
    for (i, chunk) in chunks.into_iter().enumerate() {
        if tasks.len() >= IN_FLIGHT {
            collect(&mut tasks, &mut results).await?;
        }
        let models = models.clone();
        tasks.spawn(async move { (i, models.cascade_stages(chunk, &ScoreContext::default()).await) });
    }
    while !tasks.is_empty() {
        collect(&mut tasks, &mut results).await?;
    }
    Ok(results.into_iter().flatten().flatten().collect())
}

type StageResult = (usize, Result<Option<Vec<StageScores>>, scoring::model::ModelError>);

async fn collect(tasks: &mut tokio::task::JoinSet<StageResult>, results: &mut [Option<Vec<StageScores>>]) -> Result<(), String> {
    let Some(joined) = tasks.join_next().await else { return Ok(()) };
    let (i, result) = joined.map_err(|e| format!("cascade task failed: {e}"))?;
    let stages = result.map_err(|e| e.to_string())?.ok_or("the cascade went away during the eval")?;
    results[i] = Some(stages);
    Ok(())
}

fn print_set(name: &str, texts: usize, stages: &[StageScores], origin: &[usize], threshold: f32) {
    let pieces = stages.len();
    let skipped = stages.iter().filter(|s| s.skipped).count();
    let flagged = stages.iter().filter(|s| s.transformer > threshold).count();
    let lost = stages.iter().filter(|s| s.transformer > threshold && s.score <= threshold).count();
    // Per text: the max over its pieces, transformer alone vs the cascade.
    let mut alone = vec![0.0f32; texts];
    let mut cascade = vec![0.0f32; texts];
    for (s, &row) in stages.iter().zip(origin) {
        alone[row] = alone[row].max(s.transformer);
        cascade[row] = cascade[row].max(s.score);
    }
    let text_flagged = alone.iter().filter(|&&s| s > threshold).count();
    let text_lost = alone.iter().zip(&cascade).filter(|(&a, &c)| a > threshold && c <= threshold).count();
    let pct = |n: usize, d: usize| if d == 0 { 0.0 } else { 100.0 * n as f64 / d as f64 };
    println!(
        "  {:<34} {:>6} {:>7} {:>7.1}% {:>9} {:>10.2}% {:>9} {:>10.2}%",
        name,
        texts,
        pieces,
        pct(skipped, pieces),
        flagged,
        pct(lost, flagged),
        text_flagged,
        pct(text_lost, text_flagged)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sharegpt_split_is_the_salted_hash_and_holds_out_about_forty_percent() {
        let held = (0..2000).filter(|i| sharegpt_held_out(&format!("message number {i}"))).count();
        assert!((700..900).contains(&held), "{held} of 2000 held out");
    }
}
