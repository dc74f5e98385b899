//! TLS at the proxy over real sockets: a CA and leaf certificates generated per test (rcgen),
//! real clients (curl, openssl s_client) through the TLS proxy to a real upstream, and the
//! proxy in front of an https upstream.

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::Parser;
use common::proxy::*;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use services::cli::{Cli, Command as CliCommand};
use services::metrics::Metrics;
use services::proxy::ProxyParts;
use services::run::start_proxy_with;
use services::scorer::InProcessScorer;

/// A private CA and the folder its files are written to.
struct Pki {
    dir: PathBuf,
    issuer: Issuer<'static, KeyPair>,
}

/// A leaf's certificate and key files.
struct Leaf {
    cert: PathBuf,
    key: PathBuf,
}

impl Pki {
    fn new() -> Pki {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!("rampart-tls-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, "Rampart test CA");
        std::fs::write(dir.join("ca.pem"), params.self_signed(&key).unwrap().pem()).unwrap();
        Pki { dir, issuer: Issuer::new(params, key) }
    }

    fn ca(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// A leaf for `names` (DNS names or IP literals), common name `names[0]`, as `file`.pem
    /// and `file`.key.
    fn leaf(&self, file: &str, names: &[&str]) -> Leaf {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
        params.distinguished_name.push(DnType::CommonName, names[0]);
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        let leaf = Leaf { cert: self.dir.join(format!("{file}.pem")), key: self.dir.join(format!("{file}.key")) };
        write_replacing(&leaf.cert, &cert.pem());
        write_replacing(&leaf.key, &key.serialize_pem());
        leaf
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Writes `path` the way a certificate manager does: a new file renamed over the old one.
fn write_replacing(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn tls_flags<'a>(leaves: &[&'a Leaf]) -> Vec<&'a str> {
    let mut flags = Vec::new();
    for leaf in leaves {
        flags.extend(["--tls-cert", leaf.cert.to_str().unwrap(), "--tls-key", leaf.key.to_str().unwrap()]);
    }
    flags
}

/// Runs a client program to completion off the runtime's threads.
async fn run(program: &'static str, args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || Command::new(program).args(&args).output().unwrap_or_else(|e| panic!("{program} runs: {e}")))
        .await
        .unwrap()
}

/// What curl saw: status, HTTP version and body; stderr when the transfer failed.
struct CurlReply {
    ok: bool,
    status: u16,
    version: String,
    body: String,
    stderr: String,
}

/// `curl https://shop.example:PORT{path}` resolved to the proxy, trusting `ca`.
async fn curl(proxy: SocketAddr, ca: &Path, path: &str, extra: &[&str]) -> CurlReply {
    let port = proxy.port();
    let mut args: Vec<String> = ["-sS", "--max-time", "10", "--cacert", ca.to_str().unwrap(), "-w", "\n%{http_code} %{http_version}"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(["--resolve".into(), format!("shop.example:{port}:127.0.0.1")]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push(format!("https://shop.example:{port}{path}"));
    let out = run("curl", args).await;
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let (body, last) = stdout.rsplit_once('\n').unwrap_or(("", &stdout));
    let mut last = last.split(' ');
    CurlReply {
        ok: out.status.success(),
        status: last.next().and_then(|s| s.parse().ok()).unwrap_or(0),
        version: last.next().unwrap_or("").to_string(),
        body: body.to_string(),
        stderr: String::from_utf8_lossy(&out.stderr).to_string(),
    }
}

/// The common name of the certificate the proxy serves for `sni` (none: no SNI at all).
async fn served_cn(proxy: SocketAddr, sni: Option<&str>) -> String {
    let mut args = vec!["s_client".to_string(), "-connect".into(), proxy.to_string(), "-brief".into()];
    match sni {
        Some(name) => args.extend(["-servername".into(), name.to_string()]),
        None => args.push("-noservername".into()),
    }
    let out = run("openssl", args).await;
    let text = String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with("Peer certificate:")).unwrap_or_else(|| panic!("no peer certificate in:\n{text}"));
    line.rsplit("CN = ").next().unwrap().trim().to_string()
}

/// An active-mode TLS proxy (kills answered 403) for shop.example in front of a recording
/// upstream.
async fn active_tls_proxy() -> (Pki, Upstream, TestProxy) {
    let pki = Pki::new();
    let leaf = pki.leaf("shop", &["shop.example"]);
    let app = upstream().await;
    let mut flags = tls_flags(&[&leaf]);
    flags.extend(["--mode", "active", "--kill-response", "forbidden"]);
    let proxy = start_proxy(app.addr, &flags);
    (pki, app, proxy)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn benign_get_passes_and_an_attack_is_blocked_over_tls() {
    let (pki, app, proxy) = active_tls_proxy().await;

    let reply = curl(proxy.addr, &pki.ca(), "/products?page=2", &["--http1.1"]).await;
    assert!(reply.ok, "{}", reply.stderr);
    assert_eq!((reply.status, reply.version.as_str(), reply.body.as_str()), (200, "1.1", "upstream ok"));
    let seen = app.last();
    assert_eq!(seen.headers["x-forwarded-proto"], "https", "the proxy terminated TLS");
    assert_eq!(seen.headers["host"], format!("shop.example:{}", proxy.addr.port()));

    let before = app.count();
    let reply = curl(proxy.addr, &pki.ca(), SQLI, &["--http1.1"]).await;
    assert_eq!(reply.status, 403, "{}", reply.body);
    assert_eq!(app.count(), before, "a blocked request never reaches the upstream");

    // A plain-HTTP request to the TLS port is not served.
    let plain = send_from(proxy.addr, None, get("/products")).await;
    assert!(plain.is_err() || plain.is_ok_and(|r| r.status == 400), "plain HTTP on the TLS port must fail");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2_is_negotiated_by_alpn_and_scored_like_http1() {
    let (pki, app, proxy) = active_tls_proxy().await;

    let reply = curl(proxy.addr, &pki.ca(), "/cart", &["--http2"]).await;
    assert!(reply.ok, "{}", reply.stderr);
    assert_eq!((reply.status, reply.version.as_str(), reply.body.as_str()), (200, "2", "upstream ok"));
    assert_eq!(app.last().headers["x-forwarded-proto"], "https");
    let reply = curl(proxy.addr, &pki.ca(), SQLI, &["--http2"]).await;
    assert_eq!((reply.status, reply.version.as_str()), (403, "2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_tls_1_2_and_1_3_are_spoken() {
    let pki = Pki::new();
    let leaf = pki.leaf("shop", &["shop.example"]);
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &tls_flags(&[&leaf]));

    for version in ["1.2", "1.3"] {
        let min = format!("--tlsv{version}");
        let reply = curl(proxy.addr, &pki.ca(), "/", &[min.as_str(), "--tls-max", version]).await;
        assert!(reply.ok && reply.status == 200, "TLS {version}: {}", reply.stderr);
    }
    for version in ["1.0", "1.1"] {
        let min = format!("--tlsv{version}");
        // SECLEVEL=0 lets this OpenSSL offer the old versions at all: the refusal must come
        // from the proxy, as an alert it sends (OpenSSL prints a peer's alert as "... alert
        // <description>"; its own refusal would read "no protocols available").
        let reply = curl(proxy.addr, &pki.ca(), "/", &[min.as_str(), "--tls-max", version, "--ciphers", "DEFAULT@SECLEVEL=0"]).await;
        assert!(!reply.ok, "TLS {version} was accepted");
        assert!(reply.stderr.contains(" alert "), "TLS {version}: the proxy sent no alert: {}", reply.stderr);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sni_picks_the_certificate_and_unknown_names_get_the_default() {
    let pki = Pki::new();
    let shop = pki.leaf("shop", &["shop.example", "www.shop.example"]);
    let api = pki.leaf("api", &["api.example", "*.api.example"]);
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &tls_flags(&[&shop, &api]));

    assert_eq!(served_cn(proxy.addr, Some("api.example")).await, "api.example");
    assert_eq!(served_cn(proxy.addr, Some("v2.api.example")).await, "api.example", "wildcard names count");
    assert_eq!(served_cn(proxy.addr, Some("www.shop.example")).await, "shop.example");
    assert_eq!(served_cn(proxy.addr, Some("unknown.example")).await, "shop.example", "the first certificate is the default");
    assert_eq!(served_cn(proxy.addr, None).await, "shop.example");
    // And a verifying client is served a chain it accepts for the second name.
    let port = proxy.addr.port();
    let resolve = format!("api.example:{port}:127.0.0.1");
    let out = run(
        "curl",
        ["-sS", "--cacert", pki.ca().to_str().unwrap(), "--resolve", &resolve, &format!("https://api.example:{port}/v1")]
            .map(String::from)
            .to_vec(),
    )
    .await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(app.last().uri, "/v1");
}

/// The start-up error for these proxy flags (clap's or the proxy's own).
fn startup_error(extra: &[&str]) -> String {
    let mut argv = vec!["rampart", "proxy", "--proxy-addr", "127.0.0.1:0", "--audit-log", "off", "--target-url", "http://127.0.0.1:9"];
    argv.extend(extra);
    let options = match Cli::try_parse_from(&argv) {
        Err(err) => return err.to_string(),
        Ok(Cli { command: CliCommand::Proxy(args), .. }) => args.proxy,
        Ok(_) => unreachable!(),
    };
    let parts = ProxyParts {
        target: "http://127.0.0.1:9".parse().unwrap(),
        threshold: 0.5,
        scorer: Arc::new(InProcessScorer::new(shared_engine())),
        metrics: Arc::new(Metrics::new()),
        audit: None,
    };
    match start_proxy_with(&options, parts) {
        Ok(_) => panic!("{extra:?} started"),
        Err(err) => err.to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_tls_settings_stop_start_up_naming_the_setting_and_file() {
    let pki = Pki::new();
    let shop = pki.leaf("shop", &["shop.example"]);
    let other = pki.leaf("other", &["other.example"]);
    let garbage = pki.dir.join("garbage.pem");
    std::fs::write(&garbage, "not a certificate\n").unwrap();
    let missing = pki.dir.join("missing.pem");
    let (cert, key, other_key) = (shop.cert.to_str().unwrap(), shop.key.to_str().unwrap(), other.key.to_str().unwrap());
    let (garbage, missing) = (garbage.to_str().unwrap(), missing.to_str().unwrap());

    let cases: [(&[&str], &[&str]); 7] = [
        (&["--tls-cert", cert], &["WAF_TLS_KEY"]),
        (&["--tls-key", key], &["WAF_TLS_CERT"]),
        (&["--tls-cert", missing, "--tls-key", key], &["WAF_TLS_CERT", missing]),
        (&["--tls-cert", garbage, "--tls-key", key], &["WAF_TLS_CERT", garbage]),
        (&["--tls-cert", cert, "--tls-key", garbage], &["WAF_TLS_KEY", garbage]),
        (&["--tls-cert", cert, "--tls-key", other_key], &["WAF_TLS_KEY", other_key, cert]),
        (&["--upstream-ca-file", garbage], &["WAF_UPSTREAM_CA_FILE", garbage]),
    ];
    for (flags, words) in cases {
        let err = startup_error(flags);
        assert!(words.iter().all(|w| err.contains(w)), "{flags:?}: {err}");
    }
    let err = startup_error(&["--tls-cert", &format!("{cert},{cert}"), "--tls-key", key]);
    assert!(err.contains("WAF_TLS_CERT lists 2") && err.contains("WAF_TLS_KEY lists 1"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificates_reload_when_the_files_change_and_a_bad_file_keeps_the_old_one() {
    let pki = Pki::new();
    let leaf = pki.leaf("live", &["first.example"]);
    let app = upstream().await;
    let mut flags = tls_flags(&[&leaf]);
    flags.extend(["--tls-reload-secs", "1"]);
    let proxy = start_proxy(app.addr, &flags);
    assert_eq!(served_cn(proxy.addr, None).await, "first.example");

    // A half-written certificate: the old one keeps being served.
    write_replacing(&leaf.cert, "-----BEGIN CERTIFICATE-----\ntruncated\n");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(served_cn(proxy.addr, None).await, "first.example");

    // The renewed pair replaces it for new connections.
    pki.leaf("live", &["second.example"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let cn = served_cn(proxy.addr, None).await;
        if cn == "second.example" {
            break;
        }
        assert!(Instant::now() < deadline, "still serving {cn} 10 s after the files changed");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// An https application server (rustls through `net`, answering `tls upstream ok`).
async fn https_upstream(leaf: &Leaf) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let settings = net::TlsSettings { certs: vec![leaf.cert.clone()], keys: vec![leaf.key.clone()], reload_every: Duration::ZERO };
    let tls = net::TlsServer::new(settings).unwrap();
    let listener = net::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let gate = net::ConnGate::unobserved(net::ServeLimits::default());
    let answer = |_req: Request<Incoming>, _conn| async { Response::new(Full::new(Bytes::from_static(b"tls upstream ok"))) };
    tokio::spawn(net::serve_on(listener, Some(tls), gate, answer, async move {
        let _ = rx.await;
    }));
    (addr, tx)
}

/// A plain-HTTP proxy in front of `target` (an https URL) with `extra` flags.
fn proxy_to(target: &str, extra: &[&str]) -> TestProxy {
    let mut flags = vec!["--target-url", target];
    flags.extend(extra);
    let options = proxy_options("127.0.0.1:9".parse().unwrap(), &flags);
    let metrics = Arc::new(Metrics::new());
    let parts = ProxyParts {
        target: target.parse().unwrap(),
        threshold: 0.5,
        scorer: Arc::new(InProcessScorer::new(shared_engine())),
        metrics: metrics.clone(),
        audit: None,
    };
    let server = start_proxy_with(&options, parts).expect("proxy starts");
    let addr = server.running.addr;
    TestProxy { server, addr, metrics }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_upstreams_are_verified_against_the_ca_file_or_explicitly_not() {
    let pki = Pki::new();
    let leaf = pki.leaf("app", &["localhost"]);
    let (app, _stop) = https_upstream(&leaf).await;
    let target = format!("https://localhost:{}", app.port());
    let ca = pki.ca();

    let trusted = proxy_to(&target, &["--upstream-ca-file", ca.to_str().unwrap()]);
    let reply = send(trusted.addr, get("/orders")).await;
    assert_eq!((reply.status, reply.body.as_ref()), (200, b"tls upstream ok".as_ref()));

    // Not in the system roots: the upstream is refused (502), never spoken to unverified.
    let untrusted = proxy_to(&target, &[]);
    let reply = send(untrusted.addr, get("/orders")).await;
    assert_eq!(reply.status, 502, "{:?}", reply.body);

    let insecure = proxy_to(&target, &["--upstream-insecure-skip-verify"]);
    let reply = send(insecure.addr, get("/orders")).await;
    assert_eq!((reply.status, reply.body.as_ref()), (200, b"tls upstream ok".as_ref()));

    // The name is checked too: the CA-signed certificate does not cover 127.0.0.1.
    let wrong_name = proxy_to(&format!("https://127.0.0.1:{}", app.port()), &["--upstream-ca-file", ca.to_str().unwrap()]);
    let reply = send(wrong_name.addr, get("/orders")).await;
    assert_eq!(reply.status, 502, "{:?}", reply.body);
}

/// One client connection to the proxy, plain or TLS (trusting `ca`, SNI shop.example).
async fn client_conn(addr: SocketAddr, tls: Option<&tokio_rustls::TlsConnector>) -> hyper::client::conn::http1::SendRequest<Full<Bytes>> {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.set_nodelay(true).unwrap();
    let (sender, conn) = match tls {
        None => {
            let (sender, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp)).await.unwrap();
            (sender, tokio::spawn(async move { conn.await.map_err(|e| e.to_string()) }))
        }
        Some(connector) => {
            let name = rustls::pki_types::ServerName::try_from("shop.example").unwrap();
            let stream = connector.connect(name, tcp).await.unwrap();
            let (sender, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await.unwrap();
            (sender, tokio::spawn(async move { conn.await.map_err(|e| e.to_string()) }))
        }
    };
    drop(conn);
    sender
}

async fn get_ok(sender: &mut hyper::client::conn::http1::SendRequest<Full<Bytes>>) {
    use http_body_util::BodyExt;
    let resp = sender.send_request(get("/products?page=2")).await.unwrap();
    assert_eq!(resp.status(), 200);
    resp.into_body().collect().await.unwrap();
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)].as_secs_f64() * 1000.0
}

/// Figures for docs/PROXY.md (not a timed assertion): `cargo test --release -p
/// rampart-services --test proxy_tls -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement; run by hand"]
async fn measure_tls_against_plain() {
    let pki = Pki::new();
    let leaf = pki.leaf("shop", &["shop.example"]);
    let app = upstream().await;
    let plain = start_proxy(app.addr, &[]);
    let tls = start_proxy(app.addr, &tls_flags(&[&leaf]));
    let mut roots = rustls::RootCertStore::empty();
    for cert in net::tls::load_certs("test CA", &pki.ca()).unwrap() {
        roots.add(cert).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider).with_safe_default_protocol_versions().unwrap();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config.with_root_certificates(roots).with_no_client_auth()));

    for (label, addr, tls) in [("plain", plain.addr, None), ("tls", tls.addr, Some(&connector))] {
        // A new connection per request: handshake + GET, one at a time.
        let mut lat = Vec::new();
        for i in 0..600 {
            let started = Instant::now();
            let mut sender = client_conn(addr, tls).await;
            get_ok(&mut sender).await;
            if i >= 100 {
                lat.push(started.elapsed());
            }
        }
        lat.sort();
        println!("{label}: connect+GET p50 {:.3} ms p99 {:.3} ms (n={})", percentile(&lat, 0.5), percentile(&lat, 0.99), lat.len());
        // Keep-alive throughput: 16 connections, 3 s.
        let deadline = Instant::now() + Duration::from_secs(3);
        let workers: Vec<_> = (0..16)
            .map(|_| {
                let tls = tls.cloned();
                tokio::spawn(async move {
                    let mut sender = client_conn(addr, tls.as_ref()).await;
                    let mut done = 0u64;
                    while Instant::now() < deadline {
                        get_ok(&mut sender).await;
                        done += 1;
                    }
                    done
                })
            })
            .collect();
        let mut total = 0;
        for worker in workers {
            total += worker.await.unwrap();
        }
        println!("{label}: keep-alive GET {:.0} rps (16 connections, 3 s)", total as f64 / 3.0);
    }
}
