//! The `rampart` binary's library: the command line (`cli`, `config`: clap Args turned into
//! the plain settings of each crate), start-up and wiring (`run`), `up`, the demo upstream and
//! the offline evaluation. The front doors and the gate live in their own crates; they are
//! re-exported here under the paths they had when this was one crate, so the tests, the
//! benchmarks and the fuzz targets name them as before.

pub mod choice;
pub mod cli;
pub mod config;
pub mod demo;
pub mod eval;
pub mod health_probe;
pub mod install_paths;
pub mod limit_args;
pub mod run;
pub mod settings;
pub mod tls_args;

pub use ::adapters::auth;
pub use ::extproc;
pub use ::gate::{
    adapter_door, budget, client_ip, decision, errors, events, gate, http, lifecycle, limits, metrics, observe, policy, request_id,
    scored_request, scorer, stats, waf_headers,
};
pub use ::inference;
pub use ::proxy;
pub use ::proxy::dashboard;
