//! WebSocket through the proxy over real sockets: a real client and echo server
//! (tokio-tungstenite) on either side. The handshake is scored like any request; once the
//! upstream accepts it, the two connections are tunnelled.

mod common;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::proxy::*;
use futures_util::{SinkExt, StreamExt};
use hyper::HeaderMap;
use tokio_tungstenite::tungstenite::handshake::server::{Request as WsRequest, Response as WsResponse};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

/// A WebSocket echo server; `handshakes` holds the headers of every handshake it accepted.
struct EchoServer {
    addr: SocketAddr,
    handshakes: Arc<Mutex<Vec<HeaderMap>>>,
}

async fn echo_server() -> EchoServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handshakes: Arc<Mutex<Vec<HeaderMap>>> = Arc::default();
    let seen = handshakes.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                // The callback's error type is tungstenite's (an HTTP response), not ours.
                #[allow(clippy::result_large_err)]
                let record = |req: &WsRequest, resp: WsResponse| {
                    seen.lock().unwrap().push(req.headers().clone());
                    Ok(resp)
                };
                let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(tcp, record).await else { return };
                while let Some(Ok(msg)) = ws.next().await {
                    if (msg.is_text() || msg.is_binary()) && ws.send(msg).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    EchoServer { addr, handshakes }
}

#[tokio::test]
async fn messages_echo_through_the_proxy_after_a_scored_handshake() {
    let echo = echo_server().await;
    // A short header-read timeout: the tunnel must not be cut by it once the switch is made.
    let proxy = start_proxy(echo.addr, &["--mode", "active", "--kill-response", "forbidden", "--header-read-timeout-ms", "300"]);
    let (mut ws, resp) =
        tokio_tungstenite::connect_async(format!("ws://{}/chat?room=lobby", proxy.addr)).await.expect("handshake through the proxy");
    assert_eq!(resp.status(), 101);

    ws.send(Message::text("hello, it's Miles")).await.unwrap();
    assert_eq!(ws.next().await.unwrap().unwrap(), Message::text("hello, it's Miles"));
    tokio::time::sleep(Duration::from_millis(800)).await;
    ws.send(Message::binary(vec![0u8, 1, 2, 255])).await.unwrap();
    assert_eq!(ws.next().await.unwrap().unwrap(), Message::binary(vec![0u8, 1, 2, 255]));
    ws.close(None).await.unwrap();

    let handshakes = echo.handshakes.lock().unwrap();
    assert_eq!(handshakes.len(), 1);
    let headers = &handshakes[0];
    assert!(headers.contains_key("x-waf-score"), "the handshake was scored: {headers:?}");
    assert_eq!(headers["x-forwarded-for"], "127.0.0.1");
    assert!(headers["upgrade"].to_str().unwrap().eq_ignore_ascii_case("websocket"));
}

#[tokio::test]
async fn an_attack_in_the_handshake_refuses_the_upgrade() {
    let echo = echo_server().await;
    let proxy = start_proxy(echo.addr, &["--mode", "active", "--kill-response", "forbidden"]);
    let url = format!("ws://{}{}", proxy.addr, SQLI);
    match tokio_tungstenite::connect_async(url).await {
        Err(WsError::Http(resp)) => assert_eq!(resp.status(), 403),
        Err(other) => panic!("expected a 403 refusal, got {other:?}"),
        Ok(_) => panic!("the attack's handshake was tunnelled"),
    }
    assert!(echo.handshakes.lock().unwrap().is_empty(), "the upstream never sees a killed handshake");
}

#[tokio::test]
async fn only_websocket_is_passed_and_a_plain_upstream_answer_is_not_a_tunnel() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &[]);
    // h2c and any other protocol are not tunnels: the upgrade fields are stripped.
    let mut req = get("/page");
    req.headers_mut().insert("connection", "upgrade".parse().unwrap());
    req.headers_mut().insert("upgrade", "h2c".parse().unwrap());
    let reply = send(proxy.addr, req).await;
    assert_eq!(reply.status, 200);
    assert!(!app.last().headers.contains_key("upgrade"));
    // A WebSocket handshake to an upstream that does not switch gets its plain answer.
    match tokio_tungstenite::connect_async(format!("ws://{}/page", proxy.addr)).await {
        Err(WsError::Http(resp)) => assert_eq!(resp.status(), 200),
        other => panic!("expected the upstream's 200, got {other:?}"),
    }
    assert_eq!(app.last().headers["upgrade"], "websocket", "the handshake reached the upstream as one");
}

/// p50 and p99 of `n` text round trips on one WebSocket at `url`, in milliseconds.
async fn round_trips(url: String, n: usize) -> (f64, f64) {
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let mut took = Vec::with_capacity(n);
    for i in 0..n + 200 {
        let started = std::time::Instant::now();
        ws.send(Message::text("{\"room\":\"lobby\",\"text\":\"see you at noon\"}")).await.unwrap();
        ws.next().await.unwrap().unwrap();
        if i >= 200 {
            took.push(started.elapsed());
        }
    }
    took.sort();
    let ms = |p: f64| took[((n as f64 * p) as usize).min(n - 1)].as_secs_f64() * 1000.0;
    (ms(0.5), ms(0.99))
}

/// Figures for docs/PROXY.md (not a timed assertion): `cargo test --release -p
/// rampart-services --test proxy_websocket -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement; run by hand"]
async fn measure_round_trip_added_by_the_proxy() {
    let echo = echo_server().await;
    let proxy = start_proxy(echo.addr, &[]);
    let (direct50, direct99) = round_trips(format!("ws://{}/chat", echo.addr), 2000).await;
    let (proxied50, proxied99) = round_trips(format!("ws://{}/chat", proxy.addr), 2000).await;
    println!("direct: p50 {direct50:.3} ms p99 {direct99:.3} ms; through the proxy: p50 {proxied50:.3} ms p99 {proxied99:.3} ms");
    println!("added p50 {:.3} ms", proxied50 - direct50);
}
