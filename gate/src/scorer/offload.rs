//! Large requests are scored off a per-core proxy thread.
//!
//! Under `--runtime per-core` every connection stays on the thread that accepted it, and
//! scoring runs inline in the request's task: about 10 µs for a 1 KB body, but 20–30 ms for
//! a body near the 1 MiB default body limit. For those milliseconds every other connection
//! of that core would wait, however idle the other cores are. A core thread therefore names
//! the process's shared multi-threaded runtime here ([`offload_to`]), and a query of at least
//! [`OFFLOAD_MIN_BYTES`] is scored as a task there, where tokio's work stealing spreads it.
//! Small queries, the hot path, never pay for the hand-off; threads that named nothing (the
//! shared runtime itself, the auth and ext_proc doors) score everything inline as before.

use std::cell::RefCell;

use tokio::runtime::Handle;

/// Text length from which a core thread hands the scoring to the shared runtime: about
/// 0.5 ms of pattern scoring, fifty times the cost of the hand-off.
pub const OFFLOAD_MIN_BYTES: usize = 64 * 1024;

thread_local! {
    /// The runtime this thread hands large queries to; none outside the per-core threads.
    static SHARED_RUNTIME: RefCell<Option<Handle>> = const { RefCell::new(None) };
}

/// From now on this thread scores queries of [`OFFLOAD_MIN_BYTES`] or more on `shared`.
/// `shared` must be a multi-threaded runtime that outlives the thread's scoring (the
/// process's main runtime); a current-thread one is refused, since nothing would drive it.
pub fn offload_to(shared: Handle) {
    let multi_threaded = matches!(shared.runtime_flavor(), tokio::runtime::RuntimeFlavor::MultiThread);
    SHARED_RUNTIME.with(|slot| *slot.borrow_mut() = multi_threaded.then_some(shared));
}

/// The runtime to score a query of `text_len` bytes on, when it is not this thread.
pub(crate) fn target(text_len: usize) -> Option<Handle> {
    if text_len < OFFLOAD_MIN_BYTES {
        return None;
    }
    SHARED_RUNTIME.with(|slot| slot.borrow().clone())
}

/// Aborts the spawned scoring when the request is dropped (client gone, door timeout), so
/// an abandoned query does not keep a model slot. Work already inside the synchronous
/// pattern stage still runs to its end: tokio can only cancel at an await.
pub(crate) struct AbortOnDrop<T>(pub tokio::task::JoinHandle<T>);

impl<T> AbortOnDrop<T> {
    /// The task's result; dropping this future before it is ready aborts the task.
    pub(crate) async fn await_result(mut self) -> Result<T, tokio::task::JoinError> {
        (&mut self.0).await
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_large_texts_on_a_thread_that_named_a_multi_threaded_runtime_are_handed_off() {
        let shared = tokio::runtime::Builder::new_multi_thread().worker_threads(1).build().unwrap();
        let single = tokio::runtime::Builder::new_current_thread().build().unwrap();
        std::thread::spawn(move || {
            assert!(target(OFFLOAD_MIN_BYTES).is_none(), "nothing named: inline");
            offload_to(single.handle().clone());
            assert!(target(OFFLOAD_MIN_BYTES).is_none(), "a current-thread runtime is refused");
            offload_to(shared.handle().clone());
            assert!(target(OFFLOAD_MIN_BYTES - 1).is_none(), "small texts stay inline");
            assert!(target(OFFLOAD_MIN_BYTES).is_some());
        })
        .join()
        .unwrap();
        assert!(target(1 << 20).is_none(), "the setting belongs to the thread that made it");
    }
}
