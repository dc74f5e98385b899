//! The ext_proc service driven over real gRPC the way Envoy drives it (the real-Envoy tests
//! are in envoy_extproc.rs).

mod common;

use clap::Parser;
use proto::processing_request::Request as Phase;
use proto::processing_response::Response as Answer;
use proto::{ExternalProcessorClient, HeaderMap, HeaderValue, HttpBody, HttpHeaders, ProcessingRequest, ProcessingResponse};
use services::cli::{Cli, Command};
use services::config::ExtprocArgs;
use services::run::{start_extproc, ExtprocServer};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

fn start(inference: &str, extra: &[&str]) -> ExtprocServer {
    let mut argv = vec!["rampart", "extproc", "--extproc-addr", "127.0.0.1:0", "--extproc-http-addr", "127.0.0.1:0", "--audit-log", "off"];
    argv.extend(["--inference-url", inference]);
    if !extra.contains(&"--inference-timeout-ms") {
        argv.extend(["--inference-timeout-ms", "2000"]);
    }
    argv.extend(extra);
    let args: ExtprocArgs = match Cli::parse_from(argv).command {
        Command::Extproc(args) => args,
        _ => unreachable!(),
    };
    start_extproc(&args).expect("ext_proc starts")
}

fn headers(pairs: &[(&str, &str)], end_of_stream: bool) -> ProcessingRequest {
    let headers =
        pairs.iter().map(|(k, v)| HeaderValue { key: k.to_string(), raw_value: v.as_bytes().to_vec(), ..Default::default() }).collect();
    ProcessingRequest {
        request: Some(Phase::RequestHeaders(HttpHeaders { headers: Some(HeaderMap { headers }), end_of_stream, ..Default::default() })),
        ..Default::default()
    }
}

fn body(bytes: &str) -> ProcessingRequest {
    ProcessingRequest {
        request: Some(Phase::RequestBody(HttpBody { body: bytes.as_bytes().to_vec(), end_of_stream: true, ..Default::default() })),
        ..Default::default()
    }
}

/// One stream: sends `messages` one at a time, returning each answer (or the error status).
async fn exchange(server: &ExtprocServer, messages: Vec<ProcessingRequest>) -> Vec<Result<ProcessingResponse, tonic::Status>> {
    let mut client = ExternalProcessorClient::connect(format!("http://{}", server.grpc.addr)).await.unwrap();
    let (tx, rx) = mpsc::channel(4);
    let mut answers = client.process(ReceiverStream::new(rx)).await.unwrap().into_inner();
    let mut out = Vec::new();
    for message in messages {
        tx.send(message).await.unwrap();
        match answers.message().await {
            Ok(Some(answer)) => out.push(Ok(answer)),
            Ok(None) => break,
            Err(status) => {
                out.push(Err(status));
                break;
            }
        }
    }
    out
}

fn set_headers(answer: &Answer) -> Vec<(String, String)> {
    let common = match answer {
        Answer::RequestHeaders(h) => h.response.as_ref(),
        Answer::RequestBody(b) => b.response.as_ref(),
        _ => None,
    };
    common
        .and_then(|c| c.header_mutation.as_ref())
        .map(|m| {
            m.set_headers
                .iter()
                .filter_map(|o| o.header.as_ref())
                .map(|h| (h.key.clone(), String::from_utf8_lossy(&h.raw_value).into_owned()))
                .collect()
        })
        .unwrap_or_default()
}

fn header<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

const ATTACK_PATH: &str = "/search?q=1%27%20union%20select%20password%20from%20users--";

#[tokio::test]
async fn headers_only_requests_are_scored_at_once() {
    let server = start(common::shared_base(), &["--mode", "active"]);
    let answers = exchange(&server, vec![headers(&[(":method", "GET"), (":path", ATTACK_PATH), ("x-waf-score", "0.0")], true)]).await;
    match answers[0].as_ref().unwrap().response.as_ref().unwrap() {
        Answer::ImmediateResponse(block) => {
            assert_eq!(block.status.as_ref().unwrap().code, 403);
            let body: serde_json::Value = serde_json::from_slice(&block.body).unwrap();
            assert_eq!(body["error"], "forbidden");
            assert_eq!(body.as_object().unwrap().len(), 2);
        }
        other => panic!("expected a block, got {other:?}"),
    }

    let answers = exchange(
        &server,
        vec![headers(&[(":method", "GET"), (":path", "/search?q=O%27Brien"), ("x-waf-would-have-killed", "false")], true)],
    )
    .await;
    let answer = answers[0].as_ref().unwrap().response.clone().unwrap();
    let set = set_headers(&answer);
    assert_eq!(header(&set, "x-waf-mode"), Some("active"));
    assert!(header(&set, "x-waf-score").unwrap().parse::<f32>().unwrap() <= 0.5);
    let Answer::RequestHeaders(h) = &answer else { panic!("{answer:?}") };
    let removed = &h.response.as_ref().unwrap().header_mutation.as_ref().unwrap().remove_headers;
    assert_eq!(removed, &["x-waf-would-have-killed"], "a client's forged verdict header is removed");
}

#[tokio::test]
async fn bodies_are_scored_with_method_and_path_in_shadow_mode_too() {
    let server = start(common::shared_base(), &["--mode", "shadow"]);
    let login = [(":method", "POST"), (":path", "/login"), ("content-type", "application/x-www-form-urlencoded")];
    let answers = exchange(&server, vec![headers(&login, false), body("user=admin%27%20OR%20%271%27%3D%271%27--&pw=x")]).await;
    let first = answers[0].as_ref().unwrap().response.clone().unwrap();
    assert!(matches!(&first, Answer::RequestHeaders(h) if h.response.is_none()), "CONTINUE while the body comes: {first:?}");
    let second = answers[1].as_ref().unwrap().response.clone().unwrap();
    assert!(matches!(second, Answer::RequestBody(_)), "shadow mode passes: {second:?}");
    let set = set_headers(&second);
    assert_eq!(header(&set, "x-waf-would-have-killed"), Some("true"));
    assert_eq!(header(&set, "x-waf-mode"), Some("shadow"));
    assert!(header(&set, "x-waf-reason").unwrap().starts_with("sqli:"));
}

#[tokio::test]
async fn scoring_failure_is_a_grpc_error_and_the_http_port_answers() {
    let server = start("http://127.0.0.1:9", &["--mode", "active", "--inference-timeout-ms", "300"]);
    let answers = exchange(&server, vec![headers(&[(":method", "GET"), (":path", ATTACK_PATH)], true)]).await;
    let status = answers[0].as_ref().unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unavailable);

    let base = format!("http://{}", server.http.addr);
    let (status, health, _) = common::get(&base, "/_waf/health").await;
    assert_eq!(status, 200);
    assert_eq!(health, serde_json::json!({ "service": "extproc", "status": "ok", "mode": "active" }));
    let (status, mode, _) = common::get(&base, "/api/mode").await;
    assert_eq!((status, mode["mode"].as_str()), (200, Some("active")));
    let (status, body, _) = common::request(&base, hyper::Method::POST, "/api/mode", br#"{"mode":"shadow"}"#.to_vec()).await;
    assert_eq!(status, 405);
    assert_eq!(body["error"], "method_not_allowed");
    let text = common::proxy::metrics_text(server.http.addr).await;
    assert_eq!(common::proxy::sample(&text, "waf_requests_total{action=\"error\"}"), 1.0);
}

#[tokio::test]
async fn a_message_without_a_phase_is_envoys_error_not_a_scoring_failure() {
    // Scoring would fail too (nothing listens on the discard port): the answer must still
    // name the message, not the scorer.
    let server = start("http://127.0.0.1:9", &["--mode", "active", "--inference-timeout-ms", "300"]);
    let answers = exchange(&server, vec![ProcessingRequest::default()]).await;
    let status = answers[0].as_ref().unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("without a phase"), "{status:?}");
    let text = common::proxy::metrics_text(server.http.addr).await;
    assert_eq!(common::proxy::sample(&text, "waf_scoring_errors_total{why=\"scorer-bad-answer\"}"), 0.0);
    assert_eq!(common::proxy::sample(&text, "waf_requests_total{action=\"error\"}"), 0.0);
}
