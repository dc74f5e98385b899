//! The verdict step the decision services share (auth adapter, ext_proc): score, decide with
//! fail-open (spec 7), count, and write the verdict's audit line. The proxy does the same with
//! its own extras (fail-closed option, events, dashboard figures) in proxy::inspect.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use hyper::HeaderMap;

use crate::client_ip::{source_ip, ClientIpPolicy};
use crate::config::{AdapterOptions, FailMode, WafMode};
use crate::decision::Policy;
use crate::decision::{decide, Decision};
use crate::events::{AuditLog, Event, RequestFacts};
use crate::metrics::Metrics;
use crate::scorer::{ScoreError, ScoreQuery, Scorer, Verdict};

/// What a decision service is built from besides its settings.
pub struct JudgeParts {
    /// Fixed for the process's life (spec 3).
    pub mode: WafMode,
    pub threshold: f32,
    pub scorer: Arc<dyn Scorer>,
    pub metrics: Arc<Metrics>,
    pub audit: Option<AuditLog>,
    /// The process's buffered-body budget (shared with every front door).
    pub budget: Arc<crate::budget::BodyBudget>,
}

pub struct Judge {
    pub mode: WafMode,
    threshold: f32,
    scorer: Arc<dyn Scorer>,
    pub metrics: Arc<Metrics>,
    audit: Option<AuditLog>,
    client_ip: ClientIpPolicy,
    /// Scoring errors always fail open here (spec 4.3 rule 1); a missing model and a
    /// partial verdict follow WAF_ON_MODEL_MISSING and WAF_ON_PARTIAL as in the proxy.
    policy: Policy,
    /// Body bytes scored; the rest is ignored.
    pub body_limit: usize,
    pub budget: Arc<crate::budget::BodyBudget>,
}

/// The request a verdict is about, for its audit line.
pub struct Subject<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub query: &'a str,
    pub headers: &'a HeaderMap,
    /// The web server or edge proxy that asked.
    pub peer: IpAddr,
}

impl Judge {
    pub fn new(options: &AdapterOptions, parts: JudgeParts) -> Self {
        Judge {
            mode: parts.mode,
            threshold: parts.threshold,
            scorer: parts.scorer,
            metrics: parts.metrics,
            audit: parts.audit,
            client_ip: ClientIpPolicy { trusted: options.trusted_proxies.0.clone(), header: options.client_ip_header },
            policy: Policy::new(FailMode::Open, &options.policy),
            body_limit: options.body_limit as usize,
            budget: parts.budget,
        }
    }

    /// Scores `query` for the client the peer's forwarded headers name, and decides.
    pub async fn judge(&self, mut query: ScoreQuery, subject: Subject<'_>) -> (Result<Verdict, ScoreError>, Decision) {
        let started = Instant::now();
        let client = source_ip(subject.headers, subject.peer, &self.client_ip).to_string();
        query.client.get_or_insert_with(|| client.clone());
        let verdict = self.scorer.score(&query).await;
        let latency = started.elapsed();
        let decision = decide(self.mode, self.threshold, &self.policy, &verdict);
        if let Err(err) = &verdict {
            tracing::warn!(error = %err, "scoring failed; failing open");
        }
        Metrics::observe(&self.metrics.inference_seconds, latency);
        self.metrics.count_decision(decision, &verdict);
        if let Some(audit) = &self.audit {
            let facts = RequestFacts {
                method: subject.method,
                path: subject.path,
                query: subject.query,
                source_ip: client,
            };
            audit.write_event(&Event::new(facts, &verdict, decision, self.mode, latency.as_secs_f64() * 1000.0), &self.metrics);
        }
        (verdict, decision)
    }
}
