//! A gRPC echo service (tonic, h2c), its messages derived by hand (no protoc at build time):
//! `test.Echo/Say` echoes the text (a text of `fail` answers NOT_FOUND); `test.Echo/Stream`
//! echoes it `repeat` times, then ends with DATA_LOSS in the trailers. Shared by the proxy's
//! gRPC tests and the load benchmark.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use tokio_stream::Stream;
use tonic::codegen::{http, BoxFuture, Context, Poll, Service};
use tonic::{Request, Response, Status};
use tonic_prost::ProstCodec;

pub use crate::Record;

#[derive(Clone, PartialEq, prost::Message)]
pub struct EchoRequest {
    #[prost(string, tag = "1")]
    pub text: String,
    #[prost(message, optional, tag = "2")]
    pub meta: Option<Meta>,
    /// How many replies the streaming call sends before its status.
    #[prost(uint32, tag = "3")]
    pub repeat: u32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Meta {
    #[prost(string, tag = "1")]
    pub note: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct EchoReply {
    #[prost(string, tag = "1")]
    pub text: String,
}

pub const SAY: &str = "/test.Echo/Say";
pub const STREAM: &str = "/test.Echo/Stream";

/// What the echo service saw of a call.
#[derive(Clone, Debug)]
pub struct Call {
    pub version: http::Version,
    pub headers: http::HeaderMap,
}

/// `test.Echo`, written as tonic's generated code would be.
#[derive(Clone)]
struct Echo {
    calls: Arc<Mutex<Vec<Call>>>,
    record: Record,
}

impl tonic::server::NamedService for Echo {
    const NAME: &'static str = "test.Echo";
}

struct Say;

impl tonic::server::UnaryService<EchoRequest> for Say {
    type Response = EchoReply;
    type Future = BoxFuture<Response<EchoReply>, Status>;
    fn call(&mut self, req: Request<EchoRequest>) -> Self::Future {
        Box::pin(async move {
            let text = req.into_inner().text;
            if text == "fail" {
                return Err(Status::not_found("no such echo"));
            }
            let mut resp = Response::new(EchoReply { text });
            resp.metadata_mut().insert("x-echo", tonic::metadata::MetadataValue::from_static("yes"));
            Ok(resp)
        })
    }
}

struct Streamed;

type ReplyStream = Pin<Box<dyn Stream<Item = Result<EchoReply, Status>> + Send>>;

impl tonic::server::ServerStreamingService<EchoRequest> for Streamed {
    type Response = EchoReply;
    type ResponseStream = ReplyStream;
    type Future = BoxFuture<Response<ReplyStream>, Status>;
    fn call(&mut self, req: Request<EchoRequest>) -> Self::Future {
        Box::pin(async move {
            let req = req.into_inner();
            let replies = (0..req.repeat).map(move |i| Ok(EchoReply { text: format!("{} #{i}", req.text) }));
            let end = std::iter::once(Err(Status::data_loss("the stream was cut on purpose")));
            Ok(Response::new(Box::pin(tokio_stream::iter(replies.chain(end))) as ReplyStream))
        })
    }
}

impl Service<http::Request<tonic::body::Body>> for Echo {
    type Response = http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        if self.record == Record::Everything {
            let call = Call { version: req.version(), headers: req.headers().clone() };
            self.calls.lock().unwrap_or_else(|e| e.into_inner()).push(call);
        }
        let path = req.uri().path().to_string();
        Box::pin(async move {
            let mut grpc = tonic::server::Grpc::new(ProstCodec::<EchoReply, EchoRequest>::default());
            Ok(match path.as_str() {
                SAY => grpc.unary(Say, req).await,
                STREAM => grpc.server_streaming(Streamed, req).await,
                _ => Status::unimplemented(path).into_http(),
            })
        })
    }
}

/// A running echo service on 127.0.0.1 (h2c); stopped when dropped.
pub struct EchoServer {
    pub addr: SocketAddr,
    pub calls: Arc<Mutex<Vec<Call>>>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl EchoServer {
    /// Binds a free port and serves on the current tokio runtime.
    pub async fn start(record: Record) -> std::io::Result<EchoServer> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let calls: Arc<Mutex<Vec<Call>>> = Arc::default();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let service = Echo { calls: calls.clone(), record };
        // Nagle plus delayed ACKs would add ~40 ms to a call now and then.
        let incoming = tokio_stream::StreamExt::map(tokio_stream::wrappers::TcpListenerStream::new(listener), |stream| {
            if let Ok(stream) = &stream {
                let _ = stream.set_nodelay(true);
            }
            stream
        });
        tokio::spawn(async move {
            let served = tonic::transport::Server::builder().add_service(service).serve_with_incoming_shutdown(incoming, async {
                let _ = rx.await;
            });
            if let Err(err) = served.await {
                eprintln!("[grpc_echo] server stopped: {err}");
            }
        });
        Ok(EchoServer { addr, calls, _stop: tx })
    }

    /// The last call the service saw (under [`Record::Everything`]).
    pub fn last(&self) -> Option<Call> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).last().cloned()
    }

    /// Calls seen so far (under [`Record::Everything`]).
    pub fn count(&self) -> usize {
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// A tonic client to `addr` over h2c (prior knowledge), connected.
pub async fn client(addr: SocketAddr) -> Result<tonic::client::Grpc<tonic::transport::Channel>, tonic::transport::Error> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))?.tcp_nodelay(true).connect().await?;
    Ok(tonic::client::Grpc::new(channel))
}

/// One unary `Say` call on `grpc`.
pub async fn say_on(grpc: &mut tonic::client::Grpc<tonic::transport::Channel>, req: EchoRequest) -> Result<Response<EchoReply>, Status> {
    grpc.ready().await.map_err(|e| Status::unavailable(e.to_string()))?;
    grpc.unary(Request::new(req), http::uri::PathAndQuery::from_static(SAY), ProstCodec::default()).await
}

/// A request carrying `text` only.
pub fn text(text: &str) -> EchoRequest {
    EchoRequest { text: text.into(), ..Default::default() }
}
