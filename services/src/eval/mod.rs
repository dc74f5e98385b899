//! `rampart eval`: runs the labelled data pool through the engine and prints per-detector
//! TPR/FPR, a confusion table and the hard negatives, then each model's own quality on held-out
//! texts (TPR/FPR and a ROC-style table). See docs/EVAL.md for the split.

mod data;
mod quality;
mod report;
mod roc;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};

use crate::config::EngineArgs;
use data::{load_pool, request_for, Row};
use report::{Outcome, Report};
use scoring::{Engine, ScoreInput};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Placement {
    /// Payload URL-encoded as a query parameter value (`GET /eval?q=...`).
    Query,
    /// Payload URL-encoded as a form field in a POST body.
    Form,
    /// Payload as a JSON string value in a POST body.
    Json,
    /// Payload as a raw text/plain POST body.
    Raw,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Split {
    /// Every row of the pool (right for pattern detectors, which are not trained).
    All,
    /// Only the families held out from model training (see docs/EVAL.md).
    Heldout,
}

#[derive(Clone, Debug, Args)]
pub struct EvalArgs {
    /// Folder with the pool's JSONL files.
    #[arg(long = "data", env = "RAMPART_DATA", value_name = "RAMPART_DATA", default_value = "../shared/datasets")]
    pub data: PathBuf,
    /// Where each payload is placed in the synthetic request (CSIC rows are whole requests).
    #[arg(long, value_enum, default_value = "query")]
    pub placement: Placement,
    #[arg(long, value_enum, default_value = "all")]
    pub split: Split,
    /// Print up to N false positives (benign rows flagged).
    #[arg(long = "show-fp", default_value = "0")]
    pub show_fp: usize,
    /// Print up to N false negatives (attack rows passed).
    #[arg(long = "show-fn", default_value = "0")]
    pub show_fn: usize,
    /// Only list false negatives of this label.
    #[arg(long = "fn-label")]
    pub fn_label: Option<String>,
    /// Only use rows of these source files (comma-separated names without .jsonl).
    #[arg(long, value_delimiter = ',')]
    pub sources: Vec<String>,
    /// Rows scored concurrently.
    #[arg(long, default_value = "64")]
    pub concurrency: usize,
    /// Skip the model-quality section (each model's own TPR/FPR and ROC table on held-out texts).
    #[arg(long = "no-model-quality")]
    pub no_model_quality: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
}

pub async fn run(args: EvalArgs) -> ExitCode {
    let engine = match Engine::new(args.engine.engine_config()) {
        Ok(e) => Arc::new(e),
        Err(err) => {
            eprintln!("rampart eval: {err}");
            return ExitCode::FAILURE;
        }
    };
    let rows = match load_pool(&args.data, args.split, &args.sources) {
        Ok(rows) => rows,
        Err(err) => {
            eprintln!("rampart eval: {err}");
            return ExitCode::FAILURE;
        }
    };
    wait_for_models(&engine).await;
    let started = Instant::now();
    let outcomes = score_rows(&engine, &rows, args.placement, args.concurrency.max(1)).await;
    let elapsed = started.elapsed();
    let mut report = Report::new(engine.threshold());
    for (row, outcome) in rows.iter().zip(outcomes.iter()) {
        report.add(row, outcome);
    }
    let hard = report::hard_negatives(&engine, args.placement).await;
    report.print(&args, &rows, &outcomes, &hard, elapsed);
    if args.no_model_quality {
        return ExitCode::SUCCESS;
    }
    // The model section loads its own copy of the models: free the engine's first.
    drop(engine);
    match quality::run(&args.data, &args.engine.engine_config()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("rampart eval: model quality: {err}");
            ExitCode::FAILURE
        }
    }
}

async fn wait_for_models(engine: &Engine) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !engine.ready() && Instant::now() < deadline {
        if engine.model_status().iter().any(|(_, s)| matches!(s, scoring::models::ModelStatus::Failed(_))) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for (id, status) in engine.model_status() {
        println!("model {:<17} {:?}", scoring::detectors::DETECTORS[id].slug, status);
    }
}

async fn score_rows(engine: &Arc<Engine>, rows: &[Row], placement: Placement, concurrency: usize) -> Vec<Outcome> {
    let mut outcomes = Vec::with_capacity(rows.len());
    for chunk in rows.chunks(concurrency * 16) {
        let mut tasks = tokio::task::JoinSet::new();
        for (i, part) in chunk.chunks(16).enumerate() {
            let engine = engine.clone();
            let requests: Vec<_> = part.iter().map(|r| request_for(r, placement)).collect();
            tasks.spawn(async move {
                let mut out = Vec::with_capacity(requests.len());
                for (text, headers) in &requests {
                    let result = engine.score_all(&ScoreInput { request_text: text, headers }).await;
                    out.push(Outcome::from_result(&result));
                }
                (i, out)
            });
        }
        let mut parts: Vec<(usize, Vec<Outcome>)> = tasks.join_all().await;
        parts.sort_by_key(|(i, _)| *i);
        outcomes.extend(parts.into_iter().flat_map(|(_, o)| o));
    }
    outcomes
}
