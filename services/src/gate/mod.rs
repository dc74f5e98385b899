//! The gate: the one place a request is judged, whichever front door it came through. A door
//! (proxy, auth adapter, ext_proc) translates its protocol into a [`RequestSummary`] and
//! renders the [`Ruling`]; [`Gate::inspect`] scores, decides, counts and records exactly once.
//! Like pingora's per-request context and Coraza's transaction: the door owns the protocol,
//! the gate owns the verdict.
//!
//! Depends on the scorer, decision, events, stats, metrics, errors, observe and request ids
//! only — no clap, no servers, no proxy, no config: it is the future `gate` crate. Its settings
//! ([`WafMode`], [`FailMode`], [`PartialPolicy`], [`KillResponse`]) are the decision's domain
//! values, re-exported; config.rs parses names into them. Scoring failures are logged and
//! counted here (inside the door's request span), once for every door.

mod mode;
mod ruling;
mod summary;

use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::decision::{FailMode, KillResponse, PartialPolicy, WafMode};
pub use mode::SharedMode;
pub use ruling::Ruling;
pub use summary::{Component, RequestSummary};

use crate::decision::{decide, Action, Decision, Effect, Policy};
use crate::errors::BodyError;
use crate::events::{AuditLog, Event, EventHub, RequestFacts};
use crate::metrics::Metrics;
use crate::observe::{Emit, ModelMissing, ScoringFailed};
use crate::scorer::{Scorer, Verdict};
use crate::stats::Stats;

/// What a gate is built from. Under `rampart up` one gate serves every door.
pub struct GateParts {
    /// Shared with whoever may switch it (the proxy's `POST /api/mode`).
    pub mode: SharedMode,
    pub threshold: f32,
    /// WAF_ON_SCORING_ERROR, WAF_ON_MODEL_MISSING, WAF_ON_PARTIAL.
    pub policy: Policy,
    pub scorer: Arc<dyn Scorer>,
    pub metrics: Arc<Metrics>,
    /// Where every event is also written (WAF_AUDIT_LOG).
    pub audit: Option<AuditLog>,
    /// Seconds between `: keepalive` comments on the event stream.
    pub sse_keepalive: Duration,
}

pub struct Gate {
    mode: SharedMode,
    threshold: f32,
    policy: Policy,
    scorer: Arc<dyn Scorer>,
    metrics: Arc<Metrics>,
    events: EventHub,
    stats: Stats,
}

impl Gate {
    pub fn new(parts: GateParts) -> Self {
        Gate {
            mode: parts.mode,
            threshold: parts.threshold,
            policy: parts.policy,
            scorer: parts.scorer,
            events: EventHub::new(parts.metrics.clone(), parts.audit, parts.sse_keepalive),
            metrics: parts.metrics,
            stats: Stats::default(),
        }
    }

    pub fn mode(&self) -> WafMode {
        self.mode.get()
    }

    /// Switches the mode for every door sharing this gate's [`SharedMode`]; returns the old one.
    pub fn set_mode(&self, mode: WafMode) -> WafMode {
        self.mode.set(mode)
    }

    pub fn threshold(&self) -> f32 {
        self.threshold
    }

    pub fn scorer(&self) -> &Arc<dyn Scorer> {
        &self.scorer
    }

    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    pub fn events(&self) -> &EventHub {
        &self.events
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Scores the request (unless the door preset a verdict), decides by mode, threshold and
    /// policy, counts and records the event once, and says what the door should do.
    pub async fn inspect(&self, mut summary: RequestSummary<'_>) -> Ruling {
        let mode = self.mode();
        let mut scored = std::mem::take(&mut summary.scored);
        scored.client.get_or_insert_with(|| summary.client.clone());
        let started = Instant::now();
        let verdict = match summary.preset.clone() {
            Some(preset) => Ok(preset),
            None => self.scorer.score(&scored).await,
        };
        let scoring_time = started.elapsed();
        let decision = decide(mode, self.threshold, &self.policy, &verdict);
        match &verdict {
            Err(error) => {
                let refused = decision.effect == Effect::Refuse;
                ScoringFailed { component: summary.component.as_str(), error, refused }.emit(&self.metrics)
            }
            Ok(Verdict { incomplete: Some(why), .. }) => ModelMissing { why }.emit(&self.metrics),
            Ok(_) => {}
        }
        Metrics::observe(&self.metrics.inference_seconds, scoring_time);
        let ruling = Ruling::new(mode, decision, verdict, scoring_time);
        self.record(summary.facts(), &ruling, summary.demo);
        ruling
    }

    /// Records a request the door refused before scoring (the proxy's body timeout, its body
    /// budget): an `error` event whose reason is the error's (`client:body-timeout`), counted.
    pub fn refuse_unscored(&self, summary: RequestSummary<'_>, why: &BodyError) {
        let decision = Decision { action: Action::Error, effect: Effect::Refuse, cause: None };
        let verdict = Verdict {
            score: 0.0,
            reason: why.event_reason().into(),
            detector: String::new(),
            incomplete: None,
            partial: why.partial().map(Into::into),
        };
        let ruling = Ruling::new(self.mode(), decision, Ok(verdict), Duration::ZERO);
        self.record(summary.facts(), &ruling, summary.demo);
    }

    fn record(&self, facts: RequestFacts<'_>, ruling: &Ruling, demo: Option<crate::stats::Demo>) {
        self.metrics.count_decision(ruling.decision, &ruling.verdict);
        let latency_ms = ruling.scoring_time.as_secs_f64() * 1000.0;
        let event = Event::new(facts, &ruling.verdict, ruling.decision, ruling.mode, latency_ms);
        self.stats.record(&event, demo);
        self.events.publish(&event);
    }
}
