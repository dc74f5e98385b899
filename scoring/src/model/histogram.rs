//! A histogram of atomics with fixed bucket bounds: the model thread observes without a lock,
//! and a scrape reads a snapshot in the shape Prometheus wants.

use std::sync::atomic::{AtomicU64, Ordering};

/// Texts per batch: 1 to 1,024 (RAMPART_MODEL_MAX_BATCH's range), doubling.
pub const BATCH_SIZE_BOUNDS: [f64; 11] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0];

/// Seconds per executor call: 50 µs (an n-gram MLP) to ~26 s (a stuck transformer), doubling;
/// the same buckets as the request latency histograms.
pub const BATCH_SECONDS_BOUNDS: [f64; 20] = {
    let mut bounds = [0.0; 20];
    let mut i = 0;
    let mut bound = 0.00005;
    while i < 20 {
        bounds[i] = bound;
        bound *= 2.0;
        i += 1;
    }
    bounds
};

pub struct AtomicHistogram {
    bounds: &'static [f64],
    /// One per bound, plus the overflow (+Inf) bucket.
    counts: Box<[AtomicU64]>,
    /// Sum of observations in `unit`s (an integer, so it can be an atomic add).
    sum_units: AtomicU64,
    unit: f64,
}

/// What a scrape reads: per-bucket (not cumulative) counts, the last bound `f64::MAX` (+Inf).
#[derive(Clone, Debug, PartialEq)]
pub struct HistogramSnapshot {
    pub sum: f64,
    pub count: u64,
    pub buckets: Vec<(f64, u64)>,
}

impl AtomicHistogram {
    /// `unit`: what one of the integers passed to [`Self::observe_units`] is worth.
    pub fn new(bounds: &'static [f64], unit: f64) -> Self {
        let counts = (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect();
        AtomicHistogram { bounds, counts, sum_units: AtomicU64::new(0), unit }
    }

    pub fn observe_units(&self, units: u64) {
        let value = units as f64 * self.unit;
        let bucket = self.bounds.iter().position(|&b| value <= b).unwrap_or(self.bounds.len());
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
        self.sum_units.fetch_add(units, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> HistogramSnapshot {
        let per_bucket: Vec<u64> = self.counts.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        let bounds = self.bounds.iter().copied().chain(std::iter::once(f64::MAX));
        HistogramSnapshot {
            sum: self.sum_units.load(Ordering::Relaxed) as f64 * self.unit,
            count: per_bucket.iter().sum(),
            buckets: bounds.zip(per_bucket).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_land_in_the_first_bucket_that_holds_them() {
        let h = AtomicHistogram::new(&BATCH_SIZE_BOUNDS, 1.0);
        for size in [1, 3, 4, 2000] {
            h.observe_units(size);
        }
        let s = h.snapshot();
        assert_eq!((s.count, s.sum), (4, 2008.0));
        assert_eq!(s.buckets[0], (1.0, 1));
        assert_eq!(s.buckets[2], (4.0, 2), "3 and 4 are both <= 4");
        assert_eq!(*s.buckets.last().unwrap(), (f64::MAX, 1));
        let seconds = AtomicHistogram::new(&BATCH_SECONDS_BOUNDS, 1e-9);
        seconds.observe_units(75_000);
        assert_eq!(seconds.snapshot().buckets[1], (0.0001, 1));
    }
}
