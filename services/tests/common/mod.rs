//! Test helpers: start a real inference service on 127.0.0.1:0 and talk HTTP to it.
#![allow(dead_code)]

pub mod envoy;
pub mod nginx;
pub mod process;
pub mod proxy;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::Parser;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use services::cli::{Cli, Command};
use services::config::InferenceArgs;
use services::run::{start_inference, Running};

pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// A models folder that exists but holds no model: the engine starts and every model fails
/// to load (what `WAF_ON_MODEL_MISSING` is about). A folder that does not exist is a start-up
/// error instead.
pub fn empty_models_dir() -> String {
    let dir = std::env::temp_dir().join(format!("rampart-empty-models-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.display().to_string()
}

/// Inference args as an operator would pass them, on a free port, with the repo's models.
pub fn inference_args(extra: &[&str]) -> InferenceArgs {
    let root = workspace_root();
    let models = root.join("models").display().to_string();
    let ort = std::env::var("ORT_DYLIB_PATH")
        .unwrap_or_else(|_| root.join("vendor/onnxruntime/lib/libonnxruntime.so.1.22.1").display().to_string());
    let mut argv = vec!["rampart".to_string(), "inference".into()];
    for (flag, default) in [("--inference-addr", "127.0.0.1:0".to_string()), ("--models-dir", models), ("--ort-dylib", ort)] {
        if !extra.contains(&flag) {
            argv.extend([flag.to_string(), default]);
        }
    }
    argv.extend(extra.iter().map(|s| s.to_string()));
    match Cli::parse_from(argv).command {
        Command::Inference(args) => args,
        _ => unreachable!(),
    }
}

pub struct Server {
    pub running: Running,
    pub base: String,
}

/// Starts the service and waits until `/health` says `ok` (models loaded).
pub async fn start_ready(extra: &[&str]) -> Server {
    let running = start_inference(&inference_args(extra)).expect("inference service starts");
    let base = format!("http://{}", running.addr);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, body, _) = get(&base, "/health").await;
        assert_eq!(status, 200);
        if body["status"] == "ok" {
            break;
        }
        assert!(body.get("errors").is_none(), "models failed to load: {body}");
        assert!(Instant::now() < deadline, "models did not load in 60 s: {body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Server { running, base }
}

/// One ready server with default settings shared by every test of the binary: loading the
/// models once instead of per test. It runs on its own runtime thread so it outlives each
/// test's runtime.
pub fn shared_base() -> &'static str {
    static BASE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BASE.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
            rt.block_on(async move {
                let mut server = start_ready(&[]).await;
                tx.send(server.base.clone()).unwrap();
                server.running.wait().await;
            });
        });
        rx.recv().expect("shared server started")
    })
}

pub async fn request(base: &str, method: Method, path: &str, body: Vec<u8>) -> (u16, Value, hyper::HeaderMap) {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let req = Request::builder()
        .method(method)
        .uri(format!("{base}{path}"))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let resp = client.request(req).await.expect("request reaches the service");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let value = serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()));
    (status, value, headers)
}

pub async fn get(base: &str, path: &str) -> (u16, Value, hyper::HeaderMap) {
    request(base, Method::GET, path, Vec::new()).await
}

pub async fn score(base: &str, path: &str, request_text: &str) -> Value {
    let body = serde_json::json!({ "request_text": request_text }).to_string().into_bytes();
    let (status, value, _) = request(base, Method::POST, path, body).await;
    assert_eq!(status, 200, "{path} answered {status}: {value}");
    value
}
