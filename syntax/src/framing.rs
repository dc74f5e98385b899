//! Request smuggling shapes that only show when the headers are read together: a request
//! framed two ways (both `Transfer-Encoding` and `Content-Length`, so a front end and a back
//! end disagree on where it ends), a framing header sent twice (two Content-Lengths with
//! different values, two Transfer-Encodings), and a framing header whose *name* is bent
//! (`Transfer-Encoding ` with a space, `Transfer_Encoding`, `Content-Length\t`) so that one
//! parser honours it and another does not. The value of one Transfer-Encoding or
//! Content-Length header on its own is the per-field `protocol` check's (`protocol.rs`).
//!
//! No client sends any of these (RFC 9112 §6.1: a sender MUST NOT send a Content-Length with
//! a Transfer-Encoding), so each is level 1, except an identical Content-Length repeated,
//! which a recipient may collapse: level 2.

use crate::Finding;

/// Framing headers compared: more than any request carries; the rest are not read.
const MAX_FRAMING_HEADERS: usize = 16;

/// The request-level smuggling finding for `headers` (name, value as received), at or below
/// `sensitivity`.
pub fn framing_anomaly<'a>(headers: impl IntoIterator<Item = (&'a str, &'a str)>, sensitivity: u8) -> Option<Finding> {
    let mut transfer_encodings = 0usize;
    let mut lengths: Vec<&str> = Vec::new();
    let mut bent_name = false;
    for (name, value) in headers {
        match framing_name(name) {
            Some((Framing::TransferEncoding, exact)) => {
                transfer_encodings += 1;
                bent_name |= !exact;
            }
            Some((Framing::ContentLength, exact)) => {
                bent_name |= !exact;
                if lengths.len() < MAX_FRAMING_HEADERS {
                    lengths.push(value.trim());
                }
            }
            None => {}
        }
    }
    let conflicting = lengths.iter().any(|l| *l != lengths[0]);
    let found = if bent_name {
        Some(("protocol:framing-header-name", 1))
    } else if transfer_encodings > 0 && !lengths.is_empty() {
        Some(("protocol:te-and-cl", 1))
    } else if transfer_encodings > 1 {
        Some(("protocol:transfer-encoding-repeated", 1))
    } else if conflicting {
        Some(("protocol:content-length-conflict", 1))
    } else if lengths.len() > 1 {
        Some(("protocol:content-length-repeated", 2))
    } else {
        None
    };
    let (reason, level) = found?;
    (level <= sensitivity).then_some(Finding { reason, score: 0.95, level })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Framing {
    TransferEncoding,
    ContentLength,
}

/// Which framing header `name` is, and whether it is spelled exactly (any case). A name
/// whose letters spell one but that carries other bytes (spaces, tabs, `_`, a second `-`)
/// is a bent one: some parsers normalise it into the header, others ignore it.
fn framing_name(name: &str) -> Option<(Framing, bool)> {
    if name.eq_ignore_ascii_case("transfer-encoding") {
        return Some((Framing::TransferEncoding, true));
    }
    if name.eq_ignore_ascii_case("content-length") {
        return Some((Framing::ContentLength, true));
    }
    if name.len() > 40 {
        return None;
    }
    let mut letters = [0u8; 40];
    let mut n = 0;
    for b in name.bytes().filter(u8::is_ascii_alphabetic) {
        letters[n] = b.to_ascii_lowercase();
        n += 1;
    }
    match &letters[..n] {
        b"transferencoding" => Some((Framing::TransferEncoding, false)),
        b"contentlength" => Some((Framing::ContentLength, false)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(headers: &[(&str, &str)], level: u8) -> Option<&'static str> {
        framing_anomaly(headers.iter().copied(), level).map(|f| f.reason)
    }

    #[test]
    fn smuggling_shapes() {
        assert_eq!(reason(&[("Content-Length", "6"), ("Transfer-Encoding", "chunked")], 1), Some("protocol:te-and-cl"));
        assert_eq!(reason(&[("transfer-encoding", "chunked"), ("content-length", "4")], 1), Some("protocol:te-and-cl"));
        assert_eq!(reason(&[("Content-Length", "6"), ("Content-Length", "60")], 1), Some("protocol:content-length-conflict"));
        assert_eq!(
            reason(&[("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "identity")], 1),
            Some("protocol:transfer-encoding-repeated")
        );
        assert_eq!(reason(&[("Transfer-Encoding ", "chunked")], 1), Some("protocol:framing-header-name"));
        assert_eq!(reason(&[("Transfer_Encoding", "chunked")], 1), Some("protocol:framing-header-name"));
        assert_eq!(reason(&[("Content-Length\t", "5")], 1), Some("protocol:framing-header-name"));
        assert_eq!(reason(&[("Content-Length", "5"), ("Content-Length", " 5")], 1), None);
        assert_eq!(reason(&[("Content-Length", "5"), ("Content-Length", " 5")], 2), Some("protocol:content-length-repeated"));
    }

    #[test]
    fn ordinary_framing() {
        assert_eq!(reason(&[("Content-Length", "348"), ("Content-Type", "application/json")], 4), None);
        assert_eq!(reason(&[("Transfer-Encoding", "chunked"), ("Content-Type", "text/plain")], 4), None);
        assert_eq!(reason(&[("TRANSFER-ENCODING", "chunked")], 4), None);
        assert_eq!(reason(&[("X-Content-Length-Hint", "5"), ("Content-Length", "5")], 4), None);
        assert_eq!(reason(&[], 4), None);
    }
}
