//! What an engine is built from: thresholds, rules and models folders, model threads and
//! batching, field limits. Its own module so the model set can read it without depending on the
//! engine that owns the model set.

use std::path::PathBuf;
use std::time::Duration;

use crate::fields::FieldLimits;
use crate::model::BatchConfig;

#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Kill threshold: a score strictly above it is an attack.
    pub threshold: f32,
    /// Rules directory overriding the built-in rules.
    pub rules_dir: Option<PathBuf>,
    /// Directory holding `sqli/` and `prompt-injection/` model folders; None disables models.
    pub models_dir: Option<PathBuf>,
    /// ONNX Runtime shared library.
    pub ort_dylib: PathBuf,
    /// Intra-op threads of the small n-gram model sessions.
    pub model_threads: usize,
    /// Intra-op threads of the transformer (prompt-injection) session.
    pub transformer_threads: usize,
    pub batch: BatchConfig,
    pub limits: FieldLimits,
    /// Most texts (fields, or windows of long fields) per request sent to each model; past it
    /// the rest is not model-scored and the verdict is partial (`model-budget:<slug>`).
    pub max_model_fields: usize,
    /// Fewest words for a field to count as natural language (prompt-injection model).
    pub min_prompt_words: usize,
    /// How long a request's model work may take when the caller names no deadline
    /// (WAF_SCORING_DEADLINE_MS); past it the work is dropped and the verdict lacks the model.
    pub scoring_deadline: Duration,
    /// WAF_SENSITIVITY, 1..=4: rules and code findings of a higher level do not count.
    pub sensitivity: u8,
    /// Where compiled rule databases are kept between starts (process-wide: the first engine
    /// decides).
    pub db_cache: crate::patterns::db_cache::CacheDir,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            threshold: 0.5,
            rules_dir: None,
            models_dir: Some(PathBuf::from("models")),
            ort_dylib: PathBuf::from("vendor/onnxruntime/lib/libonnxruntime.so.1.22.1"),
            model_threads: 1,
            transformer_threads: std::thread::available_parallelism().map_or(2, |n| n.get().min(4)),
            batch: BatchConfig::default(),
            limits: FieldLimits::default(),
            max_model_fields: 64,
            min_prompt_words: 5,
            scoring_deadline: Duration::from_millis(2000),
            sensitivity: 1,
            db_cache: Default::default(),
        }
    }
}
