//! The processes of one run, all on 127.0.0.1: a one-worker nginx upstream answering "ok" (so
//! the upstream is never the bottleneck), the baseline nginx reverse proxy (plain and TLS
//! listeners), and Rampart's proxy (a plain one, and a TLS one when a TLS scenario runs) — all
//! stopped on drop.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use testkit::nginx::{self, Nginx};
use testkit::{free_port, KitError};

/// The certificate both TLS listeners serve (self-signed P-256 for localhost / 127.0.0.1).
pub struct Cert {
    pub cert: PathBuf,
    pub key: PathBuf,
}

pub fn write_cert(dir: &Path) -> Result<Cert, KitError> {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
        .map_err(|e| KitError::failed("making the benchmark certificate", e.to_string()))?;
    let cert = Cert { cert: dir.join("cert.pem"), key: dir.join("key.pem") };
    std::fs::write(&cert.cert, made.cert.pem()).map_err(KitError::io("writing cert.pem"))?;
    std::fs::write(&cert.key, made.signing_key.serialize_pem()).map_err(KitError::io("writing key.pem"))?;
    Ok(cert)
}

fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

pub fn start_upstream(prefix: &Path) -> Result<(Nginx, SocketAddr), KitError> {
    let listen = loopback(free_port());
    let config = format!(
        "{}http {{\n{}    server {{\n        listen {listen};\n        client_body_buffer_size 64k;\n        location / {{ default_type text/plain; return 200 \"ok\\n\"; }}\n    }}\n}}\n",
        nginx::preamble(prefix, "1"),
        nginx::http_common(prefix)
    );
    Ok((Nginx::start(prefix, &config, listen)?, listen))
}

/// The baseline: nginx as a bare reverse proxy to `upstream`, keep-alive both sides.
pub struct Baseline {
    pub nginx: Nginx,
    pub plain: SocketAddr,
    pub tls: SocketAddr,
}

pub fn start_baseline(prefix: &Path, workers: &str, upstream: SocketAddr, cert: &Cert) -> Result<Baseline, KitError> {
    let (plain, tls) = (loopback(free_port()), loopback(free_port()));
    let config = format!(
        "{}http {{\n{}    upstream app {{\n        server {upstream};\n        keepalive 64;\n        keepalive_requests 1000000;\n    }}\n    server {{\n        listen {plain};\n        listen {tls} ssl;\n        ssl_certificate {};\n        ssl_certificate_key {};\n        ssl_protocols TLSv1.2 TLSv1.3;\n        client_body_buffer_size 64k;\n        location / {{\n            proxy_pass http://app;\n            proxy_http_version 1.1;\n            proxy_set_header Connection \"\";\n        }}\n    }}\n}}\n",
        nginx::preamble(prefix, workers),
        nginx::http_common(prefix),
        cert.cert.display(),
        cert.key.display()
    );
    Ok(Baseline { nginx: Nginx::start(prefix, &config, plain)?, plain, tls })
}

/// One `rampart proxy` child, its log in a file, killed on drop.
pub struct Rampart {
    child: Child,
    pub addr: SocketAddr,
    pub log: PathBuf,
}

pub struct RampartSpec<'a> {
    pub binary: &'a Path,
    pub upstream: SocketAddr,
    pub log_dir: &'a Path,
    pub name: &'a str,
    /// `--tls-cert/--tls-key`: the proxy listens with TLS.
    pub cert: Option<&'a Cert>,
    /// RAMPART_EXTRA_ARGS, word-split.
    pub extra: &'a [String],
}

impl Rampart {
    /// Starts the proxy in active mode, audit log off, and waits (60 s) until it answers its
    /// health check and passes a benign GET / to the upstream with 200 (models loaded).
    pub fn start(spec: &RampartSpec) -> Result<Rampart, KitError> {
        let addr = loopback(free_port());
        let log = spec.log_dir.join(format!("{}.log", spec.name));
        let log_file = std::fs::File::create(&log).map_err(KitError::io(format!("creating {}", log.display())))?;
        let mut cmd = Command::new(spec.binary);
        cmd.args(["proxy", "--proxy-addr", &addr.to_string(), "--target-url", &format!("http://{}", spec.upstream)]);
        cmd.args(["--mode", "active", "--audit-log", "off"]);
        if let Some(cert) = spec.cert {
            cmd.arg("--tls-cert").arg(&cert.cert).arg("--tls-key").arg(&cert.key);
        }
        cmd.args(spec.extra);
        let stderr = log_file.try_clone().map_err(KitError::io("duplicating the log handle"))?;
        let child = cmd
            .stdin(Stdio::null())
            .stdout(log_file)
            .stderr(stderr)
            .spawn()
            .map_err(KitError::io(format!("starting {}", spec.binary.display())))?;
        let mut rampart = Rampart { child, addr, log };
        let scheme = if spec.cert.is_some() { "https" } else { "http" };
        let deadline = Instant::now() + Duration::from_secs(60);
        for path in ["/_waf/health", "/"] {
            let url = format!("{scheme}://{addr}{path}");
            loop {
                if status(&url) == Some(200) {
                    break;
                }
                if let Ok(Some(exit)) = rampart.child.try_wait() {
                    return Err(KitError::failed(format!("{} exited with {exit} before answering {url}", spec.name), rampart.log_tail()));
                }
                if Instant::now() >= deadline {
                    return Err(KitError::failed(format!("{} did not answer {url} with 200 within 60 s", spec.name), rampart.log_tail()));
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        }
        Ok(rampart)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

impl Drop for Rampart {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The status of GET `url` through curl (it speaks TLS without a client here); None when
/// nothing answers.
fn status(url: &str) -> Option<u16> {
    let out = Command::new("curl").args(["-sk", "-o", "/dev/null", "--max-time", "2", "-w", "%{http_code}", url]).output().ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok().filter(|&code| code != 0)
}
