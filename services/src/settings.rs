//! Parsed command-line options turned into the plain settings of the door crates (which know
//! no clap): the proxy's [`ProxySettings`] and a decision service's [`DoorSettings`].

use std::time::Duration;

use gate::adapter_door::DoorSettings;
use gate::client_ip::ClientIpPolicy;
use proxy::{AdminSettings, ProxySettings, UpstreamSettings};

use crate::config::{AdapterOptions, ProxyOptions};

impl ProxyOptions {
    /// The proxy's settings towards `target` (its https trust depends on the target).
    pub fn settings(&self, target: &hyper::Uri) -> ProxySettings {
        ProxySettings {
            mode: self.mode.mode,
            policy: self.policy.policy(self.on_scoring_error),
            sse_keepalive: Duration::from_secs(self.sse_keepalive_secs),
            kill_response: self.kill_response,
            body_limit: self.body_limit as usize,
            body_read_timeout: Duration::from_millis(self.body_read_timeout_ms),
            oversize_body: self.oversize_body,
            client_ip: ClientIpPolicy { trusted: self.trusted_proxies.0.clone(), header: self.client_ip_header },
            admin: AdminSettings { allow: self.admin_allow.0.clone(), token: self.admin_token.clone(), hosts: self.admin_hosts.0.clone() },
            upstream: UpstreamSettings {
                timeout: Duration::from_millis(self.upstream_timeout_ms),
                tls: self.tls.upstream_client(target),
                client_tls: self.tls.enabled(),
                protocol: self.upstream_protocol,
            },
            ws_inspect: self.ws_inspect,
            ws_max_message: self.ws_max_message as usize,
        }
    }
}

impl AdapterOptions {
    pub fn door_settings(&self) -> DoorSettings {
        DoorSettings {
            client_ip: ClientIpPolicy { trusted: self.trusted_proxies.0.clone(), header: self.client_ip_header },
            body_limit: self.body_limit as usize,
        }
    }
}
