//! Connection and stream admission: a global and a per-client cap on open connections, and a
//! global cap on requests in flight (HTTP/1 requests and HTTP/2 streams together). Every
//! admission is an RAII permit, so a connection or stream that ends for any reason — error,
//! reset, panic in a handler — gives its slot back.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The bounds of one process's listeners (every listener given the same gate shares them).
#[derive(Clone, Copy, Debug)]
pub struct ServeLimits {
    /// Open connections across every listener sharing the gate.
    pub max_connections: usize,
    /// Open connections from one client IP.
    pub max_connections_per_client: usize,
    /// Requests in flight across every connection (HTTP/1 requests + HTTP/2 streams).
    pub max_streams: usize,
    /// How long a connection may sit without a request in flight: the time a client has to
    /// send complete request headers, on HTTP/1 and HTTP/2 alike (and the keep-alive idle
    /// time between requests).
    pub header_read_timeout: Duration,
    /// HTTP/1 read buffer (request line + headers) and HTTP/2 header list size, in bytes.
    pub max_header_bytes: usize,
    /// Concurrent streams one HTTP/2 connection may open.
    pub h2_max_concurrent_streams: u32,
}

impl Default for ServeLimits {
    fn default() -> Self {
        ServeLimits {
            max_connections: 4096,
            max_connections_per_client: 256,
            max_streams: 8192,
            header_read_timeout: Duration::from_secs(30),
            max_header_bytes: 64 * 1024,
            h2_max_concurrent_streams: 100,
        }
    }
}

/// Which bound turned something away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The process already holds `max_connections`.
    Connections,
    /// This client already holds `max_connections_per_client`.
    ConnectionsPerClient,
    /// `max_streams` requests are already in flight.
    Streams,
    /// A connection sat idle (no complete request headers) past `header_read_timeout`.
    HeaderTimeout,
}

impl Refusal {
    /// Stable metric label.
    pub fn slug(self) -> &'static str {
        match self {
            Refusal::Connections => "connections",
            Refusal::ConnectionsPerClient => "connections-per-client",
            Refusal::Streams => "streams",
            Refusal::HeaderTimeout => "header-timeout",
        }
    }
}

/// Told about every refusal (the services crate counts them in its metrics registry).
pub trait RefusalObserver: Send + Sync {
    fn refused(&self, why: Refusal);
}

struct Unobserved;

impl RefusalObserver for Unobserved {
    fn refused(&self, _why: Refusal) {}
}

/// Shared admission state; one per process (or per listener when not shared).
pub struct ConnGate {
    pub limits: ServeLimits,
    open: AtomicUsize,
    streams: AtomicUsize,
    per_client: Mutex<HashMap<IpAddr, usize>>,
    observer: Arc<dyn RefusalObserver>,
}

impl ConnGate {
    pub fn new(limits: ServeLimits, observer: Arc<dyn RefusalObserver>) -> Arc<Self> {
        Arc::new(ConnGate {
            limits,
            open: AtomicUsize::new(0),
            streams: AtomicUsize::new(0),
            per_client: Mutex::new(HashMap::new()),
            observer,
        })
    }

    /// A gate nobody watches (test servers, the standalone inference service).
    pub fn unobserved(limits: ServeLimits) -> Arc<Self> {
        Self::new(limits, Arc::new(Unobserved))
    }

    pub fn open_connections(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    pub fn streams_in_flight(&self) -> usize {
        self.streams.load(Ordering::Acquire)
    }

    pub(crate) fn note(&self, why: Refusal) {
        self.observer.refused(why);
    }

    /// Admits one connection from `client`, or says which bound is full (and counts it).
    pub fn admit(self: &Arc<Self>, client: IpAddr) -> Result<ConnPermit, Refusal> {
        let client = client.to_canonical();
        let refused = self.try_admit(client);
        if let Err(why) = refused {
            self.note(why);
        }
        refused.map(|()| ConnPermit { gate: self.clone(), client })
    }

    fn try_admit(&self, client: IpAddr) -> Result<(), Refusal> {
        let mut per_client = self.per_client.lock().unwrap_or_else(|e| e.into_inner());
        if self.open.load(Ordering::Acquire) >= self.limits.max_connections {
            return Err(Refusal::Connections);
        }
        let held = per_client.entry(client).or_insert(0);
        if *held >= self.limits.max_connections_per_client {
            return Err(Refusal::ConnectionsPerClient);
        }
        *held += 1;
        self.open.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// Admits one request, or `None` when `max_streams` are in flight (and counts it).
    pub fn admit_stream(self: &Arc<Self>) -> Option<StreamPermit> {
        let admitted =
            self.streams.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < self.limits.max_streams).then_some(n + 1)).is_ok();
        if !admitted {
            self.note(Refusal::Streams);
        }
        admitted.then(|| StreamPermit { gate: self.clone() })
    }
}

/// One open connection's slot; released on drop.
pub struct ConnPermit {
    gate: Arc<ConnGate>,
    client: IpAddr,
}

impl Drop for ConnPermit {
    fn drop(&mut self) {
        let mut per_client = self.gate.per_client.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(held) = per_client.get_mut(&self.client) {
            *held -= 1;
            if *held == 0 {
                per_client.remove(&self.client);
            }
        }
        self.gate.open.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One in-flight request's slot; released on drop (after its response body ended).
pub struct StreamPermit {
    gate: Arc<ConnGate>,
}

impl Drop for StreamPermit {
    fn drop(&mut self) {
        self.gate.streams.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(total: usize, per_client: usize, streams: usize) -> Arc<ConnGate> {
        ConnGate::unobserved(ServeLimits {
            max_connections: total,
            max_connections_per_client: per_client,
            max_streams: streams,
            ..ServeLimits::default()
        })
    }

    #[test]
    fn per_client_and_global_caps_release_on_drop() {
        let gate = gate(3, 2, 1);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let a1 = gate.admit(a).unwrap();
        let _a2 = gate.admit(a).unwrap();
        assert_eq!(gate.admit(a).err(), Some(Refusal::ConnectionsPerClient));
        let _b1 = gate.admit(b).unwrap();
        assert_eq!(gate.admit(b).err(), Some(Refusal::Connections));
        drop(a1);
        assert_eq!(gate.open_connections(), 2);
        assert!(gate.admit(b).is_ok());
    }

    #[test]
    fn mapped_ipv6_is_the_same_client() {
        let gate = gate(10, 1, 1);
        let _v4 = gate.admit("10.0.0.1".parse().unwrap()).unwrap();
        assert_eq!(gate.admit("::ffff:10.0.0.1".parse().unwrap()).err(), Some(Refusal::ConnectionsPerClient));
    }

    #[test]
    fn streams_cap() {
        let gate = gate(1, 1, 2);
        let s1 = gate.admit_stream().unwrap();
        let _s2 = gate.admit_stream().unwrap();
        assert!(gate.admit_stream().is_none());
        drop(s1);
        assert!(gate.admit_stream().is_some());
    }
}
