//! gRPC through the proxy over real sockets: a real tonic server behind it (reached over h2c,
//! WAF_UPSTREAM_PROTOCOL=h2) and a real tonic client in front (h2c prior knowledge). String
//! fields of the protobuf messages are scored without a schema (`grpc:/1`, `grpc:/2/1`);
//! trailers, where gRPC carries its status, pass both ways.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use common::proxy::*;
use hyper::{HeaderMap, Version};
use testkit::grpc_echo::{self, text, EchoReply, EchoRequest, EchoServer, Meta, Record, SAY, STREAM};
use tonic::codegen::http;
use tonic::{Code, Request, Response, Status};
use tonic_prost::ProstCodec;

/// The shared echo service (testkit), keeping every call it saw.
async fn echo_server() -> EchoServer {
    EchoServer::start(Record::Everything).await.expect("the echo service starts")
}

/// A tonic client to `addr` over h2c (prior knowledge).
async fn client(addr: SocketAddr) -> tonic::client::Grpc<tonic::transport::Channel> {
    grpc_echo::client(addr).await.expect("h2c connection")
}

async fn say(addr: SocketAddr, req: EchoRequest) -> Result<Response<EchoReply>, Status> {
    grpc_echo::say_on(&mut client(addr).await, req).await
}

/// A proxy in front of `echo` speaking h2c to it.
fn grpc_proxy(echo: &EchoServer, extra: &[&str]) -> TestProxy {
    let mut flags = vec!["--upstream-protocol", "h2"];
    flags.extend_from_slice(extra);
    start_proxy(echo.addr, &flags)
}

#[tokio::test]
async fn a_benign_unary_call_goes_through_over_h2_with_its_status_trailer() {
    let echo = echo_server().await;
    let proxy = grpc_proxy(&echo, &["--mode", "active"]);
    let reply = say(proxy.addr, text("hello, it's Miles")).await.expect("the call succeeds");
    assert_eq!(reply.get_ref().text, "hello, it's Miles");
    assert_eq!(reply.metadata().get("x-echo").unwrap(), "yes");
    let call = echo.last().expect("the echo service saw a call");
    assert_eq!(call.version, Version::HTTP_2, "an h2 call is not downgraded");
    assert_eq!(call.headers["te"], "trailers", "gRPC servers require te: trailers");
    assert_eq!(call.headers["x-waf-mode"], "active");

    // The trailers themselves, read with a raw h2 client: grpc-status 0 after the message.
    let reply = raw_h2_call(proxy.addr, &[], frame(0, &prost::Message::encode_to_vec(&text("trailers please")))).await;
    assert_eq!(reply.status, 200);
    assert!(reply.data.len() > 5 && reply.data[0] == 0, "one uncompressed gRPC frame: {:?}", reply.data);
    let trailers = reply.trailers.expect("the response ends with trailers");
    assert_eq!(trailers["grpc-status"], "0", "{trailers:?}");
}

/// A gRPC frame: flag byte (1: compressed), big-endian length, message.
fn frame(flag: u8, message: &[u8]) -> Vec<u8> {
    let mut framed = vec![flag];
    framed.extend((message.len() as u32).to_be_bytes());
    framed.extend_from_slice(message);
    framed
}

/// What a raw h2 call got back.
struct RawReply {
    status: u16,
    headers: HeaderMap,
    data: Vec<u8>,
    trailers: Option<HeaderMap>,
}

/// One unary call with the h2 crate, `framed` as the request body, `headers` besides the
/// gRPC ones.
async fn raw_h2_call(addr: SocketAddr, headers: &[(&str, &str)], framed: Vec<u8>) -> RawReply {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (client, conn) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(conn);
    let mut client = client.ready().await.unwrap();
    let mut request =
        http::Request::post(format!("http://{addr}{SAY}")).header("content-type", "application/grpc").header("te", "trailers");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let (resp, mut stream) = client.send_request(request.body(()).unwrap(), false).unwrap();
    stream.send_data(Bytes::from(framed), true).unwrap();
    let resp = resp.await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let mut body = resp.into_body();
    let mut data = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.unwrap();
        let _ = body.flow_control().release_capacity(chunk.len());
        data.extend_from_slice(&chunk);
    }
    RawReply { status, headers, data, trailers: body.trailers().await.unwrap() }
}

#[tokio::test]
async fn an_injection_in_a_string_field_is_refused_in_active_mode() {
    let echo = echo_server().await;
    // The default kill (reset): the stream is reset before any response byte.
    let proxy = grpc_proxy(&echo, &["--mode", "active"]);
    let status = say(proxy.addr, text("1' OR 1=1 --")).await.expect_err("refused");
    assert_ne!(status.code(), Code::Ok);
    assert_eq!(echo.count(), 0, "the service never saw the call: {status:?}");

    // `forbidden`: said in gRPC's terms, a trailers-only PERMISSION_DENIED.
    let proxy = grpc_proxy(&echo, &["--mode", "active", "--kill-response", "forbidden"]);
    let status = say(proxy.addr, text("<script>alert(document.cookie)</script>")).await.expect_err("refused");
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
    assert_eq!(echo.count(), 0);
}

#[tokio::test]
async fn a_string_in_a_nested_message_is_caught() {
    let echo = echo_server().await;
    let proxy = grpc_proxy(&echo, &["--mode", "active", "--kill-response", "forbidden"]);
    let req = EchoRequest {
        text: "an ordinary greeting".into(),
        meta: Some(Meta { note: "<script>alert(document.cookie)</script>".into() }),
        repeat: 2,
    };
    let status = say(proxy.addr, req).await.expect_err("refused");
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
    assert_eq!(echo.count(), 0);
    let benign = EchoRequest { meta: Some(Meta { note: "sent from the mobile app".into() }), ..text("hello") };
    assert_eq!(say(proxy.addr, benign).await.unwrap().get_ref().text, "hello");
}

#[tokio::test]
async fn shadow_mode_passes_the_call_and_records_the_event() {
    let echo = echo_server().await;
    let proxy = grpc_proxy(&echo, &[]);
    let reply = say(proxy.addr, text("1' OR 1=1 --")).await.expect("shadow mode forwards");
    assert_eq!(reply.get_ref().text, "1' OR 1=1 --");
    let call = echo.last().expect("the echo service saw a call");
    assert_eq!(call.headers["x-waf-would-have-killed"], "true");
    assert!(call.headers["x-waf-reason"].to_str().unwrap().starts_with("sqli:"), "{:?}", call.headers["x-waf-reason"]);
    let events = send(proxy.addr, get("/api/events/recent")).await.json();
    assert_eq!(events[0]["action"], "shadow_kill", "{events}");
    assert_eq!(events[0]["path"], SAY);
}

#[tokio::test]
async fn error_statuses_and_streams_pass_through() {
    let echo = echo_server().await;
    let proxy = grpc_proxy(&echo, &["--mode", "active"]);
    let status = say(proxy.addr, text("fail")).await.expect_err("the service answers NOT_FOUND");
    assert_eq!((status.code(), status.message()), (Code::NotFound, "no such echo"));

    // Server streaming: three replies, then DATA_LOSS in the trailers.
    let mut grpc = client(proxy.addr).await;
    grpc.ready().await.unwrap();
    let req = EchoRequest { repeat: 3, ..text("tick") };
    let path = http::uri::PathAndQuery::from_static(STREAM);
    let mut stream =
        grpc.server_streaming(Request::new(req), path, ProstCodec::<EchoRequest, EchoReply>::default()).await.unwrap().into_inner();
    let mut texts = Vec::new();
    let end = loop {
        match stream.message().await {
            Ok(Some(reply)) => texts.push(reply.text),
            Ok(None) => panic!("the stream ended without its DATA_LOSS status"),
            Err(status) => break status,
        }
    };
    assert_eq!(texts, ["tick #0", "tick #1", "tick #2"]);
    assert_eq!((end.code(), end.message()), (Code::DataLoss, "the stream was cut on purpose"));
}

#[tokio::test]
async fn gzip_compressed_messages_are_inflated_and_scored() {
    use std::io::Write;
    let echo = echo_server().await;
    let proxy = grpc_proxy(&echo, &["--mode", "active", "--kill-response", "forbidden"]);
    let gzip = |req: &EchoRequest| {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&prost::Message::encode_to_vec(req)).unwrap();
        frame(1, &gz.finish().unwrap())
    };
    let attack = EchoRequest { meta: Some(Meta { note: "1' UNION SELECT password FROM users --".into() }), ..text("hi") };
    let reply = raw_h2_call(proxy.addr, &[("grpc-encoding", "gzip")], gzip(&attack)).await;
    assert_eq!((reply.status, &reply.headers["grpc-status"]), (200, &"7".parse().unwrap()), "refused after inflating");
    assert!(reply.data.is_empty() && reply.trailers.is_none(), "a trailers-only response");
    assert_eq!(echo.count(), 0);
    // The service answers gzip calls too (tonic without the gzip feature: UNIMPLEMENTED);
    // what matters is that the proxy forwarded the benign one.
    let reply = raw_h2_call(proxy.addr, &[("grpc-encoding", "gzip")], gzip(&text("hello there"))).await;
    assert_eq!(reply.status, 200);
    assert_eq!(echo.count(), 1);
    // A coding the proxy cannot undo is never scored as if plain: partial, refused by default.
    let reply = raw_h2_call(proxy.addr, &[("grpc-encoding", "snappy")], frame(1, b"\x00\x01opaque")).await;
    assert_eq!(reply.headers["grpc-status"], "7");
    assert_eq!(echo.count(), 1);
}

#[tokio::test]
async fn a_bad_upstream_protocol_is_a_start_up_error_naming_the_setting() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rampart"))
        .args(["proxy", "--target-url", "http://127.0.0.1:9", "--upstream-protocol", "h3"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("WAF_UPSTREAM_PROTOCOL") && stderr.contains("h2"), "{stderr}");
}

/// An upstream (https with a self-signed certificate when `tls`, else plain) that answers with
/// the HTTP version it was spoken to in.
async fn version_upstream(tls: bool) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let tls = tls.then(|| {
        let dir = std::env::temp_dir().join(format!("rampart-grpc-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        let (cert, key) = (dir.join("app.pem"), dir.join("app.key"));
        std::fs::write(&cert, certified.cert.pem()).unwrap();
        std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
        let settings = net::TlsSettings { certs: vec![cert], keys: vec![key], reload_every: std::time::Duration::ZERO };
        net::TlsServer::new(settings).unwrap()
    });
    let listener = net::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let gate = net::ConnGate::unobserved(net::ServeLimits::default());
    let answer = |req: http::Request<hyper::body::Incoming>, _conn| async move {
        http::Response::new(http_body_util::Full::new(Bytes::from(format!("{:?}", req.version()))))
    };
    tokio::spawn(net::serve_on(listener, tls, gate, answer, async move {
        let _ = rx.await;
    }));
    (addr, tx)
}

#[tokio::test]
async fn the_upstream_protocol_setting_picks_http1_h2_or_alpn() {
    let (https, _stop_https) = version_upstream(true).await;
    let (plain, _stop_plain) = version_upstream(false).await;
    let cases = [
        (format!("https://localhost:{}", https.port()), "http1", "HTTP/1.1"),
        (format!("https://localhost:{}", https.port()), "auto", "HTTP/2.0"),
        (format!("https://localhost:{}", https.port()), "h2", "HTTP/2.0"),
        (format!("http://{plain}"), "auto", "HTTP/1.1"),
        (format!("http://{plain}"), "h2", "HTTP/2.0"),
    ];
    for (target, protocol, spoken) in cases {
        let flags = ["--target-url", target.as_str(), "--upstream-protocol", protocol, "--upstream-insecure-skip-verify"];
        let options = proxy_options(plain, &flags);
        let scorer = Arc::new(services::scorer::InProcessScorer::new(shared_engine()));
        let metrics = Arc::new(services::metrics::Metrics::new());
        let parts = services::proxy::ProxyParts { target: target.parse().unwrap(), threshold: 0.5, scorer, metrics, audit: None };
        let proxy = services::run::start_proxy_with(&options, parts).expect("proxy starts");
        let reply = send(proxy.running.addr, get("/version")).await;
        assert_eq!((reply.status, String::from_utf8_lossy(&reply.body).as_ref()), (200, spoken), "{target} with {protocol}");
    }
}

/// Latency percentiles of `calls` unary calls on one connection, in microseconds.
async fn unary_latency(addr: SocketAddr, calls: usize) -> (f64, f64) {
    let mut grpc = client(addr).await;
    let req = EchoRequest { meta: Some(Meta { note: "sent from the mobile app".into() }), ..text("hello, it's Miles") };
    let mut took = Vec::with_capacity(calls);
    for i in 0..calls + 200 {
        grpc.ready().await.unwrap();
        let started = std::time::Instant::now();
        let reply: Response<EchoReply> =
            grpc.unary(Request::new(req.clone()), http::uri::PathAndQuery::from_static(SAY), ProstCodec::default()).await.unwrap();
        // The first 200 warm the pools and the model cache.
        if i >= 200 {
            took.push(started.elapsed().as_secs_f64() * 1e6);
        }
        assert_eq!(reply.get_ref().text, req.text);
    }
    took.sort_by(f64::total_cmp);
    (took[took.len() / 2], took[took.len() * 99 / 100])
}

/// A benign protobuf message of about 1 KB: words in strings, one nested message, numbers.
fn one_kb_message() -> Vec<u8> {
    let words = "please send the quarterly report to the finance team before friday and copy the regional managers";
    let req =
        EchoRequest { text: format!("{words}. {words}. {words}. {words}. {words}"), meta: Some(Meta { note: words.repeat(5) }), repeat: 7 };
    frame(0, &prost::Message::encode_to_vec(&req))
}

/// Prints figures, asserts nothing: `cargo test --release -p rampart-services --test proxy_grpc
/// -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement: prints figures"]
async fn measure_unary_latency_and_scoring_cost() {
    let echo = echo_server().await;
    let proxy = grpc_proxy(&echo, &[]);
    for (label, addr) in [("direct", echo.addr), ("through the proxy (shadow, h2c both sides)", proxy.addr)] {
        let (p50, p99) = unary_latency(addr, 2000).await;
        println!("gRPC unary {label}: p50 {p50:.0} µs, p99 {p99:.0} µs (2000 calls, one connection)");
    }

    let body = one_kb_message();
    let headers: [(&str, &[u8]); 2] = [("content-type", b"application/grpc"), ("te", b"trailers")];
    let http = || services::scored_request::HttpRequest {
        method: "POST",
        path: SAY,
        query: "",
        headers: &headers,
        body: &body,
        body_truncated: false,
        body_limit: 1 << 20,
    };
    let rounds = 20_000;
    let started = std::time::Instant::now();
    for _ in 0..rounds {
        std::hint::black_box(services::scorer::ScoreQuery::from_http(http()));
    }
    let decode = started.elapsed().as_secs_f64() * 1e6 / rounds as f64;
    let query = services::scorer::ScoreQuery::from_http(http());
    let engine = shared_engine();
    let input = scoring::ScoreInput { request_text: &query.request_text, headers: &query.headers };
    let _ = engine.score_all(&input).await;
    let rounds = 2_000;
    let started = std::time::Instant::now();
    for _ in 0..rounds {
        std::hint::black_box(engine.score_all(&input).await);
    }
    let score = started.elapsed().as_secs_f64() * 1e6 / rounds as f64;
    println!(
        "1 KB protobuf ({} bytes framed): gRPC decode + request text {decode:.1} µs; engine score_all {score:.1} µs (model scores cached after the first round)",
        body.len()
    );
}

/// An h2c upstream that answers with what it read after the body: the names of the request's
/// trailers, or "no trailers".
async fn trailer_upstream() -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let listener = net::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let gate = net::ConnGate::unobserved(net::ServeLimits::default());
    let answer = |req: http::Request<hyper::body::Incoming>, _conn| async move {
        use http_body_util::BodyExt;
        let mut body = req.into_body();
        let mut seen = String::from("no trailers");
        while let Some(Ok(frame)) = body.frame().await {
            if let Ok(trailers) = frame.into_trailers() {
                seen = format!("trailers: {:?}", trailers.keys().collect::<Vec<_>>());
            }
        }
        http::Response::new(http_body_util::Full::new(Bytes::from(seen)))
    };
    tokio::spawn(net::serve_on(listener, None, gate, answer, async move {
        let _ = rx.await;
    }));
    (addr, tx)
}

#[tokio::test]
async fn request_trailers_never_reach_an_h2_upstream() {
    // Nothing scores trailers: forwarded, an h2 application would read `x-note` as a header.
    let (app, _stop) = trailer_upstream().await;
    let proxy = start_proxy(app, &["--upstream-protocol", "h2", "--mode", "active"]);
    let tcp = tokio::net::TcpStream::connect(proxy.addr).await.unwrap();
    let (client, conn) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(conn);
    let mut client = client.ready().await.unwrap();
    let request = http::Request::post(format!("http://{}/notes", proxy.addr)).header("content-type", "text/plain").body(()).unwrap();
    let (resp, mut stream) = client.send_request(request, false).unwrap();
    stream.send_data(Bytes::from_static(b"a short note"), false).unwrap();
    let mut trailers = HeaderMap::new();
    trailers.insert("x-note", "<script>alert(document.cookie)</script>".parse().unwrap());
    stream.send_trailers(trailers).unwrap();
    let resp = resp.await.unwrap();
    assert_eq!(resp.status(), 200);
    let mut body = resp.into_body();
    let mut seen = Vec::new();
    while let Some(chunk) = body.data().await {
        seen.extend_from_slice(&chunk.unwrap());
    }
    assert_eq!(String::from_utf8_lossy(&seen), "no trailers");
}

#[tokio::test]
async fn the_per_core_runtime_serves_and_judges_calls_on_every_connection() {
    let echo = echo_server().await;
    let proxy = grpc_proxy(&echo, &["--mode", "active", "--runtime", "per-core"]);
    // A connection per call: the kernel spreads them over the cores' listeners.
    for i in 0..8 {
        let reply = say(proxy.addr, text(&format!("hello #{i}"))).await.expect("the call succeeds");
        assert_eq!(reply.get_ref().text, format!("hello #{i}"));
    }
    assert_eq!(echo.count(), 8);
    let status = say(proxy.addr, text("1' OR 1=1 --")).await.expect_err("refused");
    assert_ne!(status.code(), Code::Ok);
    assert_eq!(echo.count(), 8, "the attack never reached the service");
    assert_eq!(echo.last().expect("a call").version, Version::HTTP_2);
}
