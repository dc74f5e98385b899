//! The request pipeline every front door shares (issue 14): a door turns its protocol into a
//! [`gate::RequestSummary`], calls [`gate::Gate::inspect`], and renders the [`gate::Ruling`].
//! Scoring (local or remote), the decision, policy, events, metrics, client IP and the one
//! error-to-wire mapping live here. No clap and no server: the doors and the `rampart` binary
//! depend on this crate, never the other way round.

pub mod adapter_door;
pub mod body;
pub mod budget;
pub mod client_ip;
pub mod decision;
pub mod errors;
pub mod events;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
pub mod gate;
pub mod http;
pub mod lifecycle;
pub mod limits;
pub mod metrics;
pub mod observe;
pub mod policy;
pub mod request_id;
pub mod scored_request;
pub mod scorer;
pub mod stats;
pub mod waf_headers;
