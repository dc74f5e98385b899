//! One process-wide budget of buffered request-body bytes, shared by every in-flight request
//! on every front door. A request reserves bytes as its body prefix arrives and gives them back
//! when the prefix is released (forwarded upstream, or the request ends). Without it, N
//! clients each holding back the last byte of a WAF_BODY_LIMIT_BYTES body pin N x the limit.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

pub struct BodyBudget {
    capacity: usize,
    used: AtomicUsize,
}

impl BodyBudget {
    pub fn new(capacity: usize) -> Arc<Self> {
        Arc::new(BodyBudget { capacity, used: AtomicUsize::new(0) })
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Bytes currently reserved by in-flight requests.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// An empty reservation that can grow while the budget lasts.
    pub fn reserve(self: &Arc<Self>) -> Reservation {
        Reservation { budget: self.clone(), held: 0 }
    }

    fn take(&self, bytes: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| used.checked_add(bytes).filter(|&total| total <= self.capacity))
            .is_ok()
    }
}

/// Bytes one request holds; returned to the budget on drop.
pub struct Reservation {
    budget: Arc<BodyBudget>,
    held: usize,
}

impl Reservation {
    /// Takes `bytes` more, or nothing (false) when the budget cannot cover them.
    pub fn grow(&mut self, bytes: usize) -> bool {
        let granted = self.budget.take(bytes);
        if granted {
            self.held += bytes;
        }
        granted
    }

    pub fn held(&self) -> usize {
        self.held
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.held, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_share_one_capacity_and_return_it() {
        let budget = BodyBudget::new(100);
        let mut a = budget.reserve();
        let mut b = budget.reserve();
        assert!(a.grow(60));
        assert!(!b.grow(41), "60 + 41 is over 100");
        assert!(b.grow(40));
        assert_eq!(budget.used(), 100);
        drop(a);
        assert_eq!(budget.used(), 40);
        assert!(b.grow(60));
        drop(b);
        assert_eq!(budget.used(), 0);
    }
}
