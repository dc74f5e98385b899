//! Command line: every setting is a flag with an environment-variable fallback, and an
//! invalid value stops start-up with a message naming the setting and the accepted values.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(name = "rampart", version, about = "Rampart web application firewall")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Inference service: POST /score, /score/{detector}, /score/all (internal only).
    Inference(InferenceArgs),
    /// Everything in one process (today: the inference service; the proxy, auth adapter and
    /// ext_proc join as they land).
    Up(UpArgs),
    /// Reverse proxy in front of TARGET_URL (settings validated; the server lands with its issue).
    Proxy(ProxyArgs),
    /// nginx auth_request adapter (settings validated; the server lands with its issue).
    Auth(AuthArgs),
    /// Envoy ext_proc service (settings validated; the server lands with its issue).
    Extproc(ExtprocArgs),
    /// Runs the labelled data pool through the engine and prints TPR/FPR per detector.
    Eval(crate::eval::EvalArgs),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum WafMode {
    Shadow,
    Active,
}

impl WafMode {
    pub fn as_str(self) -> &'static str {
        match self {
            WafMode::Shadow => "shadow",
            WafMode::Active => "active",
        }
    }
}

fn parse_threshold(s: &str) -> Result<f32, String> {
    let v: f32 = s.parse().map_err(|_| format!("`{s}` is not a number; WAF_THRESHOLD accepts 0.0 to 1.0"))?;
    if !(0.0..=1.0).contains(&v) || v.is_nan() {
        return Err(format!("{v} is outside 0.0 to 1.0; WAF_THRESHOLD accepts 0.0 to 1.0"));
    }
    Ok(v)
}

/// Settings of the scoring engine, shared by every command that scores in process.
#[derive(Clone, Debug, Args)]
pub struct EngineArgs {
    /// Kill threshold: a request scoring strictly above it is an attack (see docs/RATIONALE.md).
    #[arg(long = "threshold", env = "WAF_THRESHOLD", value_name = "WAF_THRESHOLD", default_value = "0.5", value_parser = parse_threshold)]
    pub threshold: f32,
    /// Folder with `sqli/` and `prompt-injection/` model folders.
    #[arg(long = "models-dir", env = "RAMPART_MODELS_DIR", value_name = "RAMPART_MODELS_DIR", default_value = "models")]
    pub models_dir: PathBuf,
    /// Run pattern detectors only (model detectors score 0).
    #[arg(long = "no-models", env = "RAMPART_NO_MODELS", value_name = "RAMPART_NO_MODELS")]
    pub no_models: bool,
    /// ONNX Runtime shared library (installed by scripts/bootstrap).
    #[arg(long = "ort-dylib", env = "ORT_DYLIB_PATH", value_name = "ORT_DYLIB_PATH", default_value = "vendor/onnxruntime/lib/libonnxruntime.so.1.22.1")]
    pub ort_dylib: PathBuf,
    /// Folder of rule files replacing the built-in rules.
    #[arg(long = "rules-dir", env = "RAMPART_RULES_DIR", value_name = "RAMPART_RULES_DIR")]
    pub rules_dir: Option<PathBuf>,
    /// Intra-op threads per model session.
    #[arg(long = "model-threads", env = "RAMPART_MODEL_THREADS", value_name = "RAMPART_MODEL_THREADS", default_value = "1", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub model_threads: u16,
    /// Intra-op threads of the prompt-injection transformer session (0: one per core, at most 4).
    #[arg(long = "transformer-threads", env = "RAMPART_TRANSFORMER_THREADS", value_name = "RAMPART_TRANSFORMER_THREADS", default_value = "0", value_parser = clap::value_parser!(u16).range(0..=64))]
    pub transformer_threads: u16,
    /// Most texts per model batch.
    #[arg(long = "model-max-batch", env = "RAMPART_MODEL_MAX_BATCH", value_name = "RAMPART_MODEL_MAX_BATCH", default_value = "32", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub model_max_batch: u16,
    /// Longest a text waits for batch companions, in microseconds.
    #[arg(long = "model-max-wait-us", env = "RAMPART_MODEL_MAX_WAIT_US", value_name = "RAMPART_MODEL_MAX_WAIT_US", default_value = "0")]
    pub model_max_wait_us: u64,
}

impl EngineArgs {
    pub fn engine_config(&self) -> scoring::EngineConfig {
        let mut config = scoring::EngineConfig {
            threshold: self.threshold,
            rules_dir: self.rules_dir.clone(),
            models_dir: (!self.no_models).then(|| self.models_dir.clone()),
            ort_dylib: self.ort_dylib.clone(),
            model_threads: self.model_threads as usize,
            ..Default::default()
        };
        if self.transformer_threads > 0 {
            config.transformer_threads = self.transformer_threads as usize;
        }
        config.batch.max_batch = self.model_max_batch as usize;
        config.batch.max_wait = std::time::Duration::from_micros(self.model_max_wait_us);
        config
    }
}

#[derive(Clone, Debug, Args)]
pub struct InferenceArgs {
    /// Listen address of the inference service; keep it internal.
    #[arg(long = "inference-addr", env = "INFERENCE_ADDR", value_name = "INFERENCE_ADDR", default_value = "127.0.0.1:8081")]
    pub addr: SocketAddr,
    /// Largest accepted request body in bytes (413 above it).
    #[arg(long = "inference-max-body", env = "INFERENCE_MAX_BODY_BYTES", value_name = "INFERENCE_MAX_BODY_BYTES", default_value = "1048576")]
    pub max_body_bytes: usize,
    #[command(flatten)]
    pub engine: EngineArgs,
}

fn parse_http_url(s: &str) -> Result<hyper::Uri, String> {
    let uri: hyper::Uri = s.parse().map_err(|e| format!("`{s}` is not a URL ({e}); expected http://host:port"))?;
    match (uri.scheme_str(), uri.authority()) {
        (Some("http") | Some("https"), Some(_)) => Ok(uri),
        _ => Err(format!("`{s}` must be an absolute http:// or https:// URL")),
    }
}

/// The operating mode at start-up (spec 1.4).
#[derive(Clone, Debug, Args)]
pub struct ModeArgs {
    #[arg(long = "mode", env = "WAF_MODE", value_name = "WAF_MODE", value_enum, default_value = "shadow")]
    pub mode: WafMode,
}

/// Where scoring happens: in process, or the inference service at INFERENCE_URL.
#[derive(Clone, Debug, Args)]
pub struct ScorerArgs {
    /// Inference service to call instead of scoring in process.
    #[arg(long = "inference-url", env = "INFERENCE_URL", value_name = "INFERENCE_URL", value_parser = parse_http_url)]
    pub inference_url: Option<hyper::Uri>,
    #[command(flatten)]
    pub engine: EngineArgs,
}

#[derive(Clone, Debug, Args)]
pub struct ProxyArgs {
    #[arg(long = "proxy-addr", env = "PROXY_ADDR", value_name = "PROXY_ADDR", default_value = "0.0.0.0:8080")]
    pub addr: SocketAddr,
    /// Upstream application.
    #[arg(long = "target-url", env = "TARGET_URL", value_name = "TARGET_URL", value_parser = parse_http_url)]
    pub target_url: Option<hyper::Uri>,
    #[command(flatten)]
    pub mode: ModeArgs,
    #[command(flatten)]
    pub scorer: ScorerArgs,
}

#[derive(Clone, Debug, Args)]
pub struct AuthArgs {
    #[arg(long = "auth-addr", env = "AUTH_ADDR", value_name = "AUTH_ADDR", default_value = "0.0.0.0:8090")]
    pub addr: SocketAddr,
    #[arg(long = "auth-metrics-addr", env = "AUTH_METRICS_ADDR", value_name = "AUTH_METRICS_ADDR", default_value = "0.0.0.0:9090")]
    pub metrics_addr: SocketAddr,
    #[command(flatten)]
    pub mode: ModeArgs,
    #[command(flatten)]
    pub scorer: ScorerArgs,
}

#[derive(Clone, Debug, Args)]
pub struct ExtprocArgs {
    #[arg(long = "extproc-addr", env = "EXTPROC_ADDR", value_name = "EXTPROC_ADDR", default_value = "0.0.0.0:50051")]
    pub addr: SocketAddr,
    #[arg(long = "extproc-http-addr", env = "EXTPROC_HTTP_ADDR", value_name = "EXTPROC_HTTP_ADDR", default_value = "0.0.0.0:9090")]
    pub http_addr: SocketAddr,
    #[command(flatten)]
    pub mode: ModeArgs,
    #[command(flatten)]
    pub scorer: ScorerArgs,
}

#[derive(Clone, Debug, Args)]
pub struct UpArgs {
    #[command(flatten)]
    pub inference: InferenceArgs,
    #[arg(long = "proxy-addr", env = "PROXY_ADDR", value_name = "PROXY_ADDR", default_value = "0.0.0.0:8080")]
    pub proxy_addr: SocketAddr,
    #[arg(long = "target-url", env = "TARGET_URL", value_name = "TARGET_URL", value_parser = parse_http_url)]
    pub target_url: Option<hyper::Uri>,
    #[command(flatten)]
    pub mode: ModeArgs,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn bad_threshold_names_the_setting() {
        let err = Cli::try_parse_from(["rampart", "inference", "--threshold", "1.5"]).unwrap_err();
        assert!(err.to_string().contains("WAF_THRESHOLD"), "{err}");
        let err = Cli::try_parse_from(["rampart", "inference", "--inference-addr", "nope"]).unwrap_err();
        assert!(err.to_string().contains("INFERENCE_ADDR"), "{err}");
        let err = Cli::try_parse_from(["rampart", "auth", "--mode", "blocking"]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("WAF_MODE") && msg.contains("shadow") && msg.contains("active"), "{msg}");
        let err = Cli::try_parse_from(["rampart", "proxy", "--target-url", "localhost:3000"]).unwrap_err();
        assert!(err.to_string().contains("TARGET_URL"), "{err}");
    }
}
