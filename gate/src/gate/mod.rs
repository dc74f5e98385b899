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

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

pub use crate::decision::{FailMode, KillResponse, PartialPolicy, WafMode};
pub use mode::SharedMode;
pub use ruling::Ruling;
pub use summary::{Component, RequestSummary};

use crate::decision::{decide, Action, Decision, Effect, Policy};
use crate::errors::BodyError;
use crate::events::{AuditLog, Event, EventHub, RequestFacts};
use crate::metrics::Metrics;
use crate::observe::{Emit, ModelMissing, RateLimited, ScoringFailed};
use crate::policy::{Baseline, PolicySet, Resolved, ScopeMode};
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
    /// The operator policy (flags alone when no file is given); swapped whole on a reload,
    /// read once per request.
    rules: arc_swap::ArcSwap<PolicySet>,
    /// The in-process engine, when there is one: scopes that change scoring need it.
    engine: OnceLock<Arc<scoring::Engine>>,
    scorer: Arc<dyn Scorer>,
    metrics: Arc<Metrics>,
    events: EventHub,
    stats: Stats,
}

impl Gate {
    pub fn new(parts: GateParts) -> Self {
        let baseline = Baseline { threshold: parts.threshold, fail: parts.policy };
        Gate {
            mode: parts.mode,
            threshold: parts.threshold,
            policy: parts.policy,
            rules: arc_swap::ArcSwap::from_pointee(PolicySet::baseline(baseline)),
            engine: OnceLock::new(),
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

    /// What the flags say, for loading a policy file over them.
    pub fn baseline(&self) -> Baseline {
        Baseline { threshold: self.threshold, fail: self.policy }
    }

    /// Lets scopes that change scoring (sensitivity, detectors, exclusions) score in process.
    pub fn use_engine(&self, engine: Arc<scoring::Engine>) {
        let _ = self.engine.set(engine);
    }

    pub fn has_engine(&self) -> bool {
        self.engine.get().is_some()
    }

    /// The policy in force.
    pub fn policy(&self) -> Arc<PolicySet> {
        self.rules.load_full()
    }

    /// Puts `set` in force for the next request (requests in flight finish on the old one).
    /// `[defaults] mode` sets the process mode when it differs from the previous file's, so
    /// a `POST /api/mode` switch survives reloads that do not touch it.
    pub fn install_policy(&self, set: PolicySet) {
        let old = self.rules.swap(Arc::new(set));
        let new = self.rules.load();
        if let Some(mode) = new.defaults_mode().filter(|m| old.defaults_mode() != Some(*m)) {
            self.mode.set(mode);
        }
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
    /// Host-less scopes only: for a door that does not know the request's host.
    pub async fn inspect(&self, summary: RequestSummary<'_>) -> Ruling {
        self.inspect_at(summary, "").await
    }

    /// [`Gate::inspect`] under the policy scopes matching `host` (the request's Host or
    /// :authority), its method and path: resolved once here, for every door.
    pub async fn inspect_at(&self, summary: RequestSummary<'_>, host: &str) -> Ruling {
        let scoped = self.scope(host, summary.method, summary.path);
        self.inspect_scoped(summary, host, scoped).await
    }

    /// The policy in force and its settings for one request, from what is known before the
    /// body (method, host, path): a door reads the scope's body limit from it, then hands it
    /// to [`Gate::inspect_scoped`] so one snapshot decides the whole request, even across a
    /// reload.
    pub fn scope(&self, host: &str, method: &str, path: &str) -> Scoped {
        let policy = self.rules.load_full();
        let resolved = policy.resolve(host, method, path);
        Scoped { policy, resolved }
    }

    /// [`Gate::inspect_at`] under a scope the door resolved before reading the body.
    pub async fn inspect_scoped(&self, mut summary: RequestSummary<'_>, host: &str, scoped: Scoped) -> Ruling {
        let Scoped { policy, resolved } = scoped;
        let mode = match resolved.mode {
            None => self.mode(),
            Some(ScopeMode::Shadow) => WafMode::Shadow,
            Some(ScopeMode::Active) => WafMode::Active,
            Some(ScopeMode::Off) => return Self::unscored(self.mode()),
        };
        let guards = &resolved.guards;
        if guards.allow_ips.as_ref().is_some_and(|list| list.contains(&summary.client)) {
            return Self::unscored(mode);
        }
        if guards.deny_ips.as_ref().is_some_and(|list| list.contains(&summary.client)) {
            summary.preset = Some(policy_verdict("ip-deny"));
        }
        let mut retry_after = None;
        if let Some((limiter, scope)) = &guards.rate_limit {
            if let Err(wait) = limiter.check(&limiter.key.of(&summary.client, &summary.scored.headers)) {
                RateLimited { scope, client: &summary.client }.emit(&self.metrics);
                summary.preset.get_or_insert_with(|| policy_verdict("rate-limit"));
                retry_after = Some(wait);
            }
        }
        summary.scored.client.get_or_insert_with(|| summary.client.clone());
        let started = Instant::now();
        let verdict = match summary.preset.clone() {
            Some(preset) => Ok(preset),
            None => self.score(&summary.scored, &resolved).await.map(|mut verdict| {
                custom_rules(&policy, host, &summary, &resolved.exclusions, &mut verdict);
                verdict
            }),
        };
        let scoring_time = started.elapsed();
        let decision = decide(mode, resolved.threshold, &resolved.fail, &verdict);
        match &verdict {
            Err(error) => {
                let refused = decision.effect == Effect::Refuse;
                ScoringFailed { request_id: summary.request_id.as_str(), component: summary.component.as_str(), error, refused }
                    .emit(&self.metrics)
            }
            Ok(Verdict { incomplete: Some(why), .. }) => ModelMissing { why }.emit(&self.metrics),
            Ok(_) => {}
        }
        Metrics::observe(&self.metrics.inference_seconds, scoring_time);
        let mut ruling = Ruling::new(mode, decision, verdict, scoring_time);
        ruling.kill_response = resolved.kill_response;
        ruling.retry_after = retry_after.filter(|_| ruling.effect() == Effect::Kill);
        self.record(summary.facts(host, resolved.scope_name()), &ruling, summary.demo);
        ruling
    }

    /// A scope that changes what the engine does (sensitivity, detectors off, exclusions) is
    /// scored by the in-process engine with the scope in its context. Without an engine in the
    /// process (INFERENCE_URL) these settings cannot travel and the plain scorer answers; the
    /// process warns once when a policy asks for them.
    async fn score(&self, scored: &crate::scorer::ScoreQuery, resolved: &Resolved) -> Result<Verdict, crate::scorer::ScoreError> {
        match (&resolved.scoring, self.engine.get()) {
            (Some(scope), Some(engine)) => Ok(crate::scorer::score_in_process(engine, scored, Some(scope.clone())).await),
            _ => self.scorer.score(scored).await,
        }
    }

    /// A scope with `mode = "off"`: forwarded unscored, neither counted nor recorded.
    fn unscored(mode: WafMode) -> Ruling {
        let decision = Decision { action: Action::Passed, effect: Effect::Forward, cause: None };
        Ruling::new(mode, decision, Ok(Verdict::default()), Duration::ZERO)
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
            evidence: Vec::new(),
        };
        let ruling = Ruling::new(self.mode(), decision, Ok(verdict), Duration::ZERO);
        // Refused before the policy was resolved: no scope decided.
        self.record(summary.facts("", ""), &ruling, summary.demo);
    }

    fn record(&self, facts: RequestFacts<'_>, ruling: &Ruling, demo: Option<crate::stats::Demo>) {
        self.metrics.count_decision(ruling.decision, &ruling.verdict);
        let latency_ms = ruling.scoring_time.as_secs_f64() * 1000.0;
        let event = Event::new(facts, &ruling.verdict, ruling.decision, ruling.mode, latency_ms);
        self.stats.record(&event, demo);
        self.events.publish(event);
    }
}

/// One request's policy: the set in force when it arrived and the settings resolved from it.
pub struct Scoped {
    policy: Arc<PolicySet>,
    pub resolved: Arc<Resolved>,
}

/// The policy's custom rules (virtual patches) over the request: the best hit joins the
/// verdict (and decides it when it scores higher). Nothing is parsed when no rule applies.
fn custom_rules(
    policy: &PolicySet,
    host: &str,
    summary: &RequestSummary<'_>,
    exclusions: &[crate::policy::ExclusionFile],
    verdict: &mut Verdict,
) {
    let rules = policy.custom_rules();
    if rules.is_empty() {
        return;
    }
    let host = crate::policy::normalize_host(host);
    let input = scoring::ScoreInput { request_text: &summary.scored.request_text, headers: &summary.scored.headers };
    let request = crate::policy::custom_rules::RuleRequest { host: &host, method: summary.method, path: summary.path, exclusions };
    if let Some(hit) = rules.check(request, &input) {
        crate::policy::custom_rules::apply(hit, verdict);
    }
}

/// A verdict the policy reached without scoring (`ip-deny`, `rate-limit`): decided by the mode
/// like an attack's, with the check as its detector and reason.
fn policy_verdict(check: &str) -> Verdict {
    Verdict { score: 1.0, reason: check.to_string(), detector: check.to_string(), ..Default::default() }
}
