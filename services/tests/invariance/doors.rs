//! The three front doors, each started once in active mode in front of its own recording
//! upstream: the proxy (403 kill response, scoring through the inference service), the auth adapter behind real nginx (Lua body
//! config) and ext_proc behind real Envoy (deploy/envoy/envoy.yaml).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use clap::Parser;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use services::cli::{Cli, Command};
use services::config::{AuthArgs, ExtprocArgs};
use services::run::{start_auth, start_extproc, AuthServer, ExtprocServer};

use super::placements::Req;
use crate::common;
use crate::common::envoy::Envoy;
use crate::common::nginx::{self, Nginx};
use crate::common::proxy::{send_from, start_remote_proxy, TestProxy};

/// Each request carries its cell number here, so the upstream can tell which ones it saw.
pub const CELL_HEADER: &str = "x-invariance-cell";

/// What the upstream saw of one request: the verdict headers the door stamped.
#[derive(Clone, Debug)]
pub struct Arrival {
    pub score: Option<String>,
    pub error: Option<String>,
}

/// A recording upstream that keeps only the cell number and the verdict headers (padded
/// bodies of 900 KB are not kept).
pub struct Upstream {
    pub addr: SocketAddr,
    pub seen: Arc<Mutex<HashMap<u64, Arrival>>>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn upstream() -> Upstream {
    let seen: Arc<Mutex<HashMap<u64, Arrival>>> = Arc::default();
    let log = seen.clone();
    let listener = net::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(net::serve(
        listener,
        move |req: Request<Incoming>, _conn| {
            let log = log.clone();
            async move {
                let (parts, body) = req.into_parts();
                let _ = body.collect().await;
                let text = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok()).map(String::from);
                if let Some(cell) = text(CELL_HEADER).and_then(|v| v.parse().ok()) {
                    log.lock().unwrap().insert(cell, Arrival { score: text("x-waf-score"), error: text("x-waf-error") });
                }
                Response::new(Full::new(Bytes::from_static(b"upstream ok")))
            }
        },
        async move {
            let _ = rx.await;
        },
    ));
    Upstream { addr, seen, _stop: tx }
}

/// Keeps a door's processes alive; dropped at the end of the test (Envoy and nginx first).
#[allow(dead_code)]
enum Guard {
    Proxy(TestProxy),
    Nginx(Nginx, AuthServer),
    Envoy(Envoy, ExtprocServer),
}

pub struct Door {
    /// Stable id: the door column of known_gaps.txt.
    pub name: &'static str,
    pub addr: SocketAddr,
    pub upstream: Upstream,
    _guard: Guard,
}

pub const NAMES: [&str; 3] = ["proxy", "nginx-auth", "envoy-extproc"];

/// Generous scorer timeouts: on a loaded 2-core box a slow model call must not turn into a
/// fail-open pass (that is the load-shedding finding's own test, not this matrix's).
const INFERENCE_TIMEOUT_MS: &str = "30000";

pub async fn start_all() -> Vec<Door> {
    // One model set for all three doors: the proxy scores through the same inference
    // service as the adapters (INFERENCE_URL), so the models load once.
    let inference = tokio::task::spawn_blocking(common::shared_base).await.unwrap();
    let proxy = {
        let upstream = upstream().await;
        let timeout = Duration::from_millis(INFERENCE_TIMEOUT_MS.parse().unwrap());
        let proxy = start_remote_proxy(upstream.addr, inference, timeout, &["--mode", "active", "--kill-response", "forbidden"]);
        Door { name: NAMES[0], addr: proxy.addr, upstream, _guard: Guard::Proxy(proxy) }
    };
    let nginx = {
        let upstream = upstream().await;
        let auth = start_auth(&auth_args(inference)).expect("auth adapter starts");
        let nginx = nginx::start(nginx::Config::WithBody, auth.running.addr, upstream.addr);
        Door { name: NAMES[1], addr: nginx.addr, upstream, _guard: Guard::Nginx(nginx, auth) }
    };
    let envoy = {
        let upstream = upstream().await;
        let extproc = start_extproc(&extproc_args(inference)).expect("rampart extproc starts");
        // message_timeout 2 s → 20 s: the same fail-open reasoning as INFERENCE_TIMEOUT_MS.
        let envoy = Envoy::start_with(extproc.grpc.addr, upstream.addr, |c| c.replace("message_timeout: 2s", "message_timeout: 20s")).await;
        Door { name: NAMES[2], addr: envoy.addr, upstream, _guard: Guard::Envoy(envoy, extproc) }
    };
    vec![proxy, nginx, envoy]
}

fn auth_args(inference: &str) -> AuthArgs {
    let argv = [
        "rampart",
        "auth",
        "--auth-addr",
        "127.0.0.1:0",
        "--auth-metrics-addr",
        "127.0.0.1:0",
        "--mode",
        "active",
        "--inference-url",
        inference,
        "--inference-timeout-ms",
        INFERENCE_TIMEOUT_MS,
        "--audit-log",
        "off",
    ];
    match Cli::parse_from(argv).command {
        Command::Auth(args) => args,
        _ => unreachable!(),
    }
}

fn extproc_args(inference: &str) -> ExtprocArgs {
    let argv = [
        "rampart",
        "extproc",
        "--extproc-addr",
        "127.0.0.1:0",
        "--extproc-http-addr",
        "127.0.0.1:0",
        "--mode",
        "active",
        "--inference-url",
        inference,
        "--inference-timeout-ms",
        INFERENCE_TIMEOUT_MS,
        "--audit-log",
        "off",
    ];
    match Cli::parse_from(argv).command {
        Command::Extproc(args) => args,
        _ => unreachable!(),
    }
}

/// How one request fared at one door.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The upstream saw nothing (403/503 from the WAF, a reset, or the door refused it).
    Caught { status: Option<u16> },
    /// The upstream saw it with a verdict.
    Passed,
    /// The upstream saw it without a complete verdict (scorer error, timeout): not a
    /// statement about detection; retried.
    Unscored { detail: String },
}

impl Door {
    pub async fn send(&self, cell: u64, req: &Req) -> Outcome {
        let mut builder = Request::builder().method(req.method).uri(req.target.as_str()).header("host", "shop.example");
        for (name, value) in &req.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        let request =
            builder.header(CELL_HEADER, cell.to_string()).body(Full::new(Bytes::from(req.body.clone()))).expect("a valid request");
        let status = send_from(self.addr, None, request).await.ok().map(|r| r.status);
        match self.upstream.seen.lock().unwrap().get(&cell) {
            None => Outcome::Caught { status },
            Some(Arrival { error: Some(e), .. }) => Outcome::Unscored { detail: format!("x-waf-error: {e}") },
            Some(Arrival { score: None, .. }) => Outcome::Unscored { detail: "no x-waf-score (door failed open)".into() },
            Some(_) => Outcome::Passed,
        }
    }
}
