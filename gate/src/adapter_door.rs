//! What the two decision services (auth adapter, ext_proc) hold besides the gate: how they
//! find the client behind the web server or edge proxy that asks, and how much body they
//! buffer. Everything about the verdict itself is the gate's.

use std::net::IpAddr;
use std::sync::Arc;

use hyper::HeaderMap;

use crate::budget::BodyBudget;
use crate::client_ip::{source_ip, ClientIpPolicy};
use crate::config::AdapterOptions;
use crate::gate::Gate;

pub struct AdapterDoor {
    pub gate: Arc<Gate>,
    client_ip: ClientIpPolicy,
    /// Body bytes scored; the rest is ignored.
    pub body_limit: usize,
    /// The process's buffered-body budget (shared with every front door).
    pub budget: Arc<BodyBudget>,
}

impl AdapterDoor {
    pub fn new(options: &AdapterOptions, gate: Arc<Gate>, budget: Arc<BodyBudget>) -> Self {
        AdapterDoor {
            gate,
            client_ip: ClientIpPolicy { trusted: options.trusted_proxies.0.clone(), header: options.client_ip_header },
            body_limit: options.body_limit as usize,
            budget,
        }
    }

    /// The client the asking peer's forwarded headers name (when the peer is trusted).
    pub fn client(&self, headers: &HeaderMap, peer: IpAddr) -> String {
        source_ip(headers, peer, &self.client_ip).to_string()
    }
}
