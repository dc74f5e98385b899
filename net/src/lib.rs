//! Listeners and connection handling shared by every Rampart HTTP server.
//!
//! Each server owns its accept loop (rather than a framework's) so connection-level policy —
//! socket options, per-connection state, the active-mode TCP reset — lives in one place.

mod idle;
mod killable;
mod limits;
pub mod tls;
mod tracked;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response, Version};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use thiserror::Error;
use tokio::net::TcpListener;
use tracing::Instrument;

pub use killable::KillSwitch;
use killable::KillableStream;
pub use limits::{ConnGate, ConnPermit, Refusal, RefusalObserver, ServeLimits, StreamPermit};
pub use tls::{TlsError, TlsServer, TlsSettings};
pub use tracked::TrackedBody;

#[derive(Debug, Error)]
pub enum NetError {
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
    #[error(transparent)]
    Tls(#[from] TlsError),
}

/// Binds a listener with SO_REUSEADDR (fast restarts) and a deep accept backlog.
pub fn bind(addr: SocketAddr) -> Result<TcpListener, NetError> {
    let map = |source| NetError::Bind { addr, source };
    let domain = if addr.is_ipv6() { socket2::Domain::IPV6 } else { socket2::Domain::IPV4 };
    let socket = socket2::Socket::new(domain, socket2::Type::STREAM, Some(socket2::Protocol::TCP)).map_err(map)?;
    socket.set_reuse_address(true).map_err(map)?;
    socket.set_nonblocking(true).map_err(map)?;
    socket.bind(&addr.into()).map_err(map)?;
    socket.listen(1024).map_err(map)?;
    TcpListener::from_std(socket.into()).map_err(map)
}

/// Facts about the connection a request arrived on.
#[derive(Clone, Copy, Debug)]
pub struct ConnInfo {
    pub peer: SocketAddr,
    pub local: SocketAddr,
}

/// What a handler decided for one request.
pub enum Outcome<B> {
    Respond(Response<B>),
    /// Answer nothing. HTTP/1.x: the connection is reset (RST, SO_LINGER 0) before any byte
    /// of a response; HTTP/2: only this stream is reset (RST_STREAM), its siblings carry on.
    Kill,
}

impl<B> From<Response<B>> for Outcome<B> {
    fn from(resp: Response<B>) -> Self {
        Outcome::Respond(resp)
    }
}

/// The service error that makes hyper abandon a request without answering it.
#[derive(Debug, Error)]
#[error("request killed by the firewall")]
pub struct Killed;

/// HTTP/2 liveness: a ping after this much silence, and the connection is closed when the
/// answer takes longer than the timeout.
const H2_PING_INTERVAL: Duration = Duration::from_secs(30);
const H2_PING_TIMEOUT: Duration = Duration::from_secs(20);

/// How long a shutdown waits for in-flight connections. Event streams never finish on their
/// own, so without a bound one open dashboard would hold a restart forever.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The answer written to a connection refused at accept, before closing it. The client may
/// not speak HTTP/1 (h2 prior knowledge); the close is what matters, the text is a courtesy.
const CONNECTION_REFUSAL: &[u8] = concat!(
    "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: 91\r\n\r\n",
    r#"{"error":"too_many_connections","detail":"connection limit reached (WAF_MAX_CONNECTIONS*)"}"#
)
.as_bytes();

/// [`serve_with`] under the default limits, on a gate of its own.
pub async fn serve<H, Fut, O, B>(listener: TcpListener, handler: H, shutdown: impl Future<Output = ()>)
where
    H: Fn(Request<Incoming>, ConnInfo) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = O> + Send + 'static,
    O: Into<Outcome<B>>,
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    serve_with(listener, ConnGate::unobserved(ServeLimits::default()), handler, shutdown).await
}

/// Serves HTTP/1.1 (keep-alive) and HTTP/2 (prior knowledge) on `listener` until `shutdown`
/// resolves; then stops accepting and gives in-flight connections [`SHUTDOWN_GRACE`] to finish.
/// Connections and requests are admitted by `gate` (shared with other listeners of the process).
pub async fn serve_with<H, Fut, O, B>(listener: TcpListener, gate: Arc<ConnGate>, handler: H, shutdown: impl Future<Output = ()>)
where
    H: Fn(Request<Incoming>, ConnInfo) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = O> + Send + 'static,
    O: Into<Outcome<B>>,
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    serve_on(listener, None, gate, handler, shutdown).await
}

/// [`serve_with`], over TLS when `tls` is given: the handshake (bounded by the header-read
/// timeout) runs on the connection's own task, then HTTP/1.1 or HTTP/2 (by ALPN or preface)
/// is served on the decrypted stream; the certificates are reloaded while the listener runs.
pub async fn serve_on<H, Fut, O, B>(
    listener: TcpListener,
    tls: Option<TlsServer>,
    gate: Arc<ConnGate>,
    handler: H,
    shutdown: impl Future<Output = ()>,
) where
    H: Fn(Request<Incoming>, ConnInfo) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = O> + Send + 'static,
    O: Into<Outcome<B>>,
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let reloader = tls.as_ref().and_then(TlsServer::spawn_reloader);
    let limits = gate.limits;
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(limits.max_header_bytes.max(8192));
    // HTTP/2 headers are bounded by the idle clock in `idle`; pings find peers that vanished.
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(H2_PING_INTERVAL))
        .keep_alive_timeout(H2_PING_TIMEOUT)
        .max_concurrent_streams(limits.h2_max_concurrent_streams)
        .max_header_list_size(u32::try_from(limits.max_header_bytes).unwrap_or(u32::MAX));
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(err) => {
                    // EMFILE and friends: keep serving the connections we have.
                    tracing::warn!(error = %err, "accept failed");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let permit = match gate.admit(peer.ip()) {
            Ok(permit) => permit,
            Err(why) => {
                tracing::debug!(%peer, limit = why.slug(), "connection refused");
                let _ = stream.try_write(CONNECTION_REFUSAL);
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let local = stream.local_addr().unwrap_or(peer);
        let info = ConnInfo { peer, local };
        let switch = KillSwitch::default();
        let activity = Arc::new(idle::Activity::default());
        let handler = handler.clone();
        let conn_switch = switch.clone();
        let conn_activity = activity.clone();
        let conn_gate = gate.clone();
        let service = service_fn(move |req: Request<Incoming>| {
            let multiplexed = req.version() == Version::HTTP_2;
            let busy = conn_activity.begin();
            let stream_permit = conn_gate.admit_stream();
            let fut = stream_permit.is_some().then(|| handler(req, info));
            let switch = conn_switch.clone();
            async move {
                let (Some(fut), Some(stream_permit)) = (fut, stream_permit) else {
                    return Ok(streams_refusal());
                };
                match fut.await.into() {
                    Outcome::Respond(resp) => {
                        if resp.status() == hyper::StatusCode::SWITCHING_PROTOCOLS {
                            busy.switching_protocols();
                        }
                        Ok(resp.map(|body| TrackedBody::handler(body, stream_permit, busy)))
                    }
                    Outcome::Kill => {
                        if !multiplexed {
                            switch.trip();
                        }
                        Err(Killed)
                    }
                }
            }
        });
        let timeout_gate = gate.clone();
        let on_timeout = Box::new(move || timeout_gate.note(Refusal::HeaderTimeout));
        // One span per connection: every request span a door opens is its child, so a log
        // line of a request also names the connection (and every request of one keep-alive
        // or h2 connection can be found together). Its id is the process's connection count.
        let conn_span = tracing::info_span!("conn", id = next_conn_id(), %peer, tls = tls.is_some());
        let stream = KillableStream::new(stream, switch);
        let Some(tls) = &tls else {
            let io = idle::IdleStream::new(stream, activity, limits.header_read_timeout, on_timeout).holding(permit);
            let conn = builder.serve_connection_with_upgrades(TokioIo::new(io), service).into_owned();
            let conn = graceful.watch(conn);
            tokio::spawn(
                async move {
                    if let Err(err) = conn.await {
                        tracing::debug!(error = %err, %peer, "connection closed with error");
                    }
                }
                .instrument(conn_span),
            );
            continue;
        };
        let handshake = tls.acceptor.accept(stream);
        let builder = builder.clone();
        let watcher = graceful.watcher();
        tokio::spawn(
            async move {
                match tokio::time::timeout(limits.header_read_timeout, handshake).await {
                    Ok(Ok(stream)) => {
                        let io = idle::IdleStream::new(stream, activity, limits.header_read_timeout, on_timeout).holding(permit);
                        let conn = watcher.watch(builder.serve_connection_with_upgrades(TokioIo::new(io), service).into_owned());
                        if let Err(err) = conn.await {
                            tracing::debug!(error = %err, %peer, "TLS connection closed with error");
                        }
                    }
                    Ok(Err(err)) => tracing::debug!(error = %err, %peer, "TLS handshake failed"),
                    Err(_) => on_timeout(),
                }
            }
            .instrument(conn_span),
        );
    }
    if let Some(reloader) = reloader {
        reloader.abort();
    }
    // Close the listening socket first: new connections are refused at once (a balancer moves
    // on) instead of queueing in the backlog until the in-flight ones have finished.
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await.is_err() {
        tracing::info!("connections still open after {SHUTDOWN_GRACE:?}; closing them");
    }
}

/// The process's connection count so far: a connection span's id (unique per process; the
/// request spans under it carry the request id that events and audit lines repeat).
fn next_conn_id() -> u64 {
    static ACCEPTED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    ACCEPTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// 503 for a request over `max_streams`; the connection stays usable.
fn streams_refusal<B>() -> Response<TrackedBody<B>> {
    let mut resp = Response::new(TrackedBody::refusal(tracked::STREAMS_REFUSAL));
    *resp.status_mut() = hyper::StatusCode::SERVICE_UNAVAILABLE;
    resp.headers_mut().insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("application/json"));
    resp
}
