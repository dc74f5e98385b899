//! WAF_ON_PARTIAL over real sockets: an inference service (a real HTTP peer) that answers a
//! partial verdict (`"partial": "arena-cap"`: a work bound was hit) under the threshold. By
//! default active mode blocks it like an oversize body; `pass` forwards it marked
//! `X-Waf-Partial`; the event carries `partial`, the metric `waf_partial_total` counts it.

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::proxy::{get, metrics_text, request, sample, send, start_remote_proxy, upstream};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Method, Request, Response};

/// An inference service whose every `/score/all` answer is a clean but partial verdict.
fn partial_inference() -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = net::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(net::serve(
        listener,
        |_req: Request<Incoming>, _conn| async move {
            let body = r#"{"score":0.1,"reason":"","detector":"","partial":"arena-cap"}"#;
            let mut resp = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
            resp.headers_mut().insert("content-type", "application/json".parse().unwrap());
            resp
        },
        async move {
            let _ = stopped.await;
        },
    ));
    (format!("http://{addr}"), stop)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partial_verdict_is_blocked_by_default_and_marked_when_passed() {
    let (inference, _stop) = partial_inference();
    let app = upstream().await;
    let timeout = Duration::from_secs(2);

    let blocking = start_remote_proxy(app.addr, &inference, timeout, &["--mode", "active", "--kill-response", "forbidden"]);
    let reply = send(blocking.addr, get("/search?q=shoes")).await;
    assert_eq!(reply.status, 403, "a partial verdict in active mode is blocked by default");
    assert_eq!(app.count(), 0);
    let events = send(blocking.addr, request(Method::GET, "/api/events/recent", "")).await.json();
    assert_eq!(events[0]["reason"], "partial:arena-cap", "{events}");
    assert_eq!(events[0]["partial"], "arena-cap", "{events}");
    assert_eq!(events[0]["action"], "active_kill");
    let metrics = metrics_text(blocking.addr).await;
    assert_eq!(sample(&metrics, "waf_partial_total{action=\"active_kill\"}"), 1.0, "{metrics}");

    let passing = start_remote_proxy(app.addr, &inference, timeout, &["--mode", "active", "--on-partial", "pass"]);
    let reply = send(passing.addr, get("/search?q=shoes")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(app.last().headers["x-waf-partial"], "arena-cap");
    let events = send(passing.addr, request(Method::GET, "/api/events/recent", "")).await.json();
    assert_eq!(events[0]["action"], "passed");
    assert_eq!(events[0]["partial"], "arena-cap");

    // Shadow mode: forwarded, marked, and said to have been a kill.
    let shadow = start_remote_proxy(app.addr, &inference, timeout, &["--mode", "shadow"]);
    assert_eq!(send(shadow.addr, get("/search?q=shoes")).await.status, 200);
    let seen = app.last();
    assert_eq!(seen.headers["x-waf-partial"], "arena-cap");
    assert_eq!(seen.headers["x-waf-would-have-killed"], "true");
}
