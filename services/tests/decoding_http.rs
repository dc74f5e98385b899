//! Transport decoding over real sockets (issue 11, finding 9): compressed bodies, non-UTF-8
//! charsets and encoded multipart parts are scored as the application reads them, through the
//! proxy (recording upstream), the auth adapter and ext_proc. Each attack here was forwarded
//! unscored before: the scorer saw compressed or transcoded bytes.

mod common;

use std::io::Write;
use std::time::Instant;

use bytes::Bytes;
use clap::Parser;
use common::proxy::{send, start_proxy, upstream, Reply};
use flate2::write::{GzEncoder, ZlibEncoder};
use flate2::Compression;
use http_body_util::Full;
use hyper::{Method, Request};
use proto::processing_request::Request as Phase;
use proto::processing_response::Response as Answer;
use proto::{ExternalProcessorClient, HeaderMap, HeaderValue, HttpBody, HttpHeaders, ProcessingRequest};
use scoring::transport::{decode_body, ebcdic, DecodeLimits, EncodedBody, DEFAULT_MAX_RATIO};
use services::cli::{Cli, Command};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

const FORM: &str = "application/x-www-form-urlencoded";
const SQLI_FORM: &str = "username=admin&password=x%27%20UNION%20SELECT%20password%20FROM%20users--";
const XSS_JSON: &str = "{\"comment\":\"<script>alert(document.cookie)</script>\"}";

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut enc = ZlibEncoder::new(Vec::new(), Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

fn brotli(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut enc = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
        enc.write_all(data).unwrap();
    }
    out
}

/// Text in IBM-037, by inverting the decoder's table.
fn ebcdic_037(text: &str) -> Vec<u8> {
    let page = ebcdic::code_page("ibm037").unwrap();
    let decoded: Vec<char> = page.decode(&(0..=255u8).collect::<Vec<_>>()).chars().collect();
    text.chars().map(|c| decoded.iter().position(|&d| d == c).expect("in IBM-037") as u8).collect()
}

fn utf16le_with_bom(text: &str) -> Vec<u8> {
    let mut bytes = vec![0xFF, 0xFE];
    bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    bytes
}

fn multipart(part_headers: &str, content: &str) -> Vec<u8> {
    multipart_bytes(part_headers, content.as_bytes())
}

fn multipart_bytes(part_headers: &str, content: &[u8]) -> Vec<u8> {
    let mut body = format!("--XyZ\r\nContent-Disposition: form-data; name=\"comment\"\r\n{part_headers}\r\n\r\n").into_bytes();
    body.extend_from_slice(content);
    body.extend_from_slice(b"\r\n--XyZ--\r\n");
    body
}

/// An attack and how it travels, with the same request written plainly.
struct Case {
    name: &'static str,
    content_type: &'static str,
    content_encoding: Option<&'static str>,
    body: Vec<u8>,
    plain: Plain,
}

/// The request the application reads once the encodings are undone.
struct Plain {
    content_type: &'static str,
    body: String,
}

/// For requests that are not attacks.
fn no_twin() -> Plain {
    plain("", "")
}

fn plain(content_type: &'static str, body: &str) -> Plain {
    Plain { content_type, body: body.to_string() }
}

const QP_XSS: &str = "=3Cscript=3Ealert(document.cookie)=3C/sc=\r\nript=3E";
const XSS: &str = "<script>alert(document.cookie)</script>";
/// "x' OR '1'='1' UNION SELECT password FROM users--"
const B64_SQLI: &str = "eCcgT1IgJzEnPScxJyBVTklPTiBTRUxFQ1QgcGFzc3dvcmQgRlJPTSB1c2Vycy0t";
const SQLI: &str = "x' OR '1'='1' UNION SELECT password FROM users--";

fn attack_cases() -> Vec<Case> {
    let json = || plain("application/json", XSS_JSON);
    let form = || plain(FORM, SQLI_FORM);
    let case = |name, content_type, content_encoding, body, plain| Case { name, content_type, content_encoding, body, plain };
    let mp = "multipart/form-data; boundary=XyZ";
    vec![
        case("gzip form SQLi", FORM, Some("gzip"), gzip(SQLI_FORM.as_bytes()), form()),
        case("br JSON XSS", "application/json", Some("br"), brotli(XSS_JSON.as_bytes()), json()),
        case("deflate form SQLi", FORM, Some("deflate"), zlib(SQLI_FORM.as_bytes()), form()),
        case("stacked gzip, br JSON XSS", "application/json", Some("gzip, br"), brotli(&gzip(XSS_JSON.as_bytes())), json()),
        case("EBCDIC-037 form SQLi", "application/x-www-form-urlencoded; charset=ibm037", None, ebcdic_037(SQLI_FORM), form()),
        case("UTF-16 JSON XSS", "application/json; charset=utf-16", None, utf16le_with_bom(XSS_JSON), json()),
        case(
            "quoted-printable multipart XSS",
            mp,
            None,
            multipart("Content-Transfer-Encoding: quoted-printable", QP_XSS),
            plain(mp, &String::from_utf8(multipart("Content-Type: text/plain", XSS)).unwrap()),
        ),
        case(
            "base64 multipart SQLi",
            mp,
            None,
            multipart("Content-Transfer-Encoding: base64", B64_SQLI),
            plain(mp, &String::from_utf8(multipart("Content-Type: text/plain", SQLI)).unwrap()),
        ),
        case(
            "EBCDIC-037 multipart part SQLi",
            mp,
            None,
            multipart_bytes("Content-Type: text/plain; charset=ibm037", &ebcdic_037(SQLI)),
            plain(mp, &String::from_utf8(multipart("Content-Type: text/plain", SQLI)).unwrap()),
        ),
    ]
}

fn post(case: &Case) -> Request<Full<Bytes>> {
    let mut req =
        Request::builder().method(Method::POST).uri("/submit").header("host", "shop.example").header("content-type", case.content_type);
    if let Some(coding) = case.content_encoding {
        req = req.header("content-encoding", coding);
    }
    req.body(Full::new(Bytes::from(case.body.clone()))).unwrap()
}

#[tokio::test]
async fn encoded_attacks_are_blocked_by_the_proxy_and_never_reach_the_upstream() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &["--mode", "active", "--kill-response", "forbidden"]);
    // Shadow mode: each encoded attack gets the verdict (reason and score) its plain twin gets,
    // not a lucky one from scoring compressed or transcoded bytes.
    let shadow = start_proxy(app.addr, &[]);
    let mut differ = Vec::new();
    for case in attack_cases() {
        send(shadow.addr, post(&case)).await;
        let verdict = |seen: common::proxy::Seen| (seen.headers["x-waf-reason"].clone(), seen.headers["x-waf-score"].clone());
        let encoded = verdict(app.last());
        let twin =
            Case { content_type: case.plain.content_type, content_encoding: None, body: case.plain.body.clone().into_bytes(), ..case };
        send(shadow.addr, post(&twin)).await;
        let plain = verdict(app.last());
        println!("{}: encoded → {encoded:?}, plain → {plain:?}", twin.name);
        if encoded != plain || plain.0.is_empty() {
            differ.push(twin.name);
        }
    }
    assert!(differ.is_empty(), "scored differently from the plain request: {differ:?}");
    let seen_in_shadow = app.count();

    let mut passed = Vec::new();
    for case in attack_cases() {
        let reply = send(proxy.addr, post(&case)).await;
        if reply.status != 403 || reply.headers.get("x-waf-killed").is_none_or(|v| v != "true") {
            passed.push(format!("{} ({}, upstream saw {})", case.name, reply.status, app.count()));
        }
    }
    assert!(passed.is_empty(), "not blocked: {passed:#?}");
    assert_eq!(app.count(), seen_in_shadow, "in active mode the upstream saw none of the encoded attacks");
}

#[tokio::test]
async fn a_benign_compressed_body_passes_and_the_upstream_gets_the_bytes_the_client_sent() {
    let app = upstream().await;
    let proxy = start_proxy(app.addr, &["--mode", "active", "--kill-response", "forbidden"]);
    let json = "{\"order\":{\"item\":\"blue running shoes\",\"size\":42,\"note\":\"leave at the door, thanks\"}}";
    let case = Case {
        name: "benign",
        content_type: "application/json",
        content_encoding: Some("gzip"),
        body: gzip(json.as_bytes()),
        plain: no_twin(),
    };
    let reply = send(proxy.addr, post(&case)).await;
    assert_eq!(reply.status, 200, "{:?}", String::from_utf8_lossy(&reply.body));
    let seen = app.last();
    assert_eq!(seen.body.as_ref(), case.body.as_slice(), "forwarded as sent, still compressed");
    assert_eq!(seen.headers["content-encoding"], "gzip");
    assert!(seen.headers["x-waf-score"].to_str().unwrap().parse::<f32>().unwrap() <= 0.5);
}

/// 1 GiB of zeros, gzip'd (about 1 MiB on the wire): decoding stops at the body limit.
#[tokio::test]
async fn a_gzip_bomb_stops_at_the_bound_quickly() {
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..1024 {
        enc.write_all(&zeros).unwrap();
    }
    let bomb = enc.finish().unwrap();
    let limit = 2 << 20;

    let started = Instant::now();
    let body = EncodedBody { bytes: &bomb, content_encoding: Some("gzip"), content_type: None, truncated: false };
    let decoded = decode_body(body, DecodeLimits { max_output: limit, max_ratio: DEFAULT_MAX_RATIO });
    let decode_ms = started.elapsed().as_secs_f64() * 1000.0;
    println!(
        "gzip bomb: {} B compressed (1 GiB inflated), decoding produced {} B in {decode_ms:.1} ms, partial {:?}",
        bomb.len(),
        decoded.bytes.len(),
        decoded.partial
    );
    assert_eq!(decoded.bytes.len(), limit);
    assert_eq!(decoded.partial, ["decompression-limit"]);

    let app = upstream().await;
    let proxy = start_proxy(app.addr, &["--mode", "active", "--kill-response", "forbidden", "--body-limit", &limit.to_string()]);
    let case =
        Case { name: "bomb", content_type: "application/octet-stream", content_encoding: Some("gzip"), body: bomb, plain: no_twin() };
    let started = Instant::now();
    let reply = send(proxy.addr, post(&case)).await;
    println!("gzip bomb through the proxy: status {} in {:.1} ms", reply.status, started.elapsed().as_secs_f64() * 1000.0);
}

#[test]
fn decode_throughput() {
    let json: String = (0..20_000).map(|i| format!("{{\"id\":{i},\"name\":\"item {i}\",\"tags\":[\"a\",\"b\"]}},")).collect();
    let packed = gzip(json.as_bytes());
    let limits = DecodeLimits { max_output: 64 << 20, max_ratio: DEFAULT_MAX_RATIO };
    let rounds = 20;
    let started = Instant::now();
    for _ in 0..rounds {
        let body = EncodedBody { bytes: &packed, content_encoding: Some("gzip"), content_type: Some("application/json"), truncated: false };
        assert_eq!(decode_body(body, limits).bytes.len(), json.len());
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "gzip decode: {:.1} MB/s of output ({} B → {} B, {rounds} rounds)",
        (json.len() * rounds) as f64 / secs / 1e6,
        packed.len(),
        json.len()
    );
    let ebcdic = ebcdic_037(&"q=1' OR '1'='1&".repeat(50_000));
    let started = Instant::now();
    let body = EncodedBody { bytes: &ebcdic, content_type: Some("text/plain; charset=ibm037"), ..Default::default() };
    assert_eq!(decode_body(body, limits).bytes.len(), ebcdic.len());
    println!("EBCDIC decode: {:.1} MB/s", ebcdic.len() as f64 / started.elapsed().as_secs_f64() / 1e6);
}

fn auth_check(case: &Case) -> Request<Full<Bytes>> {
    let mut req = Request::builder()
        .method(Method::POST)
        .uri("/_waf/check")
        .header("host", "shop.example")
        .header("x-original-method", "POST")
        .header("x-original-uri", "/submit")
        .header("content-type", case.content_type);
    if let Some(coding) = case.content_encoding {
        req = req.header("content-encoding", coding);
    }
    req.body(Full::new(Bytes::from(case.body.clone()))).unwrap()
}

#[tokio::test]
async fn the_auth_adapter_decodes_gzip_and_ebcdic_bodies() {
    let argv = [
        "rampart",
        "auth",
        "--auth-addr",
        "127.0.0.1:0",
        "--auth-metrics-addr",
        "127.0.0.1:0",
        "--audit-log",
        "off",
        "--mode",
        "active",
        "--inference-url",
        common::shared_base(),
        "--inference-timeout-ms",
        "5000",
    ];
    let Command::Auth(args) = Cli::parse_from(argv).command else { unreachable!() };
    let auth = services::run::start_auth(&args).expect("auth adapter starts");
    for case in attack_cases().into_iter().filter(|c| c.name.starts_with("gzip") || c.name.starts_with("EBCDIC")) {
        let reply: Reply = send(auth.running.addr, auth_check(&case)).await;
        assert_eq!(reply.status, 403, "{}: {:?}", case.name, reply.headers);
    }
    let benign = Case {
        name: "benign",
        content_type: FORM,
        content_encoding: Some("gzip"),
        body: gzip(b"first=Siobhan&last=O%27Brien"),
        plain: no_twin(),
    };
    assert_eq!(send(auth.running.addr, auth_check(&benign)).await.status, 200);
}

#[tokio::test]
async fn ext_proc_decodes_gzip_and_ebcdic_bodies() {
    let argv = [
        "rampart",
        "extproc",
        "--extproc-addr",
        "127.0.0.1:0",
        "--extproc-http-addr",
        "127.0.0.1:0",
        "--audit-log",
        "off",
        "--mode",
        "active",
        "--inference-url",
        common::shared_base(),
        "--inference-timeout-ms",
        "5000",
    ];
    let Command::Extproc(args) = Cli::parse_from(argv).command else { unreachable!() };
    let server = services::run::start_extproc(&args).expect("ext_proc starts");
    for case in attack_cases().into_iter().filter(|c| c.name.starts_with("gzip") || c.name.starts_with("EBCDIC")) {
        let mut pairs = vec![(":method", "POST"), (":path", "/submit"), ("content-type", case.content_type)];
        pairs.extend(case.content_encoding.map(|c| ("content-encoding", c)));
        let headers =
            pairs.iter().map(|(k, v)| HeaderValue { key: k.to_string(), raw_value: v.as_bytes().to_vec(), ..Default::default() }).collect();
        let messages = [
            Phase::RequestHeaders(HttpHeaders { headers: Some(HeaderMap { headers }), end_of_stream: false, ..Default::default() }),
            Phase::RequestBody(HttpBody { body: case.body.clone(), end_of_stream: true, ..Default::default() }),
        ];
        let mut client = ExternalProcessorClient::connect(format!("http://{}", server.grpc.addr)).await.unwrap();
        let (tx, rx) = mpsc::channel(4);
        let mut answers = client.process(ReceiverStream::new(rx)).await.unwrap().into_inner();
        let mut last = None;
        for phase in messages {
            tx.send(ProcessingRequest { request: Some(phase), ..Default::default() }).await.unwrap();
            last = answers.message().await.unwrap().and_then(|a| a.response);
        }
        match last {
            Some(Answer::ImmediateResponse(block)) => assert_eq!(block.status.unwrap().code, 403, "{}", case.name),
            other => panic!("{}: expected a block, got {other:?}", case.name),
        }
    }
}

/// What cannot be decoded reaches the verdict as partial, for WAF_ON_PARTIAL (policy) to refuse.
#[tokio::test]
async fn undecodable_bodies_reach_the_verdict_as_partial() {
    use services::scored_request::HttpRequest;
    use services::scorer::{InProcessScorer, ScoreQuery, Scorer};
    let scorer = InProcessScorer::new(common::proxy::shared_engine());
    let bomb = gzip(&vec![0u8; 8 << 20]);
    // (expected slug, headers, body)
    type Case<'a> = (&'a str, &'a [(&'a str, &'a [u8])], &'a [u8]);
    let cases: [Case; 4] = [
        ("content-encoding:compress", &[("content-encoding", b"compress")], b"\x1f\x9d\x90"),
        ("content-encoding:br", &[("content-encoding", b"br")], b"not brotli"),
        ("charset:utf-7", &[("content-type", b"text/plain; charset=utf-7")], b"+ADw-script+AD4-"),
        ("decompression-limit", &[("content-encoding", b"gzip")], &bomb),
    ];
    for (slug, headers, body) in cases {
        let request = HttpRequest { method: "POST", path: "/p", query: "", headers, body, body_truncated: false, body_limit: 1 << 20 };
        let verdict = scorer.score(&ScoreQuery::from_http(request)).await.unwrap();
        assert!(verdict.partial.as_deref().is_some_and(|p| p.split(',').any(|s| s == slug)), "{slug}: {verdict:?}");
    }
}
