//! ONNX Runtime executor for a fine-tuned transformer classifier (the prompt-injection model).
//!
//! A model directory holds `model.onnx` (inputs `input_ids`, `attention_mask` int64 [N, T];
//! output `score` float32 [N, 1], calibrated so 0.5 is the operating point), `tokenizer.json`
//! and `model.json` (the windowing contract, written by models/train/pi_finetune.py).
//!
//! Long texts are never silently truncated: a text becomes overlapping windows and its score is
//! the max over them (see [`window_starts`]).
//!
//! Every window runs alone (batch 1) on one of several single-threaded sessions, in parallel.
//! Batching windows of different texts into one run was measured (163-174 texts/s vs ~165 for
//! this layout at 128 tokens on 2 cores) and rejected: dynamic int8 quantisation picks one
//! activation scale per run, so a text's score moved by up to 0.03 with whatever else was in
//! the batch. A WAF must give the same request the same score whatever traffic surrounds it.

use std::path::Path;

use ort::session::Session;
use ort::value::TensorRef;
use serde::Deserialize;
use tokenizers::Tokenizer;

use super::{Executor, ModelError};

/// `model.json` of a transformer model.
#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    pub kind: String,
    pub tokenizer: String,
    /// Content tokens per window ([CLS] and [SEP] come on top).
    pub window_tokens: usize,
    /// Distance between window starts; less than `window_tokens`, so windows overlap.
    pub stride_tokens: usize,
    /// Bound on windows per text; longer texts get this many windows spread evenly.
    pub max_windows: usize,
}

impl Manifest {
    pub fn read(model_dir: &Path) -> Result<Option<Self>, String> {
        let path = model_dir.join("model.json");
        if !path.is_file() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let m: Manifest = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if m.window_tokens == 0 || m.stride_tokens == 0 || m.stride_tokens > m.window_tokens || m.max_windows < 2 {
            return Err(format!("{}: need window_tokens >= stride_tokens > 0 and max_windows >= 2", path.display()));
        }
        Ok(Some(m))
    }
}

/// Window start offsets for a text of `n` content tokens. Mirrors `window_starts` in
/// models/train/pi_model.py exactly (the parity test checks both agree on real texts).
pub fn window_starts(n: usize, window: usize, stride: usize, max_windows: usize) -> Vec<usize> {
    if n <= window {
        return vec![0];
    }
    let mut starts: Vec<usize> = (0..n - window).step_by(stride).collect();
    starts.push(n - window);
    if starts.len() > max_windows {
        let last = starts.len() - 1;
        starts = (0..max_windows).map(|i| starts[(i * last) / (max_windows - 1)]).collect();
    }
    starts
}

pub struct TransformerExecutor {
    /// One single-threaded session per core given: windows are spread across them.
    workers: Vec<Worker>,
    tokenizer: Tokenizer,
    manifest: Manifest,
    cls: u32,
    sep: u32,
}

struct Worker {
    session: Session,
    ids: Vec<i64>,
    mask: Vec<i64>,
}

impl Worker {
    fn run(&mut self, window: &[u32]) -> Result<f32, ModelError> {
        self.ids.clear();
        self.ids.extend(window.iter().map(|&t| t as i64));
        self.mask.clear();
        self.mask.resize(window.len(), 1);
        let infer = |e: ort::Error| ModelError::Inference(e.to_string());
        let shape = [1usize, window.len()];
        let ids = TensorRef::from_array_view((shape, self.ids.as_slice())).map_err(infer)?;
        let mask = TensorRef::from_array_view((shape, self.mask.as_slice())).map_err(infer)?;
        let outputs = self.session.run(ort::inputs!["input_ids" => ids, "attention_mask" => mask]).map_err(infer)?;
        let (_, scores) = outputs["score"].try_extract_tensor::<f32>().map_err(infer)?;
        scores.first().copied().ok_or_else(|| ModelError::Inference("model returned no score".into()))
    }

    /// Scores a share of the windows; returns (text index, score) pairs.
    fn run_all(&mut self, windows: &[(usize, Vec<u32>)]) -> Result<Vec<(usize, f32)>, ModelError> {
        windows.iter().map(|(text, w)| Ok((*text, self.run(w)?))).collect()
    }
}

impl TransformerExecutor {
    /// Loads `model_dir/{model.json, tokenizer.json, model.onnx}` into `sessions` single-threaded
    /// sessions (one per core the model may use; the int8 weights are ~23 MB per session).
    pub fn load(model_dir: &Path, manifest: Manifest, sessions: usize) -> Result<Self, ModelError> {
        let fail = |detail: String| ModelError::LoadFailed { model: "prompt-injection", detail };
        if manifest.kind != "transformer" {
            return Err(fail(format!("model.json kind `{}` is not `transformer`", manifest.kind)));
        }
        let env = super::onnx::environment().ok_or_else(|| fail("ONNX Runtime is not initialised (call init_runtime first)".into()))?;
        let tok_path = model_dir.join(&manifest.tokenizer);
        let mut tokenizer = Tokenizer::from_file(&tok_path).map_err(|e| fail(format!("{}: {e}", tok_path.display())))?;
        // tokenizer.json files carry their own truncation (128 here) and padding: either would
        // cut or distort text before windowing, so both are switched off explicitly.
        tokenizer.with_truncation(None).map_err(|e| fail(format!("{}: {e}", tok_path.display())))?;
        tokenizer.with_padding(None);
        let special = |t: &str| tokenizer.token_to_id(t).ok_or_else(|| fail(format!("{} has no {t} token", tok_path.display())));
        let (cls, sep) = (special("[CLS]")?, special("[SEP]")?);
        let model_path = model_dir.join("model.onnx");
        if !model_path.is_file() {
            return Err(fail(format!("{} not found", model_path.display())));
        }
        let mut workers = Vec::new();
        for _ in 0..sessions.max(1) {
            // One intra-op thread: the parallelism is across sessions (see the module docs).
            let session = super::onnx::build_session(env, &model_path, 1).map_err(fail)?;
            for want in ["input_ids", "attention_mask"] {
                if !session.inputs().iter().any(|i| i.name() == want) {
                    return Err(fail(format!("{} has no `{want}` input", model_path.display())));
                }
            }
            if !session.outputs().iter().any(|o| o.name() == "score") {
                return Err(fail(format!("{} has no `score` output", model_path.display())));
            }
            workers.push(Worker { session, ids: Vec::new(), mask: Vec::new() });
        }
        let mut exec = TransformerExecutor { workers, tokenizer, manifest, cls, sep };
        exec.infer(&["warm-up"]).map_err(|e| fail(format!("warm-up inference failed: {e}")))?;
        Ok(exec)
    }

    /// Every window of every text as (text index, token ids with [CLS]/[SEP]).
    fn windows(&self, texts: &[&str]) -> Result<Vec<(usize, Vec<u32>)>, ModelError> {
        let m = &self.manifest;
        let mut out = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            let enc = self.tokenizer.encode(*text, false).map_err(|e| ModelError::Inference(format!("tokenizer: {e}")))?;
            let ids = enc.get_ids();
            for start in window_starts(ids.len(), m.window_tokens, m.stride_tokens, m.max_windows) {
                let end = (start + m.window_tokens).min(ids.len());
                let mut w = Vec::with_capacity(end - start + 2);
                w.push(self.cls);
                w.extend_from_slice(&ids[start..end]);
                w.push(self.sep);
                out.push((i, w));
            }
        }
        Ok(out)
    }
}

impl Executor for TransformerExecutor {
    fn infer(&mut self, texts: &[&str]) -> Result<Vec<f32>, ModelError> {
        let mut windows = self.windows(texts)?;
        // Longest first, dealt round-robin: the workers' shares end up with similar token counts.
        windows.sort_by_key(|(_, w)| std::cmp::Reverse(w.len()));
        let n = self.workers.len().min(windows.len()).max(1);
        let mut shares: Vec<Vec<(usize, Vec<u32>)>> = (0..n).map(|_| Vec::new()).collect();
        for (i, w) in windows.into_iter().enumerate() {
            shares[i % n].push(w);
        }
        let results: Vec<Result<Vec<(usize, f32)>, ModelError>> = if n == 1 {
            vec![self.workers[0].run_all(&shares[0])]
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> =
                    self.workers[..n].iter_mut().zip(&shares).map(|(worker, share)| scope.spawn(move || worker.run_all(share))).collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|_| Err(ModelError::Inference("model worker panicked".into()))))
                    .collect()
            })
        };
        let mut best = vec![0.0f32; texts.len()];
        for result in results {
            for (text, score) in result? {
                best[text] = best[text].max(score);
            }
        }
        Ok(best)
    }
}

#[cfg(test)]
mod tests {
    use super::window_starts;

    #[test]
    fn short_text_is_one_window() {
        assert_eq!(window_starts(0, 126, 96, 32), vec![0]);
        assert_eq!(window_starts(126, 126, 96, 32), vec![0]);
    }

    #[test]
    fn windows_overlap_and_cover_the_end() {
        let s = window_starts(300, 126, 96, 32);
        assert_eq!(s, vec![0, 96, 174]);
        assert_eq!(s.last().unwrap() + 126, 300);
        assert!(s.windows(2).all(|p| p[1] - p[0] <= 96));
    }

    #[test]
    fn very_long_text_gets_bounded_spread_windows() {
        let s = window_starts(100_000, 126, 96, 32);
        assert_eq!(s.len(), 32);
        assert_eq!(s[0], 0);
        assert_eq!(*s.last().unwrap(), 100_000 - 126);
        assert!(s.windows(2).all(|p| p[0] < p[1]));
    }
}
