//! Dashboard figures kept by the server (so a page reload keeps them): requests and kills per
//! minute for the last 24 h, kill latency, and the benign-demo false-positive count.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::events::Event;

/// Per-minute buckets kept: 24 hours.
const BUCKETS: usize = 24 * 60;
/// Minutes the chart shows.
pub const SERIES_MINUTES: usize = 60;

/// Whether a request came from the dashboard's demo panel, and what it is meant to be. The
/// dashboard marks its demo requests with `X-Rampart-Demo: benign | attack`; the header only
/// feeds the false-positive tile (a client that forges it can only skew that tile) and is
/// removed before forwarding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Demo {
    Benign,
    Attack,
}

impl Demo {
    pub const HEADER: &'static str = "x-rampart-demo";

    pub fn from_header(value: &[u8]) -> Option<Demo> {
        match value {
            b"benign" => Some(Demo::Benign),
            b"attack" => Some(Demo::Attack),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Default)]
struct Bucket {
    minute: u64,
    requests: u64,
    kills: u64,
    kill_latency_ms: f64,
}

#[derive(Default)]
struct Inner {
    total_requests: u64,
    buckets: VecDeque<Bucket>,
    benign_demo_sent: u64,
    benign_demo_flagged: u64,
}

pub struct Stats {
    started: Instant,
    started_at: String,
    inner: Mutex<Inner>,
}

#[derive(Serialize)]
pub struct SeriesPoint {
    /// Start of the minute, seconds since the Unix epoch.
    pub t: u64,
    pub requests: u64,
    pub kills: u64,
}

#[derive(Serialize)]
pub struct Snapshot {
    pub started_at: String,
    pub uptime_s: u64,
    pub total_requests: u64,
    pub requests_24h: u64,
    /// Active and shadow kills in the last 24 h.
    pub kills_24h: u64,
    /// Mean scoring latency of those kills (time-to-kill), in ms; null with no kills.
    pub avg_kill_latency_ms: Option<f64>,
    pub benign_demo_sent: u64,
    pub benign_demo_flagged: u64,
    /// `flagged / sent`; 0 when none were sent.
    pub false_positive_rate: f64,
    /// The last 60 minutes, oldest first, one point per minute (empty minutes included).
    pub series: Vec<SeriesPoint>,
}

impl Default for Stats {
    fn default() -> Self {
        Stats { started: Instant::now(), started_at: crate::events::rfc3339_utc(SystemTime::now()), inner: Mutex::default() }
    }
}

fn minute_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() / 60).unwrap_or(0)
}

impl Stats {
    pub fn record(&self, event: &Event, demo: Option<Demo>) {
        self.record_at(minute_now(), event, demo);
    }

    fn record_at(&self, minute: u64, event: &Event, demo: Option<Demo>) {
        let killed = matches!(event.action, "shadow_kill" | "active_kill");
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.total_requests += 1;
        if demo == Some(Demo::Benign) {
            inner.benign_demo_sent += 1;
            inner.benign_demo_flagged += u64::from(killed);
        }
        if inner.buckets.back().is_none_or(|b| b.minute != minute) {
            inner.buckets.push_back(Bucket { minute, ..Default::default() });
            while inner.buckets.len() > BUCKETS {
                inner.buckets.pop_front();
            }
        }
        let bucket = inner.buckets.back_mut().expect("a bucket was just ensured");
        bucket.requests += 1;
        if killed {
            bucket.kills += 1;
            bucket.kill_latency_ms += event.latency_ms;
        }
    }

    pub fn snapshot(&self) -> Snapshot {
        self.snapshot_at(minute_now())
    }

    fn snapshot_at(&self, now: u64) -> Snapshot {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let day = inner.buckets.iter().filter(|b| b.minute + (BUCKETS as u64) > now);
        let (mut requests, mut kills, mut latency) = (0, 0, 0.0);
        for b in day {
            requests += b.requests;
            kills += b.kills;
            latency += b.kill_latency_ms;
        }
        let first = now + 1 - SERIES_MINUTES as u64;
        let series = (first..=now)
            .map(|minute| {
                let b = inner.buckets.iter().find(|b| b.minute == minute).copied().unwrap_or_default();
                SeriesPoint { t: minute * 60, requests: b.requests, kills: b.kills }
            })
            .collect();
        let rate = if inner.benign_demo_sent == 0 { 0.0 } else { inner.benign_demo_flagged as f64 / inner.benign_demo_sent as f64 };
        Snapshot {
            started_at: self.started_at.clone(),
            uptime_s: self.started.elapsed().as_secs(),
            total_requests: inner.total_requests,
            requests_24h: requests,
            kills_24h: kills,
            avg_kill_latency_ms: (kills > 0).then(|| ((latency / kills as f64) * 1000.0).round() / 1000.0),
            benign_demo_sent: inner.benign_demo_sent,
            benign_demo_flagged: inner.benign_demo_flagged,
            false_positive_rate: rate,
            series,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(action: &'static str, latency_ms: f64) -> Event {
        Event {
            timestamp: String::new(),
            request_id: String::new(),
            method: "GET".into(),
            path: "/".into(),
            source_ip: "127.0.0.1".into(),
            score: 0.0,
            reason: String::new(),
            mode: "shadow",
            action,
            latency_ms,
            component: "proxy",
            detector: String::new(),
            query: String::new(),
            truncated: Vec::new(),
            partial: String::new(),
            ..Default::default()
        }
    }

    #[test]
    fn day_window_series_and_false_positives() {
        let stats = Stats::default();
        let now = 30_000_000;
        stats.record_at(now - BUCKETS as u64 - 5, &event("active_kill", 9.0), None); // older than 24 h
        stats.record_at(now - 90, &event("shadow_kill", 2.0), Some(Demo::Attack));
        stats.record_at(now - 1, &event("active_kill", 4.0), None);
        stats.record_at(now, &event("passed", 1.0), Some(Demo::Benign));
        stats.record_at(now, &event("shadow_kill", 6.0), Some(Demo::Benign));
        let snap = stats.snapshot_at(now);
        assert_eq!(snap.total_requests, 5);
        assert_eq!(snap.requests_24h, 4);
        assert_eq!(snap.kills_24h, 3);
        assert_eq!(snap.avg_kill_latency_ms, Some(4.0));
        assert_eq!((snap.benign_demo_sent, snap.benign_demo_flagged), (2, 1));
        assert_eq!(snap.false_positive_rate, 0.5);
        assert_eq!(snap.series.len(), SERIES_MINUTES);
        let last = snap.series.last().unwrap();
        assert_eq!((last.t, last.requests, last.kills), (now * 60, 2, 1));
        assert_eq!(snap.series[SERIES_MINUTES - 2].kills, 1);
    }
}
