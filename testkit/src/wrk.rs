//! One wrk run (HTTP load from a separate process, so the load generator's CPU is never the
//! measured server's) and the figures parsed from its `--latency` report.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::KitError;

pub struct WrkRun {
    pub url: String,
    pub threads: u32,
    pub connections: u32,
    pub duration: Duration,
    /// A Lua script (method, headers, body, per-request generation).
    pub script: Option<PathBuf>,
}

/// What wrk reported. Latencies in milliseconds.
#[derive(Clone, Debug, Default)]
pub struct WrkReport {
    pub requests: u64,
    pub rps: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// Answers outside 2xx/3xx (a blocked or failed request still counts in `rps`).
    pub non_2xx: u64,
    /// wrk's "Socket errors" line, when there was one.
    pub socket_errors: Option<String>,
}

impl WrkRun {
    /// Runs wrk to completion (it stops itself after `duration`; killed 30 s later if not).
    pub fn run(&self) -> Result<WrkReport, KitError> {
        let mut cmd = Command::new("timeout");
        cmd.args(["--kill-after=5", &(self.duration.as_secs() + 30).to_string(), "wrk"]);
        cmd.args(["-t", &self.threads.to_string(), "-c", &self.connections.to_string()]);
        cmd.args(["-d", &format!("{}s", self.duration.as_secs().max(1)), "--latency"]);
        if let Some(script) = &self.script {
            cmd.arg("-s").arg(script);
        }
        cmd.arg(&self.url);
        let out = cmd.output().map_err(|source| KitError::Missing { tool: "wrk (through timeout)", source })?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            return Err(KitError::failed(
                format!("wrk against {} exited with {}", self.url, out.status),
                format!("{text}{}", String::from_utf8_lossy(&out.stderr)),
            ));
        }
        parse(&text).ok_or_else(|| KitError::failed(format!("could not read wrk's report for {}", self.url), text))
    }
}

/// The figures of a `wrk --latency` report; None when its summary lines are missing.
pub fn parse(text: &str) -> Option<WrkReport> {
    let mut report = WrkReport::default();
    let mut saw = (false, false);
    for line in text.lines().map(str::trim) {
        let mut words = line.split_whitespace();
        match (words.next(), words.next()) {
            (Some("Requests/sec:"), Some(v)) => {
                report.rps = v.parse().ok()?;
                saw.0 = true;
            }
            (Some("50%"), Some(v)) => report.p50_ms = latency_ms(v)?,
            (Some("99%"), Some(v)) => report.p99_ms = latency_ms(v)?,
            (Some(n), Some("requests")) if line.contains("requests in") => {
                report.requests = n.parse().ok()?;
                saw.1 = true;
            }
            _ if line.starts_with("Non-2xx or 3xx responses:") => report.non_2xx = line.rsplit(' ').next()?.parse().ok()?,
            _ if line.starts_with("Socket errors:") => {
                report.socket_errors = Some(line.trim_start_matches("Socket errors:").trim().to_string())
            }
            _ => {}
        }
    }
    (saw.0 && saw.1).then_some(report)
}

/// wrk's `1.23ms` / `456.00us` / `1.02s` / `2.00m` in milliseconds.
fn latency_ms(text: &str) -> Option<f64> {
    let (number, scale) = if let Some(n) = text.strip_suffix("us") {
        (n, 0.001)
    } else if let Some(n) = text.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1000.0)
    } else if let Some(n) = text.strip_suffix('m') {
        (n, 60_000.0)
    } else {
        (text, 1.0)
    };
    number.parse::<f64>().ok().map(|n| n * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "Running 3s test @ http://127.0.0.1:1/\n  2 threads and 32 connections\n  Thread Stats   Avg      Stdev     Max   +/- Stdev\n    Latency     1.89ms    1.55ms  30.12ms   90.01%\n  Latency Distribution\n     50%    1.55ms\n     75%    2.10ms\n     90%    3.01ms\n     99%  712.00us\n  52968 requests in 3.00s, 6.92MB read\n  Non-2xx or 3xx responses: 12\nRequests/sec:  17648.20\nTransfer/sec:      2.31MB\n";

    #[test]
    fn reads_the_figures_of_a_report() {
        let r = parse(REPORT).unwrap();
        assert_eq!(r.requests, 52968);
        assert_eq!(r.non_2xx, 12);
        assert!((r.rps - 17648.20).abs() < 1e-6);
        assert!((r.p50_ms - 1.55).abs() < 1e-9 && (r.p99_ms - 0.712).abs() < 1e-9);
        assert!(r.socket_errors.is_none());
    }

    #[test]
    fn a_report_without_its_summary_is_refused() {
        assert!(parse("unable to connect to 127.0.0.1:1 Connection refused").is_none());
    }
}
