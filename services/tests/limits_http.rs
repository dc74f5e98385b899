//! Connection, stream, header-timeout and body-budget limits over real sockets (issue 11
//! finding 7). A recording scorer stands in for the engine: these tests are about what is
//! admitted and buffered, not about detection. Every wait is bounded; 127.0.0.x only.

mod common;

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::proxy::*;
use hyper::Method;
use services::metrics::Metrics;
use services::proxy::ProxyParts;
use services::run::{start_proxy_with, ProxyServer};
use services::scorer::{DetectorsFuture, ScoreFuture, ScoreQuery, Scorer, Verdict};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// What one scored request looked like to the scorer.
#[derive(Clone, Debug)]
struct Scored {
    request_text_len: usize,
    partial: Vec<String>,
}

/// Scores everything 0 and remembers what it was asked.
#[derive(Default)]
struct RecordingScorer {
    seen: Mutex<Vec<Scored>>,
}

impl Scorer for RecordingScorer {
    fn score<'a>(&'a self, query: &'a ScoreQuery) -> ScoreFuture<'a> {
        self.seen.lock().unwrap().push(Scored { request_text_len: query.request_text.len(), partial: query.partial.clone() });
        Box::pin(async { Ok(Verdict { score: 0.0, ..Default::default() }) })
    }
    fn location(&self) -> String {
        "recording".into()
    }
    fn detectors(&self) -> DetectorsFuture<'_> {
        Box::pin(async { Default::default() })
    }
}

struct Limited {
    server: ProxyServer,
    addr: SocketAddr,
    metrics: Arc<Metrics>,
    scorer: Arc<RecordingScorer>,
}

fn start(target: SocketAddr, extra: &[&str]) -> Limited {
    let options = proxy_options(target, extra);
    let metrics = Arc::new(Metrics::new());
    let scorer = Arc::new(RecordingScorer::default());
    let parts = ProxyParts {
        target: format!("http://{target}").parse().unwrap(),
        threshold: 0.5,
        scorer: scorer.clone(),
        metrics: metrics.clone(),
        audit: None,
    };
    let server = start_proxy_with(&options, parts).expect("proxy starts");
    let addr = server.running.addr;
    Limited { server, addr, metrics, scorer }
}

fn ip(last: u8) -> IpAddr {
    IpAddr::from([127, 0, 0, last])
}

/// Polls `done` every 10 ms for at most 10 s (a bound against hangs, not a timing claim).
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..1000 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("not reached within 10 s: {what}");
}

/// Everything the peer sends until it closes; `None` if it is still open after 10 s.
async fn read_until_closed(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut all = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => all.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    read.ok().map(|()| all)
}

fn limit_refusals(metrics: &Metrics, limit: &str) -> f64 {
    sample(&metrics.render_text(), &format!("waf_limit_refusals_total{{limit=\"{limit}\"}}"))
}

const HEAD_GET: &[u8] = b"GET /page HTTP/1.1\r\nhost: shop.example\r\n\r\n";

#[tokio::test]
async fn a_client_over_its_connection_cap_is_refused_and_others_are_not() {
    let app = upstream().await;
    let proxy = start(app.addr, &["--max-connections-per-client", "2"]);
    let held = [connect(proxy.addr, Some(ip(1))).await.unwrap(), connect(proxy.addr, Some(ip(1))).await.unwrap()];
    eventually("two connections admitted", || proxy.server.limits.gate.open_connections() == 2).await;

    let mut third = connect(proxy.addr, Some(ip(1))).await.unwrap();
    let _ = third.write_all(HEAD_GET).await;
    let answer = read_until_closed(&mut third).await.expect("the refused connection is closed at once");
    let text = String::from_utf8_lossy(&answer);
    assert!(answer.is_empty() || text.starts_with("HTTP/1.1 503"), "{text}");
    assert!(text.is_empty() || text.contains("too_many_connections"), "{text}");
    assert_eq!(app.count(), 0, "nothing from the refused connection reached the upstream");
    assert_eq!(limit_refusals(&proxy.metrics, "connections-per-client"), 1.0);

    // Another client is unaffected, and the slot comes back when a held connection ends.
    assert_eq!(send_from(proxy.addr, Some(ip(2)), get("/page")).await.unwrap().status, 200);
    drop(held);
    eventually("held connections released", || proxy.server.limits.gate.open_connections() == 0).await;
    assert_eq!(send_from(proxy.addr, Some(ip(1)), get("/page")).await.unwrap().status, 200);
}

#[tokio::test]
async fn the_global_connection_cap_counts_every_client() {
    let app = upstream().await;
    let proxy = start(app.addr, &["--max-connections", "3", "--max-connections-per-client", "100"]);
    let _held = [
        connect(proxy.addr, Some(ip(11))).await.unwrap(),
        connect(proxy.addr, Some(ip(12))).await.unwrap(),
        connect(proxy.addr, Some(ip(13))).await.unwrap(),
    ];
    eventually("three connections admitted", || proxy.server.limits.gate.open_connections() == 3).await;
    let refused = send_from(proxy.addr, Some(ip(14)), get("/page")).await;
    match refused {
        Ok(reply) => assert_eq!(reply.status, 503, "{:?}", reply.body),
        Err(closed) => assert!(!closed.is_empty()),
    }
    assert_eq!(app.count(), 0);
    assert_eq!(limit_refusals(&proxy.metrics, "connections"), 1.0);
}

#[tokio::test]
async fn connections_without_complete_headers_are_closed_on_http1_and_http2() {
    let app = upstream().await;
    let proxy = start(app.addr, &["--header-read-timeout-ms", "300"]);

    // HTTP/1: headers started, never finished.
    let mut h1 = connect(proxy.addr, None).await.unwrap();
    h1.write_all(b"GET /page HTTP/1.1\r\nhost: shop.example\r\nx-slow: ").await.unwrap();
    assert!(read_until_closed(&mut h1).await.is_some(), "HTTP/1 slow headers: still open after 10 s");

    // Nothing sent at all (protocol not even known yet).
    let mut silent = connect(proxy.addr, None).await.unwrap();
    assert!(read_until_closed(&mut silent).await.is_some(), "silent connection: still open after 10 s");

    // HTTP/2: preface and SETTINGS, then no HEADERS; the client answers nothing (pings alone
    // would keep an answering client alive forever before).
    let mut h2 = connect(proxy.addr, None).await.unwrap();
    h2.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00").await.unwrap();
    assert!(read_until_closed(&mut h2).await.is_some(), "HTTP/2 without HEADERS: still open after 10 s");

    assert!(limit_refusals(&proxy.metrics, "header-timeout") >= 2.0);
    assert_eq!(app.count(), 0);
    // A prompt client is served as before.
    assert_eq!(send(proxy.addr, get("/page")).await.status, 200);
}

/// The server's SETTINGS_MAX_CONCURRENT_STREAMS as announced in its first SETTINGS frame.
async fn announced_max_streams(addr: SocketAddr) -> Option<u32> {
    let mut stream = connect(addr, None).await.unwrap();
    stream.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00").await.unwrap();
    let mut header = [0u8; 9];
    tokio::time::timeout(Duration::from_secs(10), stream.read_exact(&mut header)).await.unwrap().unwrap();
    assert_eq!(header[3], 0x4, "the server's first frame is SETTINGS");
    let len = u32::from_be_bytes([0, header[0], header[1], header[2]]) as usize;
    let mut payload = vec![0u8; len];
    stream.read_exact(&mut payload).await.unwrap();
    payload.chunks(6).find(|s| u16::from_be_bytes([s[0], s[1]]) == 0x3).map(|s| u32::from_be_bytes([s[2], s[3], s[4], s[5]]))
}

#[tokio::test]
async fn http2_concurrent_streams_and_in_flight_requests_are_capped() {
    let app = upstream().await;
    let defaults = start(app.addr, &[]);
    assert_eq!(announced_max_streams(defaults.addr).await, Some(100));
    let tight = start(app.addr, &["--h2-max-concurrent-streams", "2", "--max-streams", "1"]);
    assert_eq!(announced_max_streams(tight.addr).await, Some(2));

    // One request in flight (its body never finishes) fills --max-streams 1.
    let mut holder = connect(tight.addr, None).await.unwrap();
    holder.write_all(b"POST /upload HTTP/1.1\r\nhost: shop.example\r\ncontent-length: 100\r\n\r\nhalf").await.unwrap();
    eventually("one request in flight", || tight.server.limits.gate.streams_in_flight() == 1).await;
    let refused = send(tight.addr, get("/page")).await;
    assert_eq!(refused.status, 503);
    assert_eq!(refused.json()["error"], "too_many_requests_in_flight");
    assert_eq!(limit_refusals(&tight.metrics, "streams"), 1.0);
    drop(holder);
    eventually("the held request ended", || tight.server.limits.gate.streams_in_flight() == 0).await;
    assert_eq!(send(tight.addr, get("/page")).await.status, 200);
}

/// Opens a POST announcing `total` body bytes, sends `sent` of them, and holds.
async fn hold_body(addr: SocketAddr, total: usize, sent: usize) -> TcpStream {
    let mut stream = connect(addr, None).await.unwrap();
    let head = format!("POST /upload HTTP/1.1\r\nhost: shop.example\r\ncontent-type: text/plain\r\ncontent-length: {total}\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&vec![b'a'; sent]).await.unwrap();
    stream
}

#[tokio::test]
async fn over_the_body_budget_a_request_is_refused_with_refuse() {
    let app = upstream().await;
    let proxy = start(app.addr, &["--body-budget", "1000", "--on-body-budget", "refuse"]);
    let holder = hold_body(proxy.addr, 2000, 900).await;
    eventually("900 bytes reserved", || proxy.server.limits.budget.used() == 900).await;

    let refused = send(proxy.addr, request(Method::POST, "/comment", &"b".repeat(500))).await;
    assert_eq!(refused.status, 503, "{:?}", refused.body);
    assert_eq!(refused.json()["error"], "body_budget_exhausted");
    assert_eq!(app.count(), 0, "the refused request never reached the upstream");
    assert_eq!(limit_refusals(&proxy.metrics, "body-budget"), 1.0);

    drop(holder);
    eventually("the held body's bytes returned", || proxy.server.limits.budget.used() == 0).await;
    let passed = send(proxy.addr, request(Method::POST, "/comment", &"b".repeat(500))).await;
    assert_eq!(passed.status, 200);
    assert_eq!(app.last().body.len(), 500);
}

#[tokio::test]
async fn over_the_body_budget_score_partial_scores_what_fit_and_forwards_everything() {
    let app = upstream().await;
    let proxy = start(app.addr, &["--body-budget", "1000"]);
    let holder = hold_body(proxy.addr, 2000, 900).await;
    eventually("900 bytes reserved", || proxy.server.limits.budget.used() == 900).await;

    let body = "c".repeat(500);
    let reply = send(proxy.addr, request(Method::POST, "/comment", &body)).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(app.last().body.len(), 500, "the whole body reached the upstream");
    let scored = proxy.scorer.seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(scored.partial, vec!["body-budget".to_string()]);
    assert!(scored.request_text_len < 500, "the part over the budget was not buffered for scoring");
    assert_eq!(limit_refusals(&proxy.metrics, "body-budget"), 1.0);
    drop(holder);
    eventually("budget released", || proxy.server.limits.budget.used() == 0).await;
}
