//! ONNX Runtime executor: hashed n-gram features -> `model.onnx` -> score in [0, 1].
//!
//! A model directory holds `model.onnx` (output `score` float32 [N, 1], sigmoid already applied,
//! calibrated so that 0.5 is the operating point) and `featurizer.json` (the featurizer spec, see
//! [`super::features`]). The spec's `input` field names the graph's input form:
//! - `"sparse"`: `indices` int64 [N, K] + `values` float32 [N, K], the non-zero features of each
//!   text (buckets ascending), K = the most non-zeros of any text in the batch (at least 1);
//!   shorter rows are padded with index 0 and value 0.0, which adds nothing to the sum.
//! - absent or `"dense"`: `features` float32 [N, DIM] (models exported before the sparse graph).

use std::path::Path;
use std::sync::{Mutex, OnceLock};

use ort::environment::Environment;
use ort::session::builder::GraphOptimizationLevel;
use ort::session::{Session, SessionOutputs};
use ort::value::TensorRef;

use super::features::{Featurizer, InputForm, SparseRows};
use super::{Executor, ModelError};

/// The process-wide ONNX Runtime environment. ort only keeps a weak reference to it, so it is
/// held here for the life of the process; ort also refuses to build a second one.
static ENV: OnceLock<Environment> = OnceLock::new();
static INIT_LOCK: Mutex<()> = Mutex::new(());

const DENSE_INPUT: &str = "features";
const SPARSE_INDICES: &str = "indices";
const SPARSE_VALUES: &str = "values";
const OUTPUT: &str = "score";

/// Loads the ONNX Runtime shared library from `dylib` and creates the process environment.
/// Idempotent: later calls after a success return `Ok(())` (the first library stays loaded).
/// A missing or incompatible library is an error, never a panic.
pub fn init_runtime(dylib: &Path) -> Result<(), ModelError> {
    let _guard = INIT_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    if ENV.get().is_some() {
        return Ok(());
    }
    let fail = |detail: String| ModelError::LoadFailed { model: "onnxruntime", detail };
    if !dylib.is_file() {
        return Err(fail(format!("ONNX Runtime library not found at {}", dylib.display())));
    }
    let builder = ort::init_from(dylib).map_err(|e| fail(e.to_string()))?;
    // rc.15 names the final step `build()` (earlier release candidates called it `commit()`).
    let env = builder.with_name("rampart").build().map_err(|e| fail(e.to_string()))?;
    let _ = ENV.set(env);
    Ok(())
}

/// Whether [`init_runtime`] has succeeded in this process.
pub fn runtime_ready() -> bool {
    ENV.get().is_some()
}

/// The process environment, for other executors' sessions (None before [`init_runtime`]).
pub(crate) fn environment() -> Option<&'static Environment> {
    ENV.get()
}

/// A session with the options every Rampart model uses: optimisation level All, `intra_threads`
/// intra-op threads, one inter-op thread, sequential execution, no spinning (an idle pool must
/// not burn the cores the pattern stage and HTTP need). Errors name the model file.
pub(crate) fn build_session(env: &Environment, model_path: &Path, intra_threads: usize) -> Result<Session, String> {
    Session::builder(env)
        .and_then(|b| Ok(b.with_optimization_level(GraphOptimizationLevel::All)?))
        .and_then(|b| Ok(b.with_intra_threads(intra_threads.max(1))?))
        .and_then(|b| Ok(b.with_inter_threads(1)?))
        .and_then(|b| Ok(b.with_parallel_execution(false)?))
        .and_then(|b| Ok(b.with_intra_op_spinning(false)?))
        .and_then(|mut b| b.commit_from_file(model_path))
        .map_err(|e| format!("{}: {e}", model_path.display()))
}

/// Maps a model directory to a `'static` name for error messages.
pub(crate) fn model_name(dir: &Path) -> &'static str {
    match dir.file_name().and_then(|n| n.to_str()) {
        Some("sqli") => "sqli",
        Some("prompt-injection") => "prompt-injection",
        _ => "model",
    }
}

/// The reusable input buffers of one input form; grown to the largest batch seen, then reused.
enum Inputs {
    /// Row-major [N, DIM] feature buffer.
    Dense(Vec<f32>),
    Sparse(SparseInputs),
}

/// A row joins a session call only if it has at least 1/PAD_RATIO of the non-zeros of the longest
/// row in that call: every row is padded to the longest, so one 4 KB text in a batch of short
/// fields would otherwise make each of them cost as much as the long one.
const PAD_RATIO: usize = 2;
/// Up to this many columns padding costs less than another session call (a few microseconds), so
/// such rows always share the call.
const SMALL_K: usize = 256;

/// The featurized rows of a batch and the padded [n, K] tensors of one session call.
struct SparseInputs {
    rows: SparseRows,
    /// Row numbers, longest row first.
    order: Vec<usize>,
    indices: Vec<i64>,
    values: Vec<f32>,
}

impl SparseInputs {
    /// Pads `rows` `members` (row numbers) into the [members.len(), k] tensors.
    fn pad(&mut self, members: std::ops::Range<usize>, k: usize) {
        let n = members.len();
        self.indices.clear();
        self.indices.resize(n * k, 0);
        self.values.clear();
        self.values.resize(n * k, 0.0);
        for (slot, &row) in self.order[members].iter().enumerate() {
            let (idx, val) = self.rows.row(row);
            self.indices[slot * k..slot * k + idx.len()].copy_from_slice(idx);
            self.values[slot * k..slot * k + val.len()].copy_from_slice(val);
        }
    }
}

/// One ONNX session plus its featurizer and reusable input buffers.
pub struct OnnxExecutor {
    name: &'static str,
    session: Session,
    featurizer: Featurizer,
    inputs: Inputs,
}

impl OnnxExecutor {
    /// Loads `model_dir/model.onnx` and `model_dir/featurizer.json`.
    ///
    /// `intra_threads` is the ONNX Runtime intra-op thread count for this session. The executor
    /// already runs on its own thread and the graph is one small MLP, so 1 (run on the calling
    /// thread, no pool, no spinning) is the right value unless batches are large.
    pub fn load(model_dir: &Path, intra_threads: usize) -> Result<Self, ModelError> {
        let name = model_name(model_dir);
        let fail = |detail: String| ModelError::LoadFailed { model: name, detail };
        let env = ENV.get().ok_or_else(|| fail("ONNX Runtime is not initialised (call init_runtime first)".into()))?;

        let featurizer = Featurizer::from_path(&model_dir.join("featurizer.json")).map_err(|e| match e {
            ModelError::LoadFailed { detail, .. } => fail(detail),
            other => other,
        })?;
        let model_path = model_dir.join("model.onnx");
        if !model_path.is_file() {
            return Err(fail(format!("{} not found", model_path.display())));
        }
        let threads = intra_threads.max(1);
        // Session options, chosen for one small graph run by one dedicated executor thread:
        // - optimisation level All: constant folding and node fusions are computed once at load
        //   and cost nothing per call; the graph has no layout-sensitive ops that could regress.
        // - intra-op threads from the config (`model_threads`, default 1): a batch of short
        //   fields is a few microseconds of work, less than waking a thread pool; more threads
        //   only pay off for large batches of long texts.
        // - inter-op 1 and sequential execution: the graph is a chain, nothing runs in parallel.
        // - no spinning: an idle pool would burn the cores the pattern stage and HTTP need.
        // - memory pattern left on (default): K changes with every batch, but measured with
        //   onnxruntime 1.22 on this graph, turning it off changed nothing.
        let session = build_session(env, &model_path, threads).map_err(fail)?;

        let form = featurizer.input_form();
        let wanted: &[&str] = match form {
            InputForm::Dense => &[DENSE_INPUT],
            InputForm::Sparse => &[SPARSE_INDICES, SPARSE_VALUES],
        };
        for want in wanted {
            if !session.inputs().iter().any(|i| i.name() == *want) {
                return Err(fail(format!("model has no `{want}` input (featurizer.json says {form:?} input)")));
            }
        }
        if !session.outputs().iter().any(|o| o.name() == OUTPUT) {
            return Err(fail(format!("model has no `{OUTPUT}` output")));
        }
        let inputs = match form {
            InputForm::Dense => Inputs::Dense(Vec::new()),
            InputForm::Sparse => Inputs::Sparse(SparseInputs {
                rows: SparseRows::new(featurizer.dim()),
                order: Vec::new(),
                indices: Vec::new(),
                values: Vec::new(),
            }),
        };
        let mut exec = OnnxExecutor { name, session, featurizer, inputs };
        // Warm-up run; for a dense graph it also proves that the input width is the featurizer's dim.
        exec.infer(&[""]).map_err(|e| fail(format!("warm-up inference failed: {e}")))?;
        if form == InputForm::Sparse {
            // The sparse graph's table must have a row for every bucket: look up the last one
            // once here rather than have ORT's Gather reject real texts later.
            let last = [exec.featurizer.dim() as i64 - 1];
            let zero = [0.0f32];
            let idx = TensorRef::from_array_view(([1usize, 1], &last[..])).map_err(|e| fail(e.to_string()))?;
            let val = TensorRef::from_array_view(([1usize, 1], &zero[..])).map_err(|e| fail(e.to_string()))?;
            exec.session
                .run(ort::inputs![SPARSE_INDICES => idx, SPARSE_VALUES => val])
                .map_err(|e| fail(format!("graph has no row for bucket {} (featurizer dim): {e}", last[0])))?;
        }
        Ok(exec)
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn featurizer(&self) -> &Featurizer {
        &self.featurizer
    }
}

/// The `score` output of one session call, checked: `n` values, no NaN.
fn scores(name: &str, outputs: SessionOutputs<'_>, n: usize) -> Result<Vec<f32>, ModelError> {
    let (_, scores) = outputs[OUTPUT].try_extract_tensor::<f32>().map_err(|e| ModelError::Inference(format!("{name}: output: {e}")))?;
    if scores.len() != n {
        return Err(ModelError::Inference(format!("{name}: expected {n} scores, got {}", scores.len())));
    }
    // The graph ends in a sigmoid, so scores are already in [0, 1]. A NaN cannot come out of
    // finite features; report it rather than guess a verdict (the caller owns fail-open/closed).
    if scores.iter().any(|s| s.is_nan()) {
        return Err(ModelError::Inference(format!("{name}: model produced NaN")));
    }
    Ok(scores.to_vec())
}

impl OnnxExecutor {
    fn infer_dense(&mut self, texts: &[&str]) -> Result<Vec<f32>, ModelError> {
        let Inputs::Dense(buf) = &mut self.inputs else { unreachable!("dense executor") };
        let (n, dim) = (texts.len(), self.featurizer.dim());
        let len = n * dim;
        if buf.len() < len {
            buf.resize(len, 0.0);
        }
        for (text, row) in texts.iter().zip(buf[..len].chunks_exact_mut(dim)) {
            self.featurizer.featurize_into(text, row);
        }
        let name = self.name;
        let input =
            TensorRef::from_array_view(([n, dim], &buf[..len])).map_err(|e| ModelError::Inference(format!("{name}: input tensor: {e}")))?;
        let outputs = self.session.run(ort::inputs![DENSE_INPUT => input]).map_err(|e| ModelError::Inference(format!("{name}: {e}")))?;
        scores(name, outputs, n)
    }

    /// Featurizes the batch, then runs it in as few session calls as the padding rule allows
    /// (one for a single text or for texts of similar length), longest rows first.
    fn infer_sparse(&mut self, texts: &[&str]) -> Result<Vec<f32>, ModelError> {
        let Inputs::Sparse(sp) = &mut self.inputs else { unreachable!("sparse executor") };
        let name = self.name;
        let n = texts.len();
        sp.rows.clear();
        for text in texts {
            self.featurizer.featurize_sparse(text, &mut sp.rows);
        }
        let rows = &sp.rows;
        sp.order.clear();
        sp.order.extend(0..n);
        sp.order.sort_by_key(|&i| std::cmp::Reverse(rows.nnz(i)));
        let mut out = vec![0.0f32; n];
        let mut start = 0;
        while start < n {
            // At least one column: a group of empty texts still has a well-formed [n, 1] input
            // (all padding), so the graph never sees a zero-length axis.
            let k = sp.rows.nnz(sp.order[start]).max(1);
            let mut end = start + 1;
            while end < n && (k <= SMALL_K || sp.rows.nnz(sp.order[end]) * PAD_RATIO >= k) {
                end += 1;
            }
            sp.pad(start..end, k);
            let shape = [end - start, k];
            let input_err = |e: ort::Error| ModelError::Inference(format!("{name}: input tensor: {e}"));
            let idx = TensorRef::from_array_view((shape, &sp.indices[..])).map_err(input_err)?;
            let val = TensorRef::from_array_view((shape, &sp.values[..])).map_err(input_err)?;
            let outputs = self
                .session
                .run(ort::inputs![SPARSE_INDICES => idx, SPARSE_VALUES => val])
                .map_err(|e| ModelError::Inference(format!("{name}: {e}")))?;
            for (&row, score) in sp.order[start..end].iter().zip(scores(name, outputs, end - start)?) {
                out[row] = score;
            }
            start = end;
        }
        Ok(out)
    }
}

impl Executor for OnnxExecutor {
    fn infer(&mut self, texts: &[&str]) -> Result<Vec<f32>, ModelError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        match self.inputs {
            Inputs::Dense(_) => self.infer_dense(texts),
            Inputs::Sparse(_) => self.infer_sparse(texts),
        }
    }
}
