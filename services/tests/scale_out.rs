//! Scale-out on loopback: two inference services, two proxies (INFERENCE_URL lists both
//! services) behind real nginx round-robin, a mixed benign/attack load from concurrent
//! clients; one inference service stops mid-run, then one proxy stops gracefully. No request
//! may fail or pass unscored, and the proxies' calls must move to the live service.

mod common;
#[path = "common/fleet.rs"]
mod fleet;

use std::net::SocketAddr;
use std::time::Duration;

use common::proxy::{metrics_text, request, sample, send, send_from, start_remote_proxy, TestProxy};
use hyper::Method;
use services::limits::ProcessLimits;
use services::run::{start_inference_with, Running};

/// Requests per phase and client; 3 phases × 4 clients × 30 = 360 requests.
const PER_PHASE: usize = 30;
const CLIENTS: usize = 4;

const ATTACKS: [&str; 3] = [
    "/search?q=1%27%20union%20select%20password%20from%20users--",
    "/comment?text=%3Cscript%3Ealert(document.cookie)%3C/script%3E",
    "/files?name=..%2F..%2F..%2Fetc%2Fpasswd",
];
const BENIGN: [&str; 3] = ["/products?id=42&sort=price", "/search?q=blue+running+shoes", "/account/orders?page=2"];

/// Which request the `n`th of a client sends: one in three is an attack.
fn pick(n: usize) -> (&'static str, bool) {
    if n % 3 == 2 {
        (ATTACKS[n / 3 % ATTACKS.len()], true)
    } else {
        (BENIGN[n % BENIGN.len()], false)
    }
}

/// Drives one phase through the balancer; returns how many benign requests were sent.
async fn phase(balancer: SocketAddr) -> usize {
    let clients = (0..CLIENTS).map(|c| {
        tokio::spawn(async move {
            let mut benign = 0;
            for n in 0..PER_PHASE {
                let (path, attack) = pick(n + c);
                let (method, body) = if n % 4 == 0 { (Method::POST, "note=hello+there") } else { (Method::GET, "") };
                let reply = send_from(balancer, None, request(method, path, body))
                    .await
                    .unwrap_or_else(|e| panic!("{path}: connection failed: {e}"));
                if attack {
                    assert_eq!(reply.status, 403, "attack {path} not blocked: {:?} {:?}", reply.headers, reply.body);
                } else {
                    assert_eq!(reply.status, 200, "benign {path} failed: {:?} {:?}", reply.headers, reply.body);
                    assert_eq!(&reply.body[..], b"upstream ok");
                    benign += 1;
                }
            }
            benign
        })
    });
    let mut benign = 0;
    for client in clients.collect::<Vec<_>>() {
        benign += client.await.expect("a client's assertions held");
    }
    benign
}

fn calls(text: &str, base: &str) -> f64 {
    sample(text, &format!("waf_inference_calls_total{{address=\"{base}\"}}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dead_inference_service_and_a_stopped_proxy_cost_no_verdict() {
    let engine = common::proxy::shared_engine();
    let inference: Vec<Running> = (0..2)
        .map(|_| start_inference_with(engine.clone(), "127.0.0.1:0".parse().unwrap(), 1 << 20, ProcessLimits::unobserved().gate).unwrap())
        .collect();
    let bases: Vec<String> = inference.iter().map(|r| format!("http://{}", r.addr)).collect();
    let list = bases.join(",");
    let upstream = common::proxy::upstream().await;
    let flags = ["--mode", "active", "--kill-response", "forbidden", "--on-scoring-error", "closed"];
    let mut proxies: Vec<TestProxy> = (0..2).map(|_| start_remote_proxy(upstream.addr, &list, Duration::from_secs(2), &flags)).collect();
    let balancer = fleet::Balancer::start(&proxies.iter().map(|p| p.addr).collect::<Vec<_>>());

    let mut benign = phase(balancer.addr).await;
    let before = metrics_text(proxies[0].addr).await;
    assert!(calls(&before, &bases[0]) > 0.0 && calls(&before, &bases[1]) > 0.0, "both services share the calls:\n{before}");

    // The first inference service goes away while the proxies hold keep-alive connections to it.
    let mut inference = inference.into_iter();
    inference.next().unwrap().stop().await;
    benign += phase(balancer.addr).await;
    let after_stop = metrics_text(proxies[0].addr).await;
    let dead_calls = calls(&after_stop, &bases[0]) - calls(&before, &bases[0]);
    let live_calls = calls(&after_stop, &bases[1]) - calls(&before, &bases[1]);
    // Each proxy tries the dead address until one call fails there (a few calls in flight
    // at once may all fail), then not again before its back-off and a /ready probe.
    assert!(dead_calls <= (2 * CLIENTS) as f64, "calls kept going to the dead service: {dead_calls}\n{after_stop}");
    assert!(live_calls >= (CLIENTS * PER_PHASE) as f64, "the live service took the calls: {live_calls}\n{after_stop}");
    assert!(sample(&after_stop, &format!("waf_inference_marked_down_total{{address=\"{}\"}}", bases[0])) >= 1.0, "{after_stop}");
    assert!(sample(&after_stop, "waf_inference_addresses_down") >= 1.0, "{after_stop}");

    // A graceful stop of the second proxy while requests are in flight on it (their bodies
    // still arriving): they finish, new connections are refused, nginx moves the load on.
    let stopping = proxies.pop().unwrap();
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(fleet::HeldRequest::start(stopping.addr).await);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let TestProxy { server, addr: stopped_addr, metrics: stopped_metrics } = stopping;
    let stop = tokio::spawn(server.running.stop());
    let third = tokio::spawn(phase(balancer.addr));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!stop.is_finished(), "the stop waits for the requests in flight");
    for request in held {
        let answer = request.finish().await;
        assert!(
            answer.starts_with("HTTP/1.1 200") && answer.ends_with("upstream ok"),
            "an in-flight request finishes during the stop: {answer}"
        );
    }
    benign += 3;
    tokio::time::timeout(Duration::from_secs(10), stop).await.expect("the stop ends once in-flight requests are done").unwrap();
    // Only once stopped: while draining, net::serve_with still holds its listener, so a new
    // connection waits in the accept backlog (and nginx's `error` retry covers it when reset).
    assert!(tokio::net::TcpStream::connect(stopped_addr).await.is_err(), "a stopped proxy refuses new connections");
    benign += third.await.expect("the third phase's assertions held");

    // Nothing unscored and nothing lost: every benign request reached the upstream once, no
    // attack did, and neither proxy recorded a scoring failure.
    assert_eq!(upstream.count(), benign, "upstream saw exactly the benign requests");
    let survivor = metrics_text(proxies[0].addr).await;
    for (name, text) in [("first proxy", survivor.clone()), ("stopped proxy", stopped_metrics.render_text())] {
        assert_eq!(sample(&text, "waf_requests_total{action=\"error\"}"), 0.0, "{name}:\n{text}");
        for line in text.lines().filter(|l| l.starts_with("waf_scoring_errors_total{")) {
            assert!(line.ends_with(" 0"), "{name} recorded a scoring failure: {line}");
        }
    }
    let health = send(proxies[0].addr, common::proxy::get("/_waf/health")).await;
    assert_eq!(health.status, 200, "{:?}", health.body);
    drop(balancer);
}

#[test]
fn a_bad_inference_list_is_a_start_up_error_naming_the_setting() {
    use clap::Parser;
    for (list, why) in [
        ("http://127.0.0.1:1,https://127.0.0.1:2", "https is not supported"),
        ("http://127.0.0.1:1,", "empty item"),
        ("http://127.0.0.1:1,http://127.0.0.1:1/", "listed twice"),
    ] {
        let argv = ["rampart", "proxy", "--target-url", "http://127.0.0.1:9", "--inference-url", list];
        let err = services::cli::Cli::try_parse_from(argv).err().unwrap_or_else(|| panic!("{list} accepted")).to_string();
        assert!(err.contains("INFERENCE_URL") && err.contains(why), "{list}: {err}");
    }
    let argv = ["rampart", "proxy", "--target-url", "http://127.0.0.1:9", "--inference-url", "http://127.0.0.1:1, http://127.0.0.1:2"];
    assert!(services::cli::Cli::try_parse_from(argv).is_ok());
}
