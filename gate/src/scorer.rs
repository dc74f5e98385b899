//! One way to ask "how suspicious is this request?", two places to ask it: the engine in this
//! process, or the inference service over HTTP (INFERENCE_URL). The proxy, auth adapter and
//! ext_proc depend only on [`Scorer`].

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Method, Request, Uri};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use serde::{Deserialize, Serialize};

use scoring::exclusion::ScoringScope;
use scoring::model::ModelError;
use scoring::{Engine, ScoreContext, ScoreInput};

pub mod offload;
pub mod pool;

pub use pool::InferenceUrls;
use pool::Pool;

/// What is scored: the spec's request_text plus the headers of interest.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ScoreQuery {
    /// Who sent the request (client IP as the front door resolved it): the model queue
    /// shares work fairly between clients. Not part of what is scored.
    #[serde(skip)]
    pub client: Option<String>,
    pub request_text: String,
    /// `(name, value)` in arrival order; credentials are never included.
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "headers_as_map")]
    pub headers: Vec<(String, String)>,
    /// Bounds the front door hit before scoring (`body-budget`, `content-encoding:<t>`,
    /// `charset:<label>`, ...): what was scored is not the whole request.
    #[serde(skip)]
    pub partial: Vec<String>,
}

impl ScoreQuery {
    /// Keeps what the engine reads of each header (`scoring::headers::forwarded_value`:
    /// scored values, Content-Type for the body parser, a Basic credential's user name);
    /// passwords and bearer tokens never leave the process.
    pub fn with_headers<'a>(request_text: String, headers: impl Iterator<Item = (&'a str, &'a [u8])>) -> Self {
        let headers = headers
            .filter_map(|(name, value)| {
                let value = String::from_utf8_lossy(value);
                scoring::headers::forwarded_value(name, &value).map(|kept| (name.to_string(), kept.into_owned()))
            })
            .collect();
        ScoreQuery { request_text, headers, ..Default::default() }
    }
}

/// Spec 4.2 rule 1: `{METHOD} {path}?{query}`, a newline, then the body. The `?` is left out
/// when there is no query; a body that is not UTF-8 is scored with replacement characters.
pub fn compose_request_text(method: &str, path: &str, query: &str, body: &[u8]) -> String {
    let mut text = String::with_capacity(method.len() + path.len() + query.len() + body.len() + 3);
    text.push_str(method);
    text.push(' ');
    text.push_str(path);
    if !query.is_empty() {
        text.push('?');
        text.push_str(query);
    }
    text.push('\n');
    text.push_str(&String::from_utf8_lossy(body));
    text
}

fn headers_as_map<S: serde::Serializer>(headers: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut grouped: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for (name, value) in headers {
        grouped.entry(name.as_str()).or_default().push(value.as_str());
    }
    let mut map = s.serialize_map(Some(grouped.len()))?;
    for (name, values) in grouped {
        map.serialize_entry(name, &values)?;
    }
    map.end()
}

/// A scorer's answer (spec 2.3 without the breakdown).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Verdict {
    pub score: f32,
    pub reason: String,
    /// Slug of the winning detector; empty when clean.
    pub detector: String,
    /// Set when a model could not give its opinion (loading, overloaded): the score covers
    /// the pattern detectors only. A [`missing_model_code`].
    pub incomplete: Option<String>,
    /// Set when some of the request was not scored in full (comma-separated slugs from the
    /// front door and the engine). Policy (WAF_ON_PARTIAL) decides what it means.
    pub partial: Option<String>,
    /// The detectors that scored, best first, with their matched fields (the audit log's
    /// `field` and `top_detectors`); empty for a clean request.
    pub evidence: Vec<scoring::verdict::Evidence>,
}

pub use crate::errors::ScoreError;

pub type ScoreFuture<'a> = Pin<Box<dyn Future<Output = Result<Verdict, ScoreError>> + Send + 'a>>;

pub trait Scorer: Send + Sync {
    fn score<'a>(&'a self, query: &'a ScoreQuery) -> ScoreFuture<'a>;
    /// Where scoring happens, for health output: a URL, or `in-process`.
    fn location(&self) -> String;
    /// False while the models are still loading (a remote service reports its own).
    fn ready(&self) -> bool {
        true
    }
    /// Enabled detectors and their backing (`model` / `regex`), as inference health lists
    /// them (spec 2.5); empty when the scorer cannot say.
    fn detectors(&self) -> DetectorsFuture<'_>;
}

pub type DetectorsFuture<'a> = Pin<Box<dyn Future<Output = BTreeMap<String, String>> + Send + 'a>>;

/// The engine in this process.
pub struct InProcessScorer {
    engine: Arc<Engine>,
    /// The URL of an inference service sharing this engine (`rampart up`), for health output.
    served_at: Option<String>,
}

impl InProcessScorer {
    pub fn new(engine: Arc<Engine>) -> Self {
        InProcessScorer { engine, served_at: None }
    }

    /// The same engine is also served over HTTP at `url`; health reports that address.
    pub fn served_at(engine: Arc<Engine>, url: String) -> Self {
        InProcessScorer { engine, served_at: Some(url) }
    }
}

/// Scores `query` with the engine in this process, under a policy scope's engine settings
/// (sensitivity, detectors off, exclusions) when one is given. No deadline is named: the
/// engine's own (WAF_SCORING_DEADLINE_MS) applies. A large query on a per-core proxy thread
/// is scored on the shared runtime instead ([`offload`]); the verdict is the same.
pub async fn score_in_process(engine: &Arc<Engine>, query: &ScoreQuery, scope: Option<Arc<ScoringScope>>) -> Verdict {
    if let Some(shared) = offload::target(query.request_text.len()) {
        let (owned_engine, owned_query, owned_scope) = (engine.clone(), query.clone(), scope.clone());
        let task = shared.spawn(async move { score_here(&owned_engine, &owned_query, owned_scope).await });
        match offload::AbortOnDrop(task).await_result().await {
            Ok(verdict) => return verdict,
            // Scoring panicked: the same unwind as inline scoring would have been.
            Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
            // The shared runtime is shutting down: score here rather than lose the verdict.
            Err(_) => {}
        }
    }
    score_here(engine, query, scope).await
}

async fn score_here(engine: &Engine, query: &ScoreQuery, scope: Option<Arc<ScoringScope>>) -> Verdict {
    let input = ScoreInput { request_text: &query.request_text, headers: &query.headers };
    let mut context = ScoreContext::new(query.client.clone(), None);
    context.scope = scope;
    let all = engine.score_all_with(&input, &context).await;
    Verdict {
        score: all.score,
        reason: all.reason,
        detector: all.detector.to_string(),
        incomplete: all.model_error.as_ref().map(|e| missing_model_code(e).to_string()),
        partial: join_partial(&query.partial, &all.partial),
        evidence: all.evidence,
    }
}

impl Scorer for InProcessScorer {
    fn score<'a>(&'a self, query: &'a ScoreQuery) -> ScoreFuture<'a> {
        Box::pin(async move { Ok(score_in_process(&self.engine, query, None).await) })
    }

    fn location(&self) -> String {
        self.served_at.clone().unwrap_or_else(|| "in-process".to_string())
    }

    fn ready(&self) -> bool {
        self.engine.ready()
    }

    fn detectors(&self) -> DetectorsFuture<'_> {
        let list = self.engine.enabled_detectors().into_iter().map(|(slug, backing)| (slug.to_string(), backing_name(backing))).collect();
        Box::pin(std::future::ready(list))
    }
}

/// The inference services at INFERENCE_URL: `POST /score/all`, pooled keep-alive connections,
/// one deadline for the whole call. Several addresses share the calls ([`pool`]); a call that
/// fails on one address for a reason of that address (unreachable, timeout, 502/503/504) is
/// tried once more on another within the same deadline.
pub struct RemoteScorer {
    client: Client<HttpConnector, Full<Bytes>>,
    pool: Arc<Pool>,
    timeout: Duration,
    /// False while the service's last answer said a model is still loading.
    ready: AtomicBool,
}

/// The client a `/score/all` call is for (the front door's resolved client IP).
pub const CLIENT_HEADER: &str = "x-rampart-client";
/// Milliseconds the caller will wait for a `/score/all` answer.
pub const DEADLINE_HEADER: &str = "x-rampart-deadline-ms";
/// Header added to a `/score/all` answer that lacks a model's opinion (still loading, queue
/// full): the pattern verdict stands, and the caller may treat it as degraded. Its value is
/// a [`missing_model_code`].
pub const DEGRADED_HEADER: &str = "x-rampart-degraded";

/// Why a verdict lacks a model, as one slug for both scorers (the in-process engine's error,
/// the inference service's degraded header): `model-overloaded` and `model-deadline` are load
/// shed by the model queue.
pub fn missing_model_code(err: &ModelError) -> &'static str {
    match err {
        ModelError::Loading(_) => "model-loading",
        ModelError::QueueFull(_) | ModelError::ClientQueueFull(_) => "model-overloaded",
        ModelError::DeadlineExceeded(_) => "model-deadline",
        _ => "model-failed",
    }
}

/// Every [`missing_model_code`], for metrics exported from the start.
pub const MISSING_MODEL_CODES: [&str; 4] = ["model-loading", "model-overloaded", "model-deadline", "model-failed"];

/// An inference answer is a few hundred bytes; anything far larger is not one.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

#[derive(Deserialize)]
struct ScoreAllAnswer {
    score: f32,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    detector: String,
    /// The engine's partial slugs, comma-separated (absent when everything was scored).
    #[serde(default)]
    partial: Option<String>,
    /// What each detector matched and where (absent for a clean request).
    #[serde(default)]
    evidence: Vec<scoring::verdict::Evidence>,
}

/// Tries per call: the first address, then one other.
const ATTEMPTS: usize = 2;

impl RemoteScorer {
    pub fn new(urls: &InferenceUrls, timeout: Duration) -> Self {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(timeout));
        let client =
            Client::builder(TokioExecutor::new()).pool_idle_timeout(Duration::from_secs(60)).pool_max_idle_per_host(256).build(connector);
        RemoteScorer { client, pool: Arc::new(Pool::new(urls)), timeout, ready: AtomicBool::new(true) }
    }

    /// Each try but the last gets two thirds of the time left, so a hung address leaves
    /// time to ask another.
    async fn score_on_pool(&self, query: &ScoreQuery) -> Result<Verdict, ScoreError> {
        self.start_due_probes();
        let deadline = Instant::now() + self.timeout;
        let order = self.pool.candidates(ATTEMPTS);
        let mut last = ScoreError::Timeout(self.timeout);
        for (attempt, &index) in order.iter().enumerate() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            let budget = if attempt + 1 < order.len() { left * 2 / 3 } else { left };
            self.pool.count_call(index);
            let outcome = match tokio::time::timeout(budget, self.call(index, query, budget)).await {
                Ok(result) => result,
                Err(_) => Err(ScoreError::Timeout(self.timeout)),
            };
            match outcome {
                Ok(verdict) => {
                    self.pool.mark_up(index);
                    return Ok(verdict);
                }
                Err(err) if address_failed(&err) => {
                    self.pool.mark_down(index, Instant::now());
                    last = err;
                }
                Err(err) => return Err(err),
            }
        }
        Err(last)
    }

    /// Starts a `GET /ready` probe for each down address whose back-off has passed.
    fn start_due_probes(&self) {
        for index in self.pool.claim_probes(Instant::now()) {
            let (pool, client, timeout) = (self.pool.clone(), self.client.clone(), self.timeout);
            tokio::spawn(async move {
                let uri = pool.member(index).ready.clone();
                let ready = matches!(tokio::time::timeout(timeout, client.get(uri)).await, Ok(Ok(resp)) if resp.status().is_success());
                pool.probe_done(index, ready, Instant::now());
            });
        }
    }

    async fn call(&self, index: usize, query: &ScoreQuery, budget: Duration) -> Result<Verdict, ScoreError> {
        let body = serde_json::to_vec(query).map_err(ScoreError::Encode)?;
        let mut req = Request::new(Full::new(Bytes::from(body)));
        *req.method_mut() = Method::POST;
        *req.uri_mut() = self.pool.member(index).score_all.clone();
        req.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        // The service shares its models fairly by client and stops model work when this
        // call would have timed out anyway.
        if let Some(client) = query.client.as_deref().and_then(|c| HeaderValue::from_str(c).ok()) {
            req.headers_mut().insert(CLIENT_HEADER, client);
        }
        req.headers_mut().insert(DEADLINE_HEADER, HeaderValue::from(budget.as_millis() as u64));
        let resp = self.client.request(req).await.map_err(|e| ScoreError::Unreachable(Box::new(e)))?;
        let status = resp.status();
        let incomplete = resp.headers().get(DEGRADED_HEADER).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        self.ready.store(incomplete.as_deref() != Some("model-loading"), Ordering::Relaxed);
        let bytes = Limited::new(resp.into_body(), MAX_ANSWER_BYTES).collect().await.map_err(ScoreError::AnswerUnreadable)?.to_bytes();
        if !status.is_success() {
            let detail = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
            return Err(ScoreError::BadStatus { status: status.as_u16(), detail });
        }
        let answer: ScoreAllAnswer = serde_json::from_slice(&bytes).map_err(ScoreError::AnswerNotJson)?;
        if !(0.0..=1.0).contains(&answer.score) {
            return Err(ScoreError::ScoreOutOfRange(answer.score));
        }
        let engine_partial: Vec<String> = answer.partial.iter().flat_map(|p| p.split(',')).map(str::to_string).collect();
        Ok(Verdict {
            score: answer.score,
            reason: answer.reason,
            detector: answer.detector,
            incomplete,
            partial: join_partial(&query.partial, &engine_partial),
            evidence: answer.evidence,
        })
    }
}

/// A failure of the address rather than of the request: another address may answer.
fn address_failed(err: &ScoreError) -> bool {
    match err {
        ScoreError::Unreachable(_) | ScoreError::Timeout(_) | ScoreError::AnswerUnreadable(_) => true,
        ScoreError::BadStatus { status, .. } => matches!(status, 502..=504),
        _ => false,
    }
}

impl Scorer for RemoteScorer {
    fn score<'a>(&'a self, query: &'a ScoreQuery) -> ScoreFuture<'a> {
        Box::pin(self.score_on_pool(query))
    }

    fn location(&self) -> String {
        (0..self.pool.len()).map(|i| self.pool.member(i).base.as_str()).collect::<Vec<_>>().join(",")
    }

    fn ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }

    fn detectors(&self) -> DetectorsFuture<'_> {
        Box::pin(async move {
            let Some(&index) = self.pool.candidates(1).first() else { return BTreeMap::new() };
            let Ok(uri) = format!("{}/health", self.pool.member(index).base).parse::<Uri>() else { return BTreeMap::new() };
            let fetch = async {
                let resp = self.client.get(uri).await.ok()?;
                let bytes = Limited::new(resp.into_body(), MAX_ANSWER_BYTES).collect().await.ok()?.to_bytes();
                let health: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
                let detectors = health.get("detectors")?.as_object()?;
                Some(detectors.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))).collect())
            };
            tokio::time::timeout(self.timeout, fetch).await.ok().flatten().unwrap_or_default()
        })
    }
}

/// The front door's and the engine's partial slugs as one header-safe list; None when both
/// are empty.
pub fn join_partial(front_door: &[String], engine: &[String]) -> Option<String> {
    let all: Vec<&str> = front_door.iter().chain(engine).map(String::as_str).collect();
    (!all.is_empty()).then(|| all.join(","))
}

fn backing_name(backing: scoring::detectors::Backing) -> String {
    serde_json::to_value(backing).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_text_follows_the_spec() {
        assert_eq!(compose_request_text("POST", "/login", "next=%2Fhome", b"user=o'brien"), "POST /login?next=%2Fhome\nuser=o'brien");
        assert_eq!(compose_request_text("GET", "/", "", b""), "GET /\n");
    }

    /// A per-core thread hands a large query to the shared runtime: its first poll comes
    /// back pending (the engine has no models, so inline scoring would finish in that poll,
    /// and the shared worker is held busy until then), and the verdict is the one inline
    /// scoring gives.
    #[test]
    fn a_large_query_on_a_core_thread_is_scored_on_the_shared_runtime_with_the_same_verdict() {
        let engine = Arc::new(Engine::new(scoring::EngineConfig { models_dir: None, ..Default::default() }).expect("engine starts"));
        let filler = "note=the+parcel+arrives+on+tuesday+morning&".repeat(offload::OFFLOAD_MIN_BYTES / 40);
        let form = vec![("content-type".to_string(), "application/x-www-form-urlencoded".to_string())];
        let query = |body: &str| ScoreQuery {
            request_text: compose_request_text("POST", "/orders", "", body.as_bytes()),
            headers: form.clone(),
            ..Default::default()
        };
        let (clean, attack) = (query(&filler), query(&format!("{filler}q=<script>alert(document.cookie)</script>")));
        let shared = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let core = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let inline: Vec<Verdict> = [&clean, &attack].iter().map(|q| core.block_on(score_in_process(&engine, q, None))).collect();
        assert!(inline[1].score > inline[0].score && inline[1].detector == "xss", "the attack is seen: {:?}", inline[1]);
        offload::offload_to(shared.handle().clone());
        for (q, expected) in [&clean, &attack].into_iter().zip(&inline) {
            // The shared runtime's one worker is held until the first poll is seen, so the
            // handed-off task cannot finish first, however the threads are scheduled.
            let (started, wait_started) = std::sync::mpsc::channel::<()>();
            let (release, held) = std::sync::mpsc::channel::<()>();
            shared.spawn(async move {
                let _ = started.send(());
                let _ = held.recv();
            });
            wait_started.recv().unwrap();
            let offloaded = core.block_on(async {
                let mut scoring = std::pin::pin!(score_in_process(&engine, q, None));
                let first_poll_ready = tokio::select! { biased; _ = &mut scoring => true, _ = std::future::ready(()) => false };
                assert!(!first_poll_ready, "a {}-byte query was scored inline", q.request_text.len());
                release.send(()).unwrap();
                scoring.await
            });
            assert_eq!(&offloaded, expected);
        }
    }
}
