//! Envoy as a child process from deploy/envoy/envoy.yaml (the config operators use) with its
//! placeholders filled: rendered, started, waited for, and killed on drop.
//!
//! Ports: render the listener and the admin interface as port 0 and the kernel picks free
//! ones with no race; Envoy writes the admin address to a file (`--admin-address-path`) and
//! the admin `/listeners` endpoint tells the listener's port. The admin interface is read
//! through curl, like [`crate::logged`] does.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::logged::{curl_body, curl_status};
use crate::KitError;

/// The shipped config, relative to the workspace root.
pub const TEMPLATE: &str = "deploy/envoy/envoy.yaml";

/// The ext_proc filter's list entry in [`TEMPLATE`].
const EXT_PROC_ENTRY: &str = "- name: envoy.filters.http.ext_proc";

/// What the template's placeholders are filled with (ports 0: the kernel picks).
pub struct Wiring {
    pub listen_port: u16,
    pub admin_port: u16,
    pub extproc: SocketAddr,
    pub upstream: SocketAddr,
}

/// `template` (the text of [`TEMPLATE`]) with its placeholders filled; an error names a
/// placeholder left over (the template grew one this code does not know).
pub fn render(template: &str, wiring: &Wiring) -> Result<String, KitError> {
    let text = template
        .replace("__LISTEN_PORT__", &wiring.listen_port.to_string())
        .replace("__ADMIN_PORT__", &wiring.admin_port.to_string())
        .replace("__EXTPROC_HOST__", &wiring.extproc.ip().to_string())
        .replace("__EXTPROC_PORT__", &wiring.extproc.port().to_string())
        .replace("__UPSTREAM_HOST__", &wiring.upstream.ip().to_string())
        .replace("__UPSTREAM_PORT__", &wiring.upstream.port().to_string());
    match text.lines().find(|l| l.contains("__")) {
        Some(line) => Err(KitError::failed(format!("a placeholder of {TEMPLATE} was left unfilled"), line.trim().to_string())),
        None => Ok(text),
    }
}

/// A rendered config without its ext_proc filter (Envoy bare: the other filters, the router
/// and the clusters stay as shipped).
pub fn without_ext_proc(config: &str) -> Result<String, KitError> {
    if !config.contains("name: envoy.filters.http.ext_proc") {
        return Err(KitError::failed(TEMPLATE, "has no ext_proc filter"));
    }
    let bare = without_list_entry(config, EXT_PROC_ENTRY);
    if bare.contains("ext_proc.v3.ExternalProcessor") || !bare.contains("- name: envoy.filters.http.router") {
        return Err(KitError::failed(TEMPLATE, "could not take the ext_proc filter out and keep the router"));
    }
    Ok(bare)
}

/// `yaml` without the list entry whose first line is `entry` (after indentation) and every
/// following line indented deeper than its dash (or blank).
fn without_list_entry(yaml: &str, entry: &str) -> String {
    let mut out = String::new();
    let mut skipping: Option<usize> = None;
    for line in yaml.lines() {
        let indent = line.len() - line.trim_start().len();
        if let Some(dash) = skipping {
            if line.trim().is_empty() || indent > dash {
                continue;
            }
            skipping = None;
        }
        if line.trim() == entry {
            skipping = Some(indent);
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// `envoy --mode validate` on a config text written to `dir`; the error carries Envoy's output.
pub fn validate(binary: &Path, config: &str, dir: &Path) -> Result<(), KitError> {
    let path = dir.join("validate.yaml");
    std::fs::write(&path, config).map_err(KitError::io(format!("writing {}", path.display())))?;
    let out = Command::new(binary)
        .args(["--mode", "validate", "-l", "warning", "--disable-hot-restart", "-c"])
        .arg(&path)
        .output()
        .map_err(|source| KitError::Missing { tool: "envoy", source })?;
    if out.status.success() {
        return Ok(());
    }
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    Err(KitError::failed("envoy --mode validate", text))
}

/// How to run one Envoy.
pub struct EnvoyOptions<'a> {
    pub binary: &'a Path,
    /// Worker threads (`--concurrency`).
    pub concurrency: u32,
    /// Where its config, logs and admin address go (the caller owns and removes it).
    pub dir: &'a Path,
    /// The listener clients talk to, by name (`ingress` in [`TEMPLATE`]).
    pub listener: &'a str,
}

/// A running Envoy, killed when dropped.
pub struct Envoy {
    child: Child,
    /// The listener clients talk to (known once [`Envoy::wait_ready`] returned).
    pub addr: SocketAddr,
    /// The admin interface (/ready, /stats).
    pub admin: SocketAddr,
    dir: PathBuf,
    listener: String,
}

impl Envoy {
    /// Spawns Envoy and waits (30 s) until it is ready ([`Envoy::wait_ready`]).
    pub fn start(options: &EnvoyOptions, config: &str) -> Result<Envoy, KitError> {
        let mut envoy = Envoy::spawn(options, config)?;
        envoy.wait_ready(Duration::from_secs(30))?;
        Ok(envoy)
    }

    /// Writes `config` to `dir/envoy.yaml` and starts Envoy on it, without waiting.
    pub fn spawn(options: &EnvoyOptions, config: &str) -> Result<Envoy, KitError> {
        let dir = options.dir;
        let conf = dir.join("envoy.yaml");
        std::fs::write(&conf, config).map_err(KitError::io(format!("writing {}", conf.display())))?;
        let output =
            |name: &str| std::fs::File::create(dir.join(name)).map_err(KitError::io(format!("creating {}", dir.join(name).display())));
        let child = Command::new(options.binary)
            .arg("-c")
            .arg(&conf)
            .args(["-l", "warning", "--concurrency", &options.concurrency.to_string(), "--disable-hot-restart"])
            .arg("--log-path")
            .arg(dir.join("envoy.log"))
            .arg("--admin-address-path")
            .arg(dir.join("admin-address"))
            .stdin(Stdio::null())
            .stdout(output("stdout")?)
            .stderr(output("stderr")?)
            .spawn()
            .map_err(|source| KitError::Missing { tool: "envoy", source })?;
        let unknown = SocketAddr::from(([127, 0, 0, 1], 0));
        Ok(Envoy { child, addr: unknown, admin: unknown, dir: dir.to_path_buf(), listener: options.listener.to_string() })
    }

    /// Waits until the admin interface answers `/ready` (LIVE: listeners up, initial cluster
    /// resolution done), then reads the listener's port and checks that it accepts.
    pub fn wait_ready(&mut self, within: Duration) -> Result<(), KitError> {
        let deadline = Instant::now() + within;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(KitError::failed(format!("envoy exited during start-up ({status})"), self.log_text()));
            }
            if Instant::now() >= deadline {
                return Err(KitError::failed(format!("envoy not ready within {within:?}"), self.log_text()));
            }
            if self.admin.port() == 0 {
                let written = std::fs::read_to_string(self.dir.join("admin-address")).ok();
                if let Some(addr) = written.and_then(|s| s.trim().parse().ok()) {
                    self.admin = addr;
                }
            }
            if self.admin.port() != 0 && curl_status(&format!("http://{}/ready", self.admin), &[]) == Some(200) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let port = self.listener_port()?;
        self.addr = SocketAddr::from(([127, 0, 0, 1], port));
        std::net::TcpStream::connect_timeout(&self.addr, Duration::from_secs(2))
            .map_err(KitError::io(format!("envoy's {} listener at {}", self.listener, self.addr)))?;
        Ok(())
    }

    fn listener_port(&self) -> Result<u16, KitError> {
        let body = curl_body(&format!("http://{}/listeners?format=json", self.admin));
        let value: serde_json::Value =
            serde_json::from_str(&body).map_err(|e| KitError::failed("envoy admin /listeners is not JSON", format!("{e}: {body}")))?;
        value["listener_statuses"]
            .as_array()
            .and_then(|all| all.iter().find(|l| l["name"] == self.listener.as_str()))
            .and_then(|l| l["local_address"]["socket_address"]["port_value"].as_u64())
            .and_then(|port| u16::try_from(port).ok())
            .ok_or_else(|| KitError::failed(format!("no `{}` listener in envoy's /listeners", self.listener), body))
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The body of GET `path` on the admin interface (empty when it does not answer).
    pub fn admin_get(&self, path: &str) -> String {
        curl_body(&format!("http://{}{path}", self.admin))
    }

    /// A counter or gauge of its admin `/stats`; see [`admin_stat`].
    pub fn stat(&self, name: &str) -> Option<u64> {
        admin_stat(self.admin, name)
    }

    /// Envoy's own log and any output it wrote before logging started.
    pub fn log_text(&self) -> String {
        let read = |name: &str| std::fs::read_to_string(self.dir.join(name)).unwrap_or_default();
        format!("--- envoy.log\n{}--- stderr\n{}", read("envoy.log"), read("stderr"))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Envoy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A counter or gauge of the admin `/stats` at `admin` (e.g.
/// `http.ingress_http.ext_proc.failure_mode_allowed`), when present.
pub fn admin_stat(admin: SocketAddr, name: &str) -> Option<u64> {
    // The filter is a regular expression: `^name$`, percent-encoded.
    let body = curl_body(&format!("http://{admin}/stats?filter=%5E{}%24", name.replace('.', "%5C.")));
    body.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(": ")?.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_entry_and_its_body_are_dropped() {
        let yaml = "filters:\n  - name: a\n    typed: 1\n  - name: envoy.filters.http.ext_proc\n    typed_config:\n      x: 1\n\n  - name: envoy.filters.http.router\n    y: 2\n";
        let out = without_list_entry(yaml, EXT_PROC_ENTRY);
        assert_eq!(out, "filters:\n  - name: a\n    typed: 1\n  - name: envoy.filters.http.router\n    y: 2\n");
    }

    #[test]
    fn a_placeholder_left_over_is_an_error_naming_it() {
        let wiring = Wiring { listen_port: 0, admin_port: 0, extproc: ([127, 0, 0, 1], 1).into(), upstream: ([127, 0, 0, 1], 2).into() };
        let filled = render("port: __LISTEN_PORT__\nhost: __UPSTREAM_HOST__:__UPSTREAM_PORT__\n", &wiring).unwrap();
        assert_eq!(filled, "port: 0\nhost: 127.0.0.1:2\n");
        let err = render("a: __NEW_ONE__\n", &wiring).unwrap_err().to_string();
        assert!(err.contains("__NEW_ONE__"), "{err}");
    }
}
