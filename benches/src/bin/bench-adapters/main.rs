//! Load benchmark of the decision services: nginx + `rampart auth` (header-only and Lua body
//! configs) and Envoy + `rampart extproc`, each next to the same web server without Rampart,
//! same upstream, same machine, same run. Prints figures; asserts nothing.
//! `scripts/bench-adapters` builds Rampart and runs this (docs/BENCH-ADAPTERS.md).

mod report;
mod stacks;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

use clap::Parser;
use rampart_benches::load_args::LoadArgs;
use testkit::logged::{curl_status, LoggedChild};
use testkit::tempdir::TempDir;
use testkit::wrk::WrkRun;
use testkit::{free_port, KitError};

use report::Row;
use stacks::{EnvoySpec, Stack, Wiring};

#[derive(Parser, Debug)]
#[command(about = "nginx + rampart auth and Envoy + rampart extproc vs the bare web servers")]
struct Args {
    #[command(flatten)]
    load: LoadArgs,
    /// worker_processes of the three nginx stacks (1 as shipped; `auto` = one per core).
    #[arg(long, env = "BENCH_NGINX_WORKERS", default_value = "1")]
    nginx_workers: String,
    /// --concurrency of the two Envoys.
    #[arg(long, env = "BENCH_ENVOY_CONCURRENCY", default_value_t = 1)]
    envoy_concurrency: u32,
    #[arg(long, env = "ENVOY_BIN", default_value = "vendor/envoy/bin/envoy")]
    envoy_bin: PathBuf,
}

/// A benign review form as a browser sends it (apostrophes percent-encoded, %27).
const FORM_BODY: &str = "name=Sean+O%27Brien&email=sean.obrien%40example.com&rating=5&title=Light+and+comfortable&comment=I%27ve+worn+these+on+three+long+runs+this+month+and+they+still+feel+light.+The+sizing+runs+a+little+small%2C+so+order+half+a+size+up.+Delivery+was+quick+and+the+box+was+recyclable.+Would+buy+again%21&subscribe=on";
const FORM_PATH: &str = "/products/42/reviews";
const QUERY_PATH: &str = "/search?q=blue+running+shoes&page=2";
const FAIL_OPEN_STAT: &str = "http.ingress_http.ext_proc.failure_mode_allowed";

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("[bench-adapters] error: {err}");
            ExitCode::FAILURE
        }
    }
}

fn log(line: &str) {
    eprintln!("[bench-adapters] {line}");
}

/// The processes one stack's requests cost CPU in.
struct Running {
    addr: SocketAddr,
    pids: Vec<u32>,
}

fn run(args: &Args) -> Result<(), KitError> {
    check_prerequisites(args)?;
    let load_before = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut tmp = TempDir::new("bench-adapters").map_err(KitError::io("creating the temp dir"))?;
    if args.load.keep_tmp {
        tmp.keep();
        log(&format!("keeping {}", tmp.path().display()));
    }
    let sub = |name: &str| tmp.sub(name).map_err(KitError::io(format!("creating {name}")));
    let (_upstream, upstream) = testkit::nginx::static_upstream(&sub("upstream")?)?;
    let wiring = Wiring { upstream, auth: loopback(free_port()), extproc: loopback(free_port()) };
    let (auth_http, extproc_http) = (loopback(free_port()), loopback(free_port()));

    let extra: Vec<String> = args.load.rampart_extra_args.split_whitespace().map(str::to_string).collect();
    let rampart = |name: &str, flags: [String; 5]| {
        let mut cmd = Command::new(&args.load.rampart_bin);
        cmd.args(flags).args(["--mode", "active", "--audit-log", "off"]).args(&extra);
        LoggedChild::spawn(name, cmd, tmp.path())
    };
    let mut auth = rampart(
        "auth",
        ["auth".into(), "--auth-addr".into(), wiring.auth.to_string(), "--auth-metrics-addr".into(), auth_http.to_string()],
    )?;
    let mut extproc = rampart(
        "extproc",
        ["extproc".into(), "--extproc-addr".into(), wiring.extproc.to_string(), "--extproc-http-addr".into(), extproc_http.to_string()],
    )?;

    // The web servers start meanwhile: the baselines do not need Rampart, and the others fail
    // open until it answers, which is why Rampart's own health is checked first.
    let mut nginxes = Vec::new();
    let mut running: HashMap<Stack, Running> = HashMap::new();
    for stack in [Stack::Nginx, Stack::NginxAuth, Stack::NginxLua] {
        let (nginx, addr) = stacks::start_nginx(stack, &sub(&stack.dir_name())?, &wiring, &args.nginx_workers)?;
        let mut pids = vec![nginx.pid()];
        pids.extend(match stack {
            Stack::NginxAuth | Stack::NginxLua => Some(auth.pid()),
            _ => None,
        });
        running.insert(stack, Running { addr, pids });
        nginxes.push(nginx);
    }
    let mut envoys = Vec::new();
    for stack in [Stack::Envoy, Stack::EnvoyExtproc] {
        let spec = EnvoySpec { binary: &args.envoy_bin, concurrency: args.envoy_concurrency, dir: sub(&stack.dir_name())? };
        envoys.push((stack, stacks::start_envoy(stack, &spec, &wiring)?));
    }

    auth.wait_200(&format!("http://{auth_http}/_waf/health"), Duration::from_secs(60))?;
    extproc.wait_200(&format!("http://{extproc_http}/_waf/health"), Duration::from_secs(60))?;
    wait_for_models(&[&auth, &extproc]);
    for (stack, envoy) in &mut envoys {
        stacks::wait_ready(envoy)?;
        let mut pids = vec![envoy.pid()];
        if *stack == Stack::EnvoyExtproc {
            pids.push(extproc.pid());
        }
        running.insert(*stack, Running { addr: envoy.addr, pids });
    }
    let envoy_extproc = envoys.iter().find(|(s, _)| *s == Stack::EnvoyExtproc).map(|(_, e)| e);
    let mut warnings = Vec::new();
    for stack in stacks::ALL {
        let base = format!("http://{}", running[&stack].addr);
        for _ in 0..3 {
            let get = curl_status(&format!("{base}{QUERY_PATH}"), &[]);
            let post = curl_status(
                &format!("{base}{FORM_PATH}"),
                &["-H", "Content-Type: application/x-www-form-urlencoded", "--data-binary", FORM_BODY],
            );
            if get != Some(200) || post != Some(200) {
                log(&format!("warning: {}: benign GET answered {get:?}, benign POST form {post:?}", stack.label().trim()));
            }
        }
    }
    std::thread::sleep(Duration::from_secs(2));

    let form_script = tmp.path().join("post_form.lua");
    std::fs::write(
        &form_script,
        format!(
            "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/x-www-form-urlencoded\"\nwrk.body = [[{FORM_BODY}]]\n"
        ),
    )
    .map_err(KitError::io("writing the wrk script"))?;
    let wrk = |stack: Stack, path: &str, seconds: u64, script: Option<&Path>| WrkRun {
        url: format!("http://{}{path}", running[&stack].addr),
        threads: args.load.threads,
        connections: args.load.connections,
        duration: Duration::from_secs(seconds),
        script: script.map(Path::to_path_buf),
    };
    if args.load.warmup_s > 0 {
        for stack in stacks::ALL {
            log(&format!("  {}: warm-up ({} s)", stack.label().trim(), args.load.warmup_s));
            wrk(stack, QUERY_PATH, args.load.warmup_s, None).run()?;
        }
    }
    let fail_open_before = envoy_extproc.and_then(|e| e.stat(FAIL_OPEN_STAT));
    let scenarios = [
        ("GET /search?q=...".to_string(), QUERY_PATH, None),
        (format!("POST form ({}B)", FORM_BODY.len()), FORM_PATH, Some(form_script.as_path())),
    ];
    let mut rows = Vec::new();
    for (label, path, script) in &scenarios {
        for stack in stacks::ALL {
            log(&format!("  {}: {label}", stack.label().trim()));
            let cpu = || running[&stack].pids.iter().map(|&p| testkit::cpu::cpu_seconds(p)).sum::<f64>();
            let before = cpu();
            let report = wrk(stack, path, args.load.duration_s, *script).run()?;
            let spent = cpu() - before;
            let cpu_us_per_request = if report.requests > 0 { spent * 1e6 / report.requests as f64 } else { 0.0 };
            if report.non_2xx > 0 {
                warnings.push(format!("{}, {label}: {} non-2xx/3xx answers (they count in req/s)", stack.label().trim(), report.non_2xx));
            }
            if let Some(errors) = &report.socket_errors {
                warnings.push(format!("{}, {label}: socket errors: {errors}", stack.label().trim()));
            }
            rows.push(Row { stack, scenario: label.clone(), wrk: report, cpu_us_per_request });
        }
    }
    warnings.extend(unscored_requests(&nginxes, envoy_extproc, fail_open_before));
    report::print(&header(args, &load_before), &rows, &warnings);
    Ok(())
}

fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

fn check_prerequisites(args: &Args) -> Result<(), KitError> {
    args.load.check()?;
    if !args.envoy_bin.is_file() {
        return Err(KitError::failed(
            format!("no Envoy at {}", args.envoy_bin.display()),
            "run scripts/bootstrap (it calls scripts/bootstrap-envoy) or set ENVOY_BIN",
        ));
    }
    for module in stacks::LUA_MODULES {
        if !Path::new(module).is_file() {
            return Err(KitError::failed(
                format!("{module} missing"),
                "the nginx Lua module is not installed; run scripts/bootstrap (Debian package libnginx-mod-http-lua)",
            ));
        }
    }
    for file in [stacks::NGINX_CONF_HDR, stacks::NGINX_CONF_BODY, stacks::ENVOY_CONF] {
        if !Path::new(file).is_file() {
            return Err(KitError::failed(format!("{file} missing"), "run from the repository root"));
        }
    }
    Ok(())
}

/// The models load after the listeners are up; each logs `model ready` (sqli,
/// prompt-injection). Waits up to 30 s for both in both services, then goes on with a note.
fn wait_for_models(services: &[&LoggedChild]) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    for service in services {
        while service.log_count("model ready") < 2 {
            if std::time::Instant::now() >= deadline {
                log(&format!(
                    "warning: rampart {} logged {} 'model ready' line(s) in 30 s; going on",
                    service.name,
                    service.log_count("model ready")
                ));
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// Requests that went through unscored (fail-open) would flatter the figures: the deploy
/// configs log `waf_error=...` last on each access-log line (empty when scored, `-` on the 499s
/// of connections wrk drops at the end), and Envoy counts ext_proc's fail-open passes.
fn unscored_requests(
    nginxes: &[testkit::nginx::Nginx],
    envoy: Option<&testkit::envoy::Envoy>,
    fail_open_before: Option<u64>,
) -> Vec<String> {
    let mut warnings = Vec::new();
    for (nginx, stack) in nginxes.iter().zip([Stack::Nginx, Stack::NginxAuth, Stack::NginxLua]).skip(1) {
        let access = std::fs::read_to_string(nginx.prefix.join("access.log")).unwrap_or_default();
        let unscored = access
            .lines()
            .filter(|l| l.split("waf_error=").nth(1).is_some_and(|v| !v.is_empty() && !v.starts_with('-') && !v.starts_with(' ')))
            .count();
        if unscored > 0 {
            warnings.push(format!(
                "{}: {unscored} requests logged with a waf_error (fail-open or scoring error; BENCH_KEEP_TMP=1 keeps the access log)",
                stack.label().trim()
            ));
        }
    }
    if let Some(envoy) = envoy {
        match (fail_open_before, envoy.stat(FAIL_OPEN_STAT)) {
            (Some(before), Some(after)) if after > before => warnings.push(format!(
                "Envoy + ext_proc: {} requests passed unscored during the timed runs (ext_proc failure_mode_allowed)",
                after - before
            )),
            (_, None) => warnings.push("Envoy + ext_proc: could not read Envoy's ext_proc.failure_mode_allowed counter".into()),
            _ => {}
        }
    }
    warnings
}

fn header(args: &Args, load_before: &str) -> Vec<String> {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let version = |cmd: &Path, arg: &str| {
        Command::new(cmd)
            .arg(arg)
            .output()
            .map(|o| format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
            .unwrap_or_default()
    };
    let nginx = version(Path::new("nginx"), "-v").trim().trim_start_matches("nginx version: ").to_string();
    let envoy = version(&args.envoy_bin, "--version");
    let envoy = envoy.split("version: ").nth(1).and_then(|v| v.split('/').nth(1)).unwrap_or("?").to_string();
    vec![
        "nginx + rampart auth and Envoy + rampart extproc vs the bare web servers".to_string(),
        format!("machine: {cores} cores; {nginx}; Envoy {envoy}"),
        format!(
            "wrk: {} threads, {} connections, {} s per scenario; nginx worker_processes {}; Envoy --concurrency {}; rampart auth/extproc: active mode, scoring in process, audit log off; upstream: nginx, 1 worker, 'ok'",
            args.load.threads, args.load.connections, args.load.duration_s, args.nginx_workers, args.envoy_concurrency
        ),
        format!(
            "everything ran on this machine, in this run, one stack under load at a time (load average before: {})",
            load_before.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
        ),
    ]
}
