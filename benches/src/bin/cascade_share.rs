//! The prompt-injection cascade's transformer share on a file of chat bodies (one JSON body per
//! line, the user message in `messages[0].content`), measured with the same models and settings
//! the proxy loads. Used by scripts/bench-chat after a run, on the bodies the proxy was sent.
//!
//!     cascade_share --models models --bodies FILE [--from N] [--count N]
//!
//! Prints figures; asserts nothing.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use scoring::detectors::PROMPT_INJECTION;
use scoring::models::{ModelSet, ModelStatus};
use scoring::EngineConfig;

struct Args {
    models: PathBuf,
    bodies: PathBuf,
    from: usize,
    count: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args { models: PathBuf::from("models"), bodies: PathBuf::new(), from: 0, count: 2000 };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let number = || value.parse::<usize>().map_err(|_| format!("{flag}: `{value}` is not a count"));
        match flag.as_str() {
            "--models" => args.models = PathBuf::from(&value),
            "--bodies" => args.bodies = PathBuf::from(&value),
            "--from" => args.from = number()?,
            "--count" => args.count = number()?,
            _ => return Err(format!("unknown flag {flag} (--models, --bodies, --from, --count)")),
        }
    }
    if args.bodies.as_os_str().is_empty() {
        return Err("--bodies FILE is required".into());
    }
    Ok(args)
}

/// The user message of each body line in [from, from + count).
fn messages(args: &Args) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(&args.bodies).map_err(|e| format!("{}: {e}", args.bodies.display()))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate().skip(args.from).take(args.count) {
        let body: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", args.bodies.display(), n + 1))?;
        let content =
            body["messages"][0]["content"].as_str().ok_or(format!("{}:{}: no messages[0].content", args.bodies.display(), n + 1))?;
        out.push(content.to_string());
    }
    Ok(out)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("cascade_share: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), String> {
    let args = parse_args()?;
    let texts = messages(&args)?;
    let mut config = EngineConfig { models_dir: Some(args.models.clone()), ..EngineConfig::default() };
    if let Ok(dylib) = std::env::var("ORT_DYLIB_PATH") {
        config.ort_dylib = PathBuf::from(dylib);
    }
    let models = ModelSet::start(Some(&args.models), &config);
    let deadline = Instant::now() + Duration::from_secs(300);
    while !models.all_ready() {
        if let ModelStatus::Failed(detail) = models.status(PROMPT_INJECTION) {
            return Err(format!("prompt-injection model failed: {detail}"));
        }
        if Instant::now() > deadline {
            return Err("models still loading after 300 s".into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let Some(skip_below) = models.cascade_skip_below() else {
        println!("cascade: not in use (no stage1/ or calibrated against another transformer): transformer share 100%");
        return Ok(());
    };
    for chunk in texts.chunks(32) {
        models.score_many(PROMPT_INJECTION, chunk.to_vec()).await.map_err(|e| e.to_string())?;
    }
    let counts = models.cascade_counts().unwrap_or_default();
    let sent = counts.texts - counts.skipped;
    println!(
        "cascade: {} texts, stage 1 (skip_below {skip_below:.5}) decided {} alone; transformer share {:.1}% ({} texts, {} of them longer than stage 1 reads)",
        counts.texts,
        counts.skipped,
        100.0 * sent as f64 / counts.texts.max(1) as f64,
        sent,
        counts.too_long
    );
    Ok(())
}
