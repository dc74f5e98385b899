//! Rust/Python parity for the hashed n-gram models (every `models/<name>/` with a
//! `featurizer.json`; today `sqli`): the Rust featurizer + ort must reproduce the scores
//! onnxruntime-python computed at training time (`models/<name>/parity.jsonl`). The
//! prompt-injection transformer has its own test (`pi_parity.rs`).
//!
//! Needs the ONNX Runtime shared library: `ORT_DYLIB_PATH`, or by default
//! `vendor/onnxruntime/lib/libonnxruntime.so.1.22.1` under the workspace root.

use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::Instant;

use scoring::model::features::{InputForm, SparseRows};
use scoring::model::onnx::{init_runtime, OnnxExecutor};
use scoring::model::Executor;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn init() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        let lib = std::env::var_os("ORT_DYLIB_PATH")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace_root().join("vendor/onnxruntime/lib/libonnxruntime.so.1.22.1"));
        init_runtime(&lib).unwrap_or_else(|e| panic!("ONNX Runtime init from {}: {e}", lib.display()));
    });
}

fn load(name: &str) -> OnnxExecutor {
    init();
    OnnxExecutor::load(&workspace_root().join("models").join(name), 1).unwrap_or_else(|e| panic!("loading model {name}: {e}"))
}

/// Model folders holding an n-gram model (a `featurizer.json` and parity vectors).
fn ngram_models() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(workspace_root().join("models"))
        .expect("models/")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("featurizer.json").is_file() && e.path().join("parity.jsonl").is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    out.sort();
    out
}

fn parity_rows(name: &str) -> Vec<(String, f32)> {
    let path = workspace_root().join("models").join(name).join("parity.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("parity line is JSON");
            (v["text"].as_str().expect("text").to_string(), v["score"].as_f64().expect("score") as f32)
        })
        .collect()
}

fn check_parity(name: &str) {
    let mut exec = load(name);
    let rows = parity_rows(name);
    assert!(rows.len() >= 10, "{name}: too few parity rows");
    let texts: Vec<&str> = rows.iter().map(|(t, _)| t.as_str()).collect();

    // Whole batch at once, and one by one: both must match Python.
    let batch = exec.infer(&texts).expect("batch inference");
    assert_eq!(batch.len(), rows.len());
    for ((text, want), got) in rows.iter().zip(&batch) {
        assert!((got - want).abs() < 1e-4, "{name}: batch score {got} vs python {want} for {text:?}");
    }
    for (text, want) in &rows {
        let got = exec.infer(&[text.as_str()]).expect("single inference")[0];
        assert!((got - want).abs() < 1e-4, "{name}: single score {got} vs python {want} for {text:?}");
    }
}

#[test]
fn sqli_parity() {
    check_parity("sqli");
}

/// Any other n-gram model folder (e.g. an older dense-input export) is held to the same bar.
#[test]
fn other_ngram_models_parity() {
    for name in ngram_models().iter().filter(|n| *n != "sqli") {
        check_parity(name);
    }
}

#[test]
fn sqli_verdicts() {
    let mut exec = load("sqli");
    let attacks = ["1' or '1'='1' --", "1 union select username, password from users--"];
    let benign = ["o'brien", "O'Brien", "select a size from the drop-down menu", "42"];
    for a in attacks {
        let s = exec.infer(&[a]).unwrap()[0];
        assert!(s > 0.5, "sqli attack {a:?} scored {s}");
    }
    for b in benign {
        let s = exec.infer(&[b]).unwrap()[0];
        assert!(s < 0.5, "sqli hard negative {b:?} scored {s}");
    }
}

#[test]
fn empty_batch_and_missing_model() {
    let mut exec = load("sqli");
    assert!(exec.infer(&[]).unwrap().is_empty());
    init();
    assert!(OnnxExecutor::load(&workspace_root().join("models/does-not-exist"), 1).is_err());
}

#[test]
fn bad_runtime_path_is_an_error_not_a_panic() {
    // After a successful init this is a no-op Ok; before it, a missing file must be Err.
    let r = init_runtime(Path::new("/nonexistent/libonnxruntime.so"));
    if !scoring::model::onnx::runtime_ready() {
        assert!(r.is_err());
    }
}

/// Rough per-text latency (featurize + run), printed with `--nocapture`; not an assertion.
#[test]
fn latency_report() {
    for name in ngram_models() {
        let name = name.as_str();
        let mut exec = load(name);
        let rows = parity_rows(name);
        let texts: Vec<&str> = rows.iter().map(|(t, _)| t.as_str()).collect();
        for _ in 0..5 {
            exec.infer(&texts).unwrap();
        }
        let reps = 50;
        let t0 = Instant::now();
        for _ in 0..reps {
            for t in &texts {
                exec.infer(&[t]).unwrap();
            }
        }
        let single = t0.elapsed().as_secs_f64() / (reps * texts.len()) as f64;
        let t0 = Instant::now();
        for _ in 0..reps {
            exec.infer(&texts).unwrap();
        }
        let batched = t0.elapsed().as_secs_f64() / (reps * texts.len()) as f64;
        let f = exec.featurizer().clone();
        let t0 = Instant::now();
        match f.input_form() {
            InputForm::Dense => {
                let mut row = vec![0f32; f.dim()];
                for _ in 0..reps {
                    for t in &texts {
                        f.featurize_into(t, &mut row);
                    }
                }
            }
            InputForm::Sparse => {
                let mut rows = SparseRows::new(f.dim());
                for _ in 0..reps {
                    for t in &texts {
                        rows.clear();
                        f.featurize_sparse(t, &mut rows);
                    }
                }
            }
        }
        let feat = t0.elapsed().as_secs_f64() / (reps * texts.len()) as f64;
        println!(
            "{name}: batch-1 {:.1} us/text, batch-{} {:.1} us/text, featurize {:.1} us/text",
            single * 1e6,
            texts.len(),
            batched * 1e6,
            feat * 1e6
        );
    }
}

#[test]
fn mixed_length_batch_matches_single_texts() {
    // Rows of very different lengths go to separate session calls (padding rule); the scores must
    // not depend on the company a text keeps in its batch.
    let mut exec = load("sqli");
    let long: String = (0..700).map(|i| format!("w{} ", (i * 7919) % 5000)).collect();
    let medium = "please leave the parcel with the neighbour at no. 12 if nobody is home; 1' or 1=1 --";
    let texts = ["", "42", &long[..4000], medium, "1' union select 1--", &long[..900], "o'brien"];
    let batch = exec.infer(&texts).expect("batch");
    for (t, b) in texts.iter().zip(&batch) {
        let single = exec.infer(&[t]).expect("single")[0];
        assert!((single - b).abs() < 1e-6, "{t:?}: batch {b} vs single {single}");
    }
}

#[test]
fn sparse_graph_smaller_than_featurizer_dim_is_a_load_error() {
    init();
    let src = workspace_root().join("models/sqli");
    let dir = std::env::temp_dir().join(format!("rampart-parity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(src.join("model.onnx"), dir.join("model.onnx")).unwrap();
    let spec = std::fs::read_to_string(src.join("featurizer.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&spec).unwrap();
    v["dim"] = serde_json::json!(v["dim"].as_u64().unwrap() * 2);
    std::fs::write(dir.join("featurizer.json"), v.to_string()).unwrap();
    let err = OnnxExecutor::load(&dir, 1).err().expect("must not load");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(err.to_string().contains("no row for bucket"), "{err}");
}
