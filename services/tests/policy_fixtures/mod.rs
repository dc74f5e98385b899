#![allow(dead_code)]
//! Policy test fixtures: the real `rampart proxy` executable with a policy file, its log kept
//! in a file (reload lines are read from it), and requests with a chosen Host.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Request};

use crate::common::process::strip_ansi;
use crate::common::workspace_root;

pub struct PolicyProxy {
    child: Child,
    pub addr: SocketAddr,
    pub log: PathBuf,
    pub dir: PathBuf,
}

impl Drop for PolicyProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl PolicyProxy {
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).map(|t| t.lines().map(strip_ansi).collect::<Vec<_>>().join("\n")).unwrap_or_default()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// A fresh folder for one test's policy file and log.
pub fn test_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rampart-policy-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `text` to `path` the way an editor or a ConfigMap does: a new file renamed over.
pub fn write_policy(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// `rampart proxy --policy <dir>/policy.toml` in front of `target`, pattern detectors only,
/// active mode unless `extra` says otherwise; waits until it listens.
pub fn start_policy_proxy(dir: &Path, target: SocketAddr, extra: &[&str]) -> PolicyProxy {
    start_proxy(dir, target, Some(&dir.join("policy.toml")), extra)
}

/// One of several proxies reading `<dir>/policy.toml`, each logging to `<dir>/<name>.log`
/// and keeping the folder (`dir`) to itself only in name.
pub fn start_replica(dir: &Path, name: &str, target: SocketAddr, extra: &[&str]) -> PolicyProxy {
    let own = dir.join(name);
    std::fs::create_dir_all(&own).unwrap();
    start_logged(&own, target, Some(&dir.join("policy.toml")), extra)
}

/// The same proxy without `--policy`: the flags are the whole policy.
pub fn start_proxy_without_policy(dir: &Path, target: SocketAddr, extra: &[&str]) -> PolicyProxy {
    start_proxy(dir, target, None, extra)
}

fn start_proxy(dir: &Path, target: SocketAddr, policy: Option<&Path>, extra: &[&str]) -> PolicyProxy {
    start_logged(dir, target, policy, extra)
}

/// `rampart proxy` logging to `<dir>/proxy.log`.
fn start_logged(dir: &Path, target: SocketAddr, policy: Option<&Path>, extra: &[&str]) -> PolicyProxy {
    let log = dir.join("proxy.log");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rampart"));
    cmd.current_dir(workspace_root())
        .args(["proxy", "--proxy-addr", "127.0.0.1:0", "--no-models"])
        .arg("--target-url")
        .arg(format!("http://{target}"));
    if let Some(policy) = policy {
        cmd.arg("--policy").arg(policy);
    }
    cmd.args(extra).env("RAMPART_LOG", "info").stdout(Stdio::null()).stderr(std::fs::File::create(&log).unwrap());
    if !extra.contains(&"--audit-log") {
        cmd.args(["--audit-log", "off"]);
    }
    if !extra.contains(&"--mode") {
        cmd.args(["--mode", "active"]);
    }
    let child = cmd.spawn().expect("rampart starts");
    let mut proxy = PolicyProxy { child, addr: "127.0.0.1:0".parse().unwrap(), log, dir: dir.to_path_buf() };
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let text = proxy.log_text();
        if let Some(addr) = text.split("listening addr=").nth(1).and_then(|rest| rest.split_whitespace().next()) {
            proxy.addr = addr.parse().unwrap();
            return proxy;
        }
        if let Ok(Some(status)) = proxy.child.try_wait() {
            panic!("rampart proxy exited ({status}):\n{text}");
        }
        assert!(Instant::now() < deadline, "rampart proxy did not listen within 120 s:\n{text}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `GET path` with `Host: host`.
pub fn get_at(host: &str, path: &str) -> Request<Full<Bytes>> {
    Request::builder().method(Method::GET).uri(path).header("host", host).body(Full::new(Bytes::new())).unwrap()
}

/// A form POST with `Host: host`.
pub fn post_form(host: &str, path: &str, body: &str) -> Request<Full<Bytes>> {
    Request::builder()
        .method(Method::POST)
        .uri(path)
        .header("host", host)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

/// A form request (`method`, `path`, `body`) with `Host: host`.
pub fn request_at(host: &str, method: Method, path: &str, body: &str) -> Request<Full<Bytes>> {
    Request::builder()
        .method(method)
        .uri(path)
        .header("host", host)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

/// The audit file's lines once it holds `count` (the writer thread flushes per burst).
pub fn wait_for_audit_lines(path: &Path, count: usize) -> Vec<serde_json::Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).expect("each line is JSON")).collect();
        if lines.len() >= count {
            return lines;
        }
        assert!(Instant::now() < deadline, "the audit log holds {} lines, wanted {count}:\n{text}", lines.len());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The policy the decision-service tests (nginx, Envoy) run under: a shadow host wildcard,
/// and a route reading 64 bytes of body that blocks anything longer.
pub const DOOR_POLICY: &str = r#"
[[scope]]
name = "shadow-hosts"
host = "*.shadow.test"
mode = "shadow"

[[scope]]
name = "small-uploads"
path = "/upload"
body_limit = 64
oversize_body = "block"
"#;

/// A script tag only the `xss` rule `script-tag` matches (no other XSS rule fires on it).
pub const SCRIPT: &str = "%3Cscript%3Ex%3C%2Fscript%3E";
