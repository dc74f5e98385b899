//! The `rampart` command line: one subcommand per process kind. The settings each takes are
//! in config.rs (every flag with an environment-variable fallback); the eval's are its own.

use clap::{Parser, Subcommand};

use crate::config::{AuthArgs, ExtprocArgs, InferenceArgs, ProxyArgs, UpArgs};

#[derive(Debug, Parser)]
#[command(name = "rampart", version, about = "Rampart web application firewall")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// After a stop signal (SIGTERM, Ctrl-C), how long the listeners keep serving while the
    /// readiness endpoints already answer 503, in milliseconds: time for a load balancer or
    /// Kubernetes to take the process out of rotation. Then new connections are refused and
    /// in-flight requests finish. 0: stop accepting at once.
    #[arg(long = "drain-ms", env = "WAF_DRAIN_MS", value_name = "WAF_DRAIN_MS", global = true, default_value = "0", value_parser = clap::value_parser!(u64).range(0..=600_000))]
    pub drain_ms: u64,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Inference service: POST /score, /score/{detector}, /score/all (internal only).
    Inference(InferenceArgs),
    /// Everything in one process: the proxy (with a demo upstream when TARGET_URL is unset),
    /// the dashboard, the inference service, the auth adapter and ext_proc.
    Up(UpArgs),
    /// Reverse proxy in front of TARGET_URL: scores every request, passes or kills it.
    Proxy(ProxyArgs),
    /// nginx auth_request adapter: /_waf/check answers 200 or 403 (docs/ADAPTERS.md).
    Auth(AuthArgs),
    /// Envoy ext_proc service: ExternalProcessor/Process over gRPC (docs/ADAPTERS.md).
    Extproc(ExtprocArgs),
    /// Runs the labelled data pool through the engine and prints TPR/FPR per detector.
    Eval(crate::eval::EvalArgs),
    /// Probes a local health endpoint: exit 0 on a 2xx answer (the image's HEALTHCHECK).
    Health(crate::health_probe::HealthArgs),
    /// Checks a policy file (docs/POLICY.md) or explains which scopes apply to a request.
    #[command(subcommand)]
    Policy(PolicyCommand),
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Validates FILE and prints the effective policy (exit 0), or names the bad line (exit 1).
    Check {
        file: std::path::PathBuf,
        #[command(flatten)]
        flags: PolicyFlags,
    },
    /// Shows which scopes, settings and exclusions apply to METHOD URL under FILE.
    Explain {
        file: std::path::PathBuf,
        method: String,
        /// `/path?query` or `http://host/path?query`.
        url: String,
        /// The request's Host (default: the URL's host).
        #[arg(long)]
        host: Option<String>,
        #[command(flatten)]
        flags: PolicyFlags,
    },
}

/// The flags a policy file overrides, read as the server would (flag or environment).
#[derive(Debug, clap::Args)]
pub struct PolicyFlags {
    #[arg(long = "threshold", env = "WAF_THRESHOLD", value_name = "WAF_THRESHOLD", default_value = "0.5", value_parser = crate::config::parse_threshold)]
    pub threshold: f32,
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
    fn bad_values_name_the_setting() {
        // (argv after `rampart`, words the message must hold)
        let cases: [(&[&str], &[&str]); 13] = [
            (&["inference", "--threshold", "1.5"], &["WAF_THRESHOLD"]),
            (&["inference", "--inference-addr", "nope"], &["INFERENCE_ADDR"]),
            (&["auth", "--mode", "blocking"], &["WAF_MODE", "shadow", "active"]),
            (&["proxy", "--target-url", "localhost:3000"], &["TARGET_URL"]),
            (&["proxy", "--trusted-proxies", "10.0.0.0/8,bogus"], &["WAF_TRUSTED_PROXIES", "bogus"]),
            (&["proxy", "--kill-response", "drop"], &["WAF_KILL_RESPONSE"]),
            (&["proxy", "--oversize-body", "drop"], &["WAF_OVERSIZE_BODY", "score-prefix", "block"]),
            (&["proxy", "--max-connections", "0"], &["WAF_MAX_CONNECTIONS"]),
            (&["auth", "--on-body-budget", "drop"], &["WAF_ON_BODY_BUDGET", "score-partial"]),
            (&["inference", "--sensitivity", "5"], &["WAF_SENSITIVITY"]),
            (&["extproc", "--max-header-bytes", "100"], &["WAF_MAX_HEADER_BYTES"]),
            (&["proxy", "--ws-inspect", "block"], &["WAF_WS_INSPECT", "close", "score", "off"]),
            (&["proxy", "--ws-max-message", "0"], &["WAF_WS_MAX_MESSAGE"]),
        ];
        for (args, words) in cases {
            let err = Cli::try_parse_from(std::iter::once("rampart").chain(args.iter().copied())).unwrap_err().to_string();
            assert!(words.iter().all(|w| err.contains(w)), "{args:?}: {err}");
        }
    }

    #[test]
    fn every_command_parses_with_defaults() {
        for argv in [
            &["rampart", "up"][..],
            &["rampart", "proxy", "--target-url", "http://127.0.0.1:3000/app"],
            &["rampart", "auth"],
            &["rampart", "extproc"],
        ] {
            let cli = Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            if let Command::Proxy(args) = cli.command {
                assert_eq!(args.proxy.admin_allow.0.len(), 2);
                assert!(args.proxy.trusted_proxies.0.is_empty());
            }
        }
    }
}
