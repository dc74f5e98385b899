//! Reloading the rules directory (`--rules-dir`, RAMPART_RULES_DIR) while the process runs: on
//! SIGHUP and when a `*.toml` in it changes (inotify through `notify`, the folder watched as
//! the policy file's is, so an editor's rename and a ConfigMap's `..data` swap count). The
//! files are read and the Hyperscan databases compiled on a blocking thread, never on a
//! request's path; the engine then swaps the whole rule set at once. A bad file or a rule
//! Hyperscan refuses is logged with its file and rule, counted
//! (`waf_rules_reloads_total{result="error"}`), and the rules in force keep running.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use scoring::Engine;
use tokio::sync::mpsc;

use super::policy_watch::{spawn_sighup, SETTLE};
use super::StartError;
use crate::metrics::{Metrics, ResultLabel};

/// Keeps `engine` following `dir` (nothing to do without a rules directory or an engine in
/// this process: with INFERENCE_URL the inference service reloads its own).
pub fn start(dir: Option<&Path>, engine: Option<&Arc<Engine>>, metrics: Option<Arc<Metrics>>) -> Result<(), StartError> {
    let (Some(dir), Some(engine)) = (dir, engine) else { return Ok(()) };
    let (tx, rx) = mpsc::unbounded_channel();
    let watcher = watch_dir(dir, tx.clone()).map_err(|err| StartError::RulesWatch { dir: dir.to_path_buf(), detail: err.to_string() })?;
    tokio::spawn(follow(dir.to_path_buf(), engine.clone(), metrics, rx, watcher));
    spawn_sighup(tx);
    Ok(())
}

async fn follow(
    dir: PathBuf,
    engine: Arc<Engine>,
    metrics: Option<Arc<Metrics>>,
    mut rx: mpsc::UnboundedReceiver<()>,
    _watcher: notify::RecommendedWatcher,
) {
    while rx.recv().await.is_some() {
        tokio::time::sleep(SETTLE).await;
        while rx.try_recv().is_ok() {}
        let (folder, target) = (dir.clone(), engine.clone());
        let reloaded = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            target.reload_rules(Some(&folder)).map(|rules| (rules, started.elapsed()))
        })
        .await;
        let Ok(outcome) = reloaded else { continue };
        let path = dir.display().to_string();
        let result = match outcome {
            Ok((rules, took)) => {
                tracing::info!(path, rules, took_ms = took.as_millis() as u64, "rules reloaded");
                "ok"
            }
            Err(err) => {
                tracing::error!(path, error = %err, "rules directory rejected; the previous rules stay in force");
                "error"
            }
        };
        if let Some(metrics) = &metrics {
            metrics.rules_reloads.get_or_create(&ResultLabel { result }).inc();
        }
    }
}

/// Any `*.toml` of the folder, or a ConfigMap's `..data` symlink swap in it.
fn watch_dir(dir: &Path, tx: mpsc::UnboundedSender<()>) -> notify::Result<notify::RecommendedWatcher> {
    use notify::{EventKind, RecursiveMode, Watcher};
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        if matches!(event.kind, EventKind::Access(_)) {
            return;
        }
        let ours = event
            .paths
            .iter()
            .any(|p| p.extension().is_some_and(|x| x == "toml") || p.file_name().is_some_and(|f| f.to_string_lossy().starts_with("..")));
        if ours {
            let _ = tx.send(());
        }
    })?;
    watcher.watch(dir, RecursiveMode::NonRecursive)?;
    Ok(watcher)
}
