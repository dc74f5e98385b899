//! Dynamic batching queue in front of one [`Executor`].

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::cache::ScoreCache;
use super::cascade::CascadeSetting;
use super::fair::{FairQueue, Queued, Refused};
use super::observe::{self, BatchRan, QueueStats, ShedReason, TextsDequeued, TextsQueued, TextsShed};
use super::single_flight::{Flight, Flights, Joined, Waiter};
use super::{Executor, ModelError};
use crate::context::ScoreContext;

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
    /// Most texts one client may have queued (RAMPART_MODEL_CLIENT_QUEUE): beyond it that
    /// client's request gets `ClientQueueFull`, and nobody else notices.
    pub client_queue: usize,
    /// Most bytes of text per batch (a token-budget stand-in: long texts make small batches).
    /// A batch cannot be interrupted, so this also bounds how long a newly queued request
    /// waits behind a flood: 16 KB is one 12 KB chat message (32 transformer windows, ~0.2 s
    /// on 2 cores). Windows run one by one anyway (see [`super::transformer`]), so smaller
    /// batches cost the transformer no throughput.
    pub max_batch_bytes: usize,
    /// Recent scores remembered by text (0: off); see [`super::cache`].
    pub cache_entries: usize,
    /// The prompt-injection cascade (RAMPART_PI_CASCADE*); see [`super::cascade`].
    pub pi_cascade: CascadeSetting,
}

impl Default for BatchConfig {
    fn default() -> Self {
        BatchConfig {
            max_batch: 32,
            max_wait: Duration::ZERO,
            queue_capacity: 1024,
            client_queue: 128,
            max_batch_bytes: 16 * 1024,
            cache_entries: 8192,
            pi_cascade: CascadeSetting::default(),
        }
    }
}

/// One queued text; its callers wait on its flight (see [`super::single_flight`]).
struct Job {
    text: String,
    key: u64,
    flight: Arc<Flight>,
}

impl Queued for Job {
    fn text_len(&self) -> usize {
        self.text.len()
    }

    fn expired(&self, now: Instant) -> bool {
        self.flight.expired(now)
    }
}

/// The queue the callers and the model thread share.
struct Shared {
    queue: Mutex<FairQueue<Job>>,
    ready: Condvar,
    flights: Flights,
    cache: Option<Arc<ScoreCache>>,
    stats: Arc<QueueStats>,
}

/// Handle to a batching thread. Cloning is cheap; the thread stops when every handle is gone.
#[derive(Clone)]
pub struct BatchQueue {
    name: &'static str,
    shared: Arc<Shared>,
    /// Held only by handles: when the last one goes, the thread sees the count drop and ends.
    _alive: Arc<()>,
    cache: Option<Arc<ScoreCache>>,
}

impl BatchQueue {
    /// Starts the batching thread that owns `executor`.
    pub fn spawn<E: Executor>(name: &'static str, executor: E, config: BatchConfig) -> Self {
        let cache = ScoreCache::new(config.cache_entries).map(Arc::new);
        let shared = Arc::new(Shared {
            queue: Mutex::new(FairQueue::new(config.queue_capacity, config.client_queue)),
            ready: Condvar::new(),
            flights: Flights::default(),
            cache: cache.clone(),
            stats: observe::stats_for(name),
        });
        let alive = Arc::new(());
        let thread_shared = shared.clone();
        let watch = Arc::downgrade(&alive);
        std::thread::Builder::new()
            .name(format!("model-{name}"))
            .spawn(move || run_batches(name, executor, &thread_shared, watch, config))
            .expect("spawning a model thread");
        BatchQueue { name, shared, _alive: alive, cache }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Scores several texts for nobody in particular, with no deadline.
    pub async fn score_many(&self, texts: Vec<String>) -> Result<Vec<f32>, ModelError> {
        self.score_many_for(texts, &ScoreContext::default()).await
    }

    /// Scores several texts: all are queued (in the client's lane) before any is awaited, so
    /// they can share a batch. Texts scored recently come from the cache without a model run.
    /// Past `context.deadline` the caller stops waiting and its queued texts are dropped.
    pub async fn score_many_for(&self, texts: Vec<String>, context: &ScoreContext) -> Result<Vec<f32>, ModelError> {
        let mut scores: Vec<Option<f32>> = Vec::with_capacity(texts.len());
        let mut jobs = Vec::new();
        let mut pending = Vec::new();
        for text in texts {
            let key = match &self.cache {
                Some(cache) => cache.key(&text),
                None => self.shared.flights.key(&text),
            };
            if let Some(hit) = self.cache.as_ref().and_then(|c| c.get(key)) {
                scores.push(Some(hit));
                continue;
            }
            let (reply, rx) = oneshot::channel();
            // A text already in flight (from this request or another) is not queued again.
            if let Joined::Leader(flight) = self.shared.flights.join(key, Waiter { deadline: context.deadline, reply }) {
                jobs.push(Job { text, key, flight });
            }
            pending.push((scores.len(), rx));
            scores.push(None);
        }
        if !jobs.is_empty() {
            let client = context.client.as_deref().unwrap_or("");
            let texts = jobs.len();
            let pushed = {
                let mut queue = self.shared.queue.lock().unwrap_or_else(|p| p.into_inner());
                let pushed = queue.push_all(client, jobs);
                // Under the lock, so the model thread cannot take these texts off first.
                if pushed.is_ok() {
                    TextsQueued { texts }.emit(&self.shared.stats);
                }
                pushed
            };
            match pushed {
                Ok(()) => self.shared.ready.notify_one(),
                Err((refused, jobs)) => {
                    let (err, reason) = match refused {
                        Refused::Full => (ModelError::QueueFull(self.name), ShedReason::QueueFull),
                        Refused::ClientFull => (ModelError::ClientQueueFull(self.name), ShedReason::ClientQueueFull),
                    };
                    TextsShed { reason, texts }.emit(&self.shared.stats);
                    // Whoever joined these flights meanwhile learns the same.
                    for job in jobs {
                        self.shared.flights.finish(job.key, &job.flight, Err(err.clone()));
                    }
                    return Err(err);
                }
            }
        }
        let wait_all = async {
            for (slot, rx) in pending {
                scores[slot] = Some(rx.await.map_err(|_| ModelError::ExecutorGone(self.name))??);
            }
            Ok::<(), ModelError>(())
        };
        match context.deadline {
            // Dropping the receivers on timeout marks the queued texts abandoned (a flight is
            // dropped once all of its callers have gone).
            Some(deadline) => {
                tokio::time::timeout_at(deadline.into(), wait_all).await.map_err(|_| ModelError::DeadlineExceeded(self.name))??
            }
            None => wait_all.await?,
        }
        Ok(scores.into_iter().map(|s| s.unwrap_or_default()).collect())
    }

    /// Texts queued or running now (each counted once however many callers wait on it).
    pub fn in_flight(&self) -> usize {
        self.shared.flights.len()
    }

    /// This queue's counters (shared by every queue of its model name in the process).
    pub fn stats(&self) -> observe::QueueSnapshot {
        self.shared.stats.snapshot()
    }

    /// Callers waiting for `text`'s score (0 when it is not in flight).
    #[cfg(test)]
    fn waiting_on(&self, text: &str) -> usize {
        let key = match &self.cache {
            Some(cache) => cache.key(text),
            None => self.shared.flights.key(text),
        };
        self.shared.flights.waiters(key)
    }

    /// Scores one text. Fails at once when the queue is full.
    pub async fn score(&self, text: String) -> Result<f32, ModelError> {
        let scores = self.score_many(vec![text]).await?;
        scores.first().copied().ok_or(ModelError::ExecutorGone(self.name))
    }
}

/// How often an idle model thread checks whether its queue still has handles.
const IDLE_CHECK: Duration = Duration::from_millis(500);

fn run_batches<E: Executor>(name: &'static str, mut executor: E, shared: &Shared, alive: std::sync::Weak<()>, config: BatchConfig) {
    loop {
        let batch = {
            let mut queue = shared.queue.lock().unwrap_or_else(|p| p.into_inner());
            while queue.is_empty() {
                if alive.strong_count() == 0 {
                    return;
                }
                queue = shared.ready.wait_timeout(queue, IDLE_CHECK).unwrap_or_else(|p| p.into_inner()).0;
            }
            if !config.max_wait.is_zero() && queue.len() < config.max_batch {
                // Give companions a moment to arrive (the wait releases the lock).
                queue = shared.ready.wait_timeout(queue, config.max_wait).unwrap_or_else(|p| p.into_inner()).0;
            }
            let now = Instant::now();
            let queued = queue.len();
            let batch = queue.next_batch(config.max_batch, config.max_batch_bytes, now, |job| {
                TextsShed { reason: job.flight.shed_reason(now), texts: 1 }.emit(&shared.stats);
                shared.flights.finish(job.key, &job.flight, Err(ModelError::DeadlineExceeded(name)));
            });
            TextsDequeued { texts: queued - queue.len() }.emit(&shared.stats);
            batch
        };
        if batch.is_empty() {
            continue;
        }
        let texts: Vec<&str> = batch.iter().map(|j| j.text.as_str()).collect();
        let started = Instant::now();
        let result = executor.infer(&texts);
        let failed = match &result {
            Ok(scores) if scores.len() != batch.len() => {
                Some(format!("executor returned {} scores for {} texts", scores.len(), batch.len()))
            }
            Ok(_) => None,
            Err(err) => Some(err.to_string()),
        };
        BatchRan { texts: texts.len(), took: started.elapsed(), failed }.emit(&shared.stats);
        match result {
            Ok(scores) if scores.len() == batch.len() => {
                for (job, score) in batch.into_iter().zip(scores) {
                    let score = score.clamp(0.0, 1.0);
                    // Cached before the flight ends: a text is always cached or in flight.
                    if let Some(cache) = &shared.cache {
                        cache.put(job.key, score);
                    }
                    shared.flights.finish(job.key, &job.flight, Ok(score));
                }
            }
            Ok(scores) => {
                let err = ModelError::Inference(format!("executor returned {} scores for {} texts", scores.len(), batch.len()));
                for job in batch {
                    shared.flights.finish(job.key, &job.flight, Err(err.clone()));
                }
            }
            Err(err) => {
                for job in batch {
                    shared.flights.finish(job.key, &job.flight, Err(err.clone()));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    fn shed(queue: &BatchQueue, reason: ShedReason) -> usize {
        queue.stats().shed.iter().find(|(r, _)| *r == reason).map_or(0, |(_, n)| *n as usize)
    }

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
        let queue = BatchQueue::spawn("len-batched", LengthExecutor { batches: batches.clone() }, config);
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
        let stats = queue.stats();
        assert_eq!(stats.batch_sizes.count, sizes.len() as u64, "one observation per executor call");
        assert_eq!(stats.batch_sizes.sum, 16.0);
        assert_eq!(stats.batch_seconds.count, sizes.len() as u64);
        assert!(stats.batch_seconds.sum >= 0.005 * sizes.len() as f64, "each call sleeps 5 ms: {:?}", stats.batch_seconds);
        assert_eq!(stats.depth, 0);
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
        // Distinct texts: identical ones would share one flight and never fill the queue.
        for i in 0..4 {
            let q = queue.clone();
            pending.push(tokio::spawn(async move { q.score(format!("a{i}")).await }));
        }
        let mut full = 0;
        for p in pending {
            if matches!(p.await.unwrap(), Err(ModelError::QueueFull(_))) {
                full += 1;
            }
        }
        assert!(full >= 1, "a full queue must refuse work instead of queueing it");
        assert_eq!(shed(&queue, ShedReason::QueueFull), full);
        assert_eq!(queue.stats().depth, 0);
    }

    #[tokio::test]
    async fn abandoned_work_is_not_executed() {
        let batches = Arc::new(Mutex::new(Vec::new()));
        let config = BatchConfig { max_wait: Duration::from_millis(50), ..BatchConfig::default() };
        let queue = BatchQueue::spawn("len-abandoned", LengthExecutor { batches: batches.clone() }, config);
        // The first caller gives up before the batch window closes.
        let gone = tokio::time::timeout(Duration::from_millis(1), queue.score("gone".into())).await;
        assert!(gone.is_err());
        assert_eq!(queue.score("kept".into()).await.unwrap(), 0.04);
        assert_eq!(batches.lock().unwrap().iter().sum::<usize>(), 1, "abandoned text was scored");
        assert_eq!(shed(&queue, ShedReason::Abandoned), 1);
        assert_eq!(shed(&queue, ShedReason::Deadline), 0);
        assert_eq!(queue.stats().depth, 0);
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

        let uncached = BatchQueue::spawn(
            "uncached",
            LengthExecutor { batches: batches.clone() },
            BatchConfig { cache_entries: 0, ..Default::default() },
        );
        uncached.score_many(history.clone()).await.unwrap();
        uncached.score_many(history).await.unwrap();
        let runs: usize = batches.lock().unwrap().iter().sum();
        assert_eq!(runs, 7);
    }

    /// Sleeps per batch like a busy model; records which texts ran.
    struct SlowExecutor {
        ran: Arc<Mutex<Vec<String>>>,
    }

    impl Executor for SlowExecutor {
        fn infer(&mut self, texts: &[&str]) -> Result<Vec<f32>, ModelError> {
            std::thread::sleep(Duration::from_millis(40));
            self.ran.lock().unwrap().extend(texts.iter().map(|t| t.to_string()));
            Ok(vec![0.5; texts.len()])
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_flood_from_one_client_neither_sheds_nor_delays_another() {
        let ran = Arc::new(Mutex::new(Vec::new()));
        let config = BatchConfig { max_batch: 2, client_queue: 12, cache_entries: 0, ..BatchConfig::default() };
        let queue = BatchQueue::spawn("slow-flood", SlowExecutor { ran: ran.clone() }, config);
        let flood = ScoreContext::new(Some("10.0.0.1".into()), None);
        let mut flooding = Vec::new();
        // Five requests of four texts against a lane of 12: the lane fills, and what does not
        // fit is refused to the flooder alone.
        for i in 0..5 {
            let (q, ctx) = (queue.clone(), flood.clone());
            flooding.push(tokio::spawn(async move { q.score_many_for((0..4).map(|j| format!("flood-{i}-{j}")).collect(), &ctx).await }));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        let other = ScoreContext::within(Some("10.0.0.2".into()), Duration::from_secs(5));
        assert_eq!(queue.score_many_for(vec!["other".into()], &other).await.unwrap(), vec![0.5]);
        let ran_before_other = ran.lock().unwrap().iter().position(|t| t == "other").unwrap();
        println!("texts run before the other client's: {ran_before_other} (the flood queued up to 12)");
        assert!(ran_before_other <= 4, "the other client waited behind the flood: {ran_before_other}");
        let mut refused = 0;
        for f in flooding {
            match f.await.unwrap() {
                Ok(_) => {}
                Err(ModelError::ClientQueueFull(_)) => refused += 1,
                Err(other) => panic!("flood request failed otherwise: {other}"),
            }
        }
        assert!(refused >= 1, "a client exceeded its lane without being refused");
        assert_eq!(shed(&queue, ShedReason::ClientQueueFull), 4 * refused, "a refused request sheds its four texts");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn work_past_its_deadline_is_dropped_not_run() {
        let ran = Arc::new(Mutex::new(Vec::new()));
        let config = BatchConfig { max_batch: 1, cache_entries: 0, ..BatchConfig::default() };
        let queue = BatchQueue::spawn("slow-deadline", SlowExecutor { ran: ran.clone() }, config);
        let busy = queue.clone();
        let hold = tokio::spawn(async move { busy.score_many((0..3).map(|i| format!("busy-{i}")).collect()).await });
        tokio::time::sleep(Duration::from_millis(10)).await;
        let late = ScoreContext::within(Some("late".into()), Duration::from_millis(30));
        let answer = queue.score_many_for(vec!["late".into()], &late).await;
        assert!(matches!(answer, Err(ModelError::DeadlineExceeded(_))), "{answer:?}");
        hold.await.unwrap().unwrap();
        assert!(!ran.lock().unwrap().iter().any(|t| t == "late"), "expired text reached the model");
        assert_eq!(shed(&queue, ShedReason::Deadline), 1);
        assert_eq!(queue.stats().depth, 0);
    }

    /// Blocks every batch until the test opens the gate; records the texts it ran.
    struct GatedExecutor {
        ran: Arc<Mutex<Vec<String>>>,
        gate: Arc<(Mutex<bool>, std::sync::Condvar)>,
    }

    impl Executor for GatedExecutor {
        fn infer(&mut self, texts: &[&str]) -> Result<Vec<f32>, ModelError> {
            let (open, opened) = &*self.gate;
            let mut open = open.lock().unwrap();
            while !*open {
                open = opened.wait(open).unwrap();
            }
            self.ran.lock().unwrap().extend(texts.iter().map(|t| t.to_string()));
            Ok(texts.iter().map(|t| t.len() as f32 / 100.0).collect())
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn identical_texts_in_flight_are_scored_once() {
        let ran = Arc::new(Mutex::new(Vec::new()));
        let gate = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
        // No cache: only single flight can keep the copies from running.
        let config = BatchConfig { cache_entries: 0, ..BatchConfig::default() };
        let queue = BatchQueue::spawn("gated", GatedExecutor { ran: ran.clone(), gate: gate.clone() }, config);
        const CALLERS: usize = 24;
        let mut callers = Vec::new();
        for i in 0..CALLERS {
            let q = queue.clone();
            // Every caller sends the shared text; a third also sends a text of its own.
            let mut texts = vec!["the same chat message".to_string()];
            if i % 3 == 0 {
                texts.push(format!("own text {i}"));
            }
            callers.push(tokio::spawn(async move { q.score_many(texts).await }));
        }
        // The first copy is running (blocked at the gate) or queued; wait until every caller
        // has joined its flight, then let the model run.
        while queue.waiting_on("the same chat message") < CALLERS {
            tokio::task::yield_now().await;
        }
        {
            let (open, opened) = &*gate;
            *open.lock().unwrap() = true;
            opened.notify_all();
        }
        for caller in callers {
            let scores = caller.await.unwrap().unwrap();
            assert_eq!(scores[0], 0.21, "every caller gets the shared text's own score");
        }
        let ran = ran.lock().unwrap();
        assert_eq!(ran.iter().filter(|t| *t == "the same chat message").count(), 1, "ran: {ran:?}");
        assert_eq!(ran.len(), 1 + CALLERS.div_ceil(3), "each caller's own text still ran once");
        assert_eq!(queue.in_flight(), 0);
    }
}
