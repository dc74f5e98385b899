//! `rampart eval`: runs the labelled data pool through the engine and prints per-detector
//! TPR/FPR, a confusion table and the hard negatives, then each model's own quality on held-out
//! texts (TPR/FPR and a ROC-style table). See docs/EVAL.md for the split.

mod cascade;
mod data;
mod families;
mod levels;
mod noise;
mod prompt;
mod quality;
mod report;
mod roc;
mod traffic;
mod wire;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};

use crate::config::EngineArgs;
use crate::scorer as scoring_query;
use data::{load_pool, query_for, Row};
use report::{Outcome, Report};
use scoring::{Engine, EngineConfig, ScoreInput};

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
    /// Whole-request JSONL files (`method`, `path` with raw query, `headers`, `body` or
    /// `body_b64`, `label`, `source`), replayed as the proxy receives them; repeatable. They
    /// join the pool section and, when given, replace `<data>/requests/*.jsonl` in the
    /// real-traffic section.
    #[arg(long = "requests", value_name = "FILE")]
    pub requests: Vec<PathBuf>,
    /// Real benign traffic: FPR per set and per reason at each sensitivity level. On by default
    /// for a whole-pool run (no --sources, no --requests).
    #[arg(long = "real-traffic")]
    pub real_traffic: bool,
    /// Generated evasion families: N variants per family (2000 when N is left out).
    #[arg(long = "evasion", value_name = "N", num_args = 0..=1, default_missing_value = "2000")]
    pub evasion: Option<usize>,
    /// Seed of the evasion variants (printed with the section).
    #[arg(long = "seed", default_value = "20261124")]
    pub seed: u64,
    /// Skip the pool section (and the model-quality section): run only --real-traffic / --evasion.
    #[arg(long = "no-pool")]
    pub no_pool: bool,
    /// Prompt-injection held-out sets (a folder written by models/train/pi_heldout.py): recall
    /// per attack family, FPR per benign source and trigger word (docs/EVAL.md).
    #[arg(long = "pi-heldout", value_name = "DIR")]
    pub pi_heldout: Option<PathBuf>,
    /// Run the prompt-injection cascade section (skip rate, recall loss) even with --no-pool
    /// or --no-model-quality.
    #[arg(long = "cascade")]
    pub cascade: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// The engine settings of every eval section. Offline measurement: a text's model work must
/// not be dropped because the eval keeps many requests in flight on few cores (the service's
/// deadline is about latency), nor turned away by the queue bounds that shed a flooding client:
/// the eval is one client with every row in flight, and a shed row is judged by the fallback
/// rules alone (389 of modsec_learn's 10,073 rows were, and which ones changed from run to run)
/// or, in the model sections, fails the section.
fn offline_config(engine: &EngineArgs) -> EngineConfig {
    let mut config = engine.engine_config();
    config.scoring_deadline = config.scoring_deadline.max(Duration::from_secs(600));
    config.batch.client_queue = config.batch.client_queue.max(1 << 20);
    config.batch.queue_capacity = config.batch.queue_capacity.max(1 << 20);
    config
}

pub async fn run(args: EvalArgs) -> ExitCode {
    let config = offline_config(&args.engine);
    let engine = match Engine::new(config.clone()) {
        Ok(e) => Arc::new(e),
        Err(err) => {
            eprintln!("rampart eval: {err}");
            return ExitCode::FAILURE;
        }
    };
    wait_for_models(&engine).await;
    let concurrency = args.concurrency.max(1);
    if !args.no_pool {
        if let Err(err) = pool_section(&engine, &args).await {
            eprintln!("rampart eval: {err}");
            return ExitCode::FAILURE;
        }
    }
    let real_traffic = args.real_traffic || (!args.no_pool && args.sources.is_empty() && args.requests.is_empty());
    if real_traffic {
        if let Err(err) = traffic::run(&engine, &args.data, &args.requests, concurrency, args.show_fp).await {
            eprintln!("rampart eval: real traffic: {err}");
            return ExitCode::FAILURE;
        }
    }
    if let Some(n) = args.evasion {
        if let Err(err) = families::run(&engine, &args.data, n, args.seed, concurrency, args.show_fn).await {
            eprintln!("rampart eval: evasion: {err}");
            return ExitCode::FAILURE;
        }
    }
    // The model sections load their own copy of the models: free the engine's first.
    drop(engine);
    if let Some(dir) = &args.pi_heldout {
        let prompt_args = prompt::PromptArgs { dir, show_fp: args.show_fp, show_fn: args.show_fn };
        if let Err(err) = prompt::run(&prompt_args, &config).await {
            eprintln!("rampart eval: prompt-injection held-out: {err}");
            return ExitCode::FAILURE;
        }
    }
    if args.no_model_quality || args.no_pool {
        return if args.cascade { cascade_section(&args, &config).await } else { ExitCode::SUCCESS };
    }
    if let Err(err) = quality::run(&args.data, &config).await {
        eprintln!("rampart eval: model quality: {err}");
        return ExitCode::FAILURE;
    }
    cascade_section(&args, &config).await
}

async fn cascade_section(args: &EvalArgs, config: &EngineConfig) -> ExitCode {
    match cascade::run(&args.data, config).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("rampart eval: cascade: {err}");
            ExitCode::FAILURE
        }
    }
}

/// The labelled pool (and `--requests` files): TPR/FPR per class, confusion, hard negatives.
async fn pool_section(engine: &Arc<Engine>, args: &EvalArgs) -> Result<(), String> {
    let mut rows =
        if args.sources.is_empty() && !args.requests.is_empty() { Vec::new() } else { load_pool(&args.data, args.split, &args.sources)? };
    let mut queries: Vec<scoring_query::ScoreQuery> = rows.iter().map(|r| query_for(r, args.placement)).collect();
    for path in &args.requests {
        for r in wire::load_requests(path)? {
            queries.push(r.request.score_query());
            rows.push(Row { text: r.summary, label: r.label, source: r.source, part: None, caveat: None });
        }
    }
    let started = Instant::now();
    let outcomes = score_rows(engine, queries, args.concurrency.max(1)).await;
    let elapsed = started.elapsed();
    let mut report = Report::new(engine.threshold());
    for (row, outcome) in rows.iter().zip(outcomes.iter()) {
        report.add(row, outcome);
    }
    let hard = report::hard_negatives(engine, args.placement).await;
    report.print(args, &rows, &outcomes, &hard, elapsed);
    Ok(())
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

async fn score_rows(engine: &Arc<Engine>, queries: Vec<scoring_query::ScoreQuery>, concurrency: usize) -> Vec<Outcome> {
    let mut outcomes = Vec::with_capacity(queries.len());
    let mut queries = queries.into_iter().peekable();
    while queries.peek().is_some() {
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..concurrency {
            let part: Vec<_> = queries.by_ref().take(16).collect();
            if part.is_empty() {
                break;
            }
            let engine = engine.clone();
            tasks.spawn(async move {
                let mut out = Vec::with_capacity(part.len());
                for q in &part {
                    let result = engine.score_all(&ScoreInput { request_text: &q.request_text, headers: &q.headers }).await;
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        engine: EngineArgs,
    }

    /// The model sections keep `IN_FLIGHT` calls of `CHUNK` texts queued as one client; with
    /// the service's bounds (128 per client) every model-quality run failed with
    /// "holds as much of this client's work as it may".
    #[test]
    fn model_sections_fit_in_the_offline_queue() {
        let config = offline_config(&Cli::parse_from(["rampart-eval"]).engine);
        let most_in_flight = (quality::CHUNK * quality::IN_FLIGHT).max(cascade::CHUNK * cascade::IN_FLIGHT);
        assert!(config.batch.client_queue >= 64 * most_in_flight, "windows per text stay inside the lane");
        assert!(config.batch.queue_capacity >= 64 * most_in_flight);
        assert!(config.scoring_deadline >= Duration::from_secs(600));
    }
}
