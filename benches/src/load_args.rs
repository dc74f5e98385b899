//! The load-generator settings both benchmark binaries take (bench-proxy and bench-adapters):
//! one definition, so a flag means the same in both tables.

use std::path::PathBuf;

use testkit::KitError;

#[derive(clap::Args, Debug)]
pub struct LoadArgs {
    /// wrk connections.
    #[arg(long, env = "BENCH_CONNECTIONS", default_value_t = 32)]
    pub connections: u32,
    /// Seconds per scenario and stack.
    #[arg(long, env = "BENCH_DURATION_S", default_value_t = 10)]
    pub duration_s: u64,
    /// wrk threads (at most the connections).
    #[arg(long, env = "BENCH_THREADS", default_value_t = 2)]
    pub threads: u32,
    /// Seconds of warm-up per stack before timing.
    #[arg(long, env = "BENCH_WARMUP_S", default_value_t = 2)]
    pub warmup_s: u64,
    /// The Rampart binary.
    #[arg(long, env = "BENCH_RAMPART_BIN", default_value = "target/release/rampart")]
    pub rampart_bin: PathBuf,
    /// Extra flags for the Rampart processes (word-split).
    #[arg(long, env = "RAMPART_EXTRA_ARGS", default_value = "")]
    pub rampart_extra_args: String,
    /// Keep the temp dir (configs, logs, scripts, access logs) and print its path.
    #[arg(long, env = "BENCH_KEEP_TMP")]
    pub keep_tmp: bool,
}

impl LoadArgs {
    /// wrk refuses more threads than connections; say so before anything starts.
    pub fn check(&self) -> Result<(), KitError> {
        if self.threads == 0 || self.threads > self.connections {
            return Err(KitError::failed("BENCH_THREADS", format!("must be between 1 and BENCH_CONNECTIONS ({})", self.connections)));
        }
        Ok(())
    }
}
