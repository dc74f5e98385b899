//! Model stage: synchronous executors on their own threads behind a dynamic batching queue.
//!
//! The shape follows text-embeddings-inference: a small synchronous [`Executor`] trait owns
//! the ONNX session; a bounded queue sheds load early (a full queue is an immediate error,
//! never an unbounded wait) and shares the model fairly between clients ([`fair`]); the
//! batching thread drops work whose caller has gone away or whose deadline has passed.

pub mod batch;
pub mod cache;
pub mod cascade;
pub mod fair;
pub mod features;
pub mod histogram;
pub mod observe;
pub mod onnx;
pub mod single_flight;
pub mod transformer;

pub use batch::{BatchConfig, BatchQueue};
pub use cascade::{CascadeCounts, CascadeSetting, Pipeline, StageScores};

use thiserror::Error;

/// Errors of the model layer.
#[derive(Debug, Error, Clone)]
pub enum ModelError {
    #[error("model `{0}` is still loading")]
    Loading(&'static str),
    #[error("model `{model}` failed to load: {detail}")]
    LoadFailed { model: &'static str, detail: String },
    #[error("model queue for `{0}` is full")]
    QueueFull(&'static str),
    #[error("model queue for `{0}` holds as much of this client's work as it may")]
    ClientQueueFull(&'static str),
    #[error("model `{0}` did not answer before the request's scoring deadline")]
    DeadlineExceeded(&'static str),
    #[error("model executor for `{0}` stopped")]
    ExecutorGone(&'static str),
    #[error("inference failed: {0}")]
    Inference(String),
}

/// A loaded model that scores a batch of texts. Runs on one dedicated thread, so it may
/// hold mutable state (ort's `Session::run` takes `&mut self`).
pub trait Executor: Send + 'static {
    /// Scores each text in [0, 1]; the result has the same length and order as `texts`.
    fn infer(&mut self, texts: &[&str]) -> Result<Vec<f32>, ModelError>;
}

impl Executor for Box<dyn Executor> {
    fn infer(&mut self, texts: &[&str]) -> Result<Vec<f32>, ModelError> {
        (**self).infer(texts)
    }
}

/// Loads the executor a model directory asks for: `model.json` with kind `transformer` gets
/// the tokenizer + encoder executor, otherwise the hashed n-gram executor (`featurizer.json`).
pub fn load_executor(model_dir: &std::path::Path, threads: &ModelThreads) -> Result<Box<dyn Executor>, ModelError> {
    let name = onnx::model_name(model_dir);
    match transformer::Manifest::read(model_dir) {
        Err(detail) => Err(ModelError::LoadFailed { model: name, detail }),
        Ok(Some(manifest)) => Ok(Box::new(transformer::TransformerExecutor::load(model_dir, manifest, threads.transformer)?)),
        Ok(None) => Ok(Box::new(onnx::OnnxExecutor::load(model_dir, threads.small)?)),
    }
}

/// Intra-op threads per session kind: the n-gram MLPs are microseconds of work and run best on
/// their executor thread alone; a transformer window is milliseconds and uses the cores.
#[derive(Clone, Debug)]
pub struct ModelThreads {
    pub small: usize,
    pub transformer: usize,
}
