//! TEMPORARY signature stub so the crate builds while the ONNX executor is written
//! (helper-owned file; replaced by the real implementation).
use std::path::Path;

use super::{Executor, ModelError};

pub fn init_runtime(dylib: &Path) -> Result<(), ModelError> {
    Err(ModelError::LoadFailed { model: "onnxruntime", detail: format!("not implemented yet ({})", dylib.display()) })
}

pub struct OnnxExecutor;

impl OnnxExecutor {
    pub fn load(model_dir: &Path, _intra_threads: usize) -> Result<Self, ModelError> {
        Err(ModelError::LoadFailed { model: "onnx", detail: format!("not implemented yet ({})", model_dir.display()) })
    }
}

impl Executor for OnnxExecutor {
    fn infer(&mut self, texts: &[&str]) -> Result<Vec<f32>, ModelError> {
        Ok(vec![0.0; texts.len()])
    }
}
