//! The inference service (spec 4.2): health and scoring endpoints over HTTP, internal only.

use std::collections::BTreeMap;
use std::sync::Arc;

use hyper::body::Incoming;
use hyper::{Method, Request, StatusCode};
use serde::{Deserialize, Serialize};

use gate::http::{json_response, read_body, ApiError, HttpResponse};
use gate::scorer::{missing_model_code, CLIENT_HEADER, DEADLINE_HEADER, DEGRADED_HEADER};
use scoring::detectors::{Backing, DETECTORS};
use scoring::models::ModelStatus;
use scoring::{Engine, ScoreContext, ScoreInput};

pub struct InferenceService {
    engine: Arc<Engine>,
    max_body_bytes: usize,
}

#[derive(Deserialize)]
struct ScoreRequest {
    request_text: String,
    /// Beyond the spec: the original request's headers, so User-Agent, Referer, Cookie... are
    /// scored too. Values may be a string or a list of strings.
    #[serde(default)]
    headers: Option<BTreeMap<String, HeaderValues>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum HeaderValues {
    One(String),
    Many(Vec<String>),
}

#[derive(Serialize)]
struct Health<'a> {
    service: &'static str,
    status: &'static str,
    sqli_model: String,
    pi_model: String,
    detectors: BTreeMap<&'static str, Backing>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    errors: Vec<&'a str>,
}

impl InferenceService {
    pub fn new(engine: Arc<Engine>, max_body_bytes: usize) -> Self {
        InferenceService { engine, max_body_bytes }
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    pub async fn handle(&self, req: Request<Incoming>) -> HttpResponse {
        match self.route(req).await {
            Ok(resp) => resp,
            Err(err) => err.into_response(),
        }
    }

    async fn route(&self, req: Request<Incoming>) -> Result<HttpResponse, ApiError> {
        let path = req.uri().path().to_string();
        if path == "/health" || path == "/ready" {
            return match *req.method() {
                Method::GET | Method::HEAD if path == "/health" => Ok(self.health()),
                Method::GET | Method::HEAD => Ok(gate::lifecycle::readiness("inference", self.models_ready())),
                _ => Err(method_not_allowed("GET", &path)),
            };
        }
        if path == "/metrics" {
            return match *req.method() {
                Method::GET | Method::HEAD => Ok(gate::metrics::model_metrics_response()),
                _ => Err(method_not_allowed("GET", &path)),
            };
        }
        let target = match path.as_str() {
            "/score" => ScoreTarget::Detector(scoring::detectors::SQLI),
            "/score/all" => ScoreTarget::All,
            other => match other.strip_prefix("/score/") {
                Some(slug) => ScoreTarget::Detector(
                    self.engine.detector(slug).map_err(|e| ApiError::UnknownDetector(format!("{e}; known: {}", known_slugs())))?,
                ),
                None => return Err(ApiError::NotFound(format!("no route for {path}"))),
            },
        };
        if req.method() != Method::POST {
            return Err(method_not_allowed("POST", &path));
        }
        let context = score_context(req.headers());
        let body = read_body(req.into_body(), self.max_body_bytes).await?;
        let parsed: ScoreRequest = serde_json::from_slice(&body).map_err(|e| match e.classify() {
            serde_json::error::Category::Data => ApiError::InvalidRequest(format!("{e}; expected {{\"request_text\": string}}")),
            _ => ApiError::MalformedJson(e.to_string()),
        })?;
        let headers = flatten_headers(parsed.headers);
        let input = ScoreInput { request_text: &parsed.request_text, headers: &headers };
        match target {
            ScoreTarget::All => {
                let result = self.engine.score_all_with(&input, &context).await;
                let mut resp = json_response(StatusCode::OK, &result);
                if let Some(err) = &result.model_error {
                    tracing::warn!(error = %err, "score/all answered without a model");
                    let value = hyper::header::HeaderValue::from_static(missing_model_code(err));
                    resp.headers_mut().insert(DEGRADED_HEADER, value);
                }
                Ok(resp)
            }
            ScoreTarget::Detector(id) => match self.engine.score_detector(id, &input).await {
                Ok(score) => Ok(json_response(StatusCode::OK, &score)),
                Err(err) => Err(ApiError::Unavailable(err.to_string())),
            },
        }
    }

    /// Every enabled model loaded (a disabled model is not waited for).
    fn models_ready(&self) -> bool {
        self.engine.model_status().iter().all(|(_, s)| matches!(s, ModelStatus::Ready | ModelStatus::Disabled))
    }

    fn health(&self) -> HttpResponse {
        let statuses = self.engine.model_status();
        let ready = statuses.iter().all(|(_, s)| matches!(s, ModelStatus::Ready | ModelStatus::Disabled));
        let path = |id| self.engine.model_path(id).map(|p| p.display().to_string()).unwrap_or_default();
        let detectors = self.engine.enabled_detectors().into_iter().collect();
        let errors = statuses
            .iter()
            .filter_map(|(_, s)| match s {
                ModelStatus::Failed(detail) => Some(detail.as_str()),
                _ => None,
            })
            .collect();
        let health = Health {
            service: "inference",
            status: if ready { "ok" } else { "loading" },
            sqli_model: path(scoring::detectors::SQLI),
            pi_model: path(scoring::detectors::PROMPT_INJECTION),
            detectors,
            errors,
        };
        json_response(StatusCode::OK, &health)
    }
}

enum ScoreTarget {
    All,
    Detector(usize),
}

/// Who the caller scores for and how long it waits (X-Rampart-Client, X-Rampart-Deadline-Ms,
/// both optional). The deadline starts when the call arrives; the engine's own deadline
/// still caps it.
fn score_context(headers: &hyper::HeaderMap) -> ScoreContext {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim).filter(|v| !v.is_empty());
    let client = text(CLIENT_HEADER).map(|c| c.chars().take(64).collect());
    let deadline = text(DEADLINE_HEADER)
        .and_then(|ms| ms.parse::<u64>().ok())
        .map(|ms| std::time::Instant::now() + std::time::Duration::from_millis(ms));
    ScoreContext::new(client, deadline)
}

fn method_not_allowed(allow: &'static str, path: &str) -> ApiError {
    ApiError::MethodNotAllowed { allow, detail: format!("{path} accepts {allow}") }
}

fn known_slugs() -> String {
    DETECTORS.iter().map(|d| d.slug).collect::<Vec<_>>().join(", ")
}

fn flatten_headers(headers: Option<BTreeMap<String, HeaderValues>>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, values) in headers.unwrap_or_default() {
        match values {
            HeaderValues::One(v) => out.push((name, v)),
            HeaderValues::Many(vs) => out.extend(vs.into_iter().map(|v| (name.clone(), v))),
        }
    }
    out
}
