//! Load benchmark: Rampart's proxy next to a bare nginx reverse proxy, same upstream, same
//! machine, same run, one proxy at a time, scenario by scenario. Prints req/s, p50/p99, the
//! ratio and the CPU each proxy spent per request; asserts nothing. `scripts/bench-proxy`
//! builds Rampart and runs this (docs/BENCH-PROXY.md).

mod peers;
mod report;
mod scenarios;
mod stream_load;
mod streams;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use rampart_benches::load_args::LoadArgs;
use testkit::tempdir::TempDir;
use testkit::wrk::WrkRun;
use testkit::KitError;

use peers::{Baseline, Rampart, RampartSpec};
use report::{Measured, Row};
use scenarios::Scenario;

#[derive(Parser, Debug)]
#[command(about = "Rampart's proxy vs a bare nginx reverse proxy: req/s, latency, CPU per request")]
struct Args {
    #[command(flatten)]
    load: LoadArgs,
    /// worker_processes of the baseline nginx (`auto` = one per core).
    #[arg(long, env = "BENCH_NGINX_WORKERS", default_value = "auto")]
    nginx_workers: String,
    /// Scenarios to run (comma-separated; default all).
    #[arg(long, env = "BENCH_SCENARIOS", value_enum, value_delimiter = ',')]
    scenarios: Vec<Scenario>,
    /// Skip Rampart: the nginx baseline alone.
    #[arg(long, env = "BENCH_ONLY_NGINX", value_parser = clap::builder::BoolishValueParser::new())]
    only_nginx: bool,
    /// WebSocket / gRPC rows to run after the HTTP ones (comma-separated; default both).
    #[arg(long, env = "BENCH_STREAMS", value_enum, value_delimiter = ',', default_value = "websocket,grpc-unary")]
    streams: Vec<streams::StreamRow>,
    /// Skip the WebSocket and gRPC rows.
    #[arg(long, env = "BENCH_NO_STREAMS", value_parser = clap::builder::BoolishValueParser::new())]
    no_streams: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("[bench-proxy] error: {err}");
            ExitCode::FAILURE
        }
    }
}

fn log(line: &str) {
    eprintln!("[bench-proxy] {line}");
}

fn run(args: &Args) -> Result<(), KitError> {
    args.load.check()?;
    let scenarios: Vec<Scenario> = if args.scenarios.is_empty() { scenarios::ALL.to_vec() } else { args.scenarios.clone() };
    let load_before = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut tmp = TempDir::new("bench-proxy").map_err(KitError::io("creating the temp dir"))?;
    if args.load.keep_tmp {
        tmp.keep();
        log(&format!("keeping {}", tmp.path().display()));
    }
    let cert = peers::write_cert(tmp.path())?;
    let upstream_dir = tmp.sub("upstream").map_err(KitError::io("creating the upstream prefix"))?;
    let (_upstream, upstream) = testkit::nginx::static_upstream(&upstream_dir)?;
    let baseline_dir = tmp.sub("baseline").map_err(KitError::io("creating the baseline prefix"))?;
    let baseline = peers::start_baseline(&baseline_dir, &args.nginx_workers, upstream, &cert)?;
    log(&format!("upstream nginx on {upstream}, baseline nginx on {} (TLS {})", baseline.plain, baseline.tls));

    let extra: Vec<String> = args.load.rampart_extra_args.split_whitespace().map(str::to_string).collect();
    let spec = |name, cert| RampartSpec {
        binary: &args.load.rampart_bin,
        upstream,
        log_dir: tmp.path(),
        name,
        cert,
        extra: &extra,
        forward_probe: true,
    };
    let rampart = if args.only_nginx { None } else { Some(Rampart::start(&spec("rampart", None))?) };
    let rampart_tls = match (&rampart, scenarios.iter().any(|s| s.tls())) {
        (Some(_), true) => Some(Rampart::start(&spec("rampart-tls", Some(&cert)))?),
        _ => None,
    };
    if let Some(r) = &rampart {
        log(&format!("rampart proxy on {}{}", r.addr, rampart_tls.as_ref().map(|t| format!(" (TLS {})", t.addr)).unwrap_or_default()));
    }

    let wrk = |url: String, seconds: u64, script: Option<PathBuf>| WrkRun {
        url,
        threads: args.load.threads,
        connections: args.load.connections,
        duration: Duration::from_secs(seconds),
        script,
    };
    if args.load.warmup_s > 0 {
        log(&format!("warm-up: {} s per proxy", args.load.warmup_s));
        wrk(format!("http://{}/", baseline.plain), args.load.warmup_s, None).run()?;
        if let Some(r) = &rampart {
            wrk(format!("http://{}/", r.addr), args.load.warmup_s, None).run()?;
        }
    }
    let mut rows = Vec::new();
    for scenario in scenarios {
        let script = scenario.script(tmp.path()).map_err(KitError::io("writing a wrk script"))?;
        let measure = |who: &str, url: String, pid: u32| -> Result<Measured, KitError> {
            log(&format!("  {who}: {}", scenario.label()));
            let before = testkit::cpu::cpu_seconds(pid);
            let report = wrk(url, args.load.duration_s, script.clone()).run()?;
            let spent = testkit::cpu::cpu_seconds(pid) - before;
            let cpu_us_per_request = if report.requests > 0 { spent * 1e6 / report.requests as f64 } else { 0.0 };
            Ok(Measured { wrk: report, cpu_us_per_request })
        };
        let nginx_addr = if scenario.tls() { baseline_url(&baseline, true) } else { baseline_url(&baseline, false) };
        let nginx = measure("nginx", format!("{nginx_addr}{}", scenario.path()), baseline.nginx.pid())?;
        let target = if scenario.tls() { rampart_tls.as_ref().map(|r| (r, "https")) } else { rampart.as_ref().map(|r| (r, "http")) };
        let rampart = match target {
            Some((r, scheme)) => Some(measure("rampart", format!("{scheme}://{}{}", r.addr, scenario.path()), r.pid())?),
            None => None,
        };
        rows.push(Row { label: scenario.label(), nginx, rampart });
    }
    let streamed = if args.no_streams || args.streams.is_empty() {
        Vec::new()
    } else {
        streams::run(&streams::StreamRun {
            rows: &args.streams,
            connections: args.load.connections,
            duration: Duration::from_secs(args.load.duration_s),
            warmup: Duration::from_secs(args.load.warmup_s),
            nginx_workers: &args.nginx_workers,
            dir: tmp.path(),
            rampart: (!args.only_nginx).then(|| spec("rampart-stream", None)),
        })?
    };
    report::print(&report::Context { header: header(args, &load_before) }, &rows);
    streams::print(&streamed);
    Ok(())
}

fn baseline_url(baseline: &Baseline, tls: bool) -> String {
    if tls {
        format!("https://{}", baseline.tls)
    } else {
        format!("http://{}", baseline.plain)
    }
}

fn header(args: &Args, load_before: &str) -> Vec<String> {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| info.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split_once(": ")).map(|(_, v)| v.to_string()))
        .unwrap_or_default();
    let version = |cmd: &str, arg: &str| {
        std::process::Command::new(cmd)
            .arg(arg)
            .output()
            .map(|o| format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
            .unwrap_or_default()
    };
    let nginx = version("nginx", "-v").trim().trim_start_matches("nginx version: ").to_string();
    let wrk = version("wrk", "--version").lines().next().unwrap_or("").split_whitespace().take(2).collect::<Vec<_>>().join(" ");
    vec![
        "Rampart proxy vs bare nginx reverse proxy".to_string(),
        format!("machine: {cores} cores ({cpu}); {nginx}; {wrk}"),
        format!(
            "wrk: {} threads, {} connections, {} s per scenario; baseline nginx worker_processes {}; upstream: nginx, 1 worker, 'ok' (3 bytes)",
            args.load.threads, args.load.connections, args.load.duration_s, args.nginx_workers
        ),
        format!("load average before the run: {} (other work on the machine skews every figure)", load_before.split_whitespace().take(3).collect::<Vec<_>>().join(" ")),
        if args.only_nginx {
            "BENCH_ONLY_NGINX: Rampart skipped.".to_string()
        } else {
            "wrk, the upstream, the nginx baseline and Rampart all ran on this machine, in this run, one proxy at a time.".to_string()
        },
    ]
}
