//! Rampart's services: the inference service, the inline proxy, and (with their issue) the
//! auth adapter and ext_proc service. `main.rs` wires them to the command line.

pub mod adapter_door;
pub mod auth;
pub mod budget;
pub mod cli;
pub mod client_ip;
pub mod config;
pub mod dashboard;
pub mod decision;
pub mod demo;
pub mod errors;
pub mod eval;
pub mod events;
pub mod extproc;
pub mod gate;
pub mod health_probe;
pub mod http;
pub mod inference;
pub mod install_paths;
pub mod lifecycle;
pub mod limits;
pub mod metrics;
pub mod observe;
pub mod policy;
pub mod proxy;
pub mod request_id;
pub mod run;
pub mod scored_request;
pub mod scorer;
pub mod stats;
pub mod tls_args;
pub mod waf_headers;
