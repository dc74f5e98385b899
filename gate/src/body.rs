//! Request bodies: buffer a bounded prefix for scoring, then hand the upstream the prefix
//! followed by whatever is still streaming in. A client's request trailers are dropped, never
//! forwarded: they are fields nobody scores (over an HTTP/2 upstream they would reach the
//! application as headers), RFC 9110 6.5.1 lets a recipient discard them, and no common
//! protocol (gRPC included) sends request trailers. Never more than the limit
//! (plus one frame) is held in memory, and every buffered byte is reserved from the process's
//! [`BodyBudget`] until the prefix goes upstream or the request ends.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming, SizeHint};

use crate::budget::{BodyBudget, Reservation};

/// A request body after its prefix was read.
pub struct Buffered {
    /// Everything read so far (at most the limit plus one frame).
    pub prefix: Bytes,
    /// The body is larger than the limit; `prefix` is not all of it.
    pub oversize: bool,
    /// The process's body budget ran out before the limit: `prefix` is what fit, and the
    /// frame that did not fit (if any) is passed on unscored.
    pub budget_hit: bool,
    pub body: ReplayBody,
}

/// Reads up to `limit` bytes of `body`, as far as `budget` allows.
pub async fn buffer_prefix(mut body: Incoming, limit: usize, budget: &Arc<BodyBudget>) -> Result<Buffered, hyper::Error> {
    // The budget covers capacity, not only length: sized from Content-Length when the budget
    // allows it, else grown exactly frame by frame (doubling would hold up to twice the bytes).
    let announced = usize::try_from(body.size_hint().exact().unwrap_or(0)).unwrap_or(usize::MAX).min(limit);
    let mut reservation = budget.reserve();
    let mut collected: Vec<u8> = if announced > 0 && reservation.grow(announced) { Vec::with_capacity(announced) } else { Vec::new() };
    let mut unscored = None;
    let mut rest = Some(());
    if body.is_end_stream() {
        rest = None;
    }
    while rest.is_some() && collected.len() < limit && unscored.is_none() {
        match body.frame().await {
            None => rest = None,
            Some(Err(err)) => return Err(err),
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) if fits(&mut reservation, collected.len() + data.len()) => {
                    collected.reserve_exact(data.len());
                    collected.extend_from_slice(&data);
                }
                // Already in memory (hyper read it); it goes upstream but is not scored.
                Ok(data) => unscored = Some(data),
                Err(_trailers) => rest = None,
            },
        }
    }
    let more = rest.is_some() && !body.is_end_stream();
    let budget_hit = unscored.is_some();
    let prefix = Bytes::from(collected);
    Ok(Buffered {
        oversize: more || prefix.len() > limit,
        budget_hit,
        body: ReplayBody {
            prefix: (!prefix.is_empty()).then(|| prefix.clone()),
            unscored,
            rest: more.then_some(body),
            reservation: Some(reservation),
        },
        prefix,
    })
}

/// Whether `total` buffered bytes are covered, growing the reservation if needed.
fn fits(reservation: &mut Reservation, total: usize) -> bool {
    let extra = total.saturating_sub(reservation.held());
    extra == 0 || reservation.grow(extra)
}

/// The body sent upstream: the buffered prefix, then the rest of the client's stream.
pub struct ReplayBody {
    prefix: Option<Bytes>,
    unscored: Option<Bytes>,
    rest: Option<Incoming>,
    /// Released once the prefix has been handed upstream.
    reservation: Option<Reservation>,
}

impl Body for ReplayBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        if let Some(prefix) = self.prefix.take() {
            return Poll::Ready(Some(Ok(Frame::data(prefix))));
        }
        self.reservation = None;
        if let Some(unscored) = self.unscored.take() {
            return Poll::Ready(Some(Ok(Frame::data(unscored))));
        }
        if let Some(rest) = self.rest.as_mut() {
            match Pin::new(rest).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) if frame.is_trailers() => self.rest = None,
                Poll::Ready(None) => self.rest = None,
                other => return other,
            }
        }
        Poll::Ready(None)
    }

    fn is_end_stream(&self) -> bool {
        self.prefix.is_none() && self.unscored.is_none() && self.rest.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        let prefix = [&self.prefix, &self.unscored].iter().map(|b| b.as_ref().map_or(0, |p| p.len() as u64)).sum::<u64>();
        match &self.rest {
            None => SizeHint::with_exact(prefix),
            Some(rest) => {
                let inner = rest.size_hint();
                let mut hint = SizeHint::new();
                hint.set_lower(inner.lower() + prefix);
                if let Some(upper) = inner.upper() {
                    hint.set_upper(upper + prefix);
                }
                hint
            }
        }
    }
}
