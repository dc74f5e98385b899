//! A verdict without a model's opinion, at every front door, over real sockets: the inference
//! service's models failed to load (`--models-dir` pointing nowhere), so any request with a
//! natural-language field lacks the prompt-injection model's verdict. In active mode that is
//! refused by default (WAF_ON_MODEL_MISSING=closed): proxy 503, auth adapter 403 with
//! `scoring_unavailable`, ext_proc an immediate 503 (not a gRPC error that Envoy's
//! failure_mode_allow would turn into a pass). `open` forwards it marked `scoring-incomplete`.

mod common;

use std::time::{Duration, Instant};

use clap::Parser;
use common::proxy::{get, request, send, start_remote_proxy, upstream};
use hyper::Method;
use proto::processing_request::Request as Phase;
use proto::processing_response::Response as Answer;
use proto::{ExternalProcessorClient, HeaderMap, HeaderValue, HttpHeaders, ProcessingRequest};
use services::cli::{Cli, Command};
use services::run::{start_auth, start_extproc, start_inference, Running};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

/// Prose in the query string: the prompt-injection model must give its opinion.
const PROSE: &str = "/ask?q=Could+you+please+tell+me+more+about+the+opening+hours+of+the+library+this+weekend";

/// An inference service whose models failed to load; returns once `/health` says so.
async fn inference_without_models() -> (Running, String) {
    let running = start_inference(&common::inference_args(&["--models-dir", &common::empty_models_dir()])).expect("starts");
    let base = format!("http://{}", running.addr);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, health, _) = common::get(&base, "/health").await;
        if health.get("errors").is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "models never reported failed: {health}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    (running, base)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_refuses_a_request_missing_a_model_verdict_unless_told_to_pass_it() {
    let (_inference, base) = inference_without_models().await;
    let app = upstream().await;
    let closed = start_remote_proxy(app.addr, &base, Duration::from_secs(2), &["--mode", "active"]);
    let reply = send(closed.addr, get(PROSE)).await;
    assert_eq!(reply.status, 503, "{:?}", reply.body);
    assert_eq!(reply.json()["error"], "scoring_unavailable");
    assert_eq!(app.count(), 0, "the unscored request reached the upstream");
    let events = send(closed.addr, request(Method::GET, "/api/events/recent", "")).await.json();
    assert_eq!(events[0]["reason"], "model-missing", "{events}");
    assert_eq!(events[0]["action"], "error");

    let open = start_remote_proxy(app.addr, &base, Duration::from_secs(2), &["--mode", "active", "--on-model-missing", "open"]);
    let reply = send(open.addr, get(PROSE)).await;
    assert_eq!(reply.status, 200);
    assert_eq!(app.last().headers["x-waf-error"], "scoring-incomplete");

    // Shadow mode never refuses: it forwards and says so.
    let shadow = start_remote_proxy(app.addr, &base, Duration::from_secs(2), &["--mode", "shadow"]);
    assert_eq!(send(shadow.addr, get(PROSE)).await.status, 200);
    assert_eq!(app.last().headers["x-waf-error"], "scoring-incomplete");
}

fn auth_check(uri: &str) -> hyper::Request<http_body_util::Full<bytes::Bytes>> {
    hyper::Request::builder()
        .method(Method::GET)
        .uri("/_waf/check")
        .header("host", "shop.example")
        .header("x-original-method", "GET")
        .header("x-original-uri", uri)
        .body(http_body_util::Full::new(bytes::Bytes::new()))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_adapter_answers_403_scoring_unavailable_when_a_model_verdict_is_missing() {
    let (_inference, base) = inference_without_models().await;
    let start = |extra: &[&str]| {
        let mut argv = vec!["rampart", "auth", "--auth-addr", "127.0.0.1:0", "--auth-metrics-addr", "127.0.0.1:0", "--audit-log", "off"];
        argv.extend(["--inference-url", base.as_str(), "--mode", "active"]);
        argv.extend(extra);
        match Cli::parse_from(argv).command {
            Command::Auth(args) => start_auth(&args).expect("auth adapter starts"),
            _ => unreachable!(),
        }
    };
    let closed = start(&[]);
    let reply = send(closed.running.addr, auth_check(PROSE)).await;
    assert_eq!(reply.status, 403, "nginx must not let it through");
    assert_eq!(reply.json()["error"], "scoring_unavailable");
    assert_eq!(reply.headers["x-waf-error"], "scoring-incomplete");

    let open = start(&["--on-model-missing", "open"]);
    let reply = send(open.running.addr, auth_check(PROSE)).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.headers["x-waf-error"], "scoring-incomplete");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ext_proc_ends_a_request_missing_a_model_verdict_with_an_immediate_503() {
    let (_inference, base) = inference_without_models().await;
    let argv = [
        "rampart",
        "extproc",
        "--extproc-addr",
        "127.0.0.1:0",
        "--extproc-http-addr",
        "127.0.0.1:0",
        "--audit-log",
        "off",
        "--inference-url",
        base.as_str(),
        "--mode",
        "active",
    ];
    let server = match Cli::parse_from(argv).command {
        Command::Extproc(args) => start_extproc(&args).expect("ext_proc starts"),
        _ => unreachable!(),
    };
    let mut client = ExternalProcessorClient::connect(format!("http://{}", server.grpc.addr)).await.unwrap();
    let (tx, rx) = mpsc::channel(4);
    let mut answers = client.process(ReceiverStream::new(rx)).await.unwrap().into_inner();
    let headers = [(":method", "GET"), (":path", PROSE), (":authority", "shop.example")]
        .iter()
        .map(|(k, v)| HeaderValue { key: k.to_string(), raw_value: v.as_bytes().to_vec(), ..Default::default() })
        .collect();
    let message = ProcessingRequest {
        request: Some(Phase::RequestHeaders(HttpHeaders {
            headers: Some(HeaderMap { headers }),
            end_of_stream: true,
            ..Default::default()
        })),
        ..Default::default()
    };
    tx.send(message).await.unwrap();
    let answer = answers.message().await.expect("an answer, not a gRPC error").expect("one message");
    match answer.response {
        Some(Answer::ImmediateResponse(immediate)) => {
            assert_eq!(immediate.status.map(|s| s.code), Some(503));
            let body: serde_json::Value = serde_json::from_slice(&immediate.body).unwrap();
            assert_eq!(body["error"], "scoring_unavailable");
        }
        other => panic!("expected an immediate 503, got {other:?}"),
    }
}
