//! Remembers recent model scores by text. LLM apps resend the whole conversation on every
//! turn and many clients repeat the same system prompt, so most texts a chat endpoint sees
//! were scored moments ago. Both executors are deterministic per text (a text scores the same
//! alone or in any batch), so a cached score is exactly the score a new run would give.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::sync::Mutex;

/// Keys are 64-bit SipHash values under a per-process random key: an attacker who cannot see
/// the key cannot aim a collision at a cached benign score.
pub struct ScoreCache {
    hasher: RandomState,
    capacity: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    scores: HashMap<u64, f32>,
    /// Insertion order; the oldest entry is evicted first.
    order: VecDeque<u64>,
}

impl ScoreCache {
    /// `None` when `capacity` is 0 (caching off).
    pub fn new(capacity: usize) -> Option<Self> {
        (capacity > 0).then(|| ScoreCache { hasher: RandomState::new(), capacity, inner: Mutex::default() })
    }

    pub fn key(&self, text: &str) -> u64 {
        self.hasher.hash_one(text)
    }

    pub fn get(&self, key: u64) -> Option<f32> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).scores.get(&key).copied()
    }

    pub fn put(&self, key: u64, score: f32) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.scores.insert(key, score).is_none() {
            inner.order.push_back(key);
            while inner.order.len() > self.capacity {
                if let Some(old) = inner.order.pop_front() {
                    inner.scores.remove(&old);
                }
            }
        }
    }

    pub fn len(&self) -> usize {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).scores.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_exact() {
        let cache = ScoreCache::new(2).unwrap();
        let (a, b, c) = (cache.key("a"), cache.key("b"), cache.key("c"));
        cache.put(a, 0.1);
        cache.put(b, 0.2);
        cache.put(a, 0.1);
        assert_eq!(cache.len(), 2);
        cache.put(c, 0.3);
        assert_eq!(cache.get(a), None, "oldest evicted");
        assert_eq!(cache.get(b), Some(0.2));
        assert_eq!(cache.get(c), Some(0.3));
        assert!(ScoreCache::new(0).is_none());
    }
}
