//! The two directions of an inspected WebSocket. Client to upstream: frames are parsed,
//! messages reassembled and judged (held until the verdict when it may stop them). Upstream
//! to client: bytes are copied as they come, unscored (the application's own output, like an
//! HTTP response body), followed only closely enough to find frame boundaries, so a close
//! frame of the relay's can be put between two frames.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::frame::{close_code, close_frame, fresh_mask, valid_close_payload, FrameError, FrameHeader, Opcode};
use super::message::Message;
use super::reader::{Boundaries, FrameReader, RawHeader, ReadError, READ_CHUNK};
use super::session::{Next, Session};

/// How long a closing relay waits for the peers to finish (a frame in flight to the client,
/// the client's unread input) before dropping both connections.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// Why the client-to-upstream direction stopped.
enum Stop {
    /// The client's stream broke (reset, cut mid-frame): nothing more can be read.
    Broken(ReadError),
    /// The relay closes both sides: the client with this code, the upstream with 1001.
    Close(u16),
}

impl From<ReadError> for Stop {
    fn from(err: ReadError) -> Self {
        match err {
            // A frame we cannot read is never forwarded: the client is told why.
            ReadError::Frame(_) => Stop::Close(close_code::PROTOCOL_ERROR),
            other => Stop::Broken(other),
        }
    }
}

impl From<std::io::Error> for Stop {
    fn from(err: std::io::Error) -> Self {
        Stop::Broken(ReadError::Io(err))
    }
}

fn protocol(err: FrameError) -> Stop {
    tracing::debug!(error = %err, "WebSocket client broke the protocol");
    Stop::Close(close_code::PROTOCOL_ERROR)
}

/// Relays until both directions end.
pub async fn run<C, U>(client: C, upstream: U, session: Session)
where
    C: AsyncRead + AsyncWrite + Send + Unpin,
    U: AsyncRead + AsyncWrite + Send + Unpin,
{
    let (client_rd, client_wr) = tokio::io::split(client);
    let (upstream_rd, upstream_wr) = tokio::io::split(upstream);
    let (close_tx, close_rx) = oneshot::channel();
    let inbound = Inbound { reader: FrameReader::new(client_rd), upstream: upstream_wr, session, message: None };
    tokio::join!(inbound.run(close_tx), outbound(upstream_rd, client_wr, close_rx));
}

/// Client to upstream.
struct Inbound<R, W> {
    reader: FrameReader<R>,
    upstream: W,
    session: Session,
    /// The message whose frames are arriving.
    message: Option<Message>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> Inbound<R, W> {
    async fn run(mut self, close_client: oneshot::Sender<u16>) {
        match self.pump().await {
            Ok(()) => {
                let _ = self.upstream.shutdown().await;
            }
            Err(Stop::Broken(err)) => {
                tracing::debug!(error = %err, "WebSocket client connection ended");
                let _ = self.upstream.shutdown().await;
            }
            Err(Stop::Close(code)) => {
                let _ = self.upstream.write_all(&close_frame(close_code::GOING_AWAY, Some(fresh_mask()))).await;
                let _ = self.upstream.shutdown().await;
                let _ = close_client.send(code);
                let _ = tokio::time::timeout(CLOSE_GRACE, self.reader.drain()).await;
            }
        }
    }

    async fn pump(&mut self) -> Result<(), Stop> {
        while let Some((header, raw)) = self.reader.header().await? {
            let Some(key) = header.mask else { return Err(protocol(FrameError::Unmasked)) };
            if header.opcode.is_control() {
                self.control(header, raw, key).await?;
            } else if header.rsv != 0 {
                // permessage-deflate (RSV1) is never negotiated through the relay
                // (Sec-WebSocket-Extensions is removed from the handshake): such a frame cannot
                // be scored, so it is not forwarded.
                return Err(protocol(FrameError::ReservedBits(header.rsv)));
            } else {
                self.data(header, raw, key).await?;
            }
        }
        Ok(())
    }

    /// Pings, pongs and closes go on at once, also between the fragments of a held message
    /// (they carry no application data and the upstream must see them in time).
    async fn control(&mut self, header: FrameHeader, raw: RawHeader, key: [u8; 4]) -> Result<(), Stop> {
        let payload = self.reader.payload_exact(header.len as usize).await?;
        if header.opcode == Opcode::Close {
            let mut plain = payload.clone();
            super::frame::apply_mask(key, 0, &mut plain);
            if !valid_close_payload(&plain) {
                return Err(protocol(FrameError::BadClose));
            }
        }
        let mut wire = Vec::with_capacity(raw.as_slice().len() + payload.len());
        wire.extend_from_slice(raw.as_slice());
        wire.extend_from_slice(&payload);
        self.upstream.write_all(&wire).await?;
        Ok(())
    }

    async fn data(&mut self, header: FrameHeader, raw: RawHeader, key: [u8; 4]) -> Result<(), Stop> {
        let mut message = match (header.opcode, self.message.take()) {
            (Opcode::Continuation, Some(message)) => message,
            (Opcode::Continuation, None) => return Err(protocol(FrameError::StrayContinuation)),
            (_, Some(_)) => return Err(protocol(FrameError::InterleavedMessage)),
            (_, None) => self.session.new_message(),
        };
        if message.start_frame(raw, key) {
            // Too many fragments to hold: judged as over the limit before this frame goes on.
            if let Next::Close(code) = self.session.judge(message.scored(), message.over_limit()).await {
                return Err(Stop::Close(code));
            }
            self.upstream.write_all(&message.release()).await?;
        }
        // Forwarded frames: the header goes with the first payload bytes, in one write.
        let mut header_unsent = (!message.holding()).then_some(raw);
        let mut offset = 0u64;
        loop {
            if offset == header.len {
                if let Some(raw) = header_unsent.take() {
                    self.upstream.write_all(raw.as_slice()).await?;
                }
                break;
            }
            let chunk = self.reader.payload(READ_CHUNK.min((header.len - offset) as usize)).await?;
            let (kept, went_over) = message.take_in(chunk, key, offset);
            offset += chunk.len() as u64;
            if message.holding() && !went_over {
                continue;
            }
            if went_over {
                // The first byte past the limit: the prefix is judged now, as a partial verdict.
                if let Next::Close(code) = self.session.judge(message.scored(), message.over_limit()).await {
                    return Err(Stop::Close(code));
                }
            }
            // Held frames go out together (the bytes that fit were kept in the message); what
            // was not held goes as the client masked it.
            let was_holding = message.holding();
            let mut wire = match (was_holding, header_unsent.take()) {
                (true, _) => message.release(),
                (false, Some(raw)) => raw.as_slice().to_vec(),
                (false, None) => Vec::new(),
            };
            let rest = if was_holding { &chunk[kept..] } else { &chunk[..] };
            if wire.is_empty() {
                self.upstream.write_all(rest).await?;
            } else {
                wire.extend_from_slice(rest);
                self.upstream.write_all(&wire).await?;
            }
        }
        if !header.fin {
            self.message = Some(message);
            return Ok(());
        }
        if message.over_limit().is_none() {
            if let Next::Close(code) = self.session.judge(message.scored(), None).await {
                return Err(Stop::Close(code));
            }
            if message.holding() {
                self.upstream.write_all(&message.release()).await?;
            }
        }
        Ok(())
    }
}

/// Upstream to client, unscored. A close code from the inbound side is written at the next
/// frame boundary; the rest of the upstream's output is then dropped.
async fn outbound<R, W>(mut upstream: R, mut client: W, mut close_rx: oneshot::Receiver<u16>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; READ_CHUNK];
    let mut frames = Boundaries::default();
    let mut close: Option<(u16, Instant)> = None;
    let mut listening = true;
    loop {
        if let Some((code, _)) = close.filter(|_| frames.at_boundary()) {
            let _ = client.write_all(&close_frame(code, None)).await;
            let _ = client.shutdown().await;
            return;
        }
        let give_up = close.map_or_else(|| Instant::now() + CLOSE_GRACE, |(_, at)| at);
        tokio::select! {
            code = &mut close_rx, if listening => {
                listening = false;
                if let Ok(code) = code {
                    close = Some((code, Instant::now() + CLOSE_GRACE));
                }
            }
            // A frame in flight that never completes: the client is cut without the close.
            _ = tokio::time::sleep_until(give_up), if close.is_some() => return,
            read = upstream.read(&mut buf) => match read {
                Ok(0) | Err(_) => {
                    let _ = client.shutdown().await;
                    return;
                }
                Ok(n) => {
                    let pass = frames.walk(&buf[..n], close.is_some());
                    if client.write_all(&buf[..pass]).await.is_err() {
                        return;
                    }
                }
            },
        }
    }
}
