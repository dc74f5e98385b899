//! Prometheus metrics shared by the proxy, auth adapter and ext_proc (one registry per
//! process, so `rampart up` serves them all on one /metrics).

use std::time::Duration;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use crate::decision::{Action, Decision};
use crate::errors::SCORER_ERRORS;
use crate::scorer::{ScoreError, Verdict, MISSING_MODEL_CODES};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ActionLabel {
    pub action: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KillLabels {
    pub detector: String,
    pub action: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabel {
    pub kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WhyLabel {
    pub why: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LimitLabel {
    pub limit: &'static str,
}

/// Every limit that turns work away (docs/SECURITY.md); all exported from the start, at 0.
pub const LIMITS: [&str; 5] = ["connections", "connections-per-client", "streams", "header-timeout", "body-budget"];

/// Every request action the spec names; all four are exported from the start, at 0.
pub const ACTIONS: [&str; 4] = ["passed", "shadow_kill", "active_kill", "error"];

pub struct Metrics {
    registry: Registry,
    pub requests: Family<ActionLabel, Counter>,
    pub kills: Family<KillLabels, Counter>,
    pub inference_seconds: Histogram,
    pub upstream_seconds: Histogram,
    pub total_seconds: Histogram,
    pub upstream_errors: Family<KindLabel, Counter>,
    pub sse_subscribers: Gauge,
    pub sse_dropped: Counter,
    pub audit_dropped: Counter,
    /// Partial verdicts by the action taken on them (WAF_ON_PARTIAL).
    pub partial: Family<ActionLabel, Counter>,
    pub limit_refusals: Family<LimitLabel, Counter>,
    /// Scorer failures by their X-Waf-Error value.
    pub scoring_errors: Family<WhyLabel, Counter>,
    /// Verdicts lacking a model's opinion, by why; `model-overloaded` and `model-deadline`
    /// are the model queue shedding load.
    pub model_missing: Family<WhyLabel, Counter>,
    /// Policy file reloads by result (`ok`, `error`); a rejected file leaves the old policy.
    pub policy_reloads: Family<ResultLabel, Counter>,
    /// Rules-directory reloads by result (`ok`, `error`); a rejected directory leaves the old rules.
    pub rules_reloads: Family<ResultLabel, Counter>,
    /// Requests over a policy scope's rate limit (also counted as kills of `rate-limit`).
    pub rate_limited: Counter,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabel {
    pub result: &'static str,
}

/// 50 µs to ~26 s: covers a pattern-only verdict and a stuck upstream alike.
fn latency_buckets() -> impl Iterator<Item = f64> {
    exponential_buckets(0.00005, 2.0, 20)
}

/// A labelled counter registered with every known label set at 0, so dashboards see the series
/// before the first occurrence.
fn counters_from_start<L>(registry: &mut Registry, name: &str, help: &str, labels: impl IntoIterator<Item = L>) -> Family<L, Counter>
where
    L: Clone + std::fmt::Debug + std::hash::Hash + Eq + EncodeLabelSet + Send + Sync + 'static,
{
    let family = Family::<L, Counter>::default();
    for label in labels {
        let _ = family.get_or_create(&label);
    }
    registry.register(name, help, family.clone());
    family
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let requests = ACTIONS.map(|action| ActionLabel { action });
        let requests = counters_from_start(&mut registry, "waf_requests", "Total requests processed by action", requests);
        let kills = Family::<KillLabels, Counter>::default();
        registry.register("waf_kills", "Requests over the threshold by winning detector and action", kills.clone());
        let inference_seconds = Histogram::new(latency_buckets());
        registry.register(
            "waf_inference_latency_seconds",
            "Time spent scoring a request (in process or the inference call)",
            inference_seconds.clone(),
        );
        let upstream_seconds = Histogram::new(latency_buckets());
        registry.register(
            "waf_upstream_latency_seconds",
            "Time from forwarding a request to the upstream's response headers",
            upstream_seconds.clone(),
        );
        let total_seconds = Histogram::new(latency_buckets());
        registry.register(
            "waf_request_duration_seconds",
            "Time from receiving a request to sending response headers (or the kill)",
            total_seconds.clone(),
        );
        let upstream_errors = Family::<KindLabel, Counter>::default();
        registry.register("waf_upstream_errors", "Requests the upstream did not answer, by kind", upstream_errors.clone());
        let sse_subscribers = Gauge::default();
        registry.register("waf_sse_subscribers", "Connected /api/events subscribers", sse_subscribers.clone());
        let sse_dropped = Counter::default();
        registry.register("waf_sse_dropped_subscribers", "Event subscribers dropped for reading too slowly", sse_dropped.clone());
        let audit_dropped = Counter::default();
        registry.register("waf_audit_dropped", "Audit lines dropped because the audit writer fell behind", audit_dropped.clone());
        let partial = Family::<ActionLabel, Counter>::default();
        registry.register("waf_partial", "Requests whose verdict was partial (a work bound was hit), by action", partial.clone());
        let limit_refusals = counters_from_start(
            &mut registry,
            "waf_limit_refusals",
            "Connections closed, requests refused or bodies cut short by a limit, by limit",
            LIMITS.map(|limit| LimitLabel { limit }),
        );
        let scoring_errors = counters_from_start(
            &mut registry,
            "waf_scoring_errors",
            "Requests the scorer gave no verdict for, by X-Waf-Error",
            SCORER_ERRORS.map(|why| WhyLabel { why }),
        );
        let model_missing = counters_from_start(
            &mut registry,
            "waf_model_missing",
            "Verdicts without a model's opinion, by why (model-overloaded and model-deadline: shed by the model queue)",
            MISSING_MODEL_CODES.map(|why| WhyLabel { why }),
        );
        let policy_reloads = counters_from_start(
            &mut registry,
            "waf_policy_reloads",
            "Policy file reloads (SIGHUP, file change) by result; on error the old policy keeps running",
            ["ok", "error"].map(|result| ResultLabel { result }),
        );
        let rules_reloads = counters_from_start(
            &mut registry,
            "waf_rules_reloads",
            "Rules directory reloads (SIGHUP, file change) by result; on error the old rules keep running",
            ["ok", "error"].map(|result| ResultLabel { result }),
        );
        let rate_limited = Counter::default();
        registry.register("waf_rate_limited", "Requests over a policy scope's per-client rate limit", rate_limited.clone());
        crate::scorer::pool::register(&mut registry);
        registry.register_collector(Box::new(ModelQueues));
        Metrics {
            rate_limited,
            policy_reloads,
            rules_reloads,
            scoring_errors,
            model_missing,
            partial,
            registry,
            limit_refusals,
            requests,
            kills,
            inference_seconds,
            upstream_seconds,
            total_seconds,
            upstream_errors,
            sse_subscribers,
            sse_dropped,
            audit_dropped,
        }
    }

    pub fn count_request(&self, action: &'static str) {
        self.requests.get_or_create(&ActionLabel { action }).inc();
    }

    pub fn count_kill(&self, detector: &str, action: &'static str) {
        self.kills.get_or_create(&KillLabels { detector: detector.to_string(), action }).inc();
    }

    /// Counts one decided request: its action, and its winning detector when it is a kill.
    pub fn count_decision(&self, decision: Decision, verdict: &Result<Verdict, ScoreError>) {
        self.count_request(decision.action.as_str());
        if verdict.as_ref().is_ok_and(|v| v.partial.is_some()) {
            self.partial.get_or_create(&ActionLabel { action: decision.action.as_str() }).inc();
        }
        if matches!(decision.action, Action::ShadowKill | Action::ActiveKill) {
            let detector = verdict.as_ref().map(|v| v.detector.as_str()).unwrap_or("");
            self.count_kill(detector, decision.action.as_str());
        }
    }

    /// One refusal by a limit (a slug of [`LIMITS`]).
    pub fn count_limit(&self, limit: &'static str) {
        self.limit_refusals.get_or_create(&LimitLabel { limit }).inc();
    }

    /// One scorer failure, by its X-Waf-Error value (one of [`SCORER_ERRORS`]).
    pub fn count_scoring_error(&self, why: &'static str) {
        self.scoring_errors.get_or_create(&WhyLabel { why }).inc();
    }

    /// One verdict without a model; an unknown slug (a newer inference service's) counts as
    /// `model-failed` so a peer cannot grow the label set.
    pub fn count_model_missing(&self, why: &str) {
        let why = MISSING_MODEL_CODES.iter().find(|&&known| known == why).copied().unwrap_or("model-failed");
        self.model_missing.get_or_create(&WhyLabel { why }).inc();
    }

    pub fn count_upstream_error(&self, kind: &'static str) {
        self.upstream_errors.get_or_create(&KindLabel { kind }).inc();
    }

    pub fn observe(histogram: &Histogram, elapsed: Duration) {
        histogram.observe(elapsed.as_secs_f64());
    }

    /// The Prometheus text format (0.0.4) that `text/plain` scrapers expect: counters are
    /// described under their `_total` sample name, without OpenMetrics' `# EOF` and
    /// `_created` lines.
    pub fn render_text(&self) -> String {
        let mut open_metrics = String::new();
        if prometheus_client::encoding::text::encode(&mut open_metrics, &self.registry).is_err() {
            return String::new();
        }
        openmetrics_to_prometheus_text(&open_metrics)
    }
}

/// The in-process model queues (scoring's `model::observe`), read at each scrape: their
/// counters live in the queues' own atomics, so nothing here can drift from them.
#[derive(Debug)]
struct ModelQueues;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModelLabel {
    model: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ShedLabels {
    model: &'static str,
    reason: &'static str,
}

impl Collector for ModelQueues {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        use scoring::model::observe::{self, ShedReason};
        let queues = observe::all();
        if queues.is_empty() {
            return Ok(());
        }
        let help = "Texts waiting in a model's queue (not yet taken into a batch).";
        let mut family = encoder.encode_descriptor("waf_model_queue_depth", help, None, MetricType::Gauge)?;
        for q in &queues {
            ConstGauge::new(q.depth as i64).encode(family.encode_family(&ModelLabel { model: q.model })?)?;
        }
        let help = "Texts per model executor call.";
        let mut family = encoder.encode_descriptor("waf_model_batch_size", help, None, MetricType::Histogram)?;
        for q in &queues {
            let h = &q.batch_sizes;
            family.encode_family(&ModelLabel { model: q.model })?.encode_histogram::<NoLabelSet>(h.sum, h.count, &h.buckets, None)?;
        }
        let help = "Time of one model executor call (a whole batch).";
        let mut family = encoder.encode_descriptor("waf_model_batch_seconds", help, None, MetricType::Histogram)?;
        for q in &queues {
            let h = &q.batch_seconds;
            family.encode_family(&ModelLabel { model: q.model })?.encode_histogram::<NoLabelSet>(h.sum, h.count, &h.buckets, None)?;
        }
        let help = "Texts a model queue dropped without running, by reason (queue-full, client-queue-full, deadline, abandoned).";
        let mut family = encoder.encode_descriptor("waf_model_shed_texts", help, None, MetricType::Counter)?;
        for q in &queues {
            for &(reason, texts) in &q.shed {
                let labels = ShedLabels { model: q.model, reason: ShedReason::slug(reason) };
                ConstCounter::new(texts).encode(family.encode_family(&labels)?)?;
            }
        }
        let help = "Model executor calls that failed (every text of the batch lacks the model's opinion).";
        let mut family = encoder.encode_descriptor("waf_model_failed_batches", help, None, MetricType::Counter)?;
        for q in &queues {
            ConstCounter::new(q.failed_batches).encode(family.encode_family(&ModelLabel { model: q.model })?)?;
        }
        Ok(())
    }
}

impl net::RefusalObserver for Metrics {
    fn refused(&self, why: net::Refusal) {
        self.count_limit(why.slug());
    }
}

/// `GET /metrics` on any listener.
pub fn metrics_response(metrics: &Metrics) -> crate::http::HttpResponse {
    let mut resp = hyper::Response::new(http_body_util::Full::new(bytes::Bytes::from(metrics.render_text())));
    resp.headers_mut().insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static(TEXT_CONTENT_TYPE));
    resp
}

/// The model queues' series alone, for a process that runs the models but no front door (the
/// inference service): a door scoring through `INFERENCE_URL` has no queue of its own, so
/// the queue is observed where it runs.
pub fn model_metrics_response() -> crate::http::HttpResponse {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(ModelQueues));
    let mut open_metrics = String::new();
    let text = match prometheus_client::encoding::text::encode(&mut open_metrics, &registry) {
        Ok(()) => openmetrics_to_prometheus_text(&open_metrics),
        Err(_) => String::new(),
    };
    let mut resp = hyper::Response::new(http_body_util::Full::new(bytes::Bytes::from(text)));
    resp.headers_mut().insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static(TEXT_CONTENT_TYPE));
    resp
}

pub const TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

fn openmetrics_to_prometheus_text(input: &str) -> String {
    let counters: std::collections::HashSet<&str> =
        input.lines().filter_map(|l| l.strip_prefix("# TYPE ")).filter_map(|rest| rest.strip_suffix(" counter")).collect();
    let mut out = String::with_capacity(input.len());
    for line in input.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let rewritten = ["# HELP ", "# TYPE "].iter().find_map(|prefix| {
            let rest = line.strip_prefix(prefix)?;
            let (name, tail) = rest.split_once(' ')?;
            counters.contains(name).then(|| format!("{prefix}{name}_total {tail}"))
        });
        match rewritten {
            Some(line) => out.push_str(&line),
            None => {
                let name = line.split(['{', ' ']).next().unwrap_or("");
                if name.ends_with("_created") && counters.contains(name.trim_end_matches("_created")) {
                    continue;
                }
                out.push_str(line)
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_is_exported_with_the_spec_help_text() {
        let metrics = Metrics::new();
        metrics.count_request("shadow_kill");
        metrics.count_kill("sqli", "shadow_kill");
        let text = metrics.render_text();
        assert!(text.contains("# HELP waf_requests_total Total requests processed by action"), "{text}");
        assert!(text.contains("# TYPE waf_requests_total counter"), "{text}");
        for action in ACTIONS {
            let expected = if action == "shadow_kill" { 1 } else { 0 };
            assert!(text.contains(&format!("waf_requests_total{{action=\"{action}\"}} {expected}\n")), "{action}: {text}");
        }
        assert!(text.contains("waf_kills_total{detector=\"sqli\",action=\"shadow_kill\"} 1"), "{text}");
        assert!(text.contains("# TYPE waf_inference_latency_seconds histogram"), "{text}");
        assert!(!text.contains("# EOF"));
    }

    #[tokio::test]
    async fn model_queues_are_exported_per_model_from_their_own_counters() {
        use scoring::model::{BatchConfig, BatchQueue, Executor, ModelError};
        struct Halves;
        impl Executor for Halves {
            fn infer(&mut self, texts: &[&str]) -> Result<Vec<f32>, ModelError> {
                Ok(vec![0.5; texts.len()])
            }
        }
        let queue = BatchQueue::spawn("metrics-test-model", Halves, BatchConfig { client_queue: 2, ..BatchConfig::default() });
        assert_eq!(queue.score_many(vec!["a".into(), "b".into()]).await.unwrap(), vec![0.5, 0.5]);
        let refused = queue.score_many((0..3).map(|i| format!("c{i}")).collect()).await;
        assert!(matches!(refused, Err(ModelError::ClientQueueFull(_))), "{refused:?}");
        let text = Metrics::new().render_text();
        let label = "model=\"metrics-test-model\"";
        assert!(text.contains("# TYPE waf_model_queue_depth gauge"), "{text}");
        assert!(text.contains(&format!("waf_model_queue_depth{{{label}}} 0\n")), "{text}");
        assert!(text.contains(&format!("waf_model_batch_size_count{{{label}}} 1\n")), "{text}");
        assert!(text.contains(&format!("waf_model_batch_size_sum{{{label}}} 2.0\n")), "{text}");
        assert!(text.contains(&format!("waf_model_batch_size_bucket{{le=\"2.0\",{label}}} 1\n")), "{text}");
        assert!(text.contains(&format!("waf_model_batch_seconds_count{{{label}}} 1\n")), "{text}");
        assert!(text.contains("# TYPE waf_model_shed_texts_total counter"), "{text}");
        assert!(text.contains(&format!("waf_model_shed_texts_total{{{label},reason=\"client-queue-full\"}} 3\n")), "{text}");
        assert!(text.contains(&format!("waf_model_shed_texts_total{{{label},reason=\"queue-full\"}} 0\n")), "{text}");
        assert!(text.contains(&format!("waf_model_failed_batches_total{{{label}}} 0\n")), "{text}");
    }

    #[test]
    fn scoring_errors_and_missing_models_are_exported_from_the_start_and_bounded() {
        let metrics = Metrics::new();
        metrics.count_model_missing("model-overloaded");
        metrics.count_model_missing("a-slug-from-a-newer-peer");
        let text = metrics.render_text();
        for why in SCORER_ERRORS {
            assert!(text.contains(&format!("waf_scoring_errors_total{{why=\"{why}\"}} 0\n")), "{why}: {text}");
        }
        assert!(text.contains("waf_model_missing_total{why=\"model-overloaded\"} 1\n"), "{text}");
        assert!(text.contains("waf_model_missing_total{why=\"model-failed\"} 1\n"), "{text}");
        assert!(text.contains("waf_model_missing_total{why=\"model-deadline\"} 0\n"), "{text}");
        assert!(!text.contains("a-slug-from-a-newer-peer"));
    }
}
