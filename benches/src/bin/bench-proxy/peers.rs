//! The processes of one run, all on 127.0.0.1: a one-worker nginx upstream answering "ok" (so
//! the upstream is never the bottleneck), the baseline nginx reverse proxy (plain and TLS
//! listeners), and Rampart's proxy (a plain one, and a TLS one when a TLS scenario runs) — all
//! stopped on drop.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use testkit::logged::LoggedChild;
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

/// One `rampart proxy` child (log in the temp dir, killed on drop).
pub struct Rampart {
    pub child: LoggedChild,
    pub addr: SocketAddr,
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
    /// Wait for a benign `GET /` to come back 200 through it too (not for an upstream that
    /// only speaks WebSocket or gRPC).
    pub forward_probe: bool,
}

impl Rampart {
    /// Starts the proxy in active mode, audit log off, and waits (60 s) until it answers its
    /// health check and (`forward_probe`) passes a benign GET / to the upstream with 200.
    pub fn start(spec: &RampartSpec) -> Result<Rampart, KitError> {
        let addr = loopback(free_port());
        let mut cmd = Command::new(spec.binary);
        cmd.args(["proxy", "--proxy-addr", &addr.to_string(), "--target-url", &format!("http://{}", spec.upstream)]);
        cmd.args(["--mode", "active", "--audit-log", "off"]);
        if let Some(cert) = spec.cert {
            cmd.arg("--tls-cert").arg(&cert.cert).arg("--tls-key").arg(&cert.key);
        }
        cmd.args(spec.extra);
        let mut child = LoggedChild::spawn(spec.name, cmd, spec.log_dir)?;
        let scheme = if spec.cert.is_some() { "https" } else { "http" };
        child.wait_200(&format!("{scheme}://{addr}/_waf/health"), Duration::from_secs(60))?;
        if spec.forward_probe {
            child.wait_200(&format!("{scheme}://{addr}/"), Duration::from_secs(30))?;
        }
        Ok(Rampart { child, addr })
    }

    pub fn pid(&self) -> u32 {
        self.child.pid()
    }
}
