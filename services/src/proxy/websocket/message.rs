//! One client message being reassembled: its unmasked bytes up to WAF_WS_MAX_MESSAGE (what is
//! scored) and, while the verdict may still stop it, the frames held back from the upstream.

use super::frame::apply_mask;
use super::reader::RawHeader;

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
    /// More than `limit` bytes came: the rest is relayed unscored (a partial verdict).
    over_limit: bool,
}

impl Message {
    pub fn new(limit: usize, holding: bool) -> Self {
        Message { body: Vec::new(), limit, held: Vec::new(), holding, over_limit: false }
    }

    pub fn holding(&self) -> bool {
        self.holding
    }

    pub fn over_limit(&self) -> bool {
        self.over_limit
    }

    /// What is scored: the message's first `limit` bytes.
    pub fn scored(&self) -> &[u8] {
        &self.body
    }

    /// A frame of this message starts; while holding its header waits with the payload.
    pub fn start_frame(&mut self, header: RawHeader, key: [u8; 4]) {
        if self.holding {
            self.held.push(Held { header, key, start: self.body.len() });
        }
    }

    /// Keeps the unmasked copy of `chunk` (`offset` bytes into its frame's payload) as far as
    /// the limit allows; returns how many bytes were kept. `true` in the second place the
    /// first time a byte does not fit: the message has just gone over the limit.
    pub fn take_in(&mut self, chunk: &[u8], key: [u8; 4], offset: u64) -> (usize, bool) {
        if self.over_limit {
            return (0, false);
        }
        let kept = chunk.len().min(self.limit - self.body.len());
        let at = self.body.len();
        self.body.extend_from_slice(&chunk[..kept]);
        apply_mask(key, offset, &mut self.body[at..]);
        self.over_limit = kept < chunk.len();
        (kept, self.over_limit)
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

    /// Client frames (masked) for `parts`, the first a text frame, the rest continuations.
    fn fragments(parts: &[&[u8]]) -> Vec<u8> {
        let mut wire = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            let opcode = if i == 0 { Opcode::Text } else { Opcode::Continuation };
            let key = [i as u8 + 1, 0x5A, 0xA5, 0x3C];
            FrameHeader { fin: i + 1 == parts.len(), rsv: 0, opcode, mask: Some(key), len: part.len() as u64 }.encode(&mut wire);
            let at = wire.len();
            wire.extend_from_slice(part);
            apply_mask(key, 0, &mut wire[at..]);
        }
        wire
    }

    /// Feeds `wire` through a message the way the relay does, in reads of `chunk` bytes.
    async fn assemble(wire: &[u8], limit: usize, chunk: usize) -> (Message, bool) {
        let mut reader = FrameReader::new(wire);
        let mut message = Message::new(limit, true);
        let mut went_over = false;
        while let Some((header, raw)) = reader.header().await.unwrap() {
            let key = header.mask.unwrap();
            message.start_frame(raw, key);
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
            let (mut message, over) = assemble(&wire, 1 << 20, chunk).await;
            assert!(!over);
            assert_eq!(message.scored(), b"' OR 1=1 UNION SELECT password FROM users --");
            assert_eq!(message.release(), wire, "the upstream gets the client's exact frames");
            assert!(!message.holding());
        }
    }

    #[tokio::test]
    async fn past_the_limit_only_the_prefix_is_kept() {
        let wire = fragments(&[b"abcdef", b"ghij"]);
        let (mut message, over) = assemble(&wire, 8, 4).await;
        assert!(over && message.over_limit());
        assert_eq!(message.scored(), b"abcdefgh");
        // What is released is the held prefix: the rest follows as the client sent it.
        let released = message.release();
        assert_eq!(released, wire[..wire.len() - 2]);
    }
}
