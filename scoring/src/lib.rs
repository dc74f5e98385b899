//! Rampart's scoring engine: request model, normaliser, pattern stage and model stage.

pub mod body;
pub mod code_stage;
pub mod context;
pub mod detectors;
pub mod engine;
pub mod engine_config;
pub mod exclusion;
pub mod fields;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
pub mod header_tails;
pub mod headers;
pub mod model;
pub mod models;
pub mod normalize;
pub mod overflow_lines;
pub mod path_segments;
pub mod patterns;
pub mod prompt_fields;
pub mod prose;
pub mod request;
pub mod request_checks;
pub mod sql_breakouts;
pub mod transport;
pub mod verdict;
pub mod views;

pub use context::ScoreContext;
pub use engine::{Engine, EngineConfig, EngineError};
pub use request::ScoreInput;
