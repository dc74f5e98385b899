//! Dynamic batching queue in front of one [`Executor`].

use std::sync::mpsc::{self, RecvTimeoutError, SyncSender, TrySendError};
use std::time::{Duration, Instant};

use std::sync::Arc;

use tokio::sync::oneshot;

use super::cache::ScoreCache;
use super::{Executor, ModelError};

#[derive(Clone, Debug)]
pub struct BatchConfig {
    /// Most texts per executor call.
    pub max_batch: usize,
    /// Longest a text waits for companions after the first one arrived. Zero (the default)
    /// batches greedily: whatever is queued when the executor frees up forms the next batch,
    /// so a lone request never waits and batches grow by themselves under load.
    pub max_wait: Duration,
    /// Most texts queued; beyond it callers get `QueueFull` at once (load shedding).
    pub queue_capacity: usize,
    /// Most bytes of text per batch (a token-budget stand-in: long texts make small batches).
    pub max_batch_bytes: usize,
    /// Recent scores remembered by text (0: off); see [`super::cache`].
    pub cache_entries: usize,
}

impl Default for BatchConfig {
    fn default() -> Self {
        BatchConfig {
            max_batch: 32,
            max_wait: Duration::ZERO,
            queue_capacity: 1024,
            max_batch_bytes: 64 * 1024,
            cache_entries: 8192,
        }
    }
}

struct Job {
    text: String,
    reply: oneshot::Sender<Result<f32, ModelError>>,
}

/// Handle to a batching thread. Cloning is cheap; the thread stops when every handle is gone.
#[derive(Clone)]
pub struct BatchQueue {
    name: &'static str,
    tx: SyncSender<Job>,
    cache: Option<Arc<ScoreCache>>,
}

impl BatchQueue {
    /// Starts the batching thread that owns `executor`.
    pub fn spawn<E: Executor>(name: &'static str, executor: E, config: BatchConfig) -> Self {
        let (tx, rx) = mpsc::sync_channel::<Job>(config.queue_capacity.max(1));
        let cache = ScoreCache::new(config.cache_entries).map(Arc::new);
        std::thread::Builder::new()
            .name(format!("model-{name}"))
            .spawn(move || run_batches(executor, rx, config))
            .expect("spawning a model thread");
        BatchQueue { name, tx, cache }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Scores several texts: all are queued before any is awaited, so they can share a batch.
    /// Texts scored recently come from the cache without a model run.
    pub async fn score_many(&self, texts: Vec<String>) -> Result<Vec<f32>, ModelError> {
        let mut scores: Vec<Option<f32>> = Vec::with_capacity(texts.len());
        let mut pending = Vec::new();
        for text in texts {
            let key = self.cache.as_ref().map(|c| c.key(&text));
            if let Some(hit) = key.and_then(|k| self.cache.as_ref()?.get(k)) {
                scores.push(Some(hit));
                continue;
            }
            let (reply, rx) = oneshot::channel();
            match self.tx.try_send(Job { text, reply }) {
                Ok(()) => pending.push((scores.len(), key, rx)),
                Err(TrySendError::Full(_)) => return Err(ModelError::QueueFull(self.name)),
                Err(TrySendError::Disconnected(_)) => return Err(ModelError::ExecutorGone(self.name)),
            }
            scores.push(None);
        }
        for (slot, key, rx) in pending {
            let score = rx.await.map_err(|_| ModelError::ExecutorGone(self.name))??;
            if let (Some(cache), Some(key)) = (&self.cache, key) {
                cache.put(key, score);
            }
            scores[slot] = Some(score);
        }
        Ok(scores.into_iter().map(|s| s.unwrap_or_default()).collect())
    }

    /// Scores one text. Fails at once when the queue is full.
    pub async fn score(&self, text: String) -> Result<f32, ModelError> {
        let scores = self.score_many(vec![text]).await?;
        scores.first().copied().ok_or(ModelError::ExecutorGone(self.name))
    }
}

fn run_batches<E: Executor>(mut executor: E, rx: mpsc::Receiver<Job>, config: BatchConfig) {
    let mut batch: Vec<Job> = Vec::with_capacity(config.max_batch);
    while let Ok(first) = rx.recv() {
        let mut bytes = first.text.len();
        batch.push(first);
        let deadline = Instant::now() + config.max_wait;
        while batch.len() < config.max_batch && bytes < config.max_batch_bytes {
            let now = Instant::now();
            let next = if now >= deadline {
                match rx.try_recv() {
                    Ok(job) => job,
                    Err(_) => break,
                }
            } else {
                match rx.recv_timeout(deadline - now) {
                    Ok(job) => job,
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            };
            bytes += next.text.len();
            batch.push(next);
        }
        // A caller that went away (client disconnected, timeout) no longer needs its score.
        batch.retain(|job| !job.reply.is_closed());
        if batch.is_empty() {
            continue;
        }
        let texts: Vec<&str> = batch.iter().map(|j| j.text.as_str()).collect();
        let result = executor.infer(&texts);
        match result {
            Ok(scores) if scores.len() == batch.len() => {
                for (job, score) in batch.drain(..).zip(scores) {
                    let _ = job.reply.send(Ok(score.clamp(0.0, 1.0)));
                }
            }
            Ok(scores) => {
                let err = ModelError::Inference(format!(
                    "executor returned {} scores for {} texts",
                    scores.len(),
                    batch.len()
                ));
                for job in batch.drain(..) {
                    let _ = job.reply.send(Err(err.clone()));
                }
            }
            Err(err) => {
                for job in batch.drain(..) {
                    let _ = job.reply.send(Err(err.clone()));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Records batch sizes; scores a text by its length so results can be checked per caller.
    struct LengthExecutor {
        batches: Arc<Mutex<Vec<usize>>>,
    }

    impl Executor for LengthExecutor {
        fn infer(&mut self, texts: &[&str]) -> Result<Vec<f32>, ModelError> {
            self.batches.lock().unwrap().push(texts.len());
            std::thread::sleep(Duration::from_millis(5));
            Ok(texts.iter().map(|t| t.len() as f32 / 100.0).collect())
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_callers_are_batched_and_each_gets_its_own_score() {
        let batches = Arc::new(Mutex::new(Vec::new()));
        let config = BatchConfig { max_wait: Duration::from_millis(20), ..BatchConfig::default() };
        let queue = BatchQueue::spawn("len", LengthExecutor { batches: batches.clone() }, config);
        let mut handles = Vec::new();
        for i in 0..16 {
            let q = queue.clone();
            handles.push(tokio::spawn(async move { (i, q.score("x".repeat(i)).await.unwrap()) }));
        }
        for h in handles {
            let (i, score) = h.await.unwrap();
            assert!((score - i as f32 / 100.0).abs() < 1e-6);
        }
        let sizes = batches.lock().unwrap().clone();
        assert_eq!(sizes.iter().sum::<usize>(), 16);
        assert!(sizes.iter().any(|&n| n > 1), "no batching happened: {sizes:?}");
    }

    #[tokio::test]
    async fn full_queue_sheds_load_immediately() {
        struct Blocked;
        impl Executor for Blocked {
            fn infer(&mut self, texts: &[&str]) -> Result<Vec<f32>, ModelError> {
                std::thread::sleep(Duration::from_millis(200));
                Ok(vec![0.0; texts.len()])
            }
        }
        let config = BatchConfig { queue_capacity: 1, max_batch: 1, ..BatchConfig::default() };
        let queue = BatchQueue::spawn("blocked", Blocked, config);
        let mut pending = Vec::new();
        for _ in 0..4 {
            let q = queue.clone();
            pending.push(tokio::spawn(async move { q.score("a".into()).await }));
        }
        let mut full = 0;
        for p in pending {
            if matches!(p.await.unwrap(), Err(ModelError::QueueFull(_))) {
                full += 1;
            }
        }
        assert!(full >= 1, "a full queue must refuse work instead of queueing it");
    }

    #[tokio::test]
    async fn abandoned_work_is_not_executed() {
        let batches = Arc::new(Mutex::new(Vec::new()));
        let config = BatchConfig { max_wait: Duration::from_millis(50), ..BatchConfig::default() };
        let queue = BatchQueue::spawn("len", LengthExecutor { batches: batches.clone() }, config);
        // The first caller gives up before the batch window closes.
        let gone = tokio::time::timeout(Duration::from_millis(1), queue.score("gone".into())).await;
        assert!(gone.is_err());
        assert_eq!(queue.score("kept".into()).await.unwrap(), 0.04);
        assert_eq!(batches.lock().unwrap().iter().sum::<usize>(), 1, "abandoned text was scored");
    }

    #[tokio::test]
    async fn repeated_texts_come_from_the_cache() {
        let batches = Arc::new(Mutex::new(Vec::new()));
        let queue = BatchQueue::spawn("cached", LengthExecutor { batches: batches.clone() }, BatchConfig::default());
        let history = vec!["system prompt".to_string(), "first turn".to_string()];
        assert_eq!(queue.score_many(history.clone()).await.unwrap(), vec![0.13, 0.10]);
        let mut next_turn = history.clone();
        next_turn.push("second turn!".to_string());
        assert_eq!(queue.score_many(next_turn).await.unwrap(), vec![0.13, 0.10, 0.12]);
        let runs: usize = batches.lock().unwrap().iter().sum();
        assert_eq!(runs, 3, "only the new message reached the model");

        let uncached = BatchQueue::spawn("uncached", LengthExecutor { batches: batches.clone() }, BatchConfig { cache_entries: 0, ..Default::default() });
        uncached.score_many(history.clone()).await.unwrap();
        uncached.score_many(history).await.unwrap();
        let runs: usize = batches.lock().unwrap().iter().sum();
        assert_eq!(runs, 7);
    }
}
