//! The ext_proc service (spec 4.4, 4.5): Envoy's external processing filter streams each
//! request's phases here over gRPC; [`exchange::Exchange`] answers them and the gate judges.
//! Standalone, the mode is fixed at start-up (spec 3); under `rampart up` it is the process's
//! one mode. A scoring failure that the fail mode lets through ends the stream with a gRPC
//! error so the filter's `failure_mode_allow` decides (deploy/envoy/envoy.yaml sets it:
//! fail-open); WAF_ON_SCORING_ERROR=closed answers an immediate 503 instead.

pub mod exchange;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
pub mod management;

use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;

use proto::{ExternalProcessor, ProcessingRequest, ProcessingResponse};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};
use tracing::Instrument;

use exchange::{Exchange, RequestLine};
use gate::adapter_door::AdapterDoor;
use gate::errors::{error_chain, ExchangeError, ToWire};
use gate::gate::{Component, RequestSummary, Ruling, WafMode};
use gate::metrics::Metrics;
use gate::policy::body::Oversize;
use gate::request_id::{request_span, RequestId};
use gate::scorer::{ScoreError, ScoreQuery};

pub struct ExtprocService {
    door: AdapterDoor,
}

/// Envoy sends one message per phase and waits for each answer: a few in flight at most.
const STREAM_BUFFER: usize = 4;

impl ExtprocService {
    pub fn new(door: AdapterDoor) -> Self {
        ExtprocService { door }
    }

    pub fn mode(&self) -> WafMode {
        self.door.gate.mode()
    }

    pub fn metrics(&self) -> &Arc<Metrics> {
        self.door.gate.metrics()
    }
}

/// One stream's view of the service: the verdict logic plus who Envoy is.
struct StreamJudge {
    service: Arc<ExtprocService>,
    envoy: IpAddr,
    /// One stream is one request.
    id: RequestId,
}

impl exchange::Judge for StreamJudge {
    async fn judge(&self, query: ScoreQuery, request: &RequestLine, body_truncated: bool) -> Result<Ruling, ScoreError> {
        let (path, query_string) = request.path_and_query();
        let headers: hyper::HeaderMap = request
            .headers
            .iter()
            .filter_map(|(n, v)| Some((hyper::header::HeaderName::from_bytes(n.as_bytes()).ok()?, v.parse().ok()?)))
            .collect();
        let host = request.host();
        let scoped = self.service.door.gate.scope(host, &request.method, path);
        let mut summary = RequestSummary {
            request_id: &self.id,
            component: Component::Extproc,
            method: &request.method,
            path,
            query: query_string,
            client: self.service.door.client(&headers, self.envoy),
            scored: query,
            preset: None,
            demo: None,
        };
        // Envoy buffers the body (max_request_bytes) before we see it; the scope decides what a
        // body over its limit does, with no flag of its own: score the prefix.
        scoped.resolved.body.on_oversize(Oversize::ScorePrefix, body_truncated, &mut summary.scored, &mut summary.preset);
        self.service.door.gate.inspect_scoped(summary, host, scoped).await.failed_open()
    }

    fn body_limit(&self, request: &RequestLine, door: usize) -> usize {
        let (path, _) = request.path_and_query();
        self.service.door.gate.scope(request.host(), &request.method, path).resolved.body.limit_or(door)
    }
}

/// The gRPC face: `ExternalProcessor/Process`.
#[derive(Clone)]
pub struct Processor(pub Arc<ExtprocService>);

type AnswerStream = Pin<Box<dyn tokio_stream::Stream<Item = Result<ProcessingResponse, Status>> + Send>>;

#[tonic::async_trait]
impl ExternalProcessor for Processor {
    type ProcessStream = AnswerStream;

    async fn process(&self, request: Request<Streaming<ProcessingRequest>>) -> Result<Response<AnswerStream>, Status> {
        let envoy = request.remote_addr().unwrap_or(SocketAddr::from(([127, 0, 0, 1], 0)));
        let mut inbound = request.into_inner();
        let judge = StreamJudge { service: self.0.clone(), envoy: envoy.ip(), id: RequestId::next() };
        let span = request_span(&judge.id, Component::Extproc.as_str(), envoy);
        let (tx, rx) = mpsc::channel(STREAM_BUFFER);
        tokio::spawn(async move {
            let mut exchange = Exchange::new(judge.service.door.body_limit).budgeted(&judge.service.door.budget);
            loop {
                let answer = match inbound.message().await {
                    Ok(Some(message)) => exchange.answer(message, &judge).await,
                    Ok(None) => break,
                    // An unreadable message must end the stream with an error, never an OK
                    // close: Envoy continues an OK-closed request unscored even with
                    // failure_mode_allow off.
                    Err(status) => Err(ExchangeError::Unreadable(status)),
                };
                let answer = answer.map_err(|err| {
                    let side = err.wire().side.as_str();
                    tracing::warn!(error = %error_chain(&err), side, "ending the ext_proc stream with an error (Envoy's failure_mode_allow decides)");
                    err.grpc_status()
                });
                let failed = answer.is_err();
                if tx.send(answer).await.is_err() || failed {
                    break;
                }
            }
        }
        .instrument(span));
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }
}
