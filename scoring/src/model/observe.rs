//! What the model queues report: depth, batch sizes, per-batch inference time and texts shed,
//! kept in atomics the queue itself updates and a metrics scrape reads ([`all`]).
//!
//! Each observable event is one struct whose `emit` counts it (and logs it where that helps
//! an operator), the idea of vector's `internal_events`: a counter cannot drift from the log
//! line or be forgotten at one of several call sites.
//!
//! Stats are process-wide per model name, like the inference pool's: every queue of that name
//! (one per engine; tests build several) adds to the same series, so counters only grow and
//! the depth is the sum of every such queue's.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::histogram::{AtomicHistogram, HistogramSnapshot, BATCH_SECONDS_BOUNDS, BATCH_SIZE_BOUNDS};

/// Why a queue dropped texts without running them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShedReason {
    /// Every lane together was full (`ModelError::QueueFull`).
    QueueFull,
    /// The client's lane was full (RAMPART_MODEL_CLIENT_QUEUE, `ModelError::ClientQueueFull`).
    ClientQueueFull,
    /// The request's scoring deadline passed while the text waited.
    Deadline,
    /// Every caller went away (a dropped request) while the text waited.
    Abandoned,
}

impl ShedReason {
    pub const ALL: [ShedReason; 4] = [ShedReason::QueueFull, ShedReason::ClientQueueFull, ShedReason::Deadline, ShedReason::Abandoned];

    pub fn slug(self) -> &'static str {
        match self {
            ShedReason::QueueFull => "queue-full",
            ShedReason::ClientQueueFull => "client-queue-full",
            ShedReason::Deadline => "deadline",
            ShedReason::Abandoned => "abandoned",
        }
    }
}

/// One model's counters.
pub struct QueueStats {
    model: &'static str,
    /// Texts queued and not yet taken into a batch (signed: queues of one name add and
    /// subtract independently, and a scrape must never see a wrapped value).
    depth: AtomicI64,
    batch_sizes: AtomicHistogram,
    batch_seconds: AtomicHistogram,
    shed: [AtomicU64; ShedReason::ALL.len()],
    failed_batches: AtomicU64,
}

/// A scrape's copy of one model's stats.
#[derive(Clone, Debug)]
pub struct QueueSnapshot {
    pub model: &'static str,
    pub depth: u64,
    pub batch_sizes: HistogramSnapshot,
    pub batch_seconds: HistogramSnapshot,
    /// Texts shed, by reason, in [`ShedReason::ALL`] order.
    pub shed: Vec<(ShedReason, u64)>,
    pub failed_batches: u64,
}

impl QueueStats {
    fn new(model: &'static str) -> Self {
        QueueStats {
            model,
            depth: AtomicI64::new(0),
            batch_sizes: AtomicHistogram::new(&BATCH_SIZE_BOUNDS, 1.0),
            batch_seconds: AtomicHistogram::new(&BATCH_SECONDS_BOUNDS, 1e-9),
            shed: Default::default(),
            failed_batches: AtomicU64::new(0),
        }
    }

    pub fn snapshot(&self) -> QueueSnapshot {
        QueueSnapshot {
            model: self.model,
            depth: self.depth.load(Ordering::Relaxed).max(0) as u64,
            batch_sizes: self.batch_sizes.snapshot(),
            batch_seconds: self.batch_seconds.snapshot(),
            shed: ShedReason::ALL.iter().map(|&r| (r, self.shed[r as usize].load(Ordering::Relaxed))).collect(),
            failed_batches: self.failed_batches.load(Ordering::Relaxed),
        }
    }
}

fn registry() -> &'static Mutex<BTreeMap<&'static str, Arc<QueueStats>>> {
    static STATS: OnceLock<Mutex<BTreeMap<&'static str, Arc<QueueStats>>>> = OnceLock::new();
    STATS.get_or_init(Mutex::default)
}

/// The stats of model `name`, created at 0 on first use.
pub fn stats_for(name: &'static str) -> Arc<QueueStats> {
    let mut map = registry().lock().unwrap_or_else(|p| p.into_inner());
    map.entry(name).or_insert_with(|| Arc::new(QueueStats::new(name))).clone()
}

/// Every model queue started in this process, by name.
pub fn all() -> Vec<QueueSnapshot> {
    registry().lock().unwrap_or_else(|p| p.into_inner()).values().map(|s| s.snapshot()).collect()
}

/// Texts entered the queue.
pub struct TextsQueued {
    pub texts: usize,
}

impl TextsQueued {
    pub fn emit(self, stats: &QueueStats) {
        stats.depth.fetch_add(self.texts as i64, Ordering::Relaxed);
    }
}

/// The model thread took texts off the queue: a batch to run, and any it dropped as expired
/// (those also count as [`TextsShed`]).
pub struct TextsDequeued {
    pub texts: usize,
}

impl TextsDequeued {
    pub fn emit(self, stats: &QueueStats) {
        stats.depth.fetch_sub(self.texts as i64, Ordering::Relaxed);
    }
}

/// Texts dropped without a model run.
pub struct TextsShed {
    pub reason: ShedReason,
    pub texts: usize,
}

impl TextsShed {
    pub fn emit(self, stats: &QueueStats) {
        stats.shed[self.reason as usize].fetch_add(self.texts as u64, Ordering::Relaxed);
        // Debug: under a flood this fires per request; the counter is what to alert on.
        tracing::debug!(model = stats.model, reason = self.reason.slug(), texts = self.texts, "model texts shed");
    }
}

/// One executor call finished (or failed).
pub struct BatchRan {
    pub texts: usize,
    pub took: Duration,
    pub failed: Option<String>,
}

impl BatchRan {
    pub fn emit(self, stats: &QueueStats) {
        stats.batch_sizes.observe_units(self.texts as u64);
        stats.batch_seconds.observe_units(u64::try_from(self.took.as_nanos()).unwrap_or(u64::MAX));
        if let Some(error) = self.failed {
            stats.failed_batches.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(model = stats.model, texts = self.texts, %error, "model batch failed");
        }
    }
}
