//! The proxy's settings as plain values. The `rampart` binary parses them from flags and
//! environment (its `config::ProxyOptions`) and hands them over; this crate knows no clap.

use std::time::Duration;

use gate::client_ip::{ClientIpPolicy, IpNet};
use gate::decision::{OversizeBody, Policy};
use gate::gate::{KillResponse, WafMode};

pub use crate::forward::{UpstreamProtocol, UpstreamSettings};

/// Everything the proxy is configured with besides its upstream's address and the parts
/// ([`crate::ProxyParts`]) it shares with other doors.
pub struct ProxySettings {
    /// The mode at start-up (a gate built by the proxy; under `rampart up` the shared gate's).
    pub mode: WafMode,
    /// How a verdict that is not whole, or a scoring error, is judged.
    pub policy: Policy,
    /// Between `: keepalive` comments on /api/events.
    pub sse_keepalive: Duration,
    pub kill_response: KillResponse,
    /// Request-body bytes buffered and scored.
    pub body_limit: usize,
    /// Longest the proxy waits for the scored part of a body (408 past it).
    pub body_read_timeout: Duration,
    pub oversize_body: OversizeBody,
    /// Whose forwarded headers name the client, and which header.
    pub client_ip: ClientIpPolicy,
    pub admin: AdminSettings,
    pub upstream: UpstreamSettings,
    /// What happens to the messages of an accepted WebSocket.
    pub ws_inspect: WsInspect,
    /// Bytes of one WebSocket message reassembled and scored.
    pub ws_max_message: usize,
}

/// Who may use the admin endpoints.
pub struct AdminSettings {
    /// Peers allowed without a token.
    pub allow: Vec<IpNet>,
    /// Bearer token that opens the admin endpoints from any peer.
    pub token: Option<String>,
    /// Host names an allowed peer may use besides IP literals and loopback names.
    pub hosts: Vec<String>,
}

/// What the proxy does with the messages of an accepted WebSocket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WsInspect {
    /// Score every client message; one the gate blocks closes the client with 1008 and never
    /// reaches the upstream
    Close,
    /// Score and record every client message, never close
    Score,
    /// Plain byte tunnel: messages are not scored (a bypass for anything sent over it)
    Off,
}
