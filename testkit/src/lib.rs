//! Real peers for Rampart's tests and benchmark binaries: a private temp dir, child processes
//! stopped on drop, nginx and Envoy from a rendered config, wrk runs parsed into figures, and the CPU a
//! process tree spent. Nothing here knows Rampart's crates: tests and benches bring the configs.
//! Blocking std code on purpose: callers run it from a plain thread or `spawn_blocking`; the
//! two echo peers ([`ws_echo`], [`grpc_echo`]) are the exception, served on the caller's
//! tokio runtime.

pub mod cpu;
pub mod envoy;
pub mod grpc_echo;
pub mod logged;
pub mod nginx;
pub mod process;
pub mod tempdir;
pub mod wrk;
pub mod ws_echo;

use std::net::TcpListener;

/// What can go wrong starting or driving a peer; each names the peer and what it said.
#[derive(Debug, thiserror::Error)]
pub enum KitError {
    #[error("{tool} not found ({source}); run scripts/bootstrap")]
    Missing { tool: &'static str, source: std::io::Error },
    #[error("{what}: {detail}")]
    Failed { what: String, detail: String },
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
}

impl KitError {
    pub fn failed(what: impl Into<String>, detail: impl Into<String>) -> KitError {
        KitError::Failed { what: what.into(), detail: detail.into() }
    }

    pub fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> KitError {
        let what = what.into();
        move |source| KitError::Io { what, source }
    }
}

/// Whether an echo peer ([`ws_echo`], [`grpc_echo`]) keeps what it saw: tests read it back;
/// a load run records nothing (a record per message would grow without bound).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    Everything,
    Nothing,
}

/// A port nobody listens on right now (bound, then released: another process may still take
/// it, so starters retry on "address in use").
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap_or(0)
}
