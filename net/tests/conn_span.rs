//! Every connection gets a tracing span, and what a handler logs while serving a request sits
//! inside it: two requests of one keep-alive connection share the connection's id, a second
//! connection gets another.

use std::io::Write;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response};
use net::Outcome;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A log sink the test can read back.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

async fn get(stream: &mut TcpStream, path: &str) {
    stream.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 512];
    let n = stream.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
}

#[tokio::test(flavor = "current_thread")]
async fn request_logs_sit_in_their_connection_span() {
    let captured = Captured::default();
    let sink = captured.clone();
    let subscriber = tracing_subscriber::fmt().with_ansi(false).with_writer(move || sink.clone()).finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let listener = net::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(net::serve(
        listener,
        |req: Request<hyper::body::Incoming>, _conn| async move {
            tracing::info!(path = req.uri().path(), "handled");
            Outcome::Respond(Response::new(Full::new(Bytes::from_static(b"ok"))))
        },
        std::future::pending(),
    ));
    let mut first = TcpStream::connect(addr).await.unwrap();
    get(&mut first, "/a").await;
    get(&mut first, "/b").await;
    let mut second = TcpStream::connect(addr).await.unwrap();
    get(&mut second, "/c").await;

    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let conn_of = |path: &str| -> String {
        let line =
            log.lines().find(|l| l.contains(&format!("path=\"{path}\""))).unwrap_or_else(|| panic!("no log line for {path}:\n{log}"));
        let at = line.find("conn{").unwrap_or_else(|| panic!("{path} logged outside a connection span: {line}"));
        let span = &line[at..line[at..].find('}').map(|end| at + end + 1).unwrap()];
        assert!(span.contains("peer=127.0.0.1:") && span.contains("tls=false"), "{span}");
        span.to_string()
    };
    assert_eq!(conn_of("/a"), conn_of("/b"), "one keep-alive connection, one span");
    assert_ne!(conn_of("/a"), conn_of("/c"), "another connection, another span");
}
