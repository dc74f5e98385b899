//! The WebSocket echo and gRPC unary rows: each against the bare echo peer (direct), an nginx
//! proxying it (WebSocket: `proxy_pass` with the upgrade headers; gRPC: `grpc_pass` on an h2c
//! listener) and Rampart (`--upstream-protocol h2` for gRPC), one target at a time. The peers
//! are testkit's, served on the bench's own runtime; the load comes from [`stream_load`].

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use testkit::nginx::{self, Nginx};
use testkit::{free_port, KitError, Record};

use crate::peers::{Rampart, RampartSpec};
use crate::stream_load::{self, Load};

/// Which stream rows run (`--streams`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StreamRow {
    Websocket,
    GrpcUnary,
}

/// One row: the same calls straight to the peer, through nginx, through Rampart.
pub struct StreamFigures {
    pub row: StreamRow,
    pub direct: Load,
    pub nginx: Option<(Load, f64)>,
    pub rampart: Option<(Load, f64)>,
}

/// How each row is run.
pub struct StreamRun<'a> {
    pub rows: &'a [StreamRow],
    pub connections: u32,
    pub duration: Duration,
    pub warmup: Duration,
    pub nginx_workers: &'a str,
    pub dir: &'a Path,
    pub rampart: Option<RampartSpec<'a>>,
}

fn log(line: &str) {
    eprintln!("[bench-proxy] {line}");
}

pub fn run(spec: &StreamRun) -> Result<Vec<StreamFigures>, KitError> {
    // Two workers: the echo peers and the clients share it, as wrk and the upstream share the
    // machine in the HTTP rows.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(KitError::io("starting the bench runtime"))?;
    let ws_echo = rt.block_on(testkit::ws_echo::EchoServer::start(Record::Nothing)).map_err(KitError::io("starting the WebSocket echo"))?;
    let grpc_echo = rt.block_on(testkit::grpc_echo::EchoServer::start(Record::Nothing)).map_err(KitError::io("starting the gRPC echo"))?;
    let prefix = spec.dir.join("stream-baseline");
    std::fs::create_dir_all(&prefix).map_err(KitError::io("creating the stream baseline prefix"))?;
    let (nginx, ws_front, grpc_front) = start_baseline(&prefix, spec.nginx_workers, ws_echo.addr, grpc_echo.addr)?;
    log(&format!("WebSocket echo on {}, gRPC echo on {}; nginx in front on {ws_front} / {grpc_front}", ws_echo.addr, grpc_echo.addr));
    let mut figures = Vec::new();
    for &row in spec.rows {
        let (upstream, front, extra): (SocketAddr, SocketAddr, &[&str]) = match row {
            StreamRow::Websocket => (ws_echo.addr, ws_front, &[]),
            StreamRow::GrpcUnary => (grpc_echo.addr, grpc_front, &["--upstream-protocol", "h2"]),
        };
        let rampart = match &spec.rampart {
            Some(base) => {
                let mut flags: Vec<String> = base.extra.to_vec();
                flags.extend(extra.iter().map(|s| s.to_string()));
                let name = format!("rampart-{row:?}").to_lowercase();
                let started = Rampart::start(&RampartSpec { upstream, name: &name, extra: &flags, forward_probe: false, ..*base })?;
                log(&format!("rampart proxy for {row:?} on {}", started.addr));
                Some(started)
            }
            None => None,
        };
        let load = |addr: SocketAddr, seconds: Duration| match row {
            StreamRow::Websocket => rt.block_on(stream_load::websocket(addr, spec.connections, seconds)),
            StreamRow::GrpcUnary => rt.block_on(stream_load::grpc_unary(addr, spec.connections, seconds)),
        };
        let measured = |who: &str, addr: SocketAddr, pid: u32| {
            if !spec.warmup.is_zero() {
                load(addr, spec.warmup);
            }
            log(&format!("  {who}: {}", label(row)));
            let before = testkit::cpu::cpu_seconds(pid);
            let figures = load(addr, spec.duration);
            let spent = testkit::cpu::cpu_seconds(pid) - before;
            let cpu_us = if figures.calls > 0 { spent * 1e6 / figures.calls as f64 } else { 0.0 };
            (figures, cpu_us)
        };
        if !spec.warmup.is_zero() {
            load(upstream, spec.warmup);
        }
        log(&format!("  direct: {}", label(row)));
        let direct = load(upstream, spec.duration);
        let nginx = Some(measured("nginx", front, nginx.pid()));
        let rampart = rampart.as_ref().map(|r| measured("rampart", r.addr, r.pid()));
        figures.push(StreamFigures { row, direct, nginx, rampart });
    }
    drop(nginx);
    drop((ws_echo, grpc_echo));
    rt.shutdown_timeout(Duration::from_secs(1));
    Ok(figures)
}

pub fn label(row: StreamRow) -> &'static str {
    match row {
        StreamRow::Websocket => "WebSocket echo (round trip)",
        StreamRow::GrpcUnary => "gRPC unary (h2c)",
    }
}

/// nginx proxying both peers: WebSocket with the upgrade headers, gRPC with `grpc_pass` on an
/// h2c (prior knowledge) listener; keep-alive to the gRPC peer as in the HTTP baseline.
fn start_baseline(prefix: &Path, workers: &str, ws: SocketAddr, grpc: SocketAddr) -> Result<(Nginx, SocketAddr, SocketAddr), KitError> {
    let loopback = |port| SocketAddr::from(([127, 0, 0, 1], port));
    let (ws_front, grpc_front) = (loopback(free_port()), loopback(free_port()));
    let config = format!(
        "{}http {{\n{}    upstream grpc_echo {{\n        server {grpc};\n        keepalive 64;\n    }}\n    server {{\n        listen {ws_front};\n        location / {{\n            proxy_pass http://{ws};\n            proxy_http_version 1.1;\n            proxy_set_header Upgrade $http_upgrade;\n            proxy_set_header Connection \"upgrade\";\n            proxy_read_timeout 3600s;\n        }}\n    }}\n    server {{\n        listen {grpc_front} http2;\n        location / {{\n            grpc_pass grpc://grpc_echo;\n        }}\n    }}\n}}\n",
        nginx::preamble(prefix, workers),
        nginx::http_common(prefix),
    );
    Ok((Nginx::start(prefix, &config, ws_front)?, ws_front, grpc_front))
}

pub fn print(figures: &[StreamFigures]) {
    if figures.is_empty() {
        return;
    }
    println!();
    println!(
        "{:<28} {:>19} {:>19} {:>19} {:>6} {:>6} {:>15}",
        "stream (calls/s, p50/p99 ms)", "direct", "nginx", "rampart", "r/n", "r/dir", "CPU us/call n/r"
    );
    println!("{}", "-".repeat(28 + 20 * 3 + 7 * 2 + 16));
    let mut warnings = Vec::new();
    for f in figures {
        let cell = |load: Option<&Load>| load.map_or("-".to_string(), |l| format!("{:.0} {:.2}/{:.2}", l.rps, l.p50_ms, l.p99_ms));
        let ratio =
            |a: Option<&Load>, b: &Load| a.map_or("-".to_string(), |a| format!("{:.2}", if b.rps > 0.0 { a.rps / b.rps } else { 0.0 }));
        let (n, r) = (f.nginx.as_ref().map(|(l, _)| l), f.rampart.as_ref().map(|(l, _)| l));
        let cpu = |m: &Option<(Load, f64)>| m.as_ref().map_or("-".to_string(), |(_, us)| format!("{us:.1}"));
        println!(
            "{:<28} {:>19} {:>19} {:>19} {:>6} {:>6} {:>15}",
            label(f.row),
            cell(Some(&f.direct)),
            cell(n),
            cell(r),
            n.map_or("-".to_string(), |n| ratio(r, n)),
            ratio(r, &f.direct),
            format!("{} / {}", cpu(&f.nginx), cpu(&f.rampart))
        );
        for (who, load) in [("direct", Some(&f.direct)), ("nginx", n), ("rampart", r)] {
            if let Some(load) = load.filter(|l| l.errors > 0) {
                warnings.push(format!(
                    "{who} {}: {} clients failed; first: {}",
                    label(f.row),
                    load.errors,
                    load.first_error.as_deref().unwrap_or("")
                ));
            }
        }
    }
    println!();
    println!("calls/s over all clients; r/n = rampart / nginx, r/dir = rampart / straight to the echo peer.");
    println!("CPU us/call = user+system CPU of the proxy's processes during the run / calls completed (the peers and clients run in this bench's process).");
    for w in warnings {
        println!("  warning: {w}");
    }
}
