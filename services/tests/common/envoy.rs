//! Real Envoy for the ext_proc tests: the binary scripts/bootstrap-envoy installs, run with the
//! deploy/envoy/envoy.yaml operators use, rendered with loopback addresses and ports 0
//! (testkit::envoy renders, starts, waits and stops; this adds the tests' async face and
//! prints Envoy's log when a test fails).

use std::net::SocketAddr;
use std::path::PathBuf;

use testkit::envoy::{EnvoyOptions, Wiring};
use testkit::tempdir::TempDir;

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
    let path = workspace_root().join(testkit::envoy::TEMPLATE);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// deploy/envoy/envoy.yaml with its placeholders filled in.
pub fn render(listen_port: u16, admin_port: u16, extproc: SocketAddr, upstream: SocketAddr) -> String {
    let wiring = Wiring { listen_port, admin_port, extproc, upstream };
    testkit::envoy::render(&config_template(), &wiring).unwrap_or_else(|e| panic!("the tests cannot render the deploy config: {e}"))
}

/// `envoy --mode validate` on a config text; `Err` carries Envoy's output.
pub fn validate(config: &str) -> Result<(), String> {
    let dir = TempDir::new("envoy-validate").expect("a temp dir");
    testkit::envoy::validate(&envoy_bin(), config, dir.path()).map_err(|e| e.to_string())
}

/// A running Envoy, killed when dropped (its log is printed when a test fails).
pub struct Envoy {
    // Declared before the folder: Envoy stops before its folder goes.
    inner: testkit::envoy::Envoy,
    /// The listener clients talk to.
    pub addr: SocketAddr,
    /// The admin interface (/ready, /stats).
    pub admin: SocketAddr,
    dir: TempDir,
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
        let config = edit(render(0, 0, extproc, upstream));
        // The wait is blocking (testkit is std code): off the runtime, which may be serving
        // the ext_proc server Envoy is about to call.
        tokio::task::spawn_blocking(move || {
            let dir = TempDir::new("envoy").expect("a temp dir");
            let binary = envoy_bin();
            let options = EnvoyOptions { binary: &binary, concurrency: 2, dir: dir.path(), listener: "ingress" };
            let inner = testkit::envoy::Envoy::start(&options, &config).unwrap_or_else(|e| panic!("{e}"));
            Envoy { addr: inner.addr, admin: inner.admin, inner, dir }
        })
        .await
        .unwrap_or_else(|panicked| std::panic::resume_unwind(panicked.into_panic()))
    }

    /// A counter or gauge from the admin `/stats`, e.g. `http.ingress_http.ext_proc.failure_mode_allowed`.
    pub async fn stat(&self, name: &str) -> u64 {
        let (admin, owned) = (self.admin, name.to_string());
        let value = tokio::task::spawn_blocking(move || testkit::envoy::admin_stat(admin, &owned)).await.expect("the stat lookup ran");
        value.unwrap_or_else(|| panic!("no stat {name} on envoy's admin /stats"))
    }

    /// Envoy's own log and any output it wrote before logging started.
    pub fn log_text(&self) -> String {
        self.inner.log_text()
    }
}

impl Drop for Envoy {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("envoy log ({}):\n{}", self.dir.path().display(), self.log_text());
            self.dir.keep();
        }
    }
}
