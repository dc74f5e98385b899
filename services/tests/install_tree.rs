//! The runtime tree of scripts/install (what the container image holds): the installed binary,
//! started from another working directory with no path settings, finds its models and ONNX
//! Runtime next to itself and serves with both models loaded; the binary without its tree
//! refuses to start and names the setting; `rampart health` probes it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::process::{start_logged, wait_for};
use common::workspace_root;

/// A fresh prefix under the system temp folder, removed on drop.
struct Prefix(PathBuf);

impl Prefix {
    fn new(tag: &str) -> Prefix {
        let dir = std::env::temp_dir().join(format!("rampart-install-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Prefix(dir)
    }
}

impl Drop for Prefix {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The installed binary run from `/`, with nothing but PATH in its environment.
fn installed(binary: &Path) -> Command {
    let mut cmd = Command::new(binary);
    cmd.current_dir("/").env_clear().env("PATH", "/usr/bin:/bin");
    cmd
}

#[test]
fn the_installed_tree_runs_from_anywhere_and_a_bare_binary_names_what_is_missing() {
    let prefix = Prefix::new("tree");
    let out = Command::new(workspace_root().join("scripts/install"))
        .arg(&prefix.0)
        .args(["--binary", env!("CARGO_BIN_EXE_rampart")])
        .output()
        .unwrap();
    assert!(out.status.success(), "scripts/install: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let binary = prefix.0.join("bin/rampart");
    for file in [
        "lib/rampart/models/sqli/model.onnx",
        "lib/rampart/models/prompt-injection/model.onnx",
        "lib/rampart/models/prompt-injection/stage1/model.onnx",
    ] {
        assert!(prefix.0.join(file).is_file(), "{file} installed");
    }
    assert!(!prefix.0.join("lib/rampart/models/sqli/parity.jsonl").exists(), "test fixtures stay out of the tree");

    let mut cmd = installed(&binary);
    cmd.args(["inference", "--inference-addr", "127.0.0.1:0"]);
    let service = start_logged(cmd, 1, "installed rampart inference");
    let addr = service.listeners[0];
    // /ready is 200 only once both models are loaded: found in the tree, with no setting.
    wait_for(&[addr], "/ready", 200, "installed inference ready");
    let probe = |url: String| installed(&binary).args(["health", &url]).output().unwrap();
    let ok = probe(format!("http://{addr}/health"));
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    let missing = probe(format!("http://{addr}/no-such-path"));
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("answered 404"), "{}", String::from_utf8_lossy(&missing.stderr));
    drop(service);

    // The binary alone: a loud start-up error naming the setting, never a run without models.
    let bare = Prefix::new("bare");
    std::fs::create_dir_all(&bare.0).unwrap();
    std::fs::copy(&binary, bare.0.join("rampart")).unwrap();
    let out = installed(&bare.0.join("rampart")).args(["inference", "--inference-addr", "127.0.0.1:0"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("RAMPART_MODELS_DIR") && stderr.contains("not found"), "{stderr}");
    // With models switched off it has nothing to look for and starts.
    let mut cmd = installed(&bare.0.join("rampart"));
    cmd.args(["inference", "--inference-addr", "127.0.0.1:0", "--no-models"]);
    let patterns_only = start_logged(cmd, 1, "bare rampart inference --no-models");
    wait_for(&patterns_only.listeners, "/ready", 200, "patterns-only inference ready");
}
