//! Scored-request events (spec 2.1, 6): one per judged request (every front door), kept in a ring buffer for
//! `/api/events/recent`, fanned out to `/api/events` subscribers, and written to the audit log.

mod audit;
pub mod caps;
mod evidence;
mod sse;
mod time;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use serde::Serialize;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

pub use audit::{flush_all as flush_audit_logs, AuditLog, AuditTarget};
pub use evidence::{rule_id, TopDetector};
pub use sse::SseBody;
pub use time::rfc3339_utc;

use crate::decision::Decision;
use crate::decision::WafMode;
use crate::metrics::Metrics;
use crate::scorer::{ScoreError, Verdict};

/// Spec limits (section 8).
pub const RING_CAPACITY: usize = 500;
pub const REPLAY_ON_CONNECT: usize = 200;
/// Messages a subscriber may fall behind before it is dropped (it reconnects and gets the
/// replay); the proxy never waits for a reader.
pub const SUBSCRIBER_BUFFER: usize = 1024;
/// Bytes (replay included) a subscriber may hold unread before it is dropped: with events of
/// up to [`caps::MAX_EVENT_BYTES`], counting items alone would allow 1024 × 5 KB each.
pub const SUBSCRIBER_BYTES: usize = 1 << 20;
/// Live `/api/events` streams at once; one more is answered 503. With the byte budget this
/// bounds all subscribers together at 32 MiB.
pub const MAX_SUBSCRIBERS: usize = 32;

/// Spec 2.1, plus `detector` and `query` (the dashboard shows both), plus the audit fields
/// for SIEMs (docs/AUDIT.md, docs/audit-event.schema.json): always present, empty when unknown.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Event {
    pub timestamp: String,
    /// Unique per event and stable: what `POST /api/exclusions` takes. A request's event has
    /// its request's id.
    pub event_id: String,
    /// The request's id: the same in its tracing span and its audit line (crate::request_id).
    pub request_id: String,
    pub method: String,
    pub path: String,
    pub source_ip: String,
    pub score: f64,
    pub reason: String,
    pub mode: &'static str,
    pub action: &'static str,
    pub latency_ms: f64,
    /// The front door that judged it: `proxy`, `auth` or `extproc` (under `rampart up` all
    /// three share one stream).
    pub component: &'static str,
    pub detector: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub query: String,
    /// Work bounds hit while scoring (comma-separated slugs); absent when all was scored.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub partial: String,
    /// Fields cut to their byte cap ([`caps`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub truncated: Vec<&'static str>,
    /// The request's Host (or :authority), as sent.
    pub host: String,
    pub user_agent: String,
    /// Where the deciding detector matched: `query:q`, `body:name`, `header:referer`,
    /// `cookie:id`, `path`, `body` (an unstructured body) — a policy field selector.
    pub field: String,
    /// The deciding rule's id (`script-tag`); empty for a model's verdict or no hit.
    pub rule: String,
    /// The policy scope that decided (the most specific matching one): `flags` without a
    /// policy file, `defaults`, or a `[[scope]]` name.
    pub scope: String,
    /// The detectors that scored above 0, best first (at most 3).
    pub top_detectors: Vec<TopDetector>,
}

/// The request an event describes.
pub struct RequestFacts<'a> {
    pub request_id: &'a str,
    pub method: &'a str,
    pub path: &'a str,
    pub query: &'a str,
    pub source_ip: String,
    pub component: &'static str,
    pub host: &'a str,
    pub user_agent: &'a str,
    /// The deciding policy scope's name.
    pub scope: &'a str,
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
            Err(err) => (0.0, err.event_reason().to_string(), String::new(), String::new()),
        };
        let mut truncated = Vec::new();
        let (field, top_detectors) = match verdict {
            Ok(v) if !v.evidence.is_empty() => (evidence::matched_field(v), evidence::top_detectors(v, &mut truncated)),
            _ => ("", Vec::new()),
        };
        // The rule behind the event's own reason (a policy reason names none).
        let rule = if reason == verdict.as_ref().map_or("", |v| v.reason.as_str()) { rule_id(&reason).unwrap_or("") } else { "" };
        Event {
            timestamp: rfc3339_utc(std::time::SystemTime::now()),
            // Ours, never the client's (crate::request_id): no cap needed.
            event_id: request.request_id.to_string(),
            request_id: request.request_id.to_string(),
            method: caps::capped("method", request.method, caps::METHOD, &mut truncated),
            path: caps::capped("path", request.path, caps::PATH, &mut truncated),
            source_ip: caps::capped("source_ip", &request.source_ip, caps::SOURCE_IP, &mut truncated),
            score: scoring::verdict::round4(score),
            reason: caps::capped("reason", &reason, caps::REASON, &mut truncated),
            mode: mode.as_str(),
            action: decision.action.as_str(),
            latency_ms: (latency_ms * 1000.0).round() / 1000.0,
            component: request.component,
            detector: caps::capped("detector", &detector, caps::DETECTOR, &mut truncated),
            query: caps::capped("query", request.query, caps::QUERY, &mut truncated),
            partial: caps::capped("partial", &partial, caps::PARTIAL, &mut truncated),
            host: caps::capped("host", request.host, caps::HOST, &mut truncated),
            user_agent: caps::capped("user_agent", request.user_agent, caps::USER_AGENT, &mut truncated),
            field: caps::capped("field", field, caps::FIELD, &mut truncated),
            rule: caps::capped("rule", rule, caps::RULE, &mut truncated),
            scope: caps::capped("scope", request.scope, caps::SCOPE, &mut truncated),
            top_detectors,
            truncated,
        }
    }
}

/// One live subscriber: its channel and the bytes queued for it but not yet written out.
struct Subscriber {
    tx: mpsc::Sender<Bytes>,
    pending: Arc<AtomicUsize>,
}

pub struct EventHub {
    inner: Mutex<Inner>,
    metrics: Arc<Metrics>,
    audit: Option<AuditLog>,
    keepalive: Duration,
}

#[derive(Default)]
struct Inner {
    /// The last events, oldest first (serialised when read).
    ring: VecDeque<Arc<Event>>,
    subscribers: Vec<Subscriber>,
}

impl EventHub {
    pub fn new(metrics: Arc<Metrics>, audit: Option<AuditLog>, keepalive: Duration) -> Self {
        EventHub { inner: Mutex::new(Inner::default()), metrics, audit, keepalive }
    }

    /// Records one event: ring, live subscribers, audit log. Never blocks on a reader. The
    /// ring keeps the event itself: it is serialised here only when an audit log or a live
    /// subscriber needs the bytes now (the per-request cost without either is a move and a
    /// lock), else when `/api/events/recent` or a new subscriber's replay asks.
    pub fn publish(&self, event: Event) {
        let event = Arc::new(event);
        let mut json = None;
        if let Some(audit) = &self.audit {
            json = serialise(&event);
            if let Some(json) = &json {
                if !audit.write(json.clone()) {
                    self.metrics.audit_dropped.inc();
                }
            }
        }
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.ring.len() == RING_CAPACITY {
            inner.ring.pop_front();
        }
        inner.ring.push_back(event.clone());
        if inner.subscribers.is_empty() {
            return;
        }
        let Some(json) = json.or_else(|| serialise(&event)) else { return };
        let message = sse_message(&json);
        let mut dropped = 0u64;
        // A full buffer (items or bytes) means the reader is not keeping up: dropping its
        // sender ends its stream; the browser's EventSource reconnects and gets the replay.
        inner.subscribers.retain(|sub| {
            if sub.pending.load(Ordering::Relaxed) + message.len() > SUBSCRIBER_BYTES {
                dropped += 1;
                return false;
            }
            match sub.tx.try_send(message.clone()) {
                Ok(()) => {
                    sub.pending.fetch_add(message.len(), Ordering::Relaxed);
                    true
                }
                Err(TrySendError::Full(_)) => {
                    dropped += 1;
                    false
                }
                Err(TrySendError::Closed(_)) => false,
            }
        });
        if dropped > 0 {
            self.metrics.sse_dropped.inc_by(dropped);
        }
    }

    /// A live stream: the most recent events first (up to 200), then everything published
    /// after, with no gap or duplicate between the two (both happen under one lock). `None`
    /// when [`MAX_SUBSCRIBERS`] streams are already open.
    pub fn subscribe(&self) -> Option<SseBody> {
        let (tx, rx) = mpsc::channel(SUBSCRIBER_BUFFER);
        let pending = Arc::new(AtomicUsize::new(0));
        let replay: VecDeque<Bytes> = {
            let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            inner.subscribers.retain(|sub| !sub.tx.is_closed());
            if inner.subscribers.len() >= MAX_SUBSCRIBERS {
                return None;
            }
            let skip = inner.ring.len().saturating_sub(REPLAY_ON_CONNECT);
            let replay: VecDeque<Bytes> =
                inner.ring.iter().skip(skip).filter_map(|event| serialise(event)).map(|json| sse_message(&json)).collect();
            pending.store(replay.iter().map(Bytes::len).sum(), Ordering::Relaxed);
            inner.subscribers.push(Subscriber { tx, pending: pending.clone() });
            replay
        };
        Some(SseBody::new(replay, rx, pending, self.keepalive, self.metrics.clone()))
    }

    /// `/api/events/recent`: a JSON array of the last 500 events, oldest first.
    pub fn recent_json(&self) -> Bytes {
        // Serialised outside the lock: publishing never waits for this endpoint.
        let events: Vec<Arc<Event>> = self.inner.lock().unwrap_or_else(|p| p.into_inner()).ring.iter().cloned().collect();
        let events: Vec<&Event> = events.iter().map(|event| &**event).collect();
        match serde_json::to_vec(&events) {
            Ok(json) => Bytes::from(json),
            Err(err) => {
                tracing::error!(error = %err, "event not serialisable");
                Bytes::from_static(b"[]")
            }
        }
    }

    /// The recent event of request `request_id`, as JSON (None when it left the ring).
    pub fn find(&self, request_id: &str) -> Option<serde_json::Value> {
        let event = {
            let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            inner.ring.iter().rev().find(|event| event.request_id == request_id).cloned()?
        };
        serde_json::to_value(&*event).ok()
    }

    pub fn subscriber_count(&self) -> usize {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).subscribers.iter().filter(|sub| !sub.tx.is_closed()).count()
    }
}

fn serialise(event: &Event) -> Option<Bytes> {
    match serde_json::to_vec(event) {
        Ok(json) => Some(Bytes::from(json)),
        Err(err) => {
            tracing::error!(error = %err, "event not serialisable");
            None
        }
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
            event_id: format!("{n:020x}"),
            request_id: format!("{n:020x}"),
            method: "GET".into(),
            path: format!("/e/{n}"),
            source_ip: "127.0.0.1".into(),
            score: 0.0,
            reason: String::new(),
            mode: "shadow",
            action: "passed",
            latency_ms: 0.1,
            component: "proxy",
            detector: String::new(),
            query: String::new(),
            partial: String::new(),
            truncated: Vec::new(),
            host: String::new(),
            user_agent: String::new(),
            field: String::new(),
            rule: String::new(),
            scope: String::new(),
            top_detectors: Vec::new(),
        }
    }

    #[test]
    fn ring_keeps_the_last_500_oldest_first() {
        let hub = EventHub::new(Arc::new(Metrics::new()), None, Duration::from_secs(15));
        for n in 0..620 {
            hub.publish(event(n));
        }
        let recent: Vec<serde_json::Value> = serde_json::from_slice(&hub.recent_json()).unwrap();
        assert_eq!(recent.len(), 500);
        assert_eq!(recent[0]["path"], "/e/120");
        assert_eq!(recent[499]["path"], "/e/619");
    }

    #[test]
    fn a_maximal_event_stays_within_the_documented_line_size() {
        let huge = "\"\u{1}".repeat(100_000);
        let id = crate::request_id::RequestId::next();
        let request = RequestFacts {
            request_id: id.as_str(),
            method: &huge,
            path: &huge,
            query: &huge,
            source_ip: huge.clone(),
            component: "proxy",
            host: &huge,
            user_agent: &huge,
            scope: &huge,
        };
        let evidence =
            scoring::verdict::Evidence { detector: huge.clone(), score: 1.0, reason: format!("x:{huge}"), field: Some(huge.clone()) };
        let verdict = Ok(Verdict {
            score: 1.0,
            reason: huge.clone(),
            detector: huge.clone(),
            partial: Some(huge.clone()),
            evidence: vec![evidence; 5],
            ..Default::default()
        });
        let decision = Decision { action: crate::decision::Action::Passed, effect: crate::decision::Effect::Forward, cause: None };
        let event = Event::new(request, &verdict, decision, WafMode::Shadow, 1e9);
        let line = serde_json::to_vec(&event).unwrap();
        assert!(line.len() <= caps::MAX_EVENT_BYTES, "{} bytes", line.len());
        assert_eq!(event.top_detectors.len(), 3);
        assert_eq!(
            event.truncated,
            [
                "top_detectors",
                "method",
                "path",
                "source_ip",
                "reason",
                "detector",
                "query",
                "partial",
                "host",
                "user_agent",
                "field",
                "scope"
            ]
        );
    }

    #[tokio::test]
    async fn a_reader_over_its_byte_budget_is_dropped_and_streams_are_capped() {
        let metrics = Arc::new(Metrics::new());
        let hub = EventHub::new(metrics.clone(), None, Duration::from_secs(15));
        let _stalled = hub.subscribe().unwrap();
        let mut big = event(0);
        big.path = "p".repeat(caps::PATH);
        // 1024 items would be allowed; 1 MiB of 2 KB events is reached first.
        for _ in 0..(SUBSCRIBER_BYTES / caps::PATH) + 1 {
            hub.publish(big.clone());
        }
        assert_eq!(hub.subscriber_count(), 0);
        assert_eq!(metrics.sse_dropped.get(), 1);
        let open: Vec<SseBody> = (0..MAX_SUBSCRIBERS).map(|_| hub.subscribe().unwrap()).collect();
        assert!(hub.subscribe().is_none());
        drop(open);
        assert!(hub.subscribe().is_some());
    }

    #[tokio::test]
    async fn a_reader_that_falls_behind_is_dropped_without_blocking() {
        let metrics = Arc::new(Metrics::new());
        let hub = EventHub::new(metrics.clone(), None, Duration::from_secs(15));
        let _stalled = hub.subscribe().unwrap();
        for n in 0..SUBSCRIBER_BUFFER + 10 {
            hub.publish(event(n));
        }
        assert_eq!(hub.subscriber_count(), 0);
        assert_eq!(metrics.sse_dropped.get(), 1);
    }
}
