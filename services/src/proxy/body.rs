//! Request bodies: buffer a bounded prefix for scoring, then hand the upstream the prefix
//! followed by whatever is still streaming in, trailers included. Never more than the limit
//! (plus one frame) is held in memory.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::HeaderMap;

/// A request body after its prefix was read.
pub struct Buffered {
    /// Everything read so far (at most the limit plus one frame).
    pub prefix: Bytes,
    /// The body is larger than the limit; `prefix` is not all of it.
    pub oversize: bool,
    pub body: ReplayBody,
}

/// Reads up to `limit` bytes of `body`.
pub async fn buffer_prefix(mut body: Incoming, limit: usize) -> Result<Buffered, hyper::Error> {
    let mut collected = BytesMut::new();
    let mut trailers = None;
    let mut rest = Some(());
    if body.is_end_stream() {
        rest = None;
    }
    while rest.is_some() && collected.len() < limit {
        match body.frame().await {
            None => rest = None,
            Some(Err(err)) => return Err(err),
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => collected.extend_from_slice(&data),
                Err(frame) => {
                    trailers = frame.into_trailers().ok();
                    rest = None;
                }
            },
        }
    }
    let more = rest.is_some() && !body.is_end_stream();
    let prefix = collected.freeze();
    Ok(Buffered {
        oversize: more || prefix.len() > limit,
        body: ReplayBody { prefix: (!prefix.is_empty()).then(|| prefix.clone()), rest: more.then_some(body), trailers },
        prefix,
    })
}

/// The body sent upstream: the buffered prefix, then the rest of the client's stream.
pub struct ReplayBody {
    prefix: Option<Bytes>,
    rest: Option<Incoming>,
    trailers: Option<HeaderMap>,
}

impl Body for ReplayBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        if let Some(prefix) = self.prefix.take() {
            return Poll::Ready(Some(Ok(Frame::data(prefix))));
        }
        if let Some(rest) = self.rest.as_mut() {
            match Pin::new(rest).poll_frame(cx) {
                Poll::Ready(None) => self.rest = None,
                other => return other,
            }
        }
        Poll::Ready(self.trailers.take().map(|t| Ok(Frame::trailers(t))))
    }

    fn is_end_stream(&self) -> bool {
        self.prefix.is_none() && self.rest.is_none() && self.trailers.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        let prefix = self.prefix.as_ref().map_or(0, |p| p.len() as u64);
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
