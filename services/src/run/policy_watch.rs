//! Loading the policy file at start-up and again on SIGHUP or when the file changes (inotify
//! through `notify`; the parent folder is watched, so an editor's rename or a Kubernetes
//! ConfigMap's symlink swap counts). Parsing and checking happen on this task, never on a
//! request's path; the gate then swaps the whole policy at once. A bad file is logged and
//! counted (`waf_policy_reloads_total{result="error"}`) and the old policy keeps running.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::StartError;
use crate::gate::Gate;
use crate::observe::{Emit, PolicyReloaded};
use crate::policy::{PolicyError, PolicySet};

/// Editors and ConfigMap updates touch a file several times in a row: one reload after the
/// burst settles.
pub(super) const SETTLE: Duration = Duration::from_millis(50);

/// Loads `path` into every gate (a bad file stops start-up), then keeps them following it.
pub fn start(path: &Path, gates: &[Arc<Gate>]) -> Result<(), StartError> {
    for gate in gates {
        let set = PolicySet::load(path, gate.baseline())?;
        warn_if_remote(gate, &set);
        gate.install_policy(set);
    }
    let (tx, rx) = mpsc::unbounded_channel();
    let watcher = watch_file(path, tx.clone())
        .map_err(|err| PolicyError::Invalid { path: path.to_path_buf(), message: format!("cannot watch it: {err}") })?;
    tokio::spawn(follow(path.to_path_buf(), gates.to_vec(), rx, watcher));
    spawn_sighup(tx);
    Ok(())
}

/// Reloads `path` into `gates`; on error the old policies stay. Returns the time taken.
pub fn reload(path: &Path, gates: &[Arc<Gate>]) -> Result<Duration, PolicyError> {
    let started = Instant::now();
    // Every gate's set is built before any is installed: all doors change together or none.
    let sets = gates.iter().map(|gate| PolicySet::load(path, gate.baseline())).collect::<Result<Vec<_>, _>>()?;
    for (gate, set) in gates.iter().zip(sets) {
        warn_if_remote(gate, &set);
        gate.install_policy(set);
    }
    Ok(started.elapsed())
}

async fn follow(path: PathBuf, gates: Vec<Arc<Gate>>, mut rx: mpsc::UnboundedReceiver<()>, _watcher: notify::RecommendedWatcher) {
    while rx.recv().await.is_some() {
        tokio::time::sleep(SETTLE).await;
        while rx.try_recv().is_ok() {}
        let (file, gates2) = (path.clone(), gates.clone());
        let outcome = tokio::task::spawn_blocking(move || reload(&file, &gates2)).await;
        let Ok(outcome) = outcome else { continue };
        if let Some(gate) = gates.first() {
            PolicyReloaded { path: &path, outcome: outcome.as_ref().copied() }.emit(gate.metrics());
        }
    }
}

fn watch_file(path: &Path, tx: mpsc::UnboundedSender<()>) -> notify::Result<notify::RecommendedWatcher> {
    use notify::{EventKind, RecursiveMode, Watcher};
    let name = path.file_name().map(|n| n.to_os_string());
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        if matches!(event.kind, EventKind::Access(_)) {
            return;
        }
        // The file itself, or a ConfigMap's `..data` symlink swap beside it.
        let ours = event.paths.iter().any(|p| {
            let file = p.file_name();
            file == name.as_deref() || file.is_some_and(|f| f.to_string_lossy().starts_with(".."))
        });
        if ours {
            let _ = tx.send(());
        }
    })?;
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    watcher.watch(&folder, RecursiveMode::NonRecursive)?;
    Ok(watcher)
}

pub(super) fn spawn_sighup(tx: mpsc::UnboundedSender<()>) {
    #[cfg(unix)]
    tokio::spawn(async move {
        let Ok(mut hup) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) else { return };
        while hup.recv().await.is_some() {
            if tx.send(()).is_err() {
                return;
            }
        }
    });
    #[cfg(not(unix))]
    drop(tx);
}

/// Scopes that change scoring need the engine in this process; say so once per load.
fn warn_if_remote(gate: &Gate, set: &PolicySet) {
    if !gate.has_engine() && set.changes_scoring() {
        tracing::warn!("the policy sets sensitivity, detectors or exclusions, but scoring is remote (INFERENCE_URL): those settings are not applied; mode, threshold, fail modes and kill style are");
    }
}
