//! Engines the scoring integration tests share (each test file is its own crate and uses a
//! subset, hence the allow).
#![allow(dead_code)]

pub mod placed;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use scoring::{Engine, EngineConfig};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// ORT_DYLIB_PATH, or the library scripts/bootstrap fetches.
pub fn ort_dylib() -> PathBuf {
    std::env::var("ORT_DYLIB_PATH").map(PathBuf::from).unwrap_or_else(|_| root().join("vendor/onnxruntime/lib/libonnxruntime.so.1.22.1"))
}

/// The committed models, loaded (waits up to 60 s). One engine per test binary: building it
/// (Hyperscan database, two models) costs seconds, and every test of a file can share it.
pub fn engine_with_models() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(load_engine_with_models)
}

fn load_engine_with_models() -> Engine {
    let engine = Engine::new(EngineConfig { models_dir: Some(root().join("models")), ort_dylib: ort_dylib(), ..Default::default() })
        .expect("engine starts");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !engine.ready() {
        assert!(Instant::now() < deadline, "models not ready: {:?}", engine.model_status());
        std::thread::sleep(Duration::from_millis(20));
    }
    engine
}

/// Pattern detectors only, shared by the tests of one binary like [`engine_with_models`].
pub fn patterns_only() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| Engine::new(EngineConfig { models_dir: None, ..Default::default() }).expect("engine starts"))
}

/// Generated attacks of every evasion family, each as sent and, where decoding changes it,
/// decoded as the engine's decoded view holds it: the texts the guard and trigger tests
/// hold the stage's shortcuts to.
pub fn attack_texts(seed: u64, per_family: usize) -> Vec<String> {
    let mut out = Vec::new();
    for family in evasion::families() {
        for v in evasion::sample(*family, seed, per_family) {
            let mut deep = String::new();
            if scoring::normalize::decode_deep(&v.payload, &mut deep) {
                out.push(deep);
            }
            out.push(v.payload);
        }
    }
    out
}
