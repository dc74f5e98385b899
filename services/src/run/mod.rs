//! Starting servers: bind, build what they need, serve until shutdown. Shared by `main` and
//! tests. `rampart up` (everything in one process) is in [`up`].

mod per_core;
mod policy_watch;
mod rules_watch;
mod up;

pub use crate::config::ProxyRuntime;

pub use policy_watch::reload as reload_policy;
pub use up::{start_up, Stack};

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use thiserror::Error;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::adapter_door::AdapterDoor;
use crate::auth::AuthAdapter;
use crate::config::{AdapterOptions, AuthArgs, ExtprocArgs, InferenceArgs, ModeArgs, ProxyArgs, ProxyOptions, ScorerArgs};
use crate::events::{AuditLog, AuditTarget};
use crate::extproc::{ExtprocService, Processor};
use crate::gate::{Gate, GateParts, SharedMode};
use crate::inference::InferenceService;
use crate::limits::ProcessLimits;
use crate::metrics::Metrics;
use crate::proxy::{Proxy, ProxyParts};
use crate::scorer::{InProcessScorer, RemoteScorer, Scorer};
use proto::ExternalProcessorServer;
use scoring::{Engine, EngineError};

/// Start-up failures; each names what to fix. Never on a request's wire: the process stops
/// with the message (main.rs), so each message carries its cause as well as its `source`.
#[derive(Debug, Error)]
pub enum StartError {
    #[error("scoring engine: {0}")]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Net(#[from] net::NetError),
    #[error("cannot open the audit log (WAF_AUDIT_LOG): {0}")]
    AuditLog(#[source] std::io::Error),
    #[error("{0} is not set: {1}")]
    Missing(&'static str, &'static str),
    #[error("{0} (WAF_POLICY)")]
    Policy(#[from] crate::policy::PolicyError),
    #[error("cannot watch the rules directory {} (RAMPART_RULES_DIR): {detail}", .dir.display())]
    RulesWatch { dir: std::path::PathBuf, detail: String },
    #[error("cannot start a proxy core's runtime or thread (WAF_RUNTIME=per-core): {0}")]
    Runtime(#[source] std::io::Error),
}

/// A server running on a background task.
pub struct Running {
    pub addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    /// None once the server has ended and been awaited.
    task: Option<JoinHandle<()>>,
}

impl Running {
    /// Stops accepting, finishes in-flight requests and waits for the server to end.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        self.wait().await;
    }

    /// Waits until the server ends (it only ends after `stop`).
    pub async fn wait(&mut self) {
        if let Some(task) = &mut self.task {
            let _ = task.await;
            self.task = None;
        }
    }

    pub fn shutdown_handle(&mut self) -> Option<oneshot::Sender<()>> {
        self.shutdown.take()
    }
}

/// Serves `handler` on `addr` on a background task, admitting connections through `gate`,
/// terminating TLS when `tls` is given.
fn spawn_server<H, Fut, O, B>(
    addr: SocketAddr,
    tls: Option<net::TlsServer>,
    gate: Arc<net::ConnGate>,
    handler: H,
) -> Result<Running, StartError>
where
    H: Fn(hyper::Request<hyper::body::Incoming>, net::ConnInfo) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = O> + Send + 'static,
    O: Into<net::Outcome<B>> + 'static,
    B: hyper::body::Body<Data = bytes::Bytes> + Send + Unpin + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let listener = net::bind(addr)?;
    let addr = listener.local_addr().map_err(|source| net::NetError::Bind { addr, source })?;
    let (tx, rx) = oneshot::channel();
    let task = tokio::spawn(net::serve_on(listener, tls, gate, handler, async move {
        let _ = rx.await;
    }));
    Ok(Running { addr, shutdown: Some(tx), task: Some(task) })
}

/// Binds the inference service and serves it on a background task.
pub fn start_inference(args: &InferenceArgs) -> Result<Running, StartError> {
    let engine = Arc::new(Engine::new(args.engine.engine_config())?);
    // The inference service has no metrics registry of its own: a reload is logged only.
    rules_watch::start(args.engine.rules_dir.as_deref(), Some(&engine), None)?;
    start_inference_with(engine, args.addr, args.max_body_bytes, ProcessLimits::unobserved().gate)
}

pub fn start_inference_with(
    engine: Arc<Engine>,
    addr: SocketAddr,
    max_body_bytes: usize,
    gate: Arc<net::ConnGate>,
) -> Result<Running, StartError> {
    let service = Arc::new(InferenceService::new(engine, max_body_bytes));
    spawn_server(addr, None, gate, move |req, _conn| {
        let service = service.clone();
        async move { service.handle(req).await }
    })
}

/// A running proxy and a handle on its state (mode, events) for `up` and tests.
pub struct ProxyServer {
    pub running: Running,
    pub proxy: Arc<Proxy>,
    /// The gate and body budget this proxy admits by (`up` shares them with its other listeners).
    pub limits: ProcessLimits,
}

/// `rampart proxy`: in-process engine, or the inference service when INFERENCE_URL is set.
pub fn start_proxy(args: &ProxyArgs) -> Result<ProxyServer, StartError> {
    let target = args
        .proxy
        .target_url
        .clone()
        .ok_or(StartError::Missing("TARGET_URL", "the proxy needs the upstream application's URL (--target-url)"))?;
    let (scorer, engine) = build_scorer(&args.scorer)?;
    let parts = ProxyParts {
        target,
        threshold: args.scorer.engine.threshold,
        scorer,
        metrics: Arc::new(Metrics::new()),
        audit: open_audit(&args.proxy.audit_log)?,
    };
    let server = start_proxy_with(&args.proxy, parts)?;
    rules_watch::start(args.scorer.engine.rules_dir.as_deref(), engine.as_ref(), Some(server.proxy.gate().metrics().clone()))?;
    follow_policy(args.proxy.policy_file.as_deref(), server.proxy.gate(), engine)?;
    Ok(server)
}

/// Puts the policy file (when given) in force in `gate` and keeps it following the file.
fn follow_policy(path: Option<&std::path::Path>, gate: &Arc<Gate>, engine: Option<Arc<Engine>>) -> Result<(), StartError> {
    let Some(path) = path else { return Ok(()) };
    if let Some(engine) = engine {
        gate.use_engine(engine);
    }
    policy_watch::start(path, std::slice::from_ref(gate))
}

/// The audit log writer for WAF_AUDIT_LOG (`None` for `off`).
pub fn open_audit(target: &AuditTarget) -> Result<Option<AuditLog>, StartError> {
    AuditLog::open(target).map_err(StartError::AuditLog)
}

/// A scorer, and the engine in this process when it scores there.
type ScorerAndEngine = (Arc<dyn Scorer>, Option<Arc<Engine>>);

/// The inference service at INFERENCE_URL when set, else an engine in this process (also
/// returned: policy scopes that change scoring use it).
fn build_scorer(args: &ScorerArgs) -> Result<ScorerAndEngine, StartError> {
    Ok(match &args.inference_url {
        Some(url) => (Arc::new(RemoteScorer::new(url, Duration::from_millis(args.inference_timeout_ms))), None),
        None => {
            let engine = Arc::new(Engine::new(args.engine.engine_config())?);
            (Arc::new(InProcessScorer::new(engine.clone())), Some(engine))
        }
    })
}

/// A running auth adapter: `/_waf/check` and its metrics listener.
pub struct AuthServer {
    pub running: Running,
    pub metrics: Running,
}

/// What a standalone decision service (auth adapter, ext_proc) judges with: its own gate.
struct DecisionSettings<'a> {
    mode: &'a ModeArgs,
    adapter: &'a AdapterOptions,
    scorer: &'a ScorerArgs,
}

impl DecisionSettings<'_> {
    fn gate(&self, metrics: Arc<Metrics>) -> Result<Arc<Gate>, StartError> {
        let (scorer, engine) = build_scorer(self.scorer)?;
        let gate = Arc::new(Gate::new(GateParts {
            mode: SharedMode::new(self.mode.mode),
            threshold: self.scorer.engine.threshold,
            policy: self.adapter.policy.policy(self.adapter.on_scoring_error),
            scorer,
            metrics,
            audit: open_audit(&self.adapter.audit_log)?,
            // No event stream is served standalone (spec 6.4); the hub only feeds the audit log.
            sse_keepalive: Duration::from_secs(15),
        }));
        rules_watch::start(self.scorer.engine.rules_dir.as_deref(), engine.as_ref(), Some(gate.metrics().clone()))?;
        follow_policy(self.adapter.policy_file.as_deref(), &gate, engine)?;
        Ok(gate)
    }
}

/// `rampart auth`.
pub fn start_auth(args: &AuthArgs) -> Result<AuthServer, StartError> {
    let metrics = Arc::new(Metrics::new());
    let limits = args.limits.build(metrics.clone());
    let gate = DecisionSettings { mode: &args.mode, adapter: &args.adapter, scorer: &args.scorer }.gate(metrics.clone())?;
    let door = AdapterDoor::new(args.adapter.door_settings(), gate, limits.budget.clone());
    let running = spawn_auth(args.addr, limits.gate.clone(), Arc::new(AuthAdapter::new(door)))?;
    let metrics = spawn_server(args.metrics_addr, None, limits.gate, move |req, _conn| {
        let metrics = metrics.clone();
        async move { management_response(&req, &metrics) }
    })?;
    Ok(AuthServer { running, metrics })
}

/// A running ext_proc service: gRPC and its HTTP port.
pub struct ExtprocServer {
    pub grpc: Running,
    pub http: Running,
}

/// `rampart extproc`.
pub fn start_extproc(args: &ExtprocArgs) -> Result<ExtprocServer, StartError> {
    let metrics = Arc::new(Metrics::new());
    let limits = args.limits.build(metrics.clone());
    let gate = DecisionSettings { mode: &args.mode, adapter: &args.adapter, scorer: &args.scorer }.gate(metrics)?;
    let service = Arc::new(ExtprocService::new(AdapterDoor::new(args.adapter.door_settings(), gate, limits.budget.clone())));
    let grpc = spawn_grpc(args.addr, &limits, service.clone())?;
    let http = spawn_extproc_http(args.http_addr, limits.gate, service)?;
    Ok(ExtprocServer { grpc, http })
}

fn spawn_auth(addr: SocketAddr, gate: Arc<net::ConnGate>, adapter: Arc<AuthAdapter>) -> Result<Running, StartError> {
    spawn_server(addr, None, gate, move |req, conn| {
        let adapter = adapter.clone();
        async move { adapter.handle(req, conn).await }
    })
}

/// The ext_proc HTTP port; under `rampart up` also the one management listener (its metrics
/// registry is shared by every component there).
fn spawn_extproc_http(addr: SocketAddr, gate: Arc<net::ConnGate>, service: Arc<ExtprocService>) -> Result<Running, StartError> {
    spawn_server(addr, None, gate, move |req, _conn| {
        let service = service.clone();
        async move { crate::extproc::management::handle(&service, &req) }
    })
}

/// Largest ext_proc message accepted: the largest body WAF_BODY_LIMIT_BYTES allows (64 MiB)
/// plus room for headers. Below tonic's 4 MiB default, a bigger BUFFERED body failed to
/// decode and the request went on unscored; the body is cut to the limit after decoding.
const MAX_GRPC_MESSAGE: usize = (64 << 20) + (1 << 20);

/// Serves ExternalProcessor (h2c) on `addr` on a background task.
fn spawn_grpc(addr: SocketAddr, limits: &ProcessLimits, service: Arc<ExtprocService>) -> Result<Running, StartError> {
    let listener = net::bind(addr)?;
    let addr = listener.local_addr().map_err(|source| net::NetError::Bind { addr, source })?;
    let (tx, rx) = oneshot::channel();
    // tonic ignores `tcp_nodelay` for a caller-supplied listener: set it per socket, or
    // Nagle plus delayed ACKs add ~40 ms to a verdict now and then.
    let incoming = tokio_stream::StreamExt::map(tokio_stream::wrappers::TcpListenerStream::new(listener), |stream| {
        if let Ok(stream) = &stream {
            let _ = stream.set_nodelay(true);
        }
        stream
    });
    // Envoy is the one peer here (the gate is not applied to tonic's own accept loop); the
    // per-connection bounds still apply.
    let server = tonic::transport::Server::builder()
        .max_concurrent_streams(Some(limits.gate.limits.h2_max_concurrent_streams))
        .http2_max_header_list_size(Some(u32::try_from(limits.gate.limits.max_header_bytes).unwrap_or(u32::MAX)))
        .add_service(ExternalProcessorServer::new(Processor(service)).max_decoding_message_size(MAX_GRPC_MESSAGE))
        .serve_with_incoming_shutdown(incoming, async move {
            let _ = rx.await;
        });
    let task = tokio::spawn(async move {
        if let Err(err) = server.await {
            tracing::error!(error = %err, "ext_proc gRPC server stopped");
        }
    });
    Ok(Running { addr, shutdown: Some(tx), task: Some(task) })
}

/// The auth adapter's metrics listener: `/metrics` and a health route.
fn management_response(req: &hyper::Request<hyper::body::Incoming>, metrics: &Metrics) -> crate::http::HttpResponse {
    match req.uri().path() {
        "/metrics" => crate::metrics::metrics_response(metrics),
        "/_waf/health" => crate::http::json_response(hyper::StatusCode::OK, &serde_json::json!({ "status": "ok" })),
        // The adapter answers even without models (WAF_ON_MODEL_MISSING decides), so only
        // draining makes it unready.
        "/_waf/ready" => crate::lifecycle::readiness("auth", true),
        path => crate::http::ApiError::NotFound(format!("no route for {path}; try /metrics")).into_response(),
    }
}

/// The proxy with its own gate and body budget built from `options.limits`.
pub fn start_proxy_with(options: &ProxyOptions, parts: ProxyParts) -> Result<ProxyServer, StartError> {
    let limits = options.limits.build(parts.metrics.clone());
    start_proxy_limited(options, parts, limits)
}

/// The proxy admitting by `limits` (shared with other listeners under `up`).
pub fn start_proxy_limited(options: &ProxyOptions, parts: ProxyParts, limits: ProcessLimits) -> Result<ProxyServer, StartError> {
    let settings = options.settings(&parts.target);
    let target = parts.target.clone();
    serve_proxy(options, &target, Arc::new(Proxy::new(settings, parts, &limits)), limits)
}

/// Serves `proxy` by `options.runtime`; per core, each core gets its own instance (its own
/// upstream pool) judging through `proxy`'s gate.
fn serve_proxy(options: &ProxyOptions, target: &hyper::Uri, proxy: Arc<Proxy>, limits: ProcessLimits) -> Result<ProxyServer, StartError> {
    let tls = options.tls.server()?;
    let running = match options.runtime {
        ProxyRuntime::WorkStealing => {
            let handler_proxy = proxy.clone();
            spawn_server(options.addr, tls, limits.gate.clone(), move |req, conn| handler_proxy.clone().handle(req, conn))?
        }
        ProxyRuntime::PerCore => {
            let mut proxies = vec![proxy.clone()];
            proxies.extend(
                (1..per_core::cores()).map(|_| Arc::new(Proxy::with_gate(options.settings(target), target, proxy.gate().clone(), &limits))),
            );
            per_core::spawn(per_core::PerCore { addr: options.addr, tls, gate: limits.gate.clone(), proxies })?
        }
    };
    Ok(ProxyServer { running, proxy, limits })
}
