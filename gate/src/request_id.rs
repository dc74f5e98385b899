//! Request ids: one per judged request, in the request's tracing span, its event
//! (`/api/events`, `/api/events/recent`) and its audit line, so a log line, a dashboard row and
//! an audit record of the same request can be joined. Never taken from the client (an
//! attacker could make two requests share one).

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// `<8 hex: random per process><12 hex: counter>`: unique within a process, and across
/// processes writing one audit log with overwhelming odds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestId(String);

impl RequestId {
    pub fn next() -> RequestId {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        static PROCESS: OnceLock<u32> = OnceLock::new();
        // std's hasher keys are random per process: a prefix without a dependency.
        let process = *PROCESS.get_or_init(|| std::collections::hash_map::RandomState::new().build_hasher().finish() as u32);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed) & 0xffff_ffff_ffff;
        RequestId(format!("{process:08x}{n:012x}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The span every door opens per request: its id, the door, and the connection it came on
/// (the peer's address and port name the connection).
pub fn request_span(id: &RequestId, component: &'static str, peer: std::net::SocketAddr) -> tracing::Span {
    tracing::info_span!("request", id = %id, component, conn = %peer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_distinct_fixed_width_hex() {
        let a = RequestId::next();
        let b = RequestId::next();
        assert_ne!(a, b);
        assert_eq!(a.as_str().len(), 20);
        assert!(a.as_str().bytes().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_eq!(a.as_str()[..8], b.as_str()[..8], "one process, one prefix");
    }
}
