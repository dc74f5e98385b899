//! The response body every served request returns: the handler's own body, or the 503 a
//! stream refusal answers with. It holds the request's permits until the body ends, so a
//! streaming response (an event stream, a slow upstream) still counts as in flight.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

use crate::idle::Busy;
use crate::limits::StreamPermit;

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// JSON answer for a request refused because too many are in flight.
pub(crate) const STREAMS_REFUSAL: &str = r#"{"error":"too_many_requests_in_flight","detail":"the firewall is at its limit of requests in flight (WAF_MAX_STREAMS); retry later"}"#;

pub struct TrackedBody<B> {
    content: Content<B>,
    _permits: Option<(StreamPermit, Busy)>,
}

enum Content<B> {
    Handler(B),
    Refusal(Option<Bytes>),
}

impl<B> TrackedBody<B> {
    pub(crate) fn handler(body: B, stream: StreamPermit, busy: Busy) -> Self {
        TrackedBody { content: Content::Handler(body), _permits: Some((stream, busy)) }
    }

    pub(crate) fn refusal(text: &'static str) -> Self {
        TrackedBody { content: Content::Refusal(Some(Bytes::from_static(text.as_bytes()))), _permits: None }
    }
}

impl<B> Body for TrackedBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match &mut self.content {
            Content::Handler(body) => Pin::new(body).poll_frame(cx).map(|f| f.map(|r| r.map_err(Into::into))),
            Content::Refusal(text) => Poll::Ready(text.take().map(|t| Ok(Frame::data(t)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.content {
            Content::Handler(body) => body.is_end_stream(),
            Content::Refusal(text) => text.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.content {
            Content::Handler(body) => body.size_hint(),
            Content::Refusal(text) => SizeHint::with_exact(text.as_ref().map_or(0, |t| t.len() as u64)),
        }
    }
}
