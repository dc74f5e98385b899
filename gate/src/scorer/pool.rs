//! The inference addresses of INFERENCE_URL and which of them are worth calling. Calls rotate
//! over the healthy ones; a connect error, a timeout or a 502/503/504 marks an address down
//! for a back-off (doubling up to [`MAX_BACKOFF`]); once the back-off has passed, the next
//! call starts a `GET /ready` probe, and only a 200 brings the address back. While every
//! address is down, calls still go to the ones due back soonest, so a fleet that restarts
//! at once is found again without waiting for the probes.

use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use hyper::Uri;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// First back-off after an address fails: short, the probe decides when it is back.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// Longest back-off between probes of an address that stays down.
pub const MAX_BACKOFF: Duration = Duration::from_secs(8);

/// INFERENCE_URL: one or more distinct `http://host:port` bases, comma-separated.
#[derive(Clone, Debug, PartialEq)]
pub struct InferenceUrls(Vec<Uri>);

impl InferenceUrls {
    /// `bases` already checked one by one (plain http, no query); the list must be non-empty
    /// and name each address once.
    pub fn new(bases: Vec<Uri>) -> Result<Self, String> {
        if bases.is_empty() {
            return Err("no address given; INFERENCE_URL takes one or more http:// URLs, comma-separated".into());
        }
        let trimmed: Vec<String> = bases.iter().map(base_text).collect();
        if let Some(dup) = trimmed.iter().enumerate().find_map(|(i, b)| trimmed[..i].contains(b).then_some(b)) {
            return Err(format!("`{dup}` is listed twice; INFERENCE_URL names each inference service once"));
        }
        Ok(InferenceUrls(bases))
    }

    pub fn bases(&self) -> &[Uri] {
        &self.0
    }
}

/// The strict parse (scheme, authority); the command line checks each item with the same
/// rules as every other URL setting first, for its clearer messages.
impl FromStr for InferenceUrls {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bases = s
            .split(',')
            .map(|item| {
                let item = item.trim();
                let uri: Uri = item.parse().map_err(|e| format!("`{item}`: {e}"))?;
                match (uri.scheme_str(), uri.authority()) {
                    (Some("http"), Some(_)) if uri.query().is_none() => Ok(uri),
                    _ => Err(format!("`{item}` must be an absolute http:// URL such as http://127.0.0.1:8000")),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        InferenceUrls::new(bases)
    }
}

/// `http://host:port` without a trailing slash: what paths are appended to.
pub fn base_text(uri: &Uri) -> String {
    uri.to_string().trim_end_matches('/').to_string()
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct AddressLabel {
    pub address: String,
}

/// Process-wide, like readiness: every remote scorer of the process adds to the same series
/// (one per address), and every [`crate::metrics::Metrics`] registry exports them.
struct PoolMetrics {
    calls: Family<AddressLabel, Counter>,
    marked_down: Family<AddressLabel, Counter>,
    down_now: Gauge,
}

fn pool_metrics() -> &'static PoolMetrics {
    static METRICS: OnceLock<PoolMetrics> = OnceLock::new();
    METRICS.get_or_init(|| PoolMetrics { calls: Family::default(), marked_down: Family::default(), down_now: Gauge::default() })
}

/// Adds the pool's series to a registry (called by `Metrics::new`).
pub fn register(registry: &mut Registry) {
    let m = pool_metrics();
    registry.register("waf_inference_calls", "Calls to an inference service, by address (INFERENCE_URL)", m.calls.clone());
    registry.register(
        "waf_inference_marked_down",
        "Times an inference address was taken out of rotation (connect error, timeout, 502/503/504 or a failed /ready probe while down)",
        m.marked_down.clone(),
    );
    registry.register("waf_inference_addresses_down", "Inference addresses out of rotation now", m.down_now.clone());
}

/// One address and its health.
pub struct Member {
    pub base: String,
    pub score_all: Uri,
    pub ready: Uri,
    health: Mutex<Health>,
    /// A `/ready` probe is in flight: at most one per address.
    probing: AtomicBool,
}

#[derive(Clone, Copy, Debug)]
struct Health {
    /// Out of rotation until a probe says ready; the probe is due at this instant.
    down_until: Option<Instant>,
    backoff: Duration,
}

pub struct Pool {
    members: Vec<Member>,
    next: AtomicUsize,
}

impl Pool {
    pub fn new(urls: &InferenceUrls) -> Self {
        let metrics = pool_metrics();
        let members = urls
            .bases()
            .iter()
            .map(|uri| {
                let base = base_text(uri);
                let label = AddressLabel { address: base.clone() };
                // Series exist from the start, at 0.
                let _ = metrics.calls.get_or_create(&label);
                let _ = metrics.marked_down.get_or_create(&label);
                Member {
                    score_all: format!("{base}/score/all").parse().expect("a valid base URL plus a path is a valid URL"),
                    ready: format!("{base}/ready").parse().expect("a valid base URL plus a path is a valid URL"),
                    base,
                    health: Mutex::new(Health { down_until: None, backoff: FIRST_BACKOFF }),
                    probing: AtomicBool::new(false),
                }
            })
            .collect();
        Pool { members, next: AtomicUsize::new(0) }
    }

    pub fn member(&self, index: usize) -> &Member {
        &self.members[index]
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    fn health(&self, index: usize) -> Health {
        *self.members[index].health.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Up to `attempts` addresses to try, in order: the healthy ones in rotation, then the
    /// down ones due back soonest (so a call is made even when all are down).
    pub fn candidates(&self, attempts: usize) -> Vec<usize> {
        let n = self.members.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed) % n;
        let rotation = (0..n).map(|k| (start + k) % n);
        let mut healthy: Vec<usize> = Vec::with_capacity(n);
        let mut down: Vec<(Instant, usize)> = Vec::new();
        for index in rotation {
            match self.health(index).down_until {
                None => healthy.push(index),
                Some(until) => down.push((until, index)),
            }
        }
        down.sort_by_key(|&(until, _)| until);
        healthy.into_iter().chain(down.into_iter().map(|(_, i)| i)).take(attempts).collect()
    }

    pub fn count_call(&self, index: usize) {
        pool_metrics().calls.get_or_create(&AddressLabel { address: self.members[index].base.clone() }).inc();
    }

    /// Takes the address out of rotation (or, when already out, doubles its back-off).
    pub fn mark_down(&self, index: usize, now: Instant) {
        let member = &self.members[index];
        let mut health = member.health.lock().unwrap_or_else(|e| e.into_inner());
        match health.down_until {
            None => {
                health.backoff = FIRST_BACKOFF;
                pool_metrics().down_now.inc();
                tracing::warn!(address = %member.base, backoff_ms = FIRST_BACKOFF.as_millis() as u64, "inference address marked down");
            }
            Some(_) => health.backoff = (health.backoff * 2).min(MAX_BACKOFF),
        }
        health.down_until = Some(now + health.backoff);
        pool_metrics().marked_down.get_or_create(&AddressLabel { address: member.base.clone() }).inc();
    }

    /// Puts the address back into rotation (a probe or a call succeeded).
    pub fn mark_up(&self, index: usize) {
        let member = &self.members[index];
        let mut health = member.health.lock().unwrap_or_else(|e| e.into_inner());
        if health.down_until.take().is_some() {
            health.backoff = FIRST_BACKOFF;
            pool_metrics().down_now.dec();
            tracing::info!(address = %member.base, "inference address back in rotation");
        }
    }

    pub fn is_down(&self, index: usize) -> bool {
        self.health(index).down_until.is_some()
    }

    /// Down addresses whose back-off has passed and that no probe is checking yet; each one
    /// returned is now claimed for a probe, which must end with [`Pool::probe_done`].
    pub fn claim_probes(&self, now: Instant) -> Vec<usize> {
        (0..self.members.len())
            .filter(|&i| self.health(i).down_until.is_some_and(|until| until <= now))
            .filter(|&i| !self.members[i].probing.swap(true, Ordering::AcqRel))
            .collect()
    }

    /// A probe's outcome: ready brings the address back, anything else keeps it out longer.
    pub fn probe_done(&self, index: usize, ready: bool, now: Instant) {
        if ready {
            self.mark_up(index);
        } else {
            self.mark_down(index, now);
        }
        self.members[index].probing.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(list: &str) -> Pool {
        Pool::new(&list.parse().unwrap())
    }

    #[test]
    fn the_list_parses_and_bad_lists_are_refused() {
        let urls: InferenceUrls = "http://127.0.0.1:1, http://127.0.0.1:2/".parse().unwrap();
        assert_eq!(urls.bases().len(), 2);
        assert!("http://a:1,http://a:1/".parse::<InferenceUrls>().unwrap_err().contains("listed twice"));
        assert!("http://a:1,".parse::<InferenceUrls>().is_err());
        assert!("https://a:1".parse::<InferenceUrls>().unwrap_err().contains("http://"));
        assert!(InferenceUrls::new(vec![]).unwrap_err().contains("INFERENCE_URL"));
    }

    #[test]
    fn healthy_addresses_take_turns_and_a_down_one_is_left_out() {
        let p = pool("http://127.0.0.1:1,http://127.0.0.1:2,http://127.0.0.1:3");
        let firsts: Vec<usize> = (0..6).map(|_| p.candidates(2)[0]).collect();
        assert_eq!(firsts, [0, 1, 2, 0, 1, 2]);
        p.mark_down(1, Instant::now());
        for _ in 0..6 {
            let c = p.candidates(2);
            assert_eq!(c.len(), 2);
            assert!(!c.contains(&1), "{c:?}");
        }
    }

    #[test]
    fn when_all_are_down_the_soonest_back_is_still_tried() {
        let p = pool("http://127.0.0.1:1,http://127.0.0.1:2");
        let now = Instant::now();
        p.mark_down(0, now);
        p.mark_down(0, now); // second failure: longer back-off
        p.mark_down(1, now);
        assert_eq!(p.candidates(2), [1, 0]);
        assert_eq!(p.candidates(1), [1]);
    }

    #[test]
    fn back_off_doubles_up_to_the_cap_and_a_probe_brings_the_address_back() {
        let p = pool("http://127.0.0.1:1,http://127.0.0.1:2");
        let now = Instant::now();
        p.mark_down(0, now);
        assert!(p.claim_probes(now).is_empty(), "not due before the back-off");
        let due = now + FIRST_BACKOFF;
        assert_eq!(p.claim_probes(due), [0]);
        assert!(p.claim_probes(due).is_empty(), "one probe at a time");
        p.probe_done(0, false, due);
        assert_eq!(p.health(0).backoff, FIRST_BACKOFF * 2);
        for _ in 0..10 {
            p.mark_down(0, due);
        }
        assert_eq!(p.health(0).backoff, MAX_BACKOFF);
        let later = due + MAX_BACKOFF;
        assert_eq!(p.claim_probes(later), [0]);
        p.probe_done(0, true, later);
        assert!(!p.is_down(0));
        assert_eq!(p.health(0).backoff, FIRST_BACKOFF);
        assert!(p.claim_probes(later + MAX_BACKOFF).is_empty());
    }
}
