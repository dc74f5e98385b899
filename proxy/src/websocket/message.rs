//! One client message being reassembled: its unmasked bytes up to WAF_WS_MAX_MESSAGE (what is
//! scored) and, while the verdict may still stop it, the frames held back from the upstream.

use super::frame::apply_mask;
use super::reader::RawHeader;
use gate::budget::Reservation;

/// The partial slug of a message over WAF_WS_MAX_MESSAGE (the event's `partial`).
pub const OVER_LIMIT: &str = "ws-message-limit";
/// The partial slug of a message the process's body budget could not hold (the proxy's own).
pub const OVER_BUDGET: &str = "body-budget";

/// Frames one held message may have: fragments cost memory beyond their payload (a held header
/// each) and zero-length ones none of the limit, so their number is bounded too. Real clients
/// send a message in one frame or in fragments of kilobytes.
pub const MAX_HELD_FRAMES: usize = 4096;

/// A frame whose bytes wait in [`Message::body`] for the verdict.
struct Held {
    header: RawHeader,
    key: [u8; 4],
    /// Where its payload starts in the body; it ends where the next held frame starts.
    start: usize,
}

pub struct Message {
    /// Unmasked, at most `limit` bytes.
    body: Vec<u8>,
    limit: usize,
    held: Vec<Held>,
    /// Frames are held until the verdict (a blocking mode); otherwise they are forwarded as
    /// they arrive and the message is scored when it is complete.
    holding: bool,
    /// More than `limit` bytes came, or the budget ran out: the rest is relayed unscored (a
    /// partial verdict named by this slug).
    over_limit: Option<&'static str>,
    /// The body's bytes, taken from the process-wide buffered-body budget every front door
    /// shares: many sockets each holding a message just under the limit cannot exhaust memory.
    reservation: Reservation,
}

impl Message {
    pub fn new(limit: usize, holding: bool, reservation: Reservation) -> Self {
        Message { body: Vec::new(), limit, held: Vec::new(), holding, over_limit: None, reservation }
    }

    pub fn holding(&self) -> bool {
        self.holding
    }

    /// Why not all of the message is scored (a partial slug); None while it all fits.
    pub fn over_limit(&self) -> Option<&'static str> {
        self.over_limit
    }

    /// What is scored: the message's first `limit` bytes.
    pub fn scored(&self) -> &[u8] {
        &self.body
    }

    /// A frame of this message starts; while holding its header waits with the payload. `true`
    /// when it is one frame more than [`MAX_HELD_FRAMES`]: the message is over its limit and
    /// this frame is not held (the caller judges, releases, and forwards it itself).
    pub fn start_frame(&mut self, header: RawHeader, key: [u8; 4]) -> bool {
        if !self.holding {
            return false;
        }
        if self.held.len() == MAX_HELD_FRAMES {
            self.over_limit = Some(OVER_LIMIT);
            return true;
        }
        self.held.push(Held { header, key, start: self.body.len() });
        false
    }

    /// Keeps the unmasked copy of `chunk` (`offset` bytes into its frame's payload) as far as
    /// the limit allows; returns how many bytes were kept. `true` in the second place the
    /// first time a byte does not fit: the message has just gone over the limit.
    pub fn take_in(&mut self, chunk: &[u8], key: [u8; 4], offset: u64) -> (usize, bool) {
        if self.over_limit.is_some() {
            return (0, false);
        }
        let mut kept = chunk.len().min(self.limit - self.body.len());
        if !self.reservation.grow(kept) {
            kept = 0;
            self.over_limit = Some(OVER_BUDGET);
        } else if kept < chunk.len() {
            self.over_limit = Some(OVER_LIMIT);
        }
        let at = self.body.len();
        self.body.extend_from_slice(&chunk[..kept]);
        apply_mask(key, offset, &mut self.body[at..]);
        (kept, self.over_limit.is_some())
    }

    /// The held frames as the client sent them (headers unchanged, payloads masked again with
    /// their own keys), for one write; holding stops.
    pub fn release(&mut self) -> Vec<u8> {
        self.holding = false;
        let total = self.body.len() + self.held.iter().map(|h| h.header.as_slice().len()).sum::<usize>();
        let mut wire = Vec::with_capacity(total);
        for (i, held) in self.held.iter().enumerate() {
            let end = self.held.get(i + 1).map_or(self.body.len(), |next| next.start);
            wire.extend_from_slice(held.header.as_slice());
            let at = wire.len();
            wire.extend_from_slice(&self.body[held.start..end]);
            apply_mask(held.key, 0, &mut wire[at..]);
        }
        self.held.clear();
        wire
    }
}

#[cfg(test)]
mod tests {
    use super::super::frame::{FrameHeader, Opcode};
    use super::super::reader::FrameReader;
    use super::*;
    use gate::budget::BodyBudget;

    /// Client frames (masked) for `parts`, the first a text frame, the rest continuations.
    fn fragments(parts: &[&[u8]]) -> Vec<u8> {
        let mut wire = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            let opcode = if i == 0 { Opcode::Text } else { Opcode::Continuation };
            let key = [(i as u8).wrapping_add(1), 0x5A, 0xA5, 0x3C];
            FrameHeader { fin: i + 1 == parts.len(), rsv: 0, opcode, mask: Some(key), len: part.len() as u64 }.encode(&mut wire);
            let at = wire.len();
            wire.extend_from_slice(part);
            apply_mask(key, 0, &mut wire[at..]);
        }
        wire
    }

    /// Feeds `wire` through a message the way the relay does, in reads of `chunk` bytes.
    async fn assemble(wire: &[u8], limit: usize, budget: usize, chunk: usize) -> (Message, bool) {
        let mut reader = FrameReader::new(wire);
        let mut message = Message::new(limit, true, BodyBudget::new(budget).reserve());
        let mut went_over = false;
        while let Some((header, raw)) = reader.header().await.unwrap() {
            let key = header.mask.unwrap();
            went_over |= message.start_frame(raw, key);
            let mut offset = 0;
            while offset < header.len {
                let bytes = reader.payload(chunk.min((header.len - offset) as usize)).await.unwrap();
                went_over |= message.take_in(bytes, key, offset).1;
                offset += bytes.len() as u64;
            }
        }
        (message, went_over)
    }

    #[tokio::test]
    async fn fragments_reassemble_and_are_released_as_sent() {
        let wire = fragments(&[b"' OR 1=1", b" UNION SELECT", b" password FROM users --"]);
        for chunk in [1, 3, 1024] {
            let (mut message, over) = assemble(&wire, 1 << 20, 1 << 20, chunk).await;
            assert!(!over);
            assert_eq!(message.scored(), b"' OR 1=1 UNION SELECT password FROM users --");
            assert_eq!(message.release(), wire, "the upstream gets the client's exact frames");
            assert!(!message.holding());
        }
    }

    #[tokio::test]
    async fn past_the_limit_only_the_prefix_is_kept() {
        let wire = fragments(&[b"abcdef", b"ghij"]);
        let (mut message, over) = assemble(&wire, 8, 1 << 20, 4).await;
        assert!(over);
        assert_eq!(message.over_limit(), Some(OVER_LIMIT));
        assert_eq!(message.scored(), b"abcdefgh");
        // What is released is the held prefix: the rest follows as the client sent it.
        let released = message.release();
        assert_eq!(released, wire[..wire.len() - 2]);
    }

    #[tokio::test]
    async fn the_process_budget_bounds_what_is_held() {
        let wire = fragments(&[b"abcdef", b"ghij"]);
        let (message, over) = assemble(&wire, 1 << 20, 7, 4).await;
        assert!(over);
        assert_eq!(message.over_limit(), Some(OVER_BUDGET));
        assert_eq!(message.scored(), b"abcdef", "the chunk that did not fit is not kept");
    }

    #[tokio::test]
    async fn empty_fragments_count_against_the_limit() {
        let empty: Vec<&[u8]> = vec![b""; MAX_HELD_FRAMES + 2];
        let (mut message, over) = assemble(&fragments(&empty), 1 << 20, 1 << 20, 1024).await;
        assert!(over);
        assert_eq!(message.over_limit(), Some(OVER_LIMIT));
        assert_eq!(message.release().len(), MAX_HELD_FRAMES * 6, "headers of the held frames only");
    }
}
