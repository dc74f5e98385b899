use std::process::ExitCode;

use clap::Parser;
use services::config::{Cli, Command};
use services::run::{start_inference, Running};

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("RAMPART_LOG").unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("rampart: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(cli.command))
}

async fn run(command: Command) -> ExitCode {
    match command {
        Command::Inference(args) => serve(start_inference(&args), "inference").await,
        Command::Up(args) => {
            let started = start_inference(&args.inference);
            if let Ok(running) = &started {
                println!("rampart up: inference service on http://{}", running.addr);
                println!("rampart up: the proxy, dashboard, auth adapter and ext_proc are not built yet");
            }
            serve(started, "up").await
        }
        Command::Eval(args) => services::eval::run(args).await,
        Command::Proxy(_) | Command::Auth(_) | Command::Extproc(_) => {
            eprintln!("rampart: settings are valid, but this component is not built yet; `rampart inference` is available");
            ExitCode::from(2)
        }
    }
}

async fn serve(started: Result<Running, services::run::StartError>, what: &str) -> ExitCode {
    let mut running = match started {
        Ok(r) => r,
        Err(err) => {
            eprintln!("rampart {what}: {err}");
            return ExitCode::FAILURE;
        }
    };
    tracing::info!(addr = %running.addr, "{what} listening");
    let stop = running.shutdown_handle();
    tokio::select! {
        _ = shutdown_signal() => {
            tracing::info!("shutting down");
            if let Some(tx) = stop { let _ = tx.send(()); }
            running.wait().await;
        }
        _ = running.wait() => {}
    }
    ExitCode::SUCCESS
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
