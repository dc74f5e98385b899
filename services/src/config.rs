//! Command line: every setting is a flag with an environment-variable fallback, and an
//! invalid value stops start-up with a message naming the setting and the accepted values.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;

use gate::client_ip::ClientIpHeader;
use gate::decision::{FailMode, KillResponse, OversizeBody, PartialPolicy, Policy, WafMode};
use gate::scorer::InferenceUrls;
use proxy::{UpstreamProtocol, WsInspect};

use crate::choice::{choice, Choice};

impl Choice for WafMode {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[(WafMode::Shadow, "shadow", ""), (WafMode::Active, "active", "")];
}

impl Choice for KillResponse {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (KillResponse::Reset, "reset", "TCP reset (HTTP/2: RST_STREAM) before any response byte"),
        (KillResponse::Forbidden, "forbidden", "403 with the block body and `X-Waf-Killed: true`"),
    ];
}

impl Choice for UpstreamProtocol {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (UpstreamProtocol::Http1, "http1", "HTTP/1.1 only"),
        (UpstreamProtocol::H2, "h2", "HTTP/2 with prior knowledge (h2c for http://, ALPN h2 for https://): gRPC upstreams"),
        (UpstreamProtocol::Auto, "auto", "ALPN for https:// (h2 when offered), HTTP/1.1 for http://"),
    ];
}

impl Choice for WsInspect {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (
            WsInspect::Close,
            "close",
            "Score every client message; one the gate blocks closes the client with 1008 and never reaches the upstream",
        ),
        (WsInspect::Score, "score", "Score and record every client message, never close"),
        (WsInspect::Off, "off", "Plain byte tunnel: messages are not scored (a bypass for anything sent over it)"),
    ];
}

impl Choice for ClientIpHeader {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (ClientIpHeader::XForwardedFor, "x-forwarded-for", "The rightmost X-Forwarded-For entry that is not a trusted proxy"),
        (ClientIpHeader::XRealIp, "x-real-ip", "X-Real-IP (nginx `proxy_set_header X-Real-IP $remote_addr`)"),
        (ClientIpHeader::CfConnectingIp, "cf-connecting-ip", "CF-Connecting-IP (Cloudflare)"),
        (ClientIpHeader::TrueClientIp, "true-client-ip", "True-Client-IP (Akamai, Cloudflare Enterprise)"),
        (ClientIpHeader::None, "none", "No header: the socket peer is the client"),
    ];
}

impl Choice for FailMode {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (FailMode::Open, "open", "Forward the request unscored"),
        (FailMode::Closed, "closed", "Refuse it: 503 `scoring_unavailable` (the auth adapter 403)"),
    ];
}

impl Choice for OversizeBody {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (OversizeBody::ScorePrefix, "score-prefix", "Score the first WAF_BODY_LIMIT_BYTES and stream the whole body on"),
        (OversizeBody::Block, "block", "Treat the request as over the threshold (reason `body-limit:exceeded`)"),
        (
            OversizeBody::Partial,
            "partial",
            "Score the first WAF_BODY_LIMIT_BYTES; the verdict is partial (`body-limit`) and WAF_ON_PARTIAL decides",
        ),
    ];
}

impl Choice for PartialPolicy {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (PartialPolicy::Block, "block", "Treat it as over the threshold (active: killed; shadow: would have been)"),
        (PartialPolicy::Pass, "pass", "Forward it, marked `X-Waf-Partial`"),
    ];
}

pub fn parse_threshold(s: &str) -> Result<f32, String> {
    let v: f32 = s.parse().map_err(|_| format!("`{s}` is not a number; WAF_THRESHOLD accepts 0.0 to 1.0"))?;
    if !(0.0..=1.0).contains(&v) || v.is_nan() {
        return Err(format!("{v} is outside 0.0 to 1.0; WAF_THRESHOLD accepts 0.0 to 1.0"));
    }
    Ok(v)
}

fn parse_sensitivity(s: &str) -> Result<u8, String> {
    match s.trim().parse::<u8>() {
        Ok(v @ 1..=4) => Ok(v),
        _ => Err(format!("`{s}` is not a level; WAF_SENSITIVITY accepts 1, 2, 3 or 4")),
    }
}

fn parse_on_off(s: &str) -> Result<bool, String> {
    match s.trim() {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("`{s}` is neither on nor off; RAMPART_PI_CASCADE accepts on or off")),
    }
}

fn parse_skip_below(s: &str) -> Result<f32, String> {
    match s.trim().parse::<f32>() {
        Ok(v) if (0.0..0.5).contains(&v) => Ok(v),
        _ => Err(format!(
            "`{s}` is not a score in [0, 0.5); RAMPART_PI_CASCADE_SKIP_BELOW takes e.g. 0.02 (0: every text to the transformer)"
        )),
    }
}

/// Settings of the scoring engine, shared by every command that scores in process.
#[derive(Clone, Debug, Args)]
pub struct EngineArgs {
    /// Kill threshold: a request scoring strictly above it is an attack (see docs/RATIONALE.md).
    #[arg(long = "threshold", env = "WAF_THRESHOLD", value_name = "WAF_THRESHOLD", default_value = "0.5", value_parser = parse_threshold)]
    pub threshold: f32,
    /// Sensitivity level, 1 to 4 (like CRS paranoia levels): rules and code detectors tagged
    /// above it do not count. 1 keeps false positives on real traffic near zero; each level
    /// up catches more obfuscated or ambiguous attacks at more false positives (docs/rules.md).
    #[arg(long = "sensitivity", env = "WAF_SENSITIVITY", value_name = "WAF_SENSITIVITY", default_value = "1", value_parser = parse_sensitivity)]
    pub sensitivity: u8,
    /// Folder with `sqli/` and `prompt-injection/` model folders. A relative path is looked up
    /// in the working directory, then in `../lib/rampart/` next to the executable.
    #[arg(long = "models-dir", env = "RAMPART_MODELS_DIR", value_name = "RAMPART_MODELS_DIR", default_value = "models")]
    pub models_dir: PathBuf,
    /// Run pattern detectors only (model detectors score 0).
    #[arg(long = "no-models", env = "RAMPART_NO_MODELS", value_name = "RAMPART_NO_MODELS")]
    pub no_models: bool,
    /// ONNX Runtime shared library (installed by scripts/bootstrap); relative paths are looked
    /// up like the models folder's.
    #[arg(
        long = "ort-dylib",
        env = "ORT_DYLIB_PATH",
        value_name = "ORT_DYLIB_PATH",
        default_value = "vendor/onnxruntime/lib/libonnxruntime.so.1.22.1"
    )]
    pub ort_dylib: PathBuf,
    /// Folder of rule files replacing the built-in rules.
    #[arg(long = "rules-dir", env = "RAMPART_RULES_DIR", value_name = "RAMPART_RULES_DIR")]
    pub rules_dir: Option<PathBuf>,
    /// Folder where compiled rule databases are kept between starts (`off`: compile at every
    /// start). Default `$XDG_CACHE_HOME/rampart/hyperscan`, else `~/.cache/rampart/hyperscan`;
    /// used only when it belongs to this user and nobody else can write it (docs/RATIONALE.md).
    #[arg(long = "db-cache-dir", env = "RAMPART_DB_CACHE_DIR", value_name = "RAMPART_DB_CACHE_DIR", default_value = "default")]
    pub db_cache_dir: scoring::patterns::db_cache::CacheDir,
    /// Intra-op threads per model session.
    #[arg(long = "model-threads", env = "RAMPART_MODEL_THREADS", value_name = "RAMPART_MODEL_THREADS", default_value = "1", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub model_threads: u16,
    /// Intra-op threads of the prompt-injection transformer session (0: one per core, at most 4).
    #[arg(long = "transformer-threads", env = "RAMPART_TRANSFORMER_THREADS", value_name = "RAMPART_TRANSFORMER_THREADS", default_value = "0", value_parser = clap::value_parser!(u16).range(0..=64))]
    pub transformer_threads: u16,
    /// Most texts per model batch.
    #[arg(long = "model-max-batch", env = "RAMPART_MODEL_MAX_BATCH", value_name = "RAMPART_MODEL_MAX_BATCH", default_value = "32", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub model_max_batch: u16,
    /// Recent model scores remembered per model, by text (0: off). Chat apps resend the
    /// conversation every turn; a remembered text skips the model.
    #[arg(long = "model-cache-entries", env = "RAMPART_MODEL_CACHE_ENTRIES", value_name = "RAMPART_MODEL_CACHE_ENTRIES", default_value = "8192", value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub model_cache_entries: u64,
    /// Longest one request's model work may take, in milliseconds, when the front door names
    /// no deadline. Past it the queued work is dropped and the verdict lacks the model
    /// (WAF_ON_MODEL_MISSING decides).
    #[arg(long = "scoring-deadline-ms", env = "WAF_SCORING_DEADLINE_MS", value_name = "WAF_SCORING_DEADLINE_MS", default_value = "2000", value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub scoring_deadline_ms: u64,
    /// Most texts one client may have waiting in a model queue: a client flooding the models
    /// is refused beyond it while everyone else keeps their share.
    #[arg(long = "model-client-queue", env = "RAMPART_MODEL_CLIENT_QUEUE", value_name = "RAMPART_MODEL_CLIENT_QUEUE", default_value = "128", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub model_client_queue: u64,
    /// Model windows scored per request and detector (a window: 4 KiB of a SQLi candidate,
    /// 2 KiB of prose). Past it the rest is not model-scored and the verdict is partial
    /// (`model-budget:<detector>`, WAF_ON_PARTIAL decides): raise it for apps that post long
    /// documents, at a few ms of CPU per prompt-injection window.
    #[arg(long = "model-windows", env = "RAMPART_MODEL_WINDOWS", value_name = "RAMPART_MODEL_WINDOWS", default_value = "64", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub model_windows: u64,
    /// Longest a text waits for batch companions, in microseconds.
    #[arg(long = "model-max-wait-us", env = "RAMPART_MODEL_MAX_WAIT_US", value_name = "RAMPART_MODEL_MAX_WAIT_US", default_value = "0")]
    pub model_max_wait_us: u64,
    /// Prompt-injection cascade: stage 1 (models/prompt-injection/stage1, microseconds) clears
    /// texts the transformer would not flag; only the rest reach the transformer (on or off).
    #[arg(long = "pi-cascade", env = "RAMPART_PI_CASCADE", value_name = "RAMPART_PI_CASCADE", default_value = "on", action = clap::ArgAction::Set, value_parser = parse_on_off)]
    pub pi_cascade: bool,
    /// Replaces stage 1's calibrated skip threshold (stage1/cascade.json), in [0, 0.5).
    #[arg(long = "pi-cascade-skip-below", env = "RAMPART_PI_CASCADE_SKIP_BELOW", value_name = "RAMPART_PI_CASCADE_SKIP_BELOW", value_parser = parse_skip_below)]
    pub pi_cascade_skip_below: Option<f32>,
}

impl EngineArgs {
    pub fn engine_config(&self) -> scoring::EngineConfig {
        let mut config = scoring::EngineConfig {
            threshold: self.threshold,
            rules_dir: self.rules_dir.clone(),
            models_dir: (!self.no_models).then(|| crate::install_paths::locate(&self.models_dir)),
            ort_dylib: crate::install_paths::locate(&self.ort_dylib),
            model_threads: self.model_threads as usize,
            max_model_fields: self.model_windows as usize,
            sensitivity: self.sensitivity,
            db_cache: self.db_cache_dir.clone(),
            ..Default::default()
        };
        if self.transformer_threads > 0 {
            config.transformer_threads = self.transformer_threads as usize;
        }
        config.batch.max_batch = self.model_max_batch as usize;
        config.batch.max_wait = std::time::Duration::from_micros(self.model_max_wait_us);
        config.batch.cache_entries = self.model_cache_entries as usize;
        config.batch.client_queue = self.model_client_queue as usize;
        config.batch.pi_cascade = scoring::model::CascadeSetting { enabled: self.pi_cascade, skip_below: self.pi_cascade_skip_below };
        config.scoring_deadline = std::time::Duration::from_millis(self.scoring_deadline_ms);
        config
    }
}

#[derive(Clone, Debug, Args)]
pub struct InferenceArgs {
    /// Listen address of the inference service; keep it internal.
    #[arg(long = "inference-addr", env = "INFERENCE_ADDR", value_name = "INFERENCE_ADDR", default_value = "127.0.0.1:8081")]
    pub addr: SocketAddr,
    /// Largest accepted request body in bytes (413 above it). JSON escaping can grow a
    /// request body up to 6x (a control byte becomes `\u0001`), so this stays well above
    /// 6 x the proxy's WAF_BODY_LIMIT_BYTES: an over-long call would be a scoring failure.
    #[arg(
        long = "inference-max-body",
        env = "INFERENCE_MAX_BODY_BYTES",
        value_name = "INFERENCE_MAX_BODY_BYTES",
        default_value = "8388608"
    )]
    pub max_body_bytes: usize,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Plain http only: TLS to the upstream or inference service is not built in (terminate or
/// originate TLS in a sidecar; docs/RATIONALE.md).
fn parse_plain_http_url(s: &str) -> Result<hyper::Uri, String> {
    let uri: hyper::Uri = s.parse().map_err(|e| format!("`{s}` is not a URL ({e}); expected http://host:port"))?;
    match (uri.scheme_str(), uri.authority()) {
        (Some("http"), Some(_)) if uri.query().is_none() => Ok(uri),
        (Some("https"), Some(_)) => Err(format!("`{s}`: https is not supported; use http:// (TLS is terminated in front of Rampart)")),
        (Some("http"), Some(_)) => Err(format!("`{s}` must not carry a query string")),
        _ => Err(format!("`{s}` must be an absolute http:// URL such as http://127.0.0.1:3000")),
    }
}

/// INFERENCE_URL: each item checked like any URL setting, then the list as a whole.
fn parse_inference_urls(s: &str) -> Result<InferenceUrls, String> {
    let bases = s
        .split(',')
        .map(|item| match item.trim() {
            "" => Err("an empty item in the list (a stray comma?); INFERENCE_URL takes http:// URLs separated by commas".to_string()),
            item => parse_plain_http_url(item),
        })
        .collect::<Result<Vec<_>, _>>()?;
    InferenceUrls::new(bases)
}

/// The operating mode at start-up (spec 1.4).
#[derive(Clone, Debug, Args)]
pub struct ModeArgs {
    #[arg(long = "mode", env = "WAF_MODE", value_name = "WAF_MODE", value_parser = choice::<WafMode>(), default_value = "shadow")]
    pub mode: WafMode,
}

/// Where scoring happens: in process, or the inference service at INFERENCE_URL.
#[derive(Clone, Debug, Args)]
pub struct ScorerArgs {
    /// Inference service(s) to call instead of scoring in process: one or more http:// URLs,
    /// comma-separated; calls rotate over the healthy ones (docs/PROXY.md, "Several inference
    /// services").
    #[arg(long = "inference-url", env = "INFERENCE_URL", value_name = "INFERENCE_URL", value_parser = parse_inference_urls)]
    pub inference_url: Option<InferenceUrls>,
    /// Deadline for one inference call (connect + answer), in milliseconds; past it the
    /// request counts as a scoring failure (see WAF_ON_SCORING_ERROR).
    #[arg(long = "inference-timeout-ms", env = "INFERENCE_TIMEOUT_MS", value_name = "INFERENCE_TIMEOUT_MS", default_value = "1000", value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub inference_timeout_ms: u64,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// How a verdict that is not whole is judged; shared by every front door.
#[derive(Clone, Debug, Args)]
pub struct PolicyArgs {
    /// A verdict without a model's opinion (model loading, overloaded, past the scoring
    /// deadline) in active mode: `closed` (503 `scoring_unavailable`; the auth adapter 403)
    /// or `open` (forward, `X-Waf-Error: scoring-incomplete`).
    #[arg(long = "on-model-missing", env = "WAF_ON_MODEL_MISSING", value_name = "WAF_ON_MODEL_MISSING", value_parser = choice::<FailMode>(), default_value = "closed")]
    pub on_model_missing: FailMode,
    /// A partial verdict (a work bound was hit, `X-Waf-Partial` lists which): `block` or `pass`.
    #[arg(long = "on-partial", env = "WAF_ON_PARTIAL", value_name = "WAF_ON_PARTIAL", value_parser = choice::<PartialPolicy>(), default_value = "block")]
    pub on_partial: PartialPolicy,
}

impl PolicyArgs {
    /// The gate's policy: these two settings plus the door's WAF_ON_SCORING_ERROR.
    pub fn policy(&self, on_scoring_error: FailMode) -> Policy {
        Policy { on_scoring_error, on_model_missing: self.on_model_missing, on_partial: self.on_partial }
    }
}

/// A comma-separated list of IPs or CIDRs (one clap value, not many).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IpNetList(pub Vec<crate::client_ip::IpNet>);

fn parse_ip_nets(s: &str) -> Result<IpNetList, String> {
    s.split(',').map(str::trim).filter(|p| !p.is_empty()).map(str::parse).collect::<Result<_, _>>().map(IpNetList)
}

/// A comma-separated list of host names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostList(pub Vec<String>);

fn parse_host_list(s: &str) -> Result<HostList, String> {
    let names: Vec<String> = s.split(',').map(str::trim).filter(|h| !h.is_empty()).map(str::to_ascii_lowercase).collect();
    match names.iter().find(|h| h.contains(['/', ':', ' ', '@'])) {
        Some(bad) => Err(format!("`{bad}` is not a host name (no scheme, port or path)")),
        None => Ok(HostList(names)),
    }
}

/// Settings of the inline proxy (shared by `rampart proxy` and `rampart up`).
#[derive(Clone, Debug, Args)]
pub struct ProxyOptions {
    #[arg(id = "proxy_addr", long = "proxy-addr", env = "PROXY_ADDR", value_name = "PROXY_ADDR", default_value = "0.0.0.0:8080")]
    pub addr: SocketAddr,
    /// Upstream application (http:// or https://host:port[/prefix]).
    #[arg(long = "target-url", env = "TARGET_URL", value_name = "TARGET_URL", value_parser = crate::tls_args::parse_target_url)]
    pub target_url: Option<hyper::Uri>,
    #[command(flatten)]
    pub mode: ModeArgs,
    /// Active-mode kill: `reset` (TCP RST / RST_STREAM) or `forbidden` (403 block body).
    #[arg(long = "kill-response", env = "WAF_KILL_RESPONSE", value_name = "WAF_KILL_RESPONSE", value_parser = choice::<KillResponse>(), default_value = "reset")]
    pub kill_response: KillResponse,
    /// Bytes of request body buffered and scored (docs/RATIONALE.md).
    #[arg(long = "body-limit", env = "WAF_BODY_LIMIT_BYTES", value_name = "WAF_BODY_LIMIT_BYTES", default_value = "1048576", value_parser = clap::value_parser!(u64).range(1..=(64 << 20)))]
    pub body_limit: u64,
    /// Longest the proxy waits for the scored part of a request body, in milliseconds
    /// (408 past it): a client trickling its body cannot hold a connection forever.
    #[arg(long = "body-read-timeout-ms", env = "WAF_BODY_READ_TIMEOUT_MS", value_name = "WAF_BODY_READ_TIMEOUT_MS", default_value = "30000", value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub body_read_timeout_ms: u64,
    /// Bodies over the limit: `score-prefix` (score the prefix, forward all) or `block`.
    #[arg(long = "oversize-body", env = "WAF_OVERSIZE_BODY", value_name = "WAF_OVERSIZE_BODY", value_parser = choice::<OversizeBody>(), default_value = "score-prefix")]
    pub oversize_body: OversizeBody,
    /// Scoring failure in active mode: `open` (forward) or `closed` (503).
    #[arg(long = "on-scoring-error", env = "WAF_ON_SCORING_ERROR", value_name = "WAF_ON_SCORING_ERROR", value_parser = choice::<FailMode>(), default_value = "open")]
    pub on_scoring_error: FailMode,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Peers (IPs or CIDRs, comma-separated) whose CF-Connecting-IP / X-Real-IP /
    /// X-Forwarded-For are believed for an event's source_ip. Empty: nobody's.
    #[arg(long = "trusted-proxies", env = "WAF_TRUSTED_PROXIES", value_name = "WAF_TRUSTED_PROXIES", default_value = "", value_parser = parse_ip_nets)]
    pub trusted_proxies: IpNetList,
    /// The header a trusted proxy names the client in: x-forwarded-for (rightmost entry that
    /// is not a trusted proxy), x-real-ip, cf-connecting-ip, true-client-ip, or none.
    #[arg(
        long = "client-ip-header",
        env = "WAF_CLIENT_IP_HEADER",
        value_name = "WAF_CLIENT_IP_HEADER",
        value_parser = choice::<ClientIpHeader>(),
        default_value = "x-forwarded-for"
    )]
    pub client_ip_header: ClientIpHeader,
    /// Peers (IPs or CIDRs) allowed on admin endpoints without a token.
    #[arg(long = "admin-allow", env = "WAF_ADMIN_ALLOW", value_name = "WAF_ADMIN_ALLOW", default_value = "127.0.0.1,::1", value_parser = parse_ip_nets)]
    pub admin_allow: IpNetList,
    /// Host names (comma-separated) an allowed peer may use for the admin endpoints besides IP
    /// literals and loopback names; anything else is refused (DNS rebinding).
    #[arg(long = "admin-hosts", env = "WAF_ADMIN_HOSTS", value_name = "WAF_ADMIN_HOSTS", default_value = "", value_parser = parse_host_list)]
    pub admin_hosts: HostList,
    /// Bearer token that opens the admin endpoints from any peer.
    #[arg(long = "admin-token", env = "WAF_ADMIN_TOKEN", value_name = "WAF_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,
    /// Audit log of every event: `stdout`, `off`, or a file path (appended).
    #[arg(long = "audit-log", env = "WAF_AUDIT_LOG", value_name = "WAF_AUDIT_LOG", default_value = "stdout")]
    pub audit_log: crate::events::AuditTarget,
    /// Seconds between `: keepalive` comments on /api/events.
    #[arg(long = "sse-keepalive-secs", env = "WAF_SSE_KEEPALIVE_SECS", value_name = "WAF_SSE_KEEPALIVE_SECS", default_value = "15", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub sse_keepalive_secs: u64,
    /// Deadline for the upstream's response headers, in milliseconds (504 past it).
    #[arg(long = "upstream-timeout-ms", env = "WAF_UPSTREAM_TIMEOUT_MS", value_name = "WAF_UPSTREAM_TIMEOUT_MS", default_value = "60000", value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub upstream_timeout_ms: u64,
    /// Protocol spoken to the upstream: `http1`, `h2` (prior knowledge; gRPC) or `auto`.
    #[arg(long = "upstream-protocol", env = "WAF_UPSTREAM_PROTOCOL", value_name = "WAF_UPSTREAM_PROTOCOL", value_parser = choice::<UpstreamProtocol>(), default_value = "http1")]
    pub upstream_protocol: UpstreamProtocol,
    /// Operator policy file (TOML, docs/POLICY.md): per-host and per-route settings and
    /// exclusions over these flags, reloaded on SIGHUP and when the file changes.
    #[arg(long = "policy", env = "WAF_POLICY", value_name = "WAF_POLICY")]
    pub policy_file: Option<PathBuf>,
    /// Connection, header and body-budget limits (shared by every listener under `up`).
    #[command(flatten)]
    pub limits: crate::limit_args::LimitArgs,
    #[command(flatten)]
    pub tls: crate::tls_args::TlsArgs,
    /// WebSocket messages from the client after the handshake (docs/PROXY.md).
    #[arg(long = "ws-inspect", env = "WAF_WS_INSPECT", value_name = "WAF_WS_INSPECT", value_parser = choice::<WsInspect>(), default_value = "close")]
    pub ws_inspect: WsInspect,
    /// Bytes of one WebSocket message reassembled and scored; past it the verdict is partial
    /// (WAF_ON_PARTIAL: `block` closes with 1009, `pass` relays the rest unscored).
    #[arg(long = "ws-max-message", env = "WAF_WS_MAX_MESSAGE", value_name = "WAF_WS_MAX_MESSAGE", default_value = "1048576", value_parser = clap::value_parser!(u64).range(1..=(64 << 20)))]
    pub ws_max_message: u64,
    /// How the proxy's listener is served: `per-core` (one single-threaded runtime per core,
    /// SO_REUSEPORT listeners, no cross-core hand-off; queries of 64 KiB or more are scored on
    /// the shared runtime) or `work-stealing` (one shared multi-threaded runtime).
    /// docs/BENCH-PROXY.md has the figures behind the default.
    #[arg(long = "runtime", env = "WAF_RUNTIME", value_name = "WAF_RUNTIME", value_enum, default_value = "per-core")]
    pub runtime: ProxyRuntime,
}

#[derive(Clone, Debug, Args)]
pub struct ProxyArgs {
    #[command(flatten)]
    pub proxy: ProxyOptions,
    #[command(flatten)]
    pub scorer: ScorerArgs,
}

/// Settings shared by the decision services (auth adapter, ext_proc).
#[derive(Clone, Debug, Args)]
pub struct AdapterOptions {
    /// Peers whose X-Real-IP / X-Forwarded-For name the client. The web server or edge
    /// proxy usually runs on the same host, hence loopback by default.
    #[arg(long = "trusted-proxies", env = "WAF_TRUSTED_PROXIES", value_name = "WAF_TRUSTED_PROXIES", default_value = "127.0.0.1,::1", value_parser = parse_ip_nets)]
    pub trusted_proxies: IpNetList,
    /// The header a trusted proxy names the client in (see the proxy's setting).
    #[arg(
        long = "client-ip-header",
        env = "WAF_CLIENT_IP_HEADER",
        value_name = "WAF_CLIENT_IP_HEADER",
        value_parser = choice::<ClientIpHeader>(),
        default_value = "x-forwarded-for"
    )]
    pub client_ip_header: ClientIpHeader,
    /// One JSON line per verdict: `stdout`, `off`, or a file path (appended).
    #[arg(long = "audit-log", env = "WAF_AUDIT_LOG", value_name = "WAF_AUDIT_LOG", default_value = "stdout")]
    pub audit_log: crate::events::AuditTarget,
    /// Bytes of request body scored; the rest is ignored.
    #[arg(long = "body-limit", env = "WAF_BODY_LIMIT_BYTES", value_name = "WAF_BODY_LIMIT_BYTES", default_value = "1048576", value_parser = clap::value_parser!(u64).range(1..=(64 << 20)))]
    pub body_limit: u64,
    /// Scoring failure (inference unreachable, timed out) in active mode: `open` passes
    /// (spec 7: the auth adapter answers 200; ext_proc ends the stream with UNAVAILABLE and
    /// Envoy's failure_mode_allow decides) or `closed` (the auth adapter 403, ext_proc an
    /// immediate 503, both with the `scoring_unavailable` body).
    #[arg(long = "on-scoring-error", env = "WAF_ON_SCORING_ERROR", value_name = "WAF_ON_SCORING_ERROR", value_parser = choice::<FailMode>(), default_value = "open")]
    pub on_scoring_error: FailMode,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Operator policy file (TOML, docs/POLICY.md): per-host and per-route settings and
    /// exclusions over these flags, reloaded on SIGHUP and when the file changes.
    #[arg(long = "policy", env = "WAF_POLICY", value_name = "WAF_POLICY")]
    pub policy_file: Option<PathBuf>,
}

#[derive(Clone, Debug, Args)]
pub struct AuthArgs {
    #[arg(long = "auth-addr", env = "AUTH_ADDR", value_name = "AUTH_ADDR", default_value = "127.0.0.1:8090")]
    pub addr: SocketAddr,
    #[arg(long = "auth-metrics-addr", env = "AUTH_METRICS_ADDR", value_name = "AUTH_METRICS_ADDR", default_value = "127.0.0.1:9090")]
    pub metrics_addr: SocketAddr,
    #[command(flatten)]
    pub limits: crate::limit_args::LimitArgs,
    #[command(flatten)]
    pub mode: ModeArgs,
    #[command(flatten)]
    pub adapter: AdapterOptions,
    #[command(flatten)]
    pub scorer: ScorerArgs,
}

#[derive(Clone, Debug, Args)]
pub struct ExtprocArgs {
    #[arg(long = "extproc-addr", env = "EXTPROC_ADDR", value_name = "EXTPROC_ADDR", default_value = "127.0.0.1:50051")]
    pub addr: SocketAddr,
    #[arg(long = "extproc-http-addr", env = "EXTPROC_HTTP_ADDR", value_name = "EXTPROC_HTTP_ADDR", default_value = "127.0.0.1:9090")]
    pub http_addr: SocketAddr,
    #[command(flatten)]
    pub limits: crate::limit_args::LimitArgs,
    #[command(flatten)]
    pub mode: ModeArgs,
    #[command(flatten)]
    pub adapter: AdapterOptions,
    #[command(flatten)]
    pub scorer: ScorerArgs,
}

#[derive(Clone, Debug, Args)]
pub struct UpArgs {
    #[command(flatten)]
    pub inference: InferenceArgs,
    #[command(flatten)]
    pub proxy: ProxyOptions,
    /// nginx auth_request adapter (`/_waf/check`).
    #[arg(long = "auth-addr", env = "AUTH_ADDR", value_name = "AUTH_ADDR", default_value = "127.0.0.1:8090")]
    pub auth_addr: SocketAddr,
    /// Envoy ext_proc gRPC.
    #[arg(long = "extproc-addr", env = "EXTPROC_ADDR", value_name = "EXTPROC_ADDR", default_value = "127.0.0.1:50051")]
    pub extproc_addr: SocketAddr,
    /// The one management listener: combined /metrics, ext_proc's /_waf/health and /api/mode.
    #[arg(long = "management-addr", env = "MANAGEMENT_ADDR", value_name = "MANAGEMENT_ADDR", default_value = "127.0.0.1:9090")]
    pub management_addr: SocketAddr,
    /// Listen address of the built-in demo upstream used when TARGET_URL is unset.
    #[arg(long = "demo-addr", env = "DEMO_ADDR", value_name = "DEMO_ADDR", default_value = "127.0.0.1:0")]
    pub demo_addr: SocketAddr,
}

/// How the proxy's listener is served (`--runtime`, WAF_RUNTIME).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ProxyRuntime {
    /// One current-thread runtime per core, each with its own SO_REUSEPORT listener and
    /// upstream pool.
    PerCore,
    /// The process's shared multi-threaded runtime (tokio's work stealing).
    WorkStealing,
}
