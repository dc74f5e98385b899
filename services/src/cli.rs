//! The `rampart` command line: one subcommand per process kind. The settings each takes are
//! in config.rs (every flag with an environment-variable fallback); the eval's are its own.

use clap::{Parser, Subcommand};

use crate::config::{AuthArgs, ExtprocArgs, InferenceArgs, ProxyArgs, UpArgs};

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
        let err = Cli::try_parse_from(["rampart", "proxy", "--trusted-proxies", "10.0.0.0/8,bogus"]).unwrap_err();
        assert!(err.to_string().contains("WAF_TRUSTED_PROXIES") && err.to_string().contains("bogus"), "{err}");
        let err = Cli::try_parse_from(["rampart", "proxy", "--kill-response", "drop"]).unwrap_err();
        assert!(err.to_string().contains("WAF_KILL_RESPONSE"), "{err}");
        let err = Cli::try_parse_from(["rampart", "proxy", "--max-connections", "0"]).unwrap_err();
        assert!(err.to_string().contains("WAF_MAX_CONNECTIONS"), "{err}");
        let err = Cli::try_parse_from(["rampart", "auth", "--on-body-budget", "drop"]).unwrap_err();
        assert!(err.to_string().contains("WAF_ON_BODY_BUDGET") && err.to_string().contains("score-partial"), "{err}");
        let err = Cli::try_parse_from(["rampart", "inference", "--sensitivity", "5"]).unwrap_err();
        assert!(err.to_string().contains("WAF_SENSITIVITY"), "{err}");
        let err = Cli::try_parse_from(["rampart", "extproc", "--max-header-bytes", "100"]).unwrap_err();
        assert!(err.to_string().contains("WAF_MAX_HEADER_BYTES"), "{err}");
    }

    #[test]
    fn every_command_parses_with_defaults() {
        for argv in [&["rampart", "up"][..], &["rampart", "proxy", "--target-url", "http://127.0.0.1:3000/app"], &["rampart", "auth"], &["rampart", "extproc"]] {
            let cli = Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            if let Command::Proxy(args) = cli.command {
                assert_eq!(args.proxy.admin_allow.0.len(), 2);
                assert!(args.proxy.trusted_proxies.0.is_empty());
            }
        }
    }
}
