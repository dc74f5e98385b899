//! Connection, header and buffered-body limits on the command line: one flattened settings
//! struct shared by every listener of a command, built into the gate's [`ProcessLimits`]
//! (docs/SECURITY.md has the worst-case memory of the defaults).

use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use gate::budget::BodyBudget;
use gate::limits::{OnBodyBudget, ProcessLimits};
use gate::metrics::Metrics;

use crate::choice::{choice, Choice};

impl Choice for OnBodyBudget {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (OnBodyBudget::Refuse, "refuse", "503 `body_budget_exhausted` at once"),
        (
            OnBodyBudget::ScorePartial,
            "score-partial",
            "Score the part that fit, mark the verdict partial (`body-budget`), stream the rest on; WAF_ON_PARTIAL decides what a partial verdict does",
        ),
    ];
}

#[derive(Clone, Debug, Args)]
pub struct LimitArgs {
    /// Open connections across all of this process's listeners; beyond it a new connection
    /// is answered 503 and closed.
    #[arg(long = "max-connections", env = "WAF_MAX_CONNECTIONS", value_name = "WAF_MAX_CONNECTIONS", default_value = "4096", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: u64,
    /// Open connections from one client IP (the TCP peer).
    #[arg(long = "max-connections-per-client", env = "WAF_MAX_CONNECTIONS_PER_CLIENT", value_name = "WAF_MAX_CONNECTIONS_PER_CLIENT", default_value = "256", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections_per_client: u64,
    /// Requests in flight across all connections (HTTP/1 requests plus HTTP/2 streams);
    /// beyond it a request is answered 503.
    #[arg(long = "max-streams", env = "WAF_MAX_STREAMS", value_name = "WAF_MAX_STREAMS", default_value = "8192", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_streams: u64,
    /// Time a connection with no request in flight has to deliver complete request headers
    /// (HTTP/1 and HTTP/2; also the keep-alive idle time), in milliseconds.
    #[arg(long = "header-read-timeout-ms", env = "WAF_HEADER_READ_TIMEOUT_MS", value_name = "WAF_HEADER_READ_TIMEOUT_MS", default_value = "30000", value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub header_read_timeout_ms: u64,
    /// Largest request head: HTTP/1 request line + headers, HTTP/2 header list, in bytes (431 above it).
    #[arg(long = "max-header-bytes", env = "WAF_MAX_HEADER_BYTES", value_name = "WAF_MAX_HEADER_BYTES", default_value = "65536", value_parser = clap::value_parser!(u64).range(8192..=(16 << 20)))]
    pub max_header_bytes: u64,
    /// Concurrent streams one HTTP/2 connection may open (SETTINGS_MAX_CONCURRENT_STREAMS).
    #[arg(long = "h2-max-concurrent-streams", env = "WAF_H2_MAX_CONCURRENT_STREAMS", value_name = "WAF_H2_MAX_CONCURRENT_STREAMS", default_value = "100", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub h2_max_concurrent_streams: u32,
    /// Request-body bytes buffered for scoring across all in-flight requests.
    #[arg(long = "body-budget", env = "WAF_BODY_BUDGET_BYTES", value_name = "WAF_BODY_BUDGET_BYTES", default_value = "134217728", value_parser = clap::value_parser!(u64).range(1..=(1 << 40)))]
    pub body_budget_bytes: u64,
    /// Over the body budget: `refuse` (503) or `score-partial` (score what fit, mark partial).
    /// The auth adapter and ext_proc always score partial (they cannot refuse on nginx's or Envoy's behalf).
    #[arg(
        long = "on-body-budget",
        env = "WAF_ON_BODY_BUDGET",
        value_name = "WAF_ON_BODY_BUDGET",
        value_parser = choice::<OnBodyBudget>(),
        default_value = "score-partial"
    )]
    pub on_body_budget: OnBodyBudget,
}

impl LimitArgs {
    pub fn serve_limits(&self) -> net::ServeLimits {
        net::ServeLimits {
            max_connections: self.max_connections as usize,
            max_connections_per_client: self.max_connections_per_client as usize,
            max_streams: self.max_streams as usize,
            header_read_timeout: Duration::from_millis(self.header_read_timeout_ms),
            max_header_bytes: self.max_header_bytes as usize,
            h2_max_concurrent_streams: self.h2_max_concurrent_streams,
        }
    }

    /// The process's shared gate and budget; refusals are counted in `metrics`.
    pub fn build(&self, metrics: Arc<Metrics>) -> ProcessLimits {
        ProcessLimits {
            gate: net::ConnGate::new(self.serve_limits(), metrics),
            budget: BodyBudget::new(usize::try_from(self.body_budget_bytes).unwrap_or(usize::MAX)),
            on_body_budget: self.on_body_budget,
        }
    }
}
