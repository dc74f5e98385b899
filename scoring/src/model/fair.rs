//! Per-client lanes for model work. A client that sends many long texts fills only its own
//! lane (capped at `per_client` texts); lanes are drained round-robin, one text per lane per
//! turn, so a request from anyone else is in the very next batch no matter how deep the
//! flood is. Texts whose request passed its deadline or whose caller went away are dropped
//! when they come up, never run (the same idea as text-embeddings-inference's queue, which
//! skips entries whose response channel is closed).

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

/// Why a text could not be queued.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// Every lane together holds `total` texts.
    Full,
    /// This client's lane holds `per_client` texts.
    ClientFull,
}

/// One queued item with what the queue needs to know about it.
pub trait Queued {
    fn text_len(&self) -> usize;
    /// The caller is gone or its deadline passed: drop instead of run.
    fn expired(&self, now: Instant) -> bool;
}

pub struct FairQueue<T> {
    lanes: HashMap<String, VecDeque<T>>,
    /// Clients with queued work, in service order.
    turn: VecDeque<String>,
    len: usize,
    total: usize,
    per_client: usize,
}

impl<T: Queued> FairQueue<T> {
    pub fn new(total: usize, per_client: usize) -> Self {
        FairQueue { lanes: HashMap::new(), turn: VecDeque::new(), len: 0, total: total.max(1), per_client: per_client.max(1) }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Queues all of `items` for `client`, or none of them: a request's texts are scored
    /// together or the request is refused as a whole.
    pub fn push_all(&mut self, client: &str, items: Vec<T>) -> Result<(), (Refused, Vec<T>)> {
        let lane_len = self.lanes.get(client).map_or(0, VecDeque::len);
        if self.len + items.len() > self.total {
            return Err((Refused::Full, items));
        }
        if lane_len + items.len() > self.per_client {
            return Err((Refused::ClientFull, items));
        }
        if items.is_empty() {
            return Ok(());
        }
        self.len += items.len();
        let lane = self.lanes.entry(client.to_string()).or_default();
        if lane.is_empty() {
            self.turn.push_back(client.to_string());
        }
        lane.extend(items);
        Ok(())
    }

    /// The next batch: round-robin over lanes, at most `max_items` texts and about
    /// `max_bytes` bytes (the first text always fits). Expired items are handed to `dropped`.
    pub fn next_batch(&mut self, max_items: usize, max_bytes: usize, now: Instant, mut dropped: impl FnMut(T)) -> Vec<T> {
        let mut batch = Vec::new();
        let mut bytes = 0usize;
        while batch.len() < max_items.max(1) {
            let Some(client) = self.turn.pop_front() else { break };
            let Some(lane) = self.lanes.get_mut(&client) else { continue };
            // Expired items at the lane's head cost nothing: drop them and look again.
            let mut taken = None;
            while let Some(item) = lane.pop_front() {
                self.len -= 1;
                if item.expired(now) {
                    dropped(item);
                } else {
                    taken = Some(item);
                    break;
                }
            }
            let Some(item) = taken else {
                self.lanes.remove(&client);
                continue;
            };
            if !batch.is_empty() && bytes + item.text_len() > max_bytes {
                // Too big for this batch: it leads the next one, and the lane keeps its turn.
                lane.push_front(item);
                self.len += 1;
                self.turn.push_front(client);
                break;
            }
            bytes += item.text_len();
            batch.push(item);
            if lane.is_empty() {
                self.lanes.remove(&client);
            } else {
                self.turn.push_back(client);
            }
        }
        batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Item {
        tag: &'static str,
        len: usize,
        expired: bool,
    }

    impl Queued for Item {
        fn text_len(&self) -> usize {
            self.len
        }
        fn expired(&self, _: Instant) -> bool {
            self.expired
        }
    }

    fn item(tag: &'static str) -> Item {
        Item { tag, len: 10, expired: false }
    }

    #[test]
    fn a_flooding_client_cannot_push_others_out_or_back() {
        let mut q = FairQueue::new(100, 8);
        q.push_all("flood", (0..8).map(|_| item("f")).collect()).map_err(|e| e.0).unwrap();
        let refused = q.push_all("flood", vec![item("f")]).map_err(|e| e.0);
        assert_eq!(refused, Err(Refused::ClientFull));
        q.push_all("other", vec![item("o")]).map_err(|e| e.0).unwrap();
        let batch = q.next_batch(2, 1000, Instant::now(), |_| {});
        let tags: Vec<_> = batch.iter().map(|i| i.tag).collect();
        assert_eq!(tags, ["f", "o"], "the other client is served in the first batch");
        assert_eq!(q.len(), 7);
    }

    #[test]
    fn total_cap_and_all_or_nothing() {
        let mut q = FairQueue::new(3, 3);
        q.push_all("a", vec![item("a"), item("a")]).map_err(|e| e.0).unwrap();
        let refused = q.push_all("b", vec![item("b"), item("b")]);
        assert!(matches!(refused, Err((Refused::Full, ref items)) if items.len() == 2));
        assert_eq!(q.len(), 2);
    }

    #[test]
    fn expired_items_are_dropped_not_batched() {
        let mut q = FairQueue::new(10, 10);
        let stale = Item { tag: "stale", len: 10, expired: true };
        q.push_all("a", vec![stale, item("fresh")]).map_err(|e| e.0).unwrap();
        let mut dropped = Vec::new();
        let batch = q.next_batch(8, 1000, Instant::now(), |i| dropped.push(i.tag));
        assert_eq!(batch.iter().map(|i| i.tag).collect::<Vec<_>>(), ["fresh"]);
        assert_eq!(dropped, ["stale"]);
        assert!(q.is_empty());
    }

    #[test]
    fn byte_budget_ends_a_batch_without_losing_the_item() {
        let mut q = FairQueue::new(10, 10);
        q.push_all("a", vec![Item { tag: "big", len: 900, expired: false }, item("small")]).map_err(|e| e.0).unwrap();
        q.push_all("b", vec![Item { tag: "b-big", len: 900, expired: false }]).map_err(|e| e.0).unwrap();
        let first = q.next_batch(8, 1000, Instant::now(), |_| {});
        assert_eq!(first.iter().map(|i| i.tag).collect::<Vec<_>>(), ["big"]);
        let second = q.next_batch(8, 1000, Instant::now(), |_| {});
        assert_eq!(second.iter().map(|i| i.tag).collect::<Vec<_>>(), ["b-big", "small"]);
    }
}
