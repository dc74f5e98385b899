//! Real Envoy for the ext_proc tests: the binary scripts/bootstrap-envoy installs, run with the
//! deploy/envoy/envoy.yaml operators use, rendered with loopback addresses.
//!
//! Ports: the listener and the admin interface are rendered as port 0, so the kernel picks
//! free ones with no race; Envoy writes the admin address to a file (`--admin-address-path`)
//! and the admin `/listeners` endpoint tells the listener's port.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::proxy::{get, send_from, Reply};
use super::workspace_root;

/// The Envoy binary: `ENVOY_BIN` when set, else vendor/envoy/bin/envoy.
pub fn envoy_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("ENVOY_BIN") {
        return PathBuf::from(path);
    }
    let path = workspace_root().join("vendor/envoy/bin/envoy");
    assert!(path.is_file(), "no Envoy at {}: run scripts/bootstrap (it calls scripts/bootstrap-envoy), or set ENVOY_BIN", path.display());
    path
}

/// The deploy config, as shipped.
pub fn config_template() -> String {
    let path = workspace_root().join("deploy/envoy/envoy.yaml");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// deploy/envoy/envoy.yaml with its placeholders filled in.
pub fn render(listen_port: u16, admin_port: u16, extproc: SocketAddr, upstream: SocketAddr) -> String {
    let text = config_template()
        .replace("__LISTEN_PORT__", &listen_port.to_string())
        .replace("__ADMIN_PORT__", &admin_port.to_string())
        .replace("__EXTPROC_HOST__", &extproc.ip().to_string())
        .replace("__EXTPROC_PORT__", &extproc.port().to_string())
        .replace("__UPSTREAM_HOST__", &upstream.ip().to_string())
        .replace("__UPSTREAM_PORT__", &upstream.port().to_string());
    if let Some(at) = text.find("__") {
        let line = text[at..].lines().next().unwrap_or_default();
        panic!("deploy/envoy/envoy.yaml has a placeholder the tests do not fill: {line}");
    }
    text
}

/// A fresh scratch folder for one Envoy (config, logs, admin address).
fn scratch_dir() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir =
        std::env::temp_dir().join("rampart-envoy-tests").join(format!("{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `envoy --mode validate` on a config text; `Err` carries Envoy's output.
pub fn validate(config: &str) -> Result<(), String> {
    let dir = scratch_dir();
    let path = dir.join("envoy.yaml");
    std::fs::write(&path, config).unwrap();
    let out = Command::new(envoy_bin())
        .args(["--mode", "validate", "-l", "warning", "--disable-hot-restart", "-c"])
        .arg(&path)
        .output()
        .expect("envoy runs");
    let _ = std::fs::remove_dir_all(&dir);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if out.status.success() {
        Ok(())
    } else {
        Err(text)
    }
}

/// A running Envoy, killed when dropped (its log is printed when a test fails).
pub struct Envoy {
    child: Child,
    /// The listener clients talk to.
    pub addr: SocketAddr,
    /// The admin interface (/ready, /stats).
    pub admin: SocketAddr,
    dir: PathBuf,
}

impl Envoy {
    /// Starts Envoy with deploy/envoy/envoy.yaml in front of `upstream`, asking the ext_proc
    /// server at `extproc`, and waits until its listener is up and its clusters are initialised.
    pub async fn start(extproc: SocketAddr, upstream: SocketAddr) -> Envoy {
        Envoy::start_with(extproc, upstream, |config| config).await
    }

    /// [`Envoy::start`] with the rendered config passed through `edit` first (a test of a
    /// setting an operator might change).
    pub async fn start_with(extproc: SocketAddr, upstream: SocketAddr, edit: impl FnOnce(String) -> String) -> Envoy {
        let dir = scratch_dir();
        let config = dir.join("envoy.yaml");
        std::fs::write(&config, edit(render(0, 0, extproc, upstream))).unwrap();
        let admin_file = dir.join("admin-address");
        let child = Command::new(envoy_bin())
            .arg("-c")
            .arg(&config)
            .args(["-l", "warning", "--concurrency", "2", "--disable-hot-restart"])
            .arg("--log-path")
            .arg(dir.join("envoy.log"))
            .arg("--admin-address-path")
            .arg(&admin_file)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(dir.join("stdout")).unwrap())
            .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
            .spawn()
            .expect("envoy starts");
        let mut envoy = Envoy { child, addr: SocketAddr::from(([127, 0, 0, 1], 0)), admin: SocketAddr::from(([127, 0, 0, 1], 0)), dir };
        envoy.wait_ready(&admin_file).await;
        envoy
    }

    async fn wait_ready(&mut self, admin_file: &Path) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("envoy exited during start-up ({status}):\n{}", self.log_text());
            }
            assert!(Instant::now() < deadline, "envoy not ready in 30 s:\n{}", self.log_text());
            if self.admin.port() == 0 {
                if let Some(addr) = std::fs::read_to_string(admin_file).ok().and_then(|s| s.trim().parse().ok()) {
                    self.admin = addr;
                }
            }
            // LIVE once the listeners are up and the initial cluster resolution is done.
            if self.admin.port() != 0 {
                if let Ok(reply) = send_from(self.admin, None, get("/ready")).await {
                    if reply.status == 200 {
                        break;
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let listeners = self.admin_get("/listeners?format=json").await;
        let value: serde_json::Value = serde_json::from_slice(&listeners.body).expect("listeners JSON");
        let port = value["listener_statuses"]
            .as_array()
            .and_then(|all| all.iter().find(|l| l["name"] == "ingress"))
            .and_then(|l| l["local_address"]["socket_address"]["port_value"].as_u64())
            .unwrap_or_else(|| panic!("no `ingress` listener in {value}"));
        self.addr = SocketAddr::from(([127, 0, 0, 1], port as u16));
        tokio::net::TcpStream::connect(self.addr).await.expect("the listener accepts");
    }

    pub async fn admin_get(&self, path: &str) -> Reply {
        send_from(self.admin, None, get(path)).await.unwrap_or_else(|e| panic!("envoy admin {path}: {e}"))
    }

    /// A counter or gauge from the admin `/stats`, e.g. `http.ingress_http.ext_proc.failure_mode_allowed`.
    pub async fn stat(&self, name: &str) -> u64 {
        // The filter is a regular expression: `^name$`, percent-encoded.
        let filter = format!("%5E{}%24", name.replace('.', "%5C."));
        let reply = self.admin_get(&format!("/stats?filter={filter}")).await;
        let text = String::from_utf8_lossy(&reply.body).to_string();
        text.lines()
            .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(": ")))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no stat {name} in {text:?}"))
    }

    /// Envoy's own log and any output it wrote before logging started.
    pub fn log_text(&self) -> String {
        let read = |name: &str| std::fs::read_to_string(self.dir.join(name)).unwrap_or_default();
        format!("--- envoy.log\n{}--- stderr\n{}", read("envoy.log"), read("stderr"))
    }
}

impl Drop for Envoy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("envoy log ({}):\n{}", self.dir.display(), self.log_text());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
