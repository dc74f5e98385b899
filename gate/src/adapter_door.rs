//! What the two decision services (auth adapter, ext_proc) hold besides the gate: how they
//! find the client behind the web server or edge proxy that asks, and how much body they
//! buffer. Everything about the verdict itself is the gate's.

use std::net::IpAddr;
use std::sync::Arc;

use hyper::HeaderMap;

use crate::budget::BodyBudget;
use crate::client_ip::{source_ip, ClientIpPolicy};
use crate::gate::Gate;

/// A decision service's own settings (the binary builds them from its command line).
#[derive(Clone, Debug)]
pub struct DoorSettings {
    /// Whose forwarded headers name the client, and which header.
    pub client_ip: ClientIpPolicy,
    /// Body bytes scored; the rest is ignored.
    pub body_limit: usize,
}

pub struct AdapterDoor {
    pub gate: Arc<Gate>,
    client_ip: ClientIpPolicy,
    /// Body bytes scored; the rest is ignored.
    pub body_limit: usize,
    /// The process's buffered-body budget (shared with every front door).
    pub budget: Arc<BodyBudget>,
}

impl AdapterDoor {
    pub fn new(settings: DoorSettings, gate: Arc<Gate>, budget: Arc<BodyBudget>) -> Self {
        AdapterDoor { gate, client_ip: settings.client_ip, body_limit: settings.body_limit, budget }
    }

    /// The client the asking peer's forwarded headers name (when the peer is trusted).
    pub fn client(&self, headers: &HeaderMap, peer: IpAddr) -> String {
        source_ip(headers, peer, &self.client_ip).to_string()
    }
}
