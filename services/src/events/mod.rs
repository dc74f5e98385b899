//! Scored-request events (spec 2.1, 6): one per proxied request, kept in a ring buffer for
//! `/api/events/recent`, fanned out to `/api/events` subscribers, and written to the audit log.

mod audit;
mod sse;
mod time;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use serde::Serialize;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

pub use audit::{AuditLog, AuditTarget};
pub use sse::SseBody;
pub use time::rfc3339_utc;

use crate::config::WafMode;
use crate::decision::Decision;
use crate::metrics::Metrics;
use crate::scorer::{ScoreError, Verdict};
use crate::waf_headers::error_code;

/// Spec limits (section 8).
pub const RING_CAPACITY: usize = 500;
pub const REPLAY_ON_CONNECT: usize = 200;
/// Messages a subscriber may fall behind before it is dropped (it reconnects and gets the
/// replay); the proxy never waits for a reader.
pub const SUBSCRIBER_BUFFER: usize = 1024;

/// Spec 2.1, plus `detector` and `query` (the dashboard shows both).
#[derive(Clone, Debug, Serialize)]
pub struct Event {
    pub timestamp: String,
    pub method: String,
    pub path: String,
    pub source_ip: String,
    pub score: f64,
    pub reason: String,
    pub mode: &'static str,
    pub action: &'static str,
    pub latency_ms: f64,
    pub detector: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub query: String,
    /// Work bounds hit while scoring (comma-separated slugs); absent when all was scored.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub partial: String,
}

/// Events keep this much of a path or query: enough to read an attack, bounded memory.
const EVENT_TEXT_LIMIT: usize = 2048;

/// The request an event describes.
pub struct RequestFacts<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub query: &'a str,
    pub source_ip: String,
}

impl Event {
    pub fn new(
        request: RequestFacts<'_>,
        verdict: &Result<Verdict, ScoreError>,
        decision: Decision,
        mode: WafMode,
        latency_ms: f64,
    ) -> Event {
        let (score, reason, detector, partial) = match verdict {
            Ok(v) => {
                // A policy decision (model missing, partial) says so instead of a detector.
                let reason = decision.policy_reason(v).unwrap_or_else(|| v.reason.clone());
                (v.score, reason, v.detector.clone(), v.partial.clone().unwrap_or_default())
            }
            Err(err) => (0.0, format!("error:{}", error_code(err)), String::new(), String::new()),
        };
        Event {
            timestamp: rfc3339_utc(std::time::SystemTime::now()),
            method: request.method.to_string(),
            path: truncate(request.path),
            source_ip: request.source_ip,
            score: scoring::verdict::round4(score),
            reason,
            mode: mode.as_str(),
            action: decision.action.as_str(),
            latency_ms: (latency_ms * 1000.0).round() / 1000.0,
            detector,
            query: truncate(request.query),
            partial: truncate(&partial),
        }
    }
}

fn truncate(text: &str) -> String {
    if text.len() <= EVENT_TEXT_LIMIT {
        return text.to_string();
    }
    let mut end = EVENT_TEXT_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

pub struct EventHub {
    inner: Mutex<Inner>,
    metrics: Arc<Metrics>,
    audit: Option<AuditLog>,
    keepalive: Duration,
}

#[derive(Default)]
struct Inner {
    /// Serialised events, oldest first.
    ring: VecDeque<Bytes>,
    subscribers: Vec<mpsc::Sender<Bytes>>,
}

impl EventHub {
    pub fn new(metrics: Arc<Metrics>, audit: Option<AuditLog>, keepalive: Duration) -> Self {
        EventHub { inner: Mutex::new(Inner::default()), metrics, audit, keepalive }
    }

    /// Records one event: ring, live subscribers, audit log. Never blocks on a reader.
    pub fn publish(&self, event: &Event) {
        let json = match serde_json::to_vec(event) {
            Ok(v) => Bytes::from(v),
            Err(err) => {
                tracing::error!(error = %err, "event not serialisable");
                return;
            }
        };
        if let Some(audit) = &self.audit {
            if !audit.write(json.clone()) {
                self.metrics.audit_dropped.inc();
            }
        }
        let message = sse_message(&json);
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.ring.len() == RING_CAPACITY {
            inner.ring.pop_front();
        }
        inner.ring.push_back(json);
        let mut dropped = 0u64;
        // A full buffer means the reader is not keeping up: dropping its sender ends its
        // stream; the browser's EventSource reconnects and gets the replay.
        inner.subscribers.retain(|tx| match tx.try_send(message.clone()) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                dropped += 1;
                false
            }
            Err(TrySendError::Closed(_)) => false,
        });
        if dropped > 0 {
            self.metrics.sse_dropped.inc_by(dropped);
        }
    }

    /// A live stream: the most recent events first (up to 200), then everything published
    /// after, with no gap or duplicate between the two (both happen under one lock).
    pub fn subscribe(&self) -> SseBody {
        let (tx, rx) = mpsc::channel(SUBSCRIBER_BUFFER);
        let replay: VecDeque<Bytes> = {
            let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            inner.subscribers.push(tx);
            let skip = inner.ring.len().saturating_sub(REPLAY_ON_CONNECT);
            inner.ring.iter().skip(skip).map(|json| sse_message(json)).collect()
        };
        SseBody::new(replay, rx, self.keepalive, self.metrics.clone())
    }

    /// `/api/events/recent`: a JSON array of the last 500 events, oldest first.
    pub fn recent_json(&self) -> Bytes {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = Vec::with_capacity(inner.ring.iter().map(|j| j.len() + 1).sum::<usize>() + 2);
        out.push(b'[');
        for (i, json) in inner.ring.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(json);
        }
        out.push(b']');
        Bytes::from(out)
    }

    pub fn subscriber_count(&self) -> usize {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).subscribers.iter().filter(|tx| !tx.is_closed()).count()
    }
}

fn sse_message(json: &[u8]) -> Bytes {
    let mut message = Vec::with_capacity(json.len() + 8);
    message.extend_from_slice(b"data: ");
    message.extend_from_slice(json);
    message.extend_from_slice(b"\n\n");
    Bytes::from(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(n: usize) -> Event {
        Event {
            timestamp: rfc3339_utc(std::time::SystemTime::UNIX_EPOCH),
            method: "GET".into(),
            path: format!("/e/{n}"),
            source_ip: "127.0.0.1".into(),
            score: 0.0,
            reason: String::new(),
            mode: "shadow",
            action: "passed",
            latency_ms: 0.1,
            detector: String::new(),
            query: String::new(),
            partial: String::new(),
        }
    }

    #[test]
    fn ring_keeps_the_last_500_oldest_first() {
        let hub = EventHub::new(Arc::new(Metrics::new()), None, Duration::from_secs(15));
        for n in 0..620 {
            hub.publish(&event(n));
        }
        let recent: Vec<serde_json::Value> = serde_json::from_slice(&hub.recent_json()).unwrap();
        assert_eq!(recent.len(), 500);
        assert_eq!(recent[0]["path"], "/e/120");
        assert_eq!(recent[499]["path"], "/e/619");
    }

    #[tokio::test]
    async fn a_reader_that_falls_behind_is_dropped_without_blocking() {
        let metrics = Arc::new(Metrics::new());
        let hub = EventHub::new(metrics.clone(), None, Duration::from_secs(15));
        let _stalled = hub.subscribe();
        for n in 0..SUBSCRIBER_BUFFER + 10 {
            hub.publish(&event(n));
        }
        assert_eq!(hub.subscriber_count(), 0);
        assert_eq!(metrics.sse_dropped.get(), 1);
    }
}
