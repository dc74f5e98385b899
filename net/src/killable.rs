//! A TCP stream that can be torn down with a reset instead of an orderly close.
//!
//! An active-mode kill must look, to the client, like the connection died: no status line,
//! no FIN, just RST. The stream is owned by hyper's connection future, so the handler cannot
//! reach it; it flips a shared flag instead. From then on writes and the FIN-sending shutdown
//! are refused, and when hyper drops the stream the socket is closed with SO_LINGER 0, which
//! makes the kernel send RST and discard anything still queued.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// Shared between a connection's stream and the requests served on it.
#[derive(Clone, Debug, Default)]
pub struct KillSwitch(Arc<AtomicBool>);

impl KillSwitch {
    /// Arms the reset: nothing more is written, and closing the socket sends RST.
    pub fn trip(&self) {
        self.0.store(true, Ordering::Release);
    }

    pub fn tripped(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

pub(crate) struct KillableStream {
    inner: TcpStream,
    switch: KillSwitch,
}

impl KillableStream {
    pub(crate) fn new(inner: TcpStream, switch: KillSwitch) -> Self {
        KillableStream { inner, switch }
    }

    fn refused() -> io::Error {
        io::Error::new(io::ErrorKind::ConnectionAborted, "connection killed by the firewall")
    }
}

impl Drop for KillableStream {
    fn drop(&mut self) {
        if self.switch.tripped() {
            if let Err(err) = socket2::SockRef::from(&self.inner).set_linger(Some(Duration::ZERO)) {
                tracing::warn!(error = %err, "cannot set SO_LINGER 0; the kill closes with FIN instead of RST");
            }
        }
    }
}

impl AsyncRead for KillableStream {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for KillableStream {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if self.switch.tripped() {
            return Poll::Ready(Err(Self::refused()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        if self.switch.tripped() {
            return Poll::Ready(Err(Self::refused()));
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.switch.tripped() {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.switch.tripped() {
            // A shutdown would send FIN before the RST; the client must see only the reset.
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
