//! Model stage: synchronous executors on their own threads behind a dynamic batching queue.
//!
//! The shape follows text-embeddings-inference: a small synchronous [`Executor`] trait owns
//! the ONNX session; a bounded queue sheds load early (a full queue is an immediate error,
//! never an unbounded wait); the batching thread drops work whose caller has gone away.

pub mod batch;
pub mod features;
pub mod onnx;

pub use batch::{BatchConfig, BatchQueue};

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
