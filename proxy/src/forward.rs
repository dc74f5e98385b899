//! Forwarding to the upstream: a pooled client (plain or TLS by TARGET_URL's scheme; HTTP/1.1,
//! HTTP/2 or ALPN by WAF_UPSTREAM_PROTOCOL), RFC 9110 hop-by-hop handling, the X-Forwarded-*
//! headers, and the WebSocket relay ([`super::websocket`]) once a scored handshake is accepted
//! by the upstream.

use std::net::IpAddr;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue, CONNECTION, HOST, TE, UPGRADE};
use hyper::upgrade::OnUpgrade;
use hyper::{HeaderMap, Request, Response, Uri, Version};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;

use gate::body::ReplayBody;
pub use gate::errors::UpstreamError;

/// Connection-specific fields (RFC 9110 7.6.1) plus the pre-standard ones still seen.
/// Parsed once: removing by `&str` parses and lower-cases each name again, twice per request.
const HOP_BY_HOP: [HeaderName; 8] = [
    HeaderName::from_static("connection"),
    HeaderName::from_static("proxy-connection"),
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("te"),
    HeaderName::from_static("transfer-encoding"),
    HeaderName::from_static("upgrade"),
    HeaderName::from_static("proxy-authenticate"),
    HeaderName::from_static("proxy-authorization"),
];

/// Fields a `Connection` header can never remove: the verdict (a client listing
/// `x-waf-score` there would strip the verdict the application relies on), the proxy's own
/// forwarding facts, and the message's identity and framing.
fn never_hop_by_hop(name: &HeaderName) -> bool {
    let name = name.as_str();
    name.starts_with("x-waf-")
        || name.starts_with("x-forwarded-")
        || matches!(name, "host" | "content-length" | "content-type" | "forwarded" | "x-real-ip")
}

/// Removes hop-by-hop fields, including every field the Connection header names (except the
/// ones [`never_hop_by_hop`] protects).
pub fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .filter(|name| !never_hop_by_hop(name))
        .collect();
    for name in named {
        headers.remove(name);
    }
    for name in &HOP_BY_HOP {
        headers.remove(name);
    }
}

/// The client's `TE` lists `trailers` (gRPC clients always send `te: trailers`). RFC 9113
/// 8.2.2 allows exactly that value on HTTP/2, and gRPC servers refuse a call without it.
fn accepts_trailers(headers: &HeaderMap) -> bool {
    headers.get_all(TE).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).any(|coding| {
        let coding = coding.split(';').next().unwrap_or("").trim();
        coding.eq_ignore_ascii_case("trailers")
    })
}

/// An HTTP/1.1 WebSocket handshake: `Connection` names `upgrade` and `Upgrade` is
/// `websocket`. Only WebSocket is passed through: any other protocol (h2c among them) would
/// open a tunnel nobody parses.
pub fn wants_websocket(headers: &HeaderMap, version: Version) -> bool {
    // Most requests stop at the first test: this runs for every request.
    version == Version::HTTP_11
        && headers.get(UPGRADE).and_then(|v| v.to_str().ok()).is_some_and(|v| v.trim().eq_ignore_ascii_case("websocket"))
        && headers
            .get_all(CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|token| token.trim().eq_ignore_ascii_case("upgrade"))
}

/// The client's handshake was accepted (101): the upgrade fields, stripped as hop-by-hop on the
/// way back, are what the client's side of the switch needs.
pub fn reopen_upgrade<B>(mut resp: Response<B>, websocket: bool) -> Response<B> {
    if websocket && resp.status() == hyper::StatusCode::SWITCHING_PROTOCOLS {
        resp.headers_mut().insert(CONNECTION, HeaderValue::from_static("upgrade"));
        resp.headers_mut().insert(UPGRADE, HeaderValue::from_static("websocket"));
    }
    resp
}

const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
const X_FORWARDED_PROTO: HeaderName = HeaderName::from_static("x-forwarded-proto");
const X_FORWARDED_HOST: HeaderName = HeaderName::from_static("x-forwarded-host");

/// The client's X-Forwarded-For hops (empty ones dropped) followed by `peer`. Most requests
/// carry none: then the value is the peer alone, with no list built.
fn forwarded_for(headers: &HeaderMap, peer: IpAddr) -> Option<HeaderValue> {
    let mut hops =
        headers.get_all(&X_FORWARDED_FOR).iter().filter_map(|v| v.to_str().ok()).map(str::trim).filter(|v| !v.is_empty()).peekable();
    if hops.peek().is_none() {
        return HeaderValue::from_str(&peer.to_string()).ok();
    }
    let mut value = String::with_capacity(64);
    for hop in hops {
        value.push_str(hop);
        value.push_str(", ");
    }
    value.push_str(&peer.to_string());
    HeaderValue::from_str(&value).ok()
}

pub struct Upstream {
    client: Client<HttpsConnector<HttpConnector>, ReplayBody>,
    /// `http://host:port` or `https://host:port`, no trailing slash.
    origin: String,
    /// The origin's parts, parsed once: every request's URI is built from them.
    scheme: hyper::http::uri::Scheme,
    /// None only for a target without one (then the client's URI is left as it came).
    authority: Option<hyper::http::uri::Authority>,
    /// Path prefix of TARGET_URL (`/app` in `http://h/app`), no trailing slash.
    prefix: String,
    timeout: Duration,
    /// The proxy's own listener speaks TLS: the X-Forwarded-Proto it vouches for.
    client_proto: &'static str,
    protocol: UpstreamProtocol,
}

/// The protocol the proxy speaks to its upstream (WAF_UPSTREAM_PROTOCOL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpstreamProtocol {
    Http1,
    /// HTTP/2 with prior knowledge: h2c for http://, ALPN `h2` only for https://.
    H2,
    /// ALPN for https:// (h2 when the upstream offers it), HTTP/1.1 for http://.
    Auto,
}

/// How the proxy reaches its upstream.
pub struct UpstreamSettings {
    /// Deadline for the upstream's response headers.
    pub timeout: Duration,
    /// Trust for an https TARGET_URL (unused for http).
    pub tls: rustls::ClientConfig,
    /// Clients reach the proxy over TLS (WAF_TLS_CERT set).
    pub client_tls: bool,
    pub protocol: UpstreamProtocol,
}

/// What the proxy learned about the client, for the forwarded headers.
pub struct ClientFacts {
    pub peer: IpAddr,
    /// The peer is a configured trusted proxy (a TLS terminator, a load balancer): its
    /// X-Forwarded-Proto is kept.
    pub peer_trusted: bool,
}

impl Upstream {
    pub fn new(target: &Uri, settings: UpstreamSettings) -> Self {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(Duration::from_secs(5)));
        // https:// URIs pass the plain connector to the TLS wrapper.
        connector.enforce_http(false);
        // The ALPN offered to an https upstream follows the protocol setting.
        let builder = HttpsConnectorBuilder::new().with_tls_config(settings.tls).https_or_http();
        let connector = match settings.protocol {
            UpstreamProtocol::Http1 => builder.enable_http1().wrap_connector(connector),
            UpstreamProtocol::H2 => builder.enable_http2().wrap_connector(connector),
            UpstreamProtocol::Auto => builder.enable_all_versions().wrap_connector(connector),
        };
        let mut client = Client::builder(TokioExecutor::new());
        client.pool_idle_timeout(Duration::from_secs(60)).pool_max_idle_per_host(1024);
        if settings.protocol == UpstreamProtocol::H2 {
            client.http2_only(true);
        }
        let client = client.build(connector);
        let authority = target.authority().map(|a| a.as_str()).unwrap_or("");
        let scheme = if target.scheme_str() == Some("https") { "https" } else { "http" };
        let origin = format!("{scheme}://{authority}");
        let prefix = target.path().trim_end_matches('/').to_string();
        let client_proto = if settings.client_tls { "https" } else { "http" };
        let scheme = if scheme == "https" { hyper::http::uri::Scheme::HTTPS } else { hyper::http::uri::Scheme::HTTP };
        let authority = target.authority().cloned();
        Upstream { client, origin, scheme, authority, prefix, timeout: settings.timeout, client_proto, protocol: settings.protocol }
    }

    /// Clients reach the proxy over TLS.
    pub fn client_tls(&self) -> bool {
        self.client_proto == "https"
    }

    pub fn origin(&self) -> String {
        format!("{}{}", self.origin, self.prefix)
    }

    /// Rewrites `parts` into the upstream request: URI, version, hop-by-hop fields removed
    /// (`te: trailers` kept towards an upstream that may speak HTTP/2), X-Forwarded-For/Proto/Host added. The caller stamps the X-Waf-* verdict headers
    /// afterwards, so nothing here can remove them.
    pub fn prepare(&self, parts: &mut hyper::http::request::Parts, client: ClientFacts) {
        // HTTP/2 carries the host as :authority, not a Host field; read it before the URI
        // is rewritten to the upstream's.
        let host = parts.headers.get(HOST).cloned().or_else(|| parts.uri.authority().and_then(|a| HeaderValue::from_str(a.as_str()).ok()));
        // An HTTP/2 upstream cannot take an HTTP/1.1 Upgrade.
        let websocket = wants_websocket(&parts.headers, parts.version) && self.protocol != UpstreamProtocol::H2;
        let trailers = self.protocol != UpstreamProtocol::Http1 && accepts_trailers(&parts.headers);
        if let Some(uri) = self.upstream_uri(&parts.uri) {
            parts.uri = uri;
        }
        // Under `auto` the connection's ALPN decides; hyper's pool sends an HTTP/1.1-versioned
        // request over a negotiated h2 connection.
        parts.version = if self.protocol == UpstreamProtocol::H2 { Version::HTTP_2 } else { Version::HTTP_11 };
        let headers = &mut parts.headers;
        strip_hop_by_hop(headers);
        if trailers {
            headers.insert(TE, HeaderValue::from_static("trailers"));
        }
        if websocket {
            headers.insert(CONNECTION, HeaderValue::from_static("upgrade"));
            headers.insert(UPGRADE, HeaderValue::from_static("websocket"));
        } else {
            parts.extensions.remove::<OnUpgrade>();
        }
        if let Some(value) = forwarded_for(headers, client.peer) {
            headers.insert(X_FORWARDED_FOR, value);
        }
        if !(client.peer_trusted && headers.contains_key(&X_FORWARDED_PROTO)) {
            headers.insert(X_FORWARDED_PROTO, HeaderValue::from_static(self.client_proto));
        }
        if let Some(host) = host {
            headers.insert(X_FORWARDED_HOST, host.clone());
            headers.insert(HOST, host);
        }
    }

    /// The client's path and query under the target's origin and prefix. Without a prefix
    /// the client's path-and-query is reused as parsed (no string round trip per request).
    fn upstream_uri(&self, client: &Uri) -> Option<Uri> {
        let path_and_query = client.path_and_query().map(|p| p.as_str()).unwrap_or("/");
        let mut parts = hyper::http::uri::Parts::default();
        parts.scheme = Some(self.scheme.clone());
        parts.authority = Some(self.authority.clone()?);
        parts.path_and_query = match (self.prefix.is_empty(), client.path_and_query()) {
            (true, Some(pq)) => Some(pq.clone()),
            _ => Some(format!("{}{}", self.prefix, path_and_query).parse().ok()?),
        };
        Uri::from_parts(parts).ok()
    }

    /// Sends the request; the response body streams back untouched. A WebSocket handshake
    /// the upstream accepts (101) starts the relay between the two upgraded connections.
    pub async fn send(&self, mut req: Request<ReplayBody>) -> Result<Response<Incoming>, UpstreamError> {
        let client_upgrade = req.extensions_mut().remove::<OnUpgrade>();
        let session = super::websocket::take_session(&mut req);
        match tokio::time::timeout(self.timeout, self.client.request(req)).await {
            Err(_) => Err(UpstreamError::Timeout(self.timeout)),
            Ok(Ok(mut resp)) => {
                if let Some(client_upgrade) = client_upgrade.filter(|_| resp.status() == hyper::StatusCode::SWITCHING_PROTOCOLS) {
                    tokio::spawn(super::websocket::relay(client_upgrade, hyper::upgrade::on(&mut resp), session));
                }
                Ok(resp)
            }
            Ok(Err(err)) if err.is_connect() => Err(UpstreamError::Connect(Box::new(err))),
            Ok(Err(err)) => Err(UpstreamError::Failed(Box::new(err))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upstream(target: &str, client_tls: bool) -> Upstream {
        upstream_speaking(target, client_tls, UpstreamProtocol::Http1)
    }

    fn upstream_speaking(target: &str, client_tls: bool, protocol: UpstreamProtocol) -> Upstream {
        let tls = net::tls::upstream_client_config(&net::tls::UpstreamTrust::default()).unwrap();
        Upstream::new(&target.parse().unwrap(), UpstreamSettings { timeout: Duration::from_secs(1), tls, client_tls, protocol })
    }

    #[test]
    fn hop_by_hop_fields_and_the_ones_connection_names_are_removed() {
        let mut headers = HeaderMap::new();
        headers.insert("connection", "keep-alive, X-Secret-Hop".parse().unwrap());
        headers.insert("keep-alive", "timeout=5".parse().unwrap());
        headers.insert("x-secret-hop", "1".parse().unwrap());
        headers.insert("transfer-encoding", "chunked".parse().unwrap());
        headers.insert("te", "trailers".parse().unwrap());
        headers.insert("upgrade", "websocket".parse().unwrap());
        headers.insert("content-type", "application/json".parse().unwrap());
        strip_hop_by_hop(&mut headers);
        assert_eq!(headers.len(), 1, "{headers:?}");
        assert!(headers.contains_key("content-type"));
    }

    #[test]
    fn connection_cannot_name_the_verdict_or_the_forwarding_facts() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "connection",
            "X-Waf-Score, x-waf-reason, x-forwarded-for, host, content-length, content-type, x-other".parse().unwrap(),
        );
        for name in ["x-waf-score", "x-waf-reason", "x-forwarded-for", "host", "content-length", "content-type", "x-other"] {
            headers.insert(name, "1".parse().unwrap());
        }
        strip_hop_by_hop(&mut headers);
        assert!(!headers.contains_key("x-other") && !headers.contains_key("connection"));
        assert_eq!(headers.len(), 6, "{headers:?}");
    }

    #[test]
    fn target_prefix_and_forwarded_headers() {
        let upstream = upstream("http://127.0.0.1:9/app/", false);
        let req = Request::builder()
            .uri("/search?q=1")
            .header("host", "shop.example")
            .header("x-forwarded-for", "203.0.113.9")
            .header("x-forwarded-for", "198.51.100.4")
            .header("x-forwarded-proto", "https")
            .body(())
            .unwrap();
        let (mut parts, _) = req.into_parts();
        upstream.prepare(&mut parts, ClientFacts { peer: "10.0.0.2".parse().unwrap(), peer_trusted: false });
        assert_eq!(parts.uri, "http://127.0.0.1:9/app/search?q=1");
        assert_eq!(parts.headers["x-forwarded-for"], "203.0.113.9, 198.51.100.4, 10.0.0.2");
        assert_eq!(parts.headers["x-forwarded-host"], "shop.example");
        assert_eq!(parts.headers["host"], "shop.example");
        assert_eq!(parts.headers["x-forwarded-proto"], "http", "an untrusted peer cannot claim https");
    }

    #[test]
    fn http2_authority_becomes_the_host_and_a_trusted_proto_is_kept() {
        let upstream = upstream("http://127.0.0.1:9", false);
        let req = Request::builder()
            .uri("https://shop.example/cart")
            .version(Version::HTTP_2)
            .header("x-forwarded-proto", "https")
            .body(())
            .unwrap();
        let (mut parts, _) = req.into_parts();
        upstream.prepare(&mut parts, ClientFacts { peer: "10.0.0.2".parse().unwrap(), peer_trusted: true });
        assert_eq!(parts.uri, "http://127.0.0.1:9/cart");
        assert_eq!(parts.headers["host"], "shop.example");
        assert_eq!(parts.headers["x-forwarded-proto"], "https");
        assert_eq!(parts.version, Version::HTTP_11);
    }

    #[test]
    fn behind_tls_the_proto_is_https_and_an_https_target_keeps_its_scheme() {
        let upstream = upstream("https://app.internal:8443/v1", true);
        let req = Request::builder().uri("/cart").header("host", "shop.example").header("x-forwarded-proto", "http").body(()).unwrap();
        let (mut parts, _) = req.into_parts();
        upstream.prepare(&mut parts, ClientFacts { peer: "10.0.0.2".parse().unwrap(), peer_trusted: false });
        assert_eq!(parts.uri, "https://app.internal:8443/v1/cart");
        assert_eq!(parts.headers["x-forwarded-proto"], "https", "the proxy terminated TLS itself");
        assert!(upstream.client_tls());
    }

    #[test]
    fn an_h2_upstream_gets_http2_and_te_trailers_only() {
        let req = |te: &str| {
            let req = Request::builder().uri("/pkg.Echo/Say").version(Version::HTTP_2).header("te", te).body(()).unwrap();
            req.into_parts().0
        };
        let facts = || ClientFacts { peer: "10.0.0.2".parse().unwrap(), peer_trusted: false };
        let h2 = upstream_speaking("http://127.0.0.1:9", false, UpstreamProtocol::H2);
        let mut parts = req("trailers");
        h2.prepare(&mut parts, facts());
        assert_eq!((parts.version, &parts.headers["te"]), (Version::HTTP_2, &HeaderValue::from_static("trailers")));
        let mut parts = req("gzip, Trailers;q=1");
        h2.prepare(&mut parts, facts());
        assert_eq!(parts.headers["te"], "trailers", "only `trailers` survives: RFC 9113 8.2.2");
        let mut parts = req("gzip");
        h2.prepare(&mut parts, facts());
        assert!(!parts.headers.contains_key("te"));
        let auto = upstream_speaking("https://127.0.0.1:9", false, UpstreamProtocol::Auto);
        let mut parts = req("trailers");
        auto.prepare(&mut parts, facts());
        assert_eq!((parts.version, &parts.headers["te"]), (Version::HTTP_11, &HeaderValue::from_static("trailers")));
        let http1 = upstream("http://127.0.0.1:9", false);
        let mut parts = req("trailers");
        http1.prepare(&mut parts, facts());
        assert!(!parts.headers.contains_key("te"), "an HTTP/1.1 upstream keeps today's hop-by-hop handling");
    }
}
