//! Reading frames off a byte stream: [`FrameReader`] hands the client's frames to the relay
//! header by header with the payload in bounded chunks (a 2^63-byte length allocates
//! nothing), and [`Boundaries`] follows the upstream's raw bytes just closely enough to know
//! where a frame ends, so the relay can put its own close frame between two frames.

use tokio::io::{AsyncRead, AsyncReadExt};

use super::frame::{FrameError, FrameHeader, MAX_HEADER_LEN};

/// Bytes read from a socket at a time.
pub const READ_CHUNK: usize = 16 * 1024;

/// Why a stream of frames ended early.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error("the connection closed in the middle of a frame")]
    Truncated,
}

/// A header's bytes as they came, to forward unchanged.
#[derive(Clone, Copy, Debug)]
pub struct RawHeader {
    bytes: [u8; MAX_HEADER_LEN],
    len: u8,
}

impl RawHeader {
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

pub struct FrameReader<R> {
    inner: R,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    pub fn new(inner: R) -> Self {
        FrameReader { inner, buf: vec![0; READ_CHUNK].into_boxed_slice(), start: 0, end: 0 }
    }

    /// The next frame's header; `Ok(None)` when the peer closed cleanly between frames.
    pub async fn header(&mut self) -> Result<Option<(FrameHeader, RawHeader)>, ReadError> {
        loop {
            if let Some((header, len)) = FrameHeader::parse(&self.buf[self.start..self.end])? {
                let mut raw = RawHeader { bytes: [0; MAX_HEADER_LEN], len: len as u8 };
                raw.bytes[..len].copy_from_slice(&self.buf[self.start..self.start + len]);
                self.start += len;
                return Ok(Some((header, raw)));
            }
            if self.end == self.buf.len() {
                // Less than a header is left at the end of the buffer: move it to the front.
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            let n = self.inner.read(&mut self.buf[self.end..]).await?;
            if n == 0 {
                return if self.start == self.end { Ok(None) } else { Err(ReadError::Truncated) };
            }
            self.end += n;
        }
    }

    /// Between 1 and `max` payload bytes (`max` > 0), as they came (still masked).
    pub async fn payload(&mut self, max: usize) -> Result<&mut [u8], ReadError> {
        if self.start == self.end {
            self.start = 0;
            self.end = self.inner.read(&mut self.buf).await?;
            if self.end == 0 {
                return Err(ReadError::Truncated);
            }
        }
        let take = max.min(self.end - self.start);
        let at = self.start;
        self.start += take;
        Ok(&mut self.buf[at..at + take])
    }

    /// Exactly `len` payload bytes (a control frame's: at most 125).
    pub async fn payload_exact(&mut self, len: usize) -> Result<Vec<u8>, ReadError> {
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            let chunk = self.payload(len - out.len()).await?;
            out.extend_from_slice(chunk);
        }
        Ok(out)
    }

    /// Reads and drops everything until the peer closes: after a close frame, unread input
    /// would turn the socket's close into a reset that can destroy the close frame in flight.
    pub async fn drain(&mut self) {
        while matches!(self.inner.read(&mut self.buf).await, Ok(n) if n > 0) {}
    }
}

/// Where frames end in a stream the relay copies unparsed.
#[derive(Debug, Default)]
pub struct Boundaries {
    /// Payload bytes left in the current frame.
    remaining: u64,
    /// A header split across reads, so far.
    head: [u8; MAX_HEADER_LEN],
    head_len: usize,
    /// The stream stopped parsing as frames: no boundary is known any more.
    lost: bool,
}

impl Boundaries {
    pub fn at_boundary(&self) -> bool {
        !self.lost && self.remaining == 0 && self.head_len == 0
    }

    /// Follows `data` (the bytes after everything seen so far); returns how many of them to
    /// pass: all of them, or with `stop_at_boundary` those up to the first frame boundary.
    pub fn walk(&mut self, data: &[u8], stop_at_boundary: bool) -> usize {
        let mut at = 0;
        loop {
            if self.lost {
                return if stop_at_boundary { at } else { data.len() };
            }
            if (stop_at_boundary && self.at_boundary()) || at == data.len() {
                return at;
            }
            if self.remaining > 0 {
                let take = self.remaining.min((data.len() - at) as u64);
                self.remaining -= take;
                at += take as usize;
                continue;
            }
            let copy = (MAX_HEADER_LEN - self.head_len).min(data.len() - at);
            self.head[self.head_len..self.head_len + copy].copy_from_slice(&data[at..at + copy]);
            match FrameHeader::parse(&self.head[..self.head_len + copy]) {
                Ok(Some((header, len))) => {
                    at += len - self.head_len;
                    self.head_len = 0;
                    self.remaining = header.len;
                }
                Ok(None) => {
                    self.head_len += copy;
                    at += copy;
                }
                Err(_) => self.lost = true,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::frame::Opcode;
    use super::*;

    fn frame(opcode: Opcode, fin: bool, payload: &[u8], mask: Option<[u8; 4]>) -> Vec<u8> {
        let mut out = Vec::new();
        FrameHeader { fin, rsv: 0, opcode, mask, len: payload.len() as u64 }.encode(&mut out);
        let at = out.len();
        out.extend_from_slice(payload);
        if let Some(key) = mask {
            super::super::frame::apply_mask(key, 0, &mut out[at..]);
        }
        out
    }

    #[tokio::test]
    async fn frames_are_read_across_tiny_reads() {
        let mut wire = frame(Opcode::Text, false, b"hello ", Some([1, 2, 3, 4]));
        wire.extend(frame(Opcode::Ping, true, b"p", Some([5, 6, 7, 8])));
        wire.extend(frame(Opcode::Continuation, true, &vec![b'x'; 70_000], Some([9, 9, 9, 9])));
        // One byte per read: every header and payload is split.
        let (mut tx, rx) = tokio::io::duplex(1);
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            tx.write_all(&wire).await.unwrap();
        });
        let mut reader = FrameReader::new(rx);
        let mut seen = Vec::new();
        while let Some((header, raw)) = reader.header().await.unwrap() {
            assert_eq!(FrameHeader::parse(raw.as_slice()).unwrap().unwrap().0, header);
            let mut got = 0;
            while got < header.len {
                got += reader.payload((header.len - got) as usize).await.unwrap().len() as u64;
            }
            seen.push((header.opcode, got));
        }
        assert_eq!(seen, [(Opcode::Text, 6), (Opcode::Ping, 1), (Opcode::Continuation, 70_000)]);
    }

    #[tokio::test]
    async fn a_frame_cut_short_is_an_error() {
        let wire = frame(Opcode::Text, true, b"hello", Some([1, 2, 3, 4]));
        let mut reader = FrameReader::new(&wire[..8]);
        let (header, _) = reader.header().await.unwrap().unwrap();
        assert_eq!(reader.payload(header.len as usize).await.unwrap().len(), 2);
        assert!(matches!(reader.payload(3).await, Err(ReadError::Truncated)));
        let mut reader = FrameReader::new(&wire[..3]);
        assert!(matches!(reader.header().await, Err(ReadError::Truncated)));
        let mut reader = FrameReader::new(&[0x8F, 0x80][..]);
        assert!(matches!(reader.header().await, Err(ReadError::Frame(FrameError::UnknownOpcode(0xF)))));
    }

    #[test]
    fn boundaries_are_found_in_any_split() {
        let mut wire = frame(Opcode::Text, true, b"first", None);
        let second = wire.len();
        wire.extend(frame(Opcode::Binary, true, &vec![7; 300], None));
        let third = wire.len();
        wire.extend(frame(Opcode::Close, true, &[3, 232], None));
        for cut in 0..wire.len() {
            let mut frames = Boundaries::default();
            let mut passed = frames.walk(&wire[..cut], false);
            assert_eq!(passed, cut);
            // Asked to stop, it stops at the next boundary after the cut.
            passed += frames.walk(&wire[cut..], true);
            let expected = [0, second, third, wire.len()].into_iter().find(|&b| b >= cut).unwrap();
            assert_eq!(passed, expected, "cut {cut}");
            assert!(frames.at_boundary());
        }
    }

    #[test]
    fn a_stream_that_is_not_frames_has_no_boundary() {
        let mut frames = Boundaries::default();
        assert_eq!(frames.walk(b"\x83\x00garbage", false), 9);
        assert!(!frames.at_boundary());
        assert_eq!(frames.walk(b"more", true), 0);
    }
}
