//! Checks a scope makes on the client before anything is scored: IP allow and deny lists
//! (CIDR, IPv4 and IPv6, on the client IP the door resolved) and a per-client rate limit (a
//! token bucket per client IP through `governor`). State is per process: behind a load
//! balancer each replica counts only the requests it sees (docs/POLICY.md).

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use serde::Deserialize;

use crate::client_ip::IpNet;

/// `["10.0.0.0/8", "2001:db8::/32", "192.0.2.7"]`, checked while the file is read.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Vec<String>")]
pub struct IpList(pub Vec<IpNet>);

impl TryFrom<Vec<String>> for IpList {
    type Error = String;

    fn try_from(items: Vec<String>) -> Result<Self, String> {
        items.iter().map(|s| s.trim().parse::<IpNet>().map_err(|e| format!("`{s}`: {e}"))).collect::<Result<_, _>>().map(IpList)
    }
}

impl IpList {
    /// A client that is not an IP (a door that could not tell) is in no list.
    pub fn contains(&self, client: &str) -> bool {
        client.parse::<IpAddr>().is_ok_and(|ip| self.0.iter().any(|net| net.contains(ip)))
    }
}

/// `{ requests = 100, per_seconds = 60, burst = 20, key = "header:x-api-key" }`: a bucket of
/// `burst` tokens (default `requests`) per key (default the client IP), refilled at
/// `requests` per `per_seconds`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, try_from = "RateFields")]
pub struct RateLimit {
    pub requests: u32,
    pub per_seconds: u32,
    pub burst: u32,
    pub key: RateKey,
}

/// What a bucket belongs to: the client IP, or a header's value (an API key). A request
/// without the header is counted by its client IP.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum RateKey {
    #[default]
    ClientIp,
    /// The lower-cased header name.
    Header(String),
}

impl TryFrom<String> for RateKey {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        match text.split_once(':') {
            None if text == "ip" => Ok(RateKey::ClientIp),
            Some(("header", name)) if !name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic()) => {
                Ok(RateKey::Header(name.to_ascii_lowercase()))
            }
            _ => Err(format!("`{text}` is not a rate-limit key: \"ip\" or \"header:NAME\"")),
        }
    }
}

impl RateKey {
    /// The bucket's key for a request: `header:<value>` or `ip:<client>`.
    pub fn of(&self, client: &str, headers: &[(String, String)]) -> String {
        if let RateKey::Header(name) = self {
            if let Some((_, value)) = headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
                return format!("header:{value}");
            }
        }
        format!("ip:{client}")
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RateFields {
    requests: u32,
    per_seconds: u32,
    burst: Option<u32>,
    key: Option<String>,
}

impl TryFrom<RateFields> for RateLimit {
    type Error = String;

    fn try_from(f: RateFields) -> Result<Self, String> {
        if f.requests == 0 || f.per_seconds == 0 || f.burst == Some(0) {
            return Err("a rate limit needs requests, per_seconds (and burst, when given) above 0".into());
        }
        let key = f.key.map(RateKey::try_from).transpose()?.unwrap_or_default();
        Ok(RateLimit { requests: f.requests, per_seconds: f.per_seconds, burst: f.burst.unwrap_or(f.requests), key })
    }
}

/// How often the buckets of clients gone quiet are dropped, in checks.
const FORGET_EVERY: u32 = 4096;

/// One scope's buckets, keyed by client IP or a header's value.
#[derive(Debug)]
pub struct Limiter {
    buckets: DefaultKeyedRateLimiter<String>,
    checks: AtomicU32,
    pub key: RateKey,
}

impl Limiter {
    pub fn new(limit: &RateLimit) -> Self {
        let period = Duration::from_secs(u64::from(limit.per_seconds)) / limit.requests;
        let burst = NonZeroU32::new(limit.burst).unwrap_or(NonZeroU32::MIN);
        let quota = Quota::with_period(period.max(Duration::from_nanos(1))).expect("a period above zero").allow_burst(burst);
        Limiter { buckets: RateLimiter::keyed(quota), checks: AtomicU32::new(0), key: limit.key.clone() }
    }

    /// `Err(retry_after)` when `key` ([`RateKey::of`]) has no token left.
    pub fn check(&self, key: &str) -> Result<(), Duration> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % FORGET_EVERY == FORGET_EVERY - 1 {
            self.buckets.retain_recent();
        }
        self.buckets.check_key(&key.to_string()).map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_buckets() {
        let list = IpList::try_from(vec!["10.0.0.0/8".into(), "2001:db8::/32".into()]).unwrap();
        assert!(list.contains("10.1.2.3") && list.contains("2001:db8::1") && !list.contains("11.0.0.1") && !list.contains("unknown"));
        assert!(IpList::try_from(vec!["10.0.0.0/33".into()]).is_err());
        let limiter = Limiter::new(&RateLimit { requests: 1, per_seconds: 60, burst: 2, key: RateKey::ClientIp });
        assert!(limiter.check("a").is_ok() && limiter.check("a").is_ok());
        let retry = limiter.check("a").unwrap_err();
        assert!(retry > Duration::from_secs(50) && retry <= Duration::from_secs(60), "{retry:?}");
        assert!(limiter.check("b").is_ok(), "buckets are per client");
        let key = RateKey::try_from("header:X-Api-Key".to_string()).unwrap();
        let headers = [("x-api-key".to_string(), "k1".to_string())];
        assert_eq!((key.of("10.0.0.1", &headers), key.of("10.0.0.1", &[])), ("header:k1".into(), "ip:10.0.0.1".into()));
        assert!(RateKey::try_from("cookie:x".to_string()).is_err());
    }
}
