//! RFC 6455 section 5 framing: the header (FIN, RSV1-3, opcode, MASK, 7/16/64-bit payload
//! length, masking key), masking, and the close frames the relay writes itself. Parsing never
//! panics: every malformed header is a [`FrameError`], which the relay answers with close 1002.

/// Close codes the relay sends (RFC 6455 7.4.1).
pub mod close_code {
    /// The proxy is going away: what the upstream is told when the client's side is cut.
    pub const GOING_AWAY: u16 = 1001;
    pub const PROTOCOL_ERROR: u16 = 1002;
    /// A message broke the policy (scored over the threshold).
    pub const POLICY_VIOLATION: u16 = 1008;
    /// A message over WAF_WS_MAX_MESSAGE whose partial verdict WAF_ON_PARTIAL blocks.
    pub const MESSAGE_TOO_BIG: u16 = 1009;
    /// Scoring failed and the proxy fails closed.
    pub const INTERNAL_ERROR: u16 = 1011;
}

/// Longest frame header: 2 bytes, 8 of extended length, 4 of masking key.
pub const MAX_HEADER_LEN: usize = 14;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opcode {
    Continuation,
    Text,
    Binary,
    Close,
    Ping,
    Pong,
}

impl Opcode {
    fn from_bits(bits: u8) -> Option<Opcode> {
        Some(match bits {
            0x0 => Opcode::Continuation,
            0x1 => Opcode::Text,
            0x2 => Opcode::Binary,
            0x8 => Opcode::Close,
            0x9 => Opcode::Ping,
            0xA => Opcode::Pong,
            _ => return None,
        })
    }

    fn bits(self) -> u8 {
        match self {
            Opcode::Continuation => 0x0,
            Opcode::Text => 0x1,
            Opcode::Binary => 0x2,
            Opcode::Close => 0x8,
            Opcode::Ping => 0x9,
            Opcode::Pong => 0xA,
        }
    }

    pub fn is_control(self) -> bool {
        matches!(self, Opcode::Close | Opcode::Ping | Opcode::Pong)
    }
}

/// Why a frame cannot be read. Every one is a protocol error (close 1002).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FrameError {
    #[error("reserved opcode {0:#x}")]
    UnknownOpcode(u8),
    /// RSV1 is permessage-deflate's bit; no extension is negotiated through the proxy, so a
    /// frame with any RSV bit set cannot be read (and is never forwarded unscored).
    #[error("RSV bits {0:#05b} set without a negotiated extension")]
    ReservedBits(u8),
    #[error("a control frame must not be fragmented")]
    FragmentedControl,
    #[error("a control frame carries at most 125 bytes, not {0}")]
    ControlTooLong(u64),
    #[error("the 64-bit payload length has its top bit set")]
    LengthTooLarge,
    #[error("a client frame must be masked")]
    Unmasked,
    #[error("a close frame's payload is 0 or at least 2 bytes with a valid code")]
    BadClose,
    #[error("a continuation frame without a message to continue")]
    StrayContinuation,
    #[error("a new message started before the previous one finished")]
    InterleavedMessage,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    pub fin: bool,
    /// RSV1-3 as the low three bits.
    pub rsv: u8,
    pub opcode: Opcode,
    pub mask: Option<[u8; 4]>,
    pub len: u64,
}

impl FrameHeader {
    /// Parses a header at the start of `buf`: `Ok(None)` when more bytes are needed, else the
    /// header and its length in bytes. RSV bits are reported, not refused: the relay decides.
    pub fn parse(buf: &[u8]) -> Result<Option<(FrameHeader, usize)>, FrameError> {
        let [b0, b1, ..] = *buf else { return Ok(None) };
        let opcode = Opcode::from_bits(b0 & 0x0F).ok_or(FrameError::UnknownOpcode(b0 & 0x0F))?;
        let fin = b0 & 0x80 != 0;
        let masked = b1 & 0x80 != 0;
        let (len, mut at) = match b1 & 0x7F {
            126 => match buf.get(2..4) {
                Some(b) => (u64::from(u16::from_be_bytes([b[0], b[1]])), 4),
                None => return Ok(None),
            },
            127 => match buf.get(2..10) {
                Some(b) => (u64::from_be_bytes(b.try_into().unwrap_or_default()), 10),
                None => return Ok(None),
            },
            short => (u64::from(short), 2),
        };
        if len >> 63 != 0 {
            return Err(FrameError::LengthTooLarge);
        }
        if opcode.is_control() && !fin {
            return Err(FrameError::FragmentedControl);
        }
        if opcode.is_control() && len > 125 {
            return Err(FrameError::ControlTooLong(len));
        }
        let mask = if masked {
            let Some(key) = buf.get(at..at + 4) else { return Ok(None) };
            at += 4;
            Some([key[0], key[1], key[2], key[3]])
        } else {
            None
        };
        Ok(Some((FrameHeader { fin, rsv: (b0 >> 4) & 0x07, opcode, mask, len }, at)))
    }

    /// Appends the header's wire form (minimal length encoding).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(u8::from(self.fin) << 7 | (self.rsv & 0x07) << 4 | self.opcode.bits());
        let mask_bit = if self.mask.is_some() { 0x80 } else { 0 };
        match self.len {
            len @ 0..=125 => out.push(mask_bit | len as u8),
            len @ 126..=0xFFFF => {
                out.push(mask_bit | 126);
                out.extend_from_slice(&(len as u16).to_be_bytes());
            }
            len => {
                out.push(mask_bit | 127);
                out.extend_from_slice(&len.to_be_bytes());
            }
        }
        if let Some(key) = self.mask {
            out.extend_from_slice(&key);
        }
    }
}

/// XORs `data` with `key`, `data` starting `offset` bytes into the frame's payload (masking
/// and unmasking are the same operation).
pub fn apply_mask(key: [u8; 4], offset: u64, data: &mut [u8]) {
    let shift = (offset % 4) as usize;
    for (i, byte) in data.iter_mut().enumerate() {
        *byte ^= key[(shift + i) % 4];
    }
}

/// A close frame's payload is empty or a valid code (RFC 6455 7.4) and UTF-8 reason.
pub fn valid_close_payload(payload: &[u8]) -> bool {
    match payload {
        [] => true,
        [_] => false,
        [hi, lo, reason @ ..] => {
            let code = u16::from_be_bytes([*hi, *lo]);
            let known = matches!(code, 1000..=1003 | 1007..=1011 | 3000..=4999);
            known && std::str::from_utf8(reason).is_ok()
        }
    }
}

/// A close frame with `code`; masked with `mask` when it goes to the upstream (a client's
/// frames are masked).
pub fn close_frame(code: u16, mask: Option<[u8; 4]>) -> Vec<u8> {
    let mut out = Vec::with_capacity(8);
    FrameHeader { fin: true, rsv: 0, opcode: Opcode::Close, mask, len: 2 }.encode(&mut out);
    let start = out.len();
    out.extend_from_slice(&code.to_be_bytes());
    if let Some(key) = mask {
        apply_mask(key, 0, &mut out[start..]);
    }
    out
}

/// A masking key for a frame the proxy writes to the upstream. RFC 6455 asks for an
/// unpredictable key; std's randomly keyed hasher gives one without a dependency.
pub fn fresh_mask() -> [u8; 4] {
    use std::hash::{BuildHasher, Hasher};
    (std::collections::hash_map::RandomState::new().build_hasher().finish() as u32).to_ne_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(fin: bool, opcode: Opcode, mask: Option<[u8; 4]>, len: u64) -> FrameHeader {
        FrameHeader { fin, rsv: 0, opcode, mask, len }
    }

    #[test]
    fn lengths_round_trip_in_7_16_and_64_bits() {
        for (len, wire_len) in [(0, 2), (125, 2), (126, 4), (0xFFFF, 4), (0x1_0000, 10), (u64::MAX >> 1, 10)] {
            for mask in [None, Some([1, 2, 3, 4])] {
                let h = header(true, Opcode::Binary, mask, len);
                let mut out = Vec::new();
                h.encode(&mut out);
                let expected = wire_len + if mask.is_some() { 4 } else { 0 };
                assert_eq!(out.len(), expected, "{len}");
                assert_eq!(FrameHeader::parse(&out), Ok(Some((h, expected))));
                // Every proper prefix asks for more bytes instead of guessing.
                for cut in 0..out.len() {
                    assert_eq!(FrameHeader::parse(&out[..cut]), Ok(None), "{len} cut at {cut}");
                }
            }
        }
    }

    #[test]
    fn rfc_examples_parse() {
        // RFC 6455 5.7: a masked "Hello" from a client, and an unmasked first fragment.
        let wire = [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58];
        let (h, at) = FrameHeader::parse(&wire).unwrap().unwrap();
        assert_eq!((h.fin, h.opcode, h.len, at), (true, Opcode::Text, 5, 6));
        let mut payload = wire[at..].to_vec();
        apply_mask(h.mask.unwrap(), 0, &mut payload);
        assert_eq!(payload, b"Hello");
        let (h, _) = FrameHeader::parse(&[0x01, 0x03, b'H', b'e', b'l']).unwrap().unwrap();
        assert_eq!((h.fin, h.opcode, h.mask), (false, Opcode::Text, None));
    }

    #[test]
    fn masking_resumes_mid_payload() {
        let key = [9, 8, 7, 6];
        let mut whole = b"split across two reads".to_vec();
        apply_mask(key, 0, &mut whole);
        let mut parts = b"split across two reads".to_vec();
        let (a, b) = parts.split_at_mut(7);
        apply_mask(key, 0, a);
        apply_mask(key, 7, b);
        assert_eq!(parts, whole);
    }

    #[test]
    fn malformed_headers_are_errors_not_panics() {
        assert_eq!(FrameHeader::parse(&[0x83, 0x80, 0, 0, 0, 0]), Err(FrameError::UnknownOpcode(3)));
        assert_eq!(FrameHeader::parse(&[0x89 & 0x7F, 0x80]), Err(FrameError::FragmentedControl));
        assert_eq!(FrameHeader::parse(&[0x89, 0xFE, 0, 126]), Err(FrameError::ControlTooLong(126)));
        assert_eq!(FrameHeader::parse(&[0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0]), Err(FrameError::LengthTooLarge));
        let (h, _) = FrameHeader::parse(&[0xC1, 0x80, 0, 0, 0, 0]).unwrap().unwrap();
        assert_eq!(h.rsv, 0b100, "RSV1 is reported for the relay to refuse");
        // Every two-byte start parses or fails cleanly.
        for b0 in 0..=255u8 {
            for b1 in 0..=255u8 {
                let _ = FrameHeader::parse(&[b0, b1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4]);
            }
        }
    }

    #[test]
    fn close_payloads_and_frames() {
        assert!(valid_close_payload(b""));
        assert!(!valid_close_payload(b"\x03"));
        assert!(valid_close_payload(b"\x03\xe8bye"));
        assert!(!valid_close_payload(b"\x03\xed"), "1005 is never sent");
        assert!(!valid_close_payload(b"\x03\xe8\xff"), "the reason is UTF-8");
        let frame = close_frame(close_code::POLICY_VIOLATION, None);
        assert_eq!(frame, [0x88, 0x02, 0x03, 0xF0]);
        let masked = close_frame(close_code::GOING_AWAY, Some([1, 2, 3, 4]));
        let (h, at) = FrameHeader::parse(&masked).unwrap().unwrap();
        let mut payload = masked[at..].to_vec();
        apply_mask(h.mask.unwrap(), 0, &mut payload);
        assert_eq!(payload, 1001u16.to_be_bytes());
    }
}
