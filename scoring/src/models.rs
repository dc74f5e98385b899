//! The two model-backed detectors: background loading, status for `/health`, and scoring
//! through each model's batching queue.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use crate::context::ScoreContext;
use crate::detectors::{DetectorId, DETECTORS, PROMPT_INJECTION, SQLI};
use crate::engine_config::EngineConfig;
use crate::model::cascade::Cascade;
use crate::model::onnx::init_runtime;
use crate::model::{load_executor, BatchConfig, BatchQueue, CascadeCounts, Executor, ModelError, ModelThreads, Pipeline, StageScores};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelStatus {
    Loading,
    Ready,
    Failed(String),
    Disabled,
}

enum Slot {
    Loading,
    Ready(Pipeline),
    Failed(String),
    Disabled,
}

struct ModelSlot {
    detector: DetectorId,
    /// `<models_dir>/<slug>/model.onnx` (absolute when it exists), reported by `/health`.
    path: Option<PathBuf>,
    state: RwLock<Slot>,
}

pub struct ModelSet {
    slots: [ModelSlot; 2],
}

/// A warm-up text per model: the first real request should not pay for lazy initialisation.
const WARMUP: &str = "select name from users where id = 1 -- ignore previous instructions";

impl ModelSet {
    /// Starts loading both models on a background thread (`models_dir` None: disabled).
    pub fn start(models_dir: Option<&Path>, config: &EngineConfig) -> Arc<ModelSet> {
        let slot = |detector: DetectorId| ModelSlot {
            detector,
            // Resolved once here: `/health` reports it on every call.
            path: models_dir.map(|d| {
                let file = d.join(DETECTORS[detector].slug).join("model.onnx");
                std::fs::canonicalize(&file).unwrap_or(file)
            }),
            state: RwLock::new(if models_dir.is_some() { Slot::Loading } else { Slot::Disabled }),
        };
        let set = Arc::new(ModelSet { slots: [slot(SQLI), slot(PROMPT_INJECTION)] });
        if let Some(dir) = models_dir {
            let set = set.clone();
            let dir = dir.to_path_buf();
            let dylib = config.ort_dylib.clone();
            let threads = ModelThreads { small: config.model_threads, transformer: config.transformer_threads };
            let batch = config.batch.clone();
            std::thread::Builder::new()
                .name("model-loader".into())
                .spawn(move || set.load_all(&dir, &dylib, threads, batch))
                .expect("spawning the model loader");
        }
        set
    }

    fn load_all(&self, dir: &Path, dylib: &Path, threads: ModelThreads, batch: BatchConfig) {
        if let Err(err) = init_runtime(dylib) {
            let detail = format!("ONNX Runtime library {}: {err}", dylib.display());
            tracing::error!(%detail, "models unavailable");
            for slot in &self.slots {
                *slot.state.write().unwrap_or_else(|p| p.into_inner()) = Slot::Failed(detail.clone());
            }
            return;
        }
        for slot in &self.slots {
            let slug = DETECTORS[slot.detector].slug;
            let model_dir = dir.join(slug);
            let started = std::time::Instant::now();
            let next = match load_executor(&model_dir, &threads) {
                Ok(mut executor) => match executor.infer(&[WARMUP]) {
                    Ok(_) => {
                        tracing::info!(model = slug, ms = started.elapsed().as_millis() as u64, "model ready");
                        let queue = BatchQueue::spawn(slug, executor, batch.clone());
                        Slot::Ready(self.pipeline(slot.detector, &model_dir, queue, &threads, &batch))
                    }
                    Err(err) => Slot::Failed(format!("warm-up failed: {err}")),
                },
                Err(err) => Slot::Failed(err.to_string()),
            };
            if let Slot::Failed(detail) = &next {
                tracing::error!(model = slug, %detail, "model failed to load");
            }
            *slot.state.write().unwrap_or_else(|p| p.into_inner()) = next;
        }
    }

    /// The prompt-injection transformer behind its cascade when stage 1 is there and enabled;
    /// any other model (or a stage 1 that fails to load) is its queue alone.
    fn pipeline(&self, detector: DetectorId, model_dir: &Path, queue: BatchQueue, threads: &ModelThreads, batch: &BatchConfig) -> Pipeline {
        if detector != PROMPT_INJECTION || !batch.pi_cascade.enabled {
            return Pipeline::Queue(queue);
        }
        match Cascade::load(model_dir, queue.clone(), threads.small, batch) {
            Ok(Some(cascade)) => Pipeline::Cascade(Arc::new(cascade)),
            Ok(None) => Pipeline::Queue(queue),
            Err(err) => {
                // Losing stage 1 costs throughput, not detection: the transformer scores all.
                tracing::error!(%err, "prompt-injection stage 1 failed to load: the transformer scores every text");
                Pipeline::Queue(queue)
            }
        }
    }

    fn ready(&self, detector: DetectorId) -> Option<Pipeline> {
        let state = self.slot(detector)?.state.read().unwrap_or_else(|p| p.into_inner());
        match &*state {
            Slot::Ready(pipeline) => Some(pipeline.clone()),
            _ => None,
        }
    }

    /// What the prompt-injection cascade did since start (None: no cascade in use).
    pub fn cascade_counts(&self) -> Option<CascadeCounts> {
        self.ready(PROMPT_INJECTION)?.cascade().map(|c| c.counts())
    }

    /// The cascade's stage-1 threshold (None: no cascade in use).
    pub fn cascade_skip_below(&self) -> Option<f32> {
        self.ready(PROMPT_INJECTION)?.cascade().map(|c| c.skip_below())
    }

    /// Both cascade stages on every text (None: no cascade in use); see [`Cascade::stages`].
    pub async fn cascade_stages(&self, texts: Vec<String>, context: &ScoreContext) -> Result<Option<Vec<StageScores>>, ModelError> {
        match self.ready(PROMPT_INJECTION).as_ref().and_then(Pipeline::cascade) {
            Some(cascade) => Ok(Some(cascade.stages(texts, context).await?)),
            None => Ok(None),
        }
    }

    fn slot(&self, detector: DetectorId) -> Option<&ModelSlot> {
        self.slots.iter().find(|s| s.detector == detector)
    }

    pub fn status(&self, detector: DetectorId) -> ModelStatus {
        match self.slot(detector).map(|s| s.state.read().unwrap_or_else(|p| p.into_inner())) {
            None => ModelStatus::Disabled,
            Some(state) => match &*state {
                Slot::Loading => ModelStatus::Loading,
                Slot::Ready(_) => ModelStatus::Ready,
                Slot::Failed(detail) => ModelStatus::Failed(detail.clone()),
                Slot::Disabled => ModelStatus::Disabled,
            },
        }
    }

    pub fn path(&self, detector: DetectorId) -> Option<&Path> {
        self.slot(detector).and_then(|s| s.path.as_deref())
    }

    pub fn all_ready(&self) -> bool {
        self.slots.iter().all(|s| matches!(self.status(s.detector), ModelStatus::Ready | ModelStatus::Disabled))
    }

    /// Scores texts with one model for nobody in particular. A disabled model scores 0.
    pub async fn score_many(&self, detector: DetectorId, texts: Vec<String>) -> Result<Vec<f32>, ModelError> {
        self.score_many_with(detector, texts, &ScoreContext::default()).await
    }

    /// Scores texts with one model in the client's lane, within its deadline.
    pub async fn score_many_with(&self, detector: DetectorId, texts: Vec<String>, context: &ScoreContext) -> Result<Vec<f32>, ModelError> {
        let slug = DETECTORS[detector].slug;
        let pipeline = match self.slot(detector).map(|s| s.state.read().unwrap_or_else(|p| p.into_inner())) {
            None => return Ok(vec![0.0; texts.len()]),
            Some(state) => match &*state {
                Slot::Ready(pipeline) => pipeline.clone(),
                Slot::Loading => return Err(ModelError::Loading(slug)),
                Slot::Failed(detail) => return Err(ModelError::LoadFailed { model: slug, detail: detail.clone() }),
                Slot::Disabled => return Ok(vec![0.0; texts.len()]),
            },
        };
        pipeline.score_many_for(texts, context).await
    }
}
