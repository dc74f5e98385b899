//! Proxy test fixtures: a recording upstream, a proxy in front of it sharing one engine
//! across tests, and a raw HTTP client that can pick its source address.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::Parser;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{HeaderMap, Method, Request, Response};
use hyper_util::rt::TokioIo;
use services::cli::{Cli, Command};
use services::config::ProxyOptions;
use services::metrics::Metrics;
use services::proxy::ProxyParts;
use services::run::{start_proxy_with, ProxyServer};
use services::scorer::{InProcessScorer, RemoteScorer, Scorer};
use tokio::net::{TcpSocket, TcpStream};

use super::workspace_root;

/// What the upstream received.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub uri: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

pub struct Upstream {
    pub addr: SocketAddr,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    /// Dropping the upstream stops its server.
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Upstream {
    pub fn count(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    pub fn last(&self) -> Seen {
        self.seen.lock().unwrap().last().cloned().expect("the upstream saw a request")
    }
}

/// A real HTTP server that records every request and answers `upstream ok`.
pub async fn upstream() -> Upstream {
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let log = seen.clone();
    let listener = net::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(net::serve(
        listener,
        move |req: Request<Incoming>, _conn| {
            let log = log.clone();
            async move {
                let (parts, body) = req.into_parts();
                let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                log.lock().unwrap().push(Seen {
                    method: parts.method.to_string(),
                    uri: parts.uri.to_string(),
                    headers: parts.headers,
                    body,
                });
                let mut resp = Response::new(Full::new(Bytes::from_static(b"upstream ok")));
                resp.headers_mut().insert("x-upstream", "yes".parse().unwrap());
                resp
            }
        },
        async move {
            let _ = rx.await;
        },
    ));
    Upstream { addr, seen, _stop: tx }
}

/// One engine (models loaded once) for every proxy in the test binary.
pub fn shared_engine() -> Arc<scoring::Engine> {
    static ENGINE: OnceLock<Arc<scoring::Engine>> = OnceLock::new();
    ENGINE.get_or_init(|| engine_with(&[])).clone()
}

/// Proxy settings as an operator would pass them (plus `--audit-log off`).
pub fn proxy_options(target: SocketAddr, extra: &[&str]) -> ProxyOptions {
    let target = format!("http://{target}");
    let mut argv: Vec<String> = vec!["rampart".into(), "proxy".into()];
    for (flag, default) in [("--proxy-addr", "127.0.0.1:0"), ("--target-url", target.as_str()), ("--audit-log", "off")] {
        if !extra.contains(&flag) {
            argv.extend([flag.to_string(), default.to_string()]);
        }
    }
    argv.extend(extra.iter().map(|s| s.to_string()));
    let _ = workspace_root();
    match Cli::parse_from(argv).command {
        Command::Proxy(args) => args.proxy,
        _ => unreachable!(),
    }
}

pub struct TestProxy {
    pub server: ProxyServer,
    pub addr: SocketAddr,
    pub metrics: Arc<Metrics>,
}

/// A proxy scoring with the shared in-process engine.
pub fn start_proxy(target: SocketAddr, extra: &[&str]) -> TestProxy {
    let scorer: Arc<dyn Scorer> = Arc::new(InProcessScorer::new(shared_engine()));
    start_with_scorer(target, extra, scorer)
}

/// A proxy scoring through the inference service at `inference` (`INFERENCE_URL`).
pub fn start_remote_proxy(target: SocketAddr, inference: &str, timeout: Duration, extra: &[&str]) -> TestProxy {
    let scorer: Arc<dyn Scorer> = Arc::new(RemoteScorer::new(&inference.parse().unwrap(), timeout));
    start_with_scorer(target, extra, scorer)
}

/// An engine of its own built from engine flags (`--model-client-queue 8`...), models loaded.
pub fn engine_with(flags: &[&str]) -> Arc<scoring::Engine> {
    let args = super::inference_args(flags);
    let engine = Arc::new(scoring::Engine::new(args.engine.engine_config()).expect("engine builds"));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !engine.ready() {
        assert!(Instant::now() < deadline, "models did not load in 60 s: {:?}", engine.model_status());
        std::thread::sleep(Duration::from_millis(20));
    }
    engine
}

/// A proxy scoring in process with `engine`.
pub fn start_proxy_on(engine: Arc<scoring::Engine>, target: SocketAddr, extra: &[&str]) -> TestProxy {
    start_with_scorer(target, extra, Arc::new(InProcessScorer::new(engine)))
}

fn start_with_scorer(target: SocketAddr, extra: &[&str], scorer: Arc<dyn Scorer>) -> TestProxy {
    let options = proxy_options(target, extra);
    let metrics = Arc::new(Metrics::new());
    let parts =
        ProxyParts { target: format!("http://{target}").parse().unwrap(), threshold: 0.5, scorer, metrics: metrics.clone(), audit: None };
    let server = start_proxy_with(&options, parts).expect("proxy starts");
    let addr = server.running.addr;
    TestProxy { server, addr, metrics }
}

/// A response read whole.
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Reply {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", String::from_utf8_lossy(&self.body)))
    }
}

/// Opens a TCP connection to `addr`, from `source` when given (e.g. 127.0.0.2).
pub async fn connect(addr: SocketAddr, source: Option<IpAddr>) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    if let Some(ip) = source {
        socket.bind(SocketAddr::new(ip, 0))?;
    }
    socket.connect(addr).await
}

/// One HTTP/1.1 request on a fresh connection; `Err` when the connection breaks.
pub async fn send_from(addr: SocketAddr, source: Option<IpAddr>, req: Request<Full<Bytes>>) -> Result<Reply, String> {
    let stream = connect(addr, source).await.map_err(|e| e.to_string())?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    let resp = sender.send_request(req).await.map_err(|e| format!("{e:?}"))?;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
    Ok(Reply { status, headers, body })
}

pub async fn send(addr: SocketAddr, req: Request<Full<Bytes>>) -> Reply {
    send_from(addr, None, req).await.expect("the proxy answers")
}

/// Rampart's own endpoints (answered by the proxy, not the upstream).
pub fn is_rampart_path(path: &str) -> bool {
    ["/api/mode", "/api/events", "/api/stats", "/_waf/"].iter().any(|p| path.starts_with(p))
}

/// A request as a client sends it: `Host: shop.example` for the application; Rampart's own
/// endpoints are reached by address with JSON, as an operator's tools do (a DNS name is
/// refused there unless listed in WAF_ADMIN_HOSTS, and state changes must be JSON).
pub fn request(method: Method, path: &str, body: &str) -> Request<Full<Bytes>> {
    let own = is_rampart_path(path);
    let mut builder = Request::builder().method(method.clone()).uri(path).header("host", if own { "127.0.0.1" } else { "shop.example" });
    if own && method == Method::POST {
        builder = builder.header("content-type", "application/json");
    }
    builder.body(Full::new(Bytes::from(body.to_string()))).unwrap()
}

pub fn get(path: &str) -> Request<Full<Bytes>> {
    request(Method::GET, path, "")
}

pub async fn set_mode(addr: SocketAddr, mode: &str) {
    let reply = send(addr, request(Method::POST, "/api/mode", &format!("{{\"mode\":\"{mode}\"}}"))).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.json()["mode"], mode);
}

pub async fn metrics_text(addr: SocketAddr) -> String {
    let reply = send(addr, get("/metrics")).await;
    assert_eq!(reply.status, 200);
    String::from_utf8(reply.body.to_vec()).unwrap()
}

/// The value of one sample line (`name{labels} value`) in a /metrics text.
pub fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series).and_then(|rest| rest.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no `{series}` in:\n{text}"))
        .trim()
        .parse()
        .unwrap()
}

pub const SQLI: &str = "/search?q=1%27%20union%20select%20password%20from%20users--";
