//! The active-mode kill over real sockets: HTTP/1.1 gets a TCP reset before any response
//! byte, HTTP/2 gets RST_STREAM on the killed stream only.

use std::io::ErrorKind;
use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use net::Outcome;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn start() -> SocketAddr {
    let listener = net::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(net::serve(
        listener,
        |req: Request<hyper::body::Incoming>, _conn| async move {
            if req.uri().path() == "/kill" {
                Outcome::Kill
            } else {
                Outcome::Respond(Response::new(Full::new(Bytes::from_static(b"fine"))))
            }
        },
        std::future::pending(),
    ));
    addr
}

/// Reads until EOF or error; returns the bytes and the error kind, if any.
async fn read_all(stream: &mut TcpStream) -> (Vec<u8>, Option<ErrorKind>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) => return (buf, None),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(err) => return (buf, Some(err.kind())),
        }
    }
}

#[tokio::test]
async fn http1_kill_is_a_reset_before_any_byte() {
    let addr = start().await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(b"GET /kill HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    let (bytes, err) = read_all(&mut stream).await;
    assert!(bytes.is_empty(), "got response bytes: {:?}", String::from_utf8_lossy(&bytes));
    assert_eq!(err, Some(ErrorKind::ConnectionReset));
}

#[tokio::test]
async fn http1_kill_after_a_served_request_on_the_same_connection() {
    let addr = start().await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(b"GET /ok HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    let mut first = vec![0u8; 512];
    let n = stream.read(&mut first).await.unwrap();
    let text = String::from_utf8_lossy(&first[..n]).to_string();
    assert!(text.starts_with("HTTP/1.1 200") && text.ends_with("fine"), "{text}");
    stream.write_all(b"POST /kill HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello").await.unwrap();
    let (bytes, err) = read_all(&mut stream).await;
    assert!(bytes.is_empty(), "got response bytes: {:?}", String::from_utf8_lossy(&bytes));
    assert_eq!(err, Some(ErrorKind::ConnectionReset));
}

#[tokio::test]
async fn http2_kill_resets_only_that_stream() {
    let addr = start().await;
    let io = TokioIo::new(TcpStream::connect(addr).await.unwrap());
    let (mut sender, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io).await.unwrap();
    tokio::spawn(conn);
    let req = |path: &str| Request::get(format!("http://{addr}{path}")).body(Empty::<Bytes>::new()).unwrap();
    let killed = sender.send_request(req("/kill"));
    let served = sender.send_request(req("/ok"));
    let (killed, served) = tokio::join!(killed, served);
    let err = killed.expect_err("the killed stream gets no response");
    let reason = std::error::Error::source(&err).and_then(|s| s.downcast_ref::<h2::Error>()).and_then(|e| e.reason());
    assert_eq!(reason, Some(h2::Reason::INTERNAL_ERROR), "{err:?}");
    let served = served.expect("the sibling stream is served");
    assert_eq!(served.status(), 200);
    assert_eq!(served.into_body().collect().await.unwrap().to_bytes(), "fine");
    // The connection itself survives: a third stream on it still works.
    let again = sender.send_request(req("/ok")).await.expect("connection still usable");
    assert_eq!(again.status(), 200);
}
