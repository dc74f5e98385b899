//! Header-read (idle) timeout for HTTP/1 and HTTP/2 alike.
//!
//! hyper bounds header reading on HTTP/1 only, and its version sniffing (`auto`) waits forever
//! for the first bytes; an HTTP/2 connection that never completes a HEADERS frame is held by
//! pings alone. So the bound lives on the socket: a connection with no request in flight
//! (no handler running, no response body streaming) must complete a request's headers within
//! the timeout, or its next read fails and hyper closes it. The clock starts at accept and
//! again each time the last in-flight request ends.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::limits::ConnPermit;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// Requests in flight on one connection, shared by its stream and its requests.
#[derive(Default)]
pub(crate) struct Activity {
    in_flight: AtomicUsize,
    /// The connection switched protocols (a WebSocket tunnel): no more request headers will
    /// come, so the header-read clock stops for good.
    upgraded: std::sync::atomic::AtomicBool,
    /// The reader parked while requests were in flight: woken when the last one ends so the
    /// idle clock starts.
    reader: Mutex<Option<Waker>>,
}

impl Activity {
    pub(crate) fn begin(self: &Arc<Self>) -> Busy {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        Busy(self.clone())
    }

    fn busy(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) > 0 || self.upgraded.load(Ordering::Acquire)
    }
}

/// One in-flight request on a connection; dropped when its response body ends.
pub(crate) struct Busy(Arc<Activity>);

impl Busy {
    /// This request's 101 response hands the connection to a tunnel.
    pub(crate) fn switching_protocols(&self) {
        self.0.upgraded.store(true, Ordering::Release);
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            if let Some(waker) = self.0.reader.lock().unwrap_or_else(|e| e.into_inner()).take() {
                waker.wake();
            }
        }
    }
}

pub(crate) struct IdleStream<S> {
    inner: S,
    activity: Arc<Activity>,
    timeout: Duration,
    deadline: Pin<Box<Sleep>>,
    /// A request was in flight since the deadline was last set: restart the clock.
    restart: bool,
    /// Called once when the timeout closes the connection.
    on_timeout: Option<Box<dyn FnOnce() + Send + Sync>>,
    /// The connection's admission, held as long as the socket: an upgraded connection
    /// outlives hyper's connection future but still counts against the limits.
    _permit: Option<ConnPermit>,
}

impl<S> IdleStream<S> {
    pub(crate) fn new(inner: S, activity: Arc<Activity>, timeout: Duration, on_timeout: Box<dyn FnOnce() + Send + Sync>) -> Self {
        IdleStream {
            inner,
            activity,
            timeout,
            deadline: Box::pin(tokio::time::sleep(timeout)),
            restart: false,
            on_timeout: Some(on_timeout),
            _permit: None,
        }
    }

    pub(crate) fn holding(mut self, permit: ConnPermit) -> Self {
        self._permit = Some(permit);
        self
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for IdleStream<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.activity.busy() {
            *this.activity.reader.lock().unwrap_or_else(|e| e.into_inner()) = Some(cx.waker().clone());
            this.restart = true;
        } else {
            if this.restart {
                this.restart = false;
                this.deadline.as_mut().reset(Instant::now() + this.timeout);
            }
            if this.deadline.as_mut().poll(cx).is_ready() {
                if let Some(note) = this.on_timeout.take() {
                    note();
                }
                return Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, "no complete request headers in time")));
            }
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for IdleStream<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
