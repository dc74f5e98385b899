//! ONNX Runtime executor: hashed n-gram features -> `model.onnx` -> score in [0, 1].
//!
//! A model directory holds `model.onnx` (input `features` float32 [N, DIM], output `score`
//! float32 [N, 1], sigmoid already applied, calibrated so that 0.5 is the operating point) and
//! `featurizer.json` (the featurizer spec, see [`super::features`]).

use std::path::Path;
use std::sync::{Mutex, OnceLock};

use ort::environment::Environment;
use ort::session::builder::GraphOptimizationLevel;
use ort::session::Session;
use ort::value::TensorRef;

use super::features::Featurizer;
use super::{Executor, ModelError};

/// The process-wide ONNX Runtime environment. ort only keeps a weak reference to it, so it is
/// held here for the life of the process; ort also refuses to build a second one.
static ENV: OnceLock<Environment> = OnceLock::new();
static INIT_LOCK: Mutex<()> = Mutex::new(());

const INPUT: &str = "features";
const OUTPUT: &str = "score";

/// Loads the ONNX Runtime shared library from `dylib` and creates the process environment.
/// Idempotent: later calls after a success return `Ok(())` (the first library stays loaded).
/// A missing or incompatible library is an error, never a panic.
pub fn init_runtime(dylib: &Path) -> Result<(), ModelError> {
    let _guard = INIT_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    if ENV.get().is_some() {
        return Ok(());
    }
    let fail = |detail: String| ModelError::LoadFailed {
        model: "onnxruntime",
        detail,
    };
    if !dylib.is_file() {
        return Err(fail(format!(
            "ONNX Runtime library not found at {}",
            dylib.display()
        )));
    }
    let builder = ort::init_from(dylib).map_err(|e| fail(e.to_string()))?;
    // rc.15 names the final step `build()` (earlier release candidates called it `commit()`).
    let env = builder
        .with_name("rampart")
        .build()
        .map_err(|e| fail(e.to_string()))?;
    let _ = ENV.set(env);
    Ok(())
}

/// Whether [`init_runtime`] has succeeded in this process.
pub fn runtime_ready() -> bool {
    ENV.get().is_some()
}

/// Maps a model directory to a `'static` name for error messages.
fn model_name(dir: &Path) -> &'static str {
    match dir.file_name().and_then(|n| n.to_str()) {
        Some("sqli") => "sqli",
        Some("prompt-injection") => "prompt-injection",
        _ => "model",
    }
}

/// One ONNX session plus its featurizer and a reusable input buffer.
pub struct OnnxExecutor {
    name: &'static str,
    session: Session,
    featurizer: Featurizer,
    /// Row-major [N, DIM] feature buffer, grown to the largest batch seen and then reused.
    buf: Vec<f32>,
}

impl OnnxExecutor {
    /// Loads `model_dir/model.onnx` and `model_dir/featurizer.json`.
    ///
    /// `intra_threads` is the ONNX Runtime intra-op thread count for this session. The executor
    /// already runs on its own thread and the graph is one small MLP, so 1 (run on the calling
    /// thread, no pool, no spinning) is the right value unless batches are large.
    pub fn load(model_dir: &Path, intra_threads: usize) -> Result<Self, ModelError> {
        let name = model_name(model_dir);
        let fail = |detail: String| ModelError::LoadFailed {
            model: name,
            detail,
        };
        let env = ENV.get().ok_or_else(|| {
            fail("ONNX Runtime is not initialised (call init_runtime first)".into())
        })?;

        let featurizer =
            Featurizer::from_path(&model_dir.join("featurizer.json")).map_err(|e| match e {
                ModelError::LoadFailed { detail, .. } => fail(detail),
                other => other,
            })?;
        let model_path = model_dir.join("model.onnx");
        if !model_path.is_file() {
            return Err(fail(format!("{} not found", model_path.display())));
        }
        let threads = intra_threads.max(1);
        let session = Session::builder(env)
            .map_err(|e| fail(e.to_string()))?
            .with_optimization_level(GraphOptimizationLevel::All)
            .map_err(|e| fail(e.to_string()))?
            .with_intra_threads(threads)
            .map_err(|e| fail(e.to_string()))?
            .with_inter_threads(1)
            .map_err(|e| fail(e.to_string()))?
            .with_parallel_execution(false)
            .map_err(|e| fail(e.to_string()))?
            .with_intra_op_spinning(false)
            .map_err(|e| fail(e.to_string()))?
            .commit_from_file(&model_path)
            .map_err(|e| fail(format!("{}: {e}", model_path.display())))?;

        if !session.inputs().iter().any(|i| i.name() == INPUT) {
            return Err(fail(format!("model has no `{INPUT}` input")));
        }
        if !session.outputs().iter().any(|o| o.name() == OUTPUT) {
            return Err(fail(format!("model has no `{OUTPUT}` output")));
        }
        let mut exec = OnnxExecutor {
            name,
            session,
            featurizer,
            buf: Vec::new(),
        };
        // Warm-up run: also proves that the graph's input width matches the featurizer's dim.
        exec.infer(&[""])
            .map_err(|e| fail(format!("warm-up inference failed: {e}")))?;
        Ok(exec)
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn featurizer(&self) -> &Featurizer {
        &self.featurizer
    }
}

impl Executor for OnnxExecutor {
    fn infer(&mut self, texts: &[&str]) -> Result<Vec<f32>, ModelError> {
        let n = texts.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let dim = self.featurizer.dim();
        let len = n * dim;
        if self.buf.len() < len {
            self.buf.resize(len, 0.0);
        }
        let rows = &mut self.buf[..len];
        for (text, row) in texts.iter().zip(rows.chunks_exact_mut(dim)) {
            self.featurizer.featurize_into(text, row);
        }
        let input = TensorRef::from_array_view(([n, dim], &self.buf[..len]))
            .map_err(|e| ModelError::Inference(format!("{}: input tensor: {e}", self.name)))?;
        let outputs = self
            .session
            .run(ort::inputs![INPUT => input])
            .map_err(|e| ModelError::Inference(format!("{}: {e}", self.name)))?;
        let (_, scores) = outputs[OUTPUT]
            .try_extract_tensor::<f32>()
            .map_err(|e| ModelError::Inference(format!("{}: output: {e}", self.name)))?;
        if scores.len() != n {
            return Err(ModelError::Inference(format!(
                "{}: expected {n} scores, got {}",
                self.name,
                scores.len()
            )));
        }
        // The graph ends in a sigmoid, so scores are already in [0, 1]. A NaN cannot come out of
        // finite features; report it rather than guess a verdict (the caller owns fail-open/closed).
        if scores.iter().any(|s| s.is_nan()) {
            return Err(ModelError::Inference(format!(
                "{}: model produced NaN",
                self.name
            )));
        }
        Ok(scores.to_vec())
    }
}
