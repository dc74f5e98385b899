//! The `/api/events` response body: the replay, then live events, with `: keepalive`
//! comments whenever the stream has been quiet for the keepalive interval.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;
use tokio::time::{Instant, Interval, MissedTickBehavior};

use crate::metrics::Metrics;

const KEEPALIVE: &[u8] = b": keepalive\n\n";

pub struct SseBody {
    replay: VecDeque<Bytes>,
    live: mpsc::Receiver<Bytes>,
    /// Bytes queued for this reader (replay and live) not yet handed to hyper; the hub drops
    /// the subscriber when it passes the budget.
    pending: Arc<AtomicUsize>,
    keepalive: Interval,
    metrics: Arc<Metrics>,
}

impl SseBody {
    pub(super) fn new(
        replay: VecDeque<Bytes>,
        live: mpsc::Receiver<Bytes>,
        pending: Arc<AtomicUsize>,
        every: Duration,
        metrics: Arc<Metrics>,
    ) -> Self {
        let mut keepalive = tokio::time::interval_at(Instant::now() + every, every);
        keepalive.set_missed_tick_behavior(MissedTickBehavior::Delay);
        metrics.sse_subscribers.inc();
        SseBody { replay, live, pending, keepalive, metrics }
    }
}

impl Drop for SseBody {
    fn drop(&mut self) {
        self.metrics.sse_subscribers.dec();
    }
}

impl Body for SseBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(message) = self.replay.pop_front() {
            self.pending.fetch_sub(message.len(), Ordering::Relaxed);
            return Poll::Ready(Some(Ok(Frame::data(message))));
        }
        match self.live.poll_recv(cx) {
            Poll::Ready(Some(message)) => {
                self.pending.fetch_sub(message.len(), Ordering::Relaxed);
                self.keepalive.reset();
                return Poll::Ready(Some(Ok(Frame::data(message))));
            }
            // The hub dropped this subscriber (too slow) or is gone: end the stream.
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => {}
        }
        match self.keepalive.poll_tick(cx) {
            Poll::Ready(_) => Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(KEEPALIVE))))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        false
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}
