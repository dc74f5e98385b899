//! Rampart's services: the inference service today; the proxy, auth adapter and ext_proc
//! service as their issues land. `main.rs` wires them to the command line.

pub mod config;
pub mod decision;
pub mod demo;
pub mod events;
pub mod metrics;
pub mod proxy;
pub mod scorer;
pub mod eval;
pub mod http;
pub mod inference;
pub mod run;
