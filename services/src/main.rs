use std::process::ExitCode;

use clap::Parser;
use services::cli::{Cli, Command, PolicyCommand};
use services::run::{start_auth, start_extproc, start_inference, start_proxy, start_up, Running, StartError};

/// mimalloc, not glibc's malloc: under load the proxy's threads contended on glibc's arena
/// lock (futex waits from `__lll_lock_wait_private` in `perf`) and spent about 9 % of the
/// process in malloc, free and `malloc_consolidate` (docs/BENCH-PROXY.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("RAMPART_LOG").unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("rampart: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(run(cli.command, std::time::Duration::from_millis(cli.drain_ms)));
    // The audit writers gather lines for a few milliseconds: write out the last events before
    // the process ends (bounded: a stuck sink must not hold the exit).
    if !gate::events::flush_audit_logs(std::time::Duration::from_secs(2)) {
        eprintln!("rampart: the audit log did not finish writing within 2 s; its last lines may be missing");
    }
    code
}

async fn run(command: Command, drain: std::time::Duration) -> ExitCode {
    match command {
        Command::Inference(args) => serve("inference", start_inference(&args).map(|r| vec![r]), drain).await,
        Command::Proxy(args) => {
            let scheme = if args.proxy.tls.enabled() { "https" } else { "http" };
            let started = start_proxy(&args).map(|server| {
                eprintln!("rampart proxy: listening on {scheme}://{} in {} mode", server.running.addr, server.proxy.mode().as_str());
                vec![server.running]
            });
            serve("proxy", started, drain).await
        }
        Command::Up(args) => {
            let started = start_up(&args).map(|stack| {
                let proxy = stack.proxy.running.addr;
                let local = if proxy.ip().is_unspecified() { format!("127.0.0.1:{}", proxy.port()) } else { proxy.to_string() };
                let scheme = if args.proxy.tls.enabled() { "https" } else { "http" };
                eprintln!("rampart up: proxy        {scheme}://{local}  ({} mode)", stack.proxy.proxy.mode().as_str());
                match &stack.demo {
                    Some(demo) => eprintln!("rampart up: demo app     http://{}  (behind the proxy; TARGET_URL unset)", demo.addr),
                    None => eprintln!("rampart up: upstream     {}", args.proxy.target_url.as_ref().map(|u| u.to_string()).unwrap_or_default()),
                }
                eprintln!("rampart up: inference    http://{}", stack.inference.addr);
                eprintln!("rampart up: auth adapter http://{}/_waf/check  (nginx auth_request)", stack.auth.addr);
                eprintln!("rampart up: ext_proc     grpc://{}  (Envoy)", stack.extproc.addr);
                eprintln!("rampart up: management   http://{}/metrics  (all components; ext_proc health)", stack.management.addr);
                eprintln!("rampart up: live events  http://{local}/api/events   recent: /api/events/recent   metrics: /metrics");
                eprintln!("rampart up: dashboard    http://{local}/_waf/dashboard  (from this machine; docs/DASHBOARD.md)");
                let internal = [stack.inference.addr, stack.auth.addr, stack.extproc.addr, stack.management.addr];
                if internal.iter().all(|a| a.ip().is_loopback()) {
                    eprintln!("rampart up: only the proxy takes outside traffic; to expose another listener set its address, e.g. AUTH_ADDR=0.0.0.0:8090, EXTPROC_ADDR=0.0.0.0:50051, MANAGEMENT_ADDR=0.0.0.0:9090 (docs/PROXY.md)");
                }
                stack.into_servers()
            });
            serve("up", started, drain).await
        }
        Command::Eval(args) => services::eval::run(args).await,
        Command::Policy(command) => policy_command(command),
        Command::Health(args) => match services::health_probe::probe(&args) {
            Ok(_) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("rampart health: {err}");
                ExitCode::FAILURE
            }
        },
        Command::Auth(args) => {
            let started = start_auth(&args).map(|server| {
                eprintln!(
                    "rampart auth: /_waf/check on http://{}, metrics on http://{}/metrics, {} mode",
                    server.running.addr,
                    server.metrics.addr,
                    args.mode.mode.as_str()
                );
                if server.running.addr.ip().is_loopback() {
                    eprintln!("rampart auth: loopback only; for nginx on another host set AUTH_ADDR=0.0.0.0:8090 (docs/NGINX.md)");
                }
                vec![server.running, server.metrics]
            });
            serve("auth", started, drain).await
        }
        Command::Extproc(args) => {
            let started = start_extproc(&args).map(|server| {
                eprintln!(
                    "rampart extproc: gRPC on {}, health/metrics on http://{}, {} mode",
                    server.grpc.addr,
                    server.http.addr,
                    args.mode.mode.as_str()
                );
                if server.grpc.addr.ip().is_loopback() {
                    eprintln!(
                        "rampart extproc: loopback only; for Envoy on another host or pod set EXTPROC_ADDR=0.0.0.0:50051 (docs/ENVOY.md)"
                    );
                }
                vec![server.grpc, server.http]
            });
            serve("extproc", started, drain).await
        }
    }
}

/// Runs until a signal (or until any server ends), then stops every server gracefully: on a
/// signal, readiness turns 503 and the listeners keep serving for `drain` first.
async fn serve(what: &str, started: Result<Vec<Running>, StartError>, drain: std::time::Duration) -> ExitCode {
    let mut servers = match started {
        Ok(servers) => servers,
        Err(err) => {
            eprintln!("rampart {what}: {err}");
            return ExitCode::FAILURE;
        }
    };
    for server in &servers {
        tracing::info!(addr = %server.addr, "{what} listening");
    }
    let first_end = async {
        let waits: Vec<_> = servers.iter_mut().map(|s| Box::pin(s.wait())).collect();
        let _ = futures_select_all(waits).await;
    };
    tokio::select! {
        _ = shutdown_signal() => {
            services::lifecycle::begin_draining();
            tracing::info!(drain_ms = drain.as_millis() as u64, "stop signal: readiness now 503; draining, then shutting down");
            tokio::time::sleep(drain).await;
        }
        _ = first_end => tracing::warn!("a server ended; stopping the others"),
    }
    for server in servers {
        server.stop().await;
    }
    ExitCode::SUCCESS
}

/// Resolves when the first of `futures` does.
async fn futures_select_all<F: std::future::Future<Output = ()> + Unpin>(mut futures: Vec<F>) {
    std::future::poll_fn(|cx| {
        for fut in futures.iter_mut() {
            if std::pin::Pin::new(fut).poll(cx).is_ready() {
                return std::task::Poll::Ready(());
            }
        }
        std::task::Poll::Pending
    })
    .await
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => return std::future::pending().await,
        };
        tokio::select! { _ = ctrl_c => {}, _ = term.recv() => {} }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

/// `rampart policy check|explain`: no server, no engine; exit 1 with the file's error.
fn policy_command(command: PolicyCommand) -> ExitCode {
    use services::policy::{explain, Baseline, PolicySet};
    let (file, flags) = match &command {
        PolicyCommand::Check { file, flags } | PolicyCommand::Explain { file, flags, .. } => (file, flags),
    };
    let baseline = Baseline { threshold: flags.threshold, fail: services::decision::Policy::default() };
    let set = match PolicySet::load(file, baseline) {
        Ok(set) => set,
        Err(err) => {
            eprintln!("rampart policy: {err}");
            return ExitCode::FAILURE;
        }
    };
    match command {
        PolicyCommand::Check { .. } => print!("{}", explain::describe(&set, set.defaults())),
        PolicyCommand::Explain { method, url, host, .. } => {
            let (url_host, path) = split_url(&url);
            let host = host.unwrap_or(url_host);
            let path = path.split_once('?').map_or(path.as_str(), |(p, _)| p);
            let method = method.to_ascii_uppercase();
            print!("{}", explain::explain(&set.resolve(&host, &method, path), &method, &host, path));
        }
    }
    ExitCode::SUCCESS
}

/// `http://host:port/p?q` -> (`host:port`, `/p?q`); `/p?q` -> (``, `/p?q`).
fn split_url(url: &str) -> (String, String) {
    match url.split_once("://") {
        Some((_, rest)) => match rest.find('/') {
            Some(i) => (rest[..i].to_string(), rest[i..].to_string()),
            None => (rest.to_string(), "/".to_string()),
        },
        None => (String::new(), url.to_string()),
    }
}
