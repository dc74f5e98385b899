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
        // By hand rather than format!: one per request, on the hot path.
        let mut id = String::with_capacity(20);
        push_hex(&mut id, u64::from(process), 8);
        push_hex(&mut id, n, 12);
        RequestId(id)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The low `digits` hex digits of `value`, zero-padded, lower case.
fn push_hex(out: &mut String, value: u64, digits: u32) {
    for shift in (0..digits).rev() {
        let nibble = (value >> (shift * 4)) & 0xf;
        out.push(char::from_digit(nibble as u32, 16).unwrap_or('0'));
    }
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The span every door opens per request: its id, the door, and the connection it came on
/// (the peer's address and port name the connection). At DEBUG: an enabled span costs every
/// request a registry slot and its formatted fields (~5 % of a benign proxied GET, docs/perf);
/// at the default level it is never built, and the warnings a request can raise
/// ([`crate::observe`]) carry `request_id` themselves.
pub fn request_span(id: &RequestId, component: &'static str, peer: std::net::SocketAddr) -> tracing::Span {
    tracing::debug_span!("request", id = %id, component, conn = %peer)
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
        let (n, m) = (u64::from_str_radix(&a.as_str()[8..], 16).unwrap(), u64::from_str_radix(&b.as_str()[8..], 16).unwrap());
        assert!(m > n, "the counter part counts up: {a} then {b}");
        let mut hex = String::new();
        push_hex(&mut hex, 0xab_cdef, 8);
        assert_eq!(hex, "00abcdef");
    }
}
