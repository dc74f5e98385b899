//! Single flight: a text that is already queued or running is not queued again; its new callers
//! wait for the run in flight and all get its score. Chat clients resend the conversation on
//! every turn and retry on timeouts, so the same text often arrives again before its first
//! score is back; without this each copy would cost a full model run (the cache only helps
//! once a run has finished).
//!
//! The batching thread ends every flight it takes ([`Flights::finish`]): it stores the score
//! in the cache first and removes the flight second, so a text is always either cached or in
//! flight while it is being scored, never neither.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::oneshot;

use super::observe::ShedReason;
use super::ModelError;

pub type Reply = oneshot::Sender<Result<f32, ModelError>>;

/// One caller waiting for a text's score.
pub struct Waiter {
    pub deadline: Option<Instant>,
    pub reply: Reply,
}

impl Waiter {
    fn gone(&self, now: Instant) -> bool {
        self.reply.is_closed() || self.deadline.is_some_and(|d| d <= now)
    }
}

/// The callers of one queued text.
#[derive(Default)]
pub struct Flight {
    state: Mutex<FlightState>,
}

#[derive(Default)]
struct FlightState {
    waiters: Vec<Waiter>,
    /// Set once the queue decided to drop the flight: nobody may join it any more.
    closed: bool,
}

impl Flight {
    /// Whether every caller has gone away or passed its deadline. A `true` answer closes the
    /// flight (the queue drops an expired text at once), so a caller arriving later starts a
    /// new flight instead of joining one that will never run.
    pub fn expired(&self, now: Instant) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.closed || state.waiters.iter().all(|w| w.gone(now)) {
            state.closed = true;
        }
        state.closed
    }

    /// Why an expired flight is dropped: a caller past its deadline makes it `Deadline`;
    /// otherwise every caller went away before it ran.
    pub fn shed_reason(&self, now: Instant) -> ShedReason {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.waiters.iter().any(|w| w.deadline.is_some_and(|d| d <= now)) {
            ShedReason::Deadline
        } else {
            ShedReason::Abandoned
        }
    }
}

/// Whether a caller leads a new flight (and must queue the text) or joined one in progress.
pub enum Joined {
    Leader(Arc<Flight>),
    Follower,
}

/// The texts in flight, by key.
pub struct Flights {
    hasher: RandomState,
    map: Mutex<HashMap<u64, Arc<Flight>>>,
}

impl Default for Flights {
    fn default() -> Self {
        Flights { hasher: RandomState::new(), map: Mutex::default() }
    }
}

impl Flights {
    /// A per-process keyed hash of `text` (used when the queue has no cache to share keys with).
    pub fn key(&self, text: &str) -> u64 {
        self.hasher.hash_one(text)
    }

    /// Joins the flight of `key`, or starts one with `waiter` as its first caller.
    pub fn join(&self, key: u64, waiter: Waiter) -> Joined {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(flight) = map.get(&key) {
            let mut state = flight.state.lock().unwrap_or_else(|p| p.into_inner());
            if !state.closed {
                state.waiters.push(waiter);
                return Joined::Follower;
            }
        }
        let flight = Arc::new(Flight { state: Mutex::new(FlightState { waiters: vec![waiter], closed: false }) });
        map.insert(key, flight.clone());
        Joined::Leader(flight)
    }

    /// Ends a flight: no one joins it any more, and every caller gets `result`.
    pub fn finish(&self, key: u64, flight: &Arc<Flight>, result: Result<f32, ModelError>) {
        {
            let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
            if map.get(&key).is_some_and(|f| Arc::ptr_eq(f, flight)) {
                map.remove(&key);
            }
        }
        let waiters = {
            let mut state = flight.state.lock().unwrap_or_else(|p| p.into_inner());
            state.closed = true;
            std::mem::take(&mut state.waiters)
        };
        for waiter in waiters {
            let _ = waiter.reply.send(result.clone());
        }
    }

    /// Texts in flight.
    pub fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Callers waiting on the flight of `key` (0 when none is in flight).
    pub fn waiters(&self, key: u64) -> usize {
        let map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.get(&key).map_or(0, |f| f.state.lock().unwrap_or_else(|p| p.into_inner()).waiters.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiter() -> (Waiter, oneshot::Receiver<Result<f32, ModelError>>) {
        let (reply, rx) = oneshot::channel();
        (Waiter { deadline: None, reply }, rx)
    }

    #[test]
    fn followers_share_the_leaders_result_and_a_finished_flight_is_gone() {
        let flights = Flights::default();
        let key = flights.key("same text");
        let (first, mut rx1) = waiter();
        let Joined::Leader(flight) = flights.join(key, first) else { panic!("first caller must lead") };
        let (second, mut rx2) = waiter();
        assert!(matches!(flights.join(key, second), Joined::Follower));
        assert_eq!(flights.waiters(key), 2);
        flights.finish(key, &flight, Ok(0.25));
        assert_eq!(rx1.try_recv().unwrap().unwrap(), 0.25);
        assert_eq!(rx2.try_recv().unwrap().unwrap(), 0.25);
        assert!(flights.is_empty());
        let (third, _rx3) = waiter();
        assert!(matches!(flights.join(key, third), Joined::Leader(_)), "a finished flight must not be joined");
    }

    #[test]
    fn an_expired_flight_is_closed_to_new_callers() {
        let flights = Flights::default();
        let key = flights.key("late");
        let (reply, rx) = oneshot::channel();
        let past = Instant::now();
        let Joined::Leader(flight) = flights.join(key, Waiter { deadline: Some(past), reply }) else { panic!() };
        assert!(flight.expired(Instant::now()));
        let (fresh, _rx) = waiter();
        assert!(matches!(flights.join(key, fresh), Joined::Leader(_)), "joined a flight the queue is dropping");
        drop(rx);
    }
}
