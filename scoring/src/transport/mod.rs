//! Transport decoding: the body as the application will read it, before any field is parsed.
//!
//! The bytes on the wire may be compressed (Content-Encoding) and written in a charset other
//! than UTF-8; scoring those bytes as they arrived lets any attack through that the server
//! inflates or transcodes (issue 11, finding 9). [`decode_body`] undoes both, within bounds,
//! and names what it could not undo as partial slugs (`content-encoding:<token>`,
//! `decompression-limit`, `charset:<label>`) so that policy can refuse instead of passing
//! unread bytes. What the client sent is forwarded unchanged; only the scored view is decoded.
//!
//! A multipart part's own charset on raw 8-bit content is decoded here, on bytes
//! ([`multipart_charset`]); a part with a Content-Transfer-Encoding is left to the multipart
//! parser (`body::part_encoding`), which undoes it and then the charset.

pub mod charset;
pub mod compression;
pub mod ebcdic;
pub mod multipart_charset;

use std::borrow::Cow;

use charset::Charset;
use compression::{Bounds, Coding, Stop};

/// Most decoded bytes per compressed byte: deflate's own best is about 1032:1, so a real body
/// never comes near it, and a bomb stops within 1000 × its size.
pub const DEFAULT_MAX_RATIO: usize = 1000;

/// A request body and the headers that say how it is encoded.
#[derive(Clone, Copy, Debug, Default)]
pub struct EncodedBody<'a> {
    pub bytes: &'a [u8],
    /// Every Content-Encoding value, joined with `,` (codings in the order they were applied).
    pub content_encoding: Option<&'a str>,
    pub content_type: Option<&'a str>,
    /// The body was cut at the body limit: a compressed stream ending early is expected then,
    /// not a fault (the front door reports the cut itself).
    pub truncated: bool,
}

/// Bounds on the decoded view.
#[derive(Clone, Copy, Debug)]
pub struct DecodeLimits {
    /// Most bytes decompression may produce (the body limit).
    pub max_output: usize,
    pub max_ratio: usize,
}

/// The body as the application reads it, and what could not be decoded.
#[derive(Debug)]
pub struct DecodedBody<'a> {
    pub bytes: Cow<'a, [u8]>,
    /// Partial slugs: `content-encoding:<token>`, `decompression-limit`, `charset:<label>`.
    pub partial: Vec<String>,
}

/// Undoes the body's Content-Encoding(s), then its charset.
pub fn decode_body<'a>(body: EncodedBody<'a>, limits: DecodeLimits) -> DecodedBody<'a> {
    let mut decoded = DecodedBody { bytes: Cow::Borrowed(body.bytes), partial: Vec::new() };
    if let Some(codings) = body.content_encoding {
        undo_codings(codings, &body, limits, &mut decoded);
    }
    if let Some(label) = body.content_type.and_then(charset::charset_param) {
        match charset::decode(&decoded.bytes, &label) {
            Charset::AsIs => {}
            // Bounded without a cap of its own: no supported charset more than triples the
            // byte count (one EBCDIC or windows-125x byte → at most 3 UTF-8 bytes).
            Charset::Decoded(text) => {
                decoded.bytes = Cow::Owned(text.into_bytes());
                // The whole body is text now: decoding its parts again would compound.
                return decoded;
            }
            Charset::Unknown => decoded.partial.push(unknown_charset_slug(&label)),
        }
    }
    if let Some(content_type) = body.content_type.filter(|t| t.trim_start().to_ascii_lowercase().starts_with("multipart/")) {
        if let Some(rewritten) = multipart_charset::decode_part_charsets(&decoded.bytes, content_type, &mut decoded.partial) {
            decoded.bytes = Cow::Owned(rewritten);
        }
    }
    decoded
}

fn unknown_charset_slug(label: &str) -> String {
    format!("charset:{}", slug_safe(label))
}

fn undo_codings(codings: &str, body: &EncodedBody<'_>, limits: DecodeLimits, decoded: &mut DecodedBody<'_>) {
    let bounds = Bounds { max_output: limits.max_output, max_ratio: limits.max_ratio };
    let tokens: Vec<&str> = codings.split(',').map(str::trim).filter(|t| !t.is_empty()).collect();
    // The last coding listed was applied last: undo it first.
    for (undone, token) in tokens.iter().rev().enumerate() {
        let Some(coding) = Coding::from_token(token) else {
            decoded.partial.push(format!("content-encoding:{}", slug_safe(token)));
            return;
        };
        if coding == Coding::Identity {
            continue;
        }
        let layer = compression::inflate(coding, &decoded.bytes, bounds);
        decoded.bytes = Cow::Owned(layer.bytes);
        match layer.stop {
            None => {}
            Some(Stop::Limit) => {
                decoded.partial.push("decompression-limit".into());
                return;
            }
            // A cut body ends mid-stream in its outermost layer; anything else is a fault.
            Some(Stop::Corrupt) if body.truncated && undone == 0 => return,
            Some(Stop::Corrupt) => {
                decoded.partial.push(format!("content-encoding:{}", slug_safe(token)));
                return;
            }
        }
    }
}

/// A client-chosen token made safe for a slug: lower case, `[a-z0-9._+-]`, at most 40 bytes.
fn slug_safe(token: &str) -> String {
    token
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-') { c } else { '_' })
        .take(40)
        .collect()
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::write::GzEncoder;
    use flate2::Compression;

    use super::*;

    const LIMITS: DecodeLimits = DecodeLimits { max_output: 1 << 20, max_ratio: DEFAULT_MAX_RATIO };

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    fn decode(bytes: &[u8], encoding: Option<&str>, content_type: Option<&str>) -> (Vec<u8>, Vec<String>) {
        let body = EncodedBody { bytes, content_encoding: encoding, content_type, truncated: false };
        let out = decode_body(body, LIMITS);
        (out.bytes.into_owned(), out.partial)
    }

    #[test]
    fn plain_bodies_are_borrowed() {
        let body = EncodedBody { bytes: b"a=1", content_type: Some("application/x-www-form-urlencoded"), ..Default::default() };
        assert!(matches!(decode_body(body, LIMITS).bytes, Cow::Borrowed(_)));
    }

    #[test]
    fn stacked_codings_then_charset() {
        let utf16: Vec<u8> = "q=<svg onload=alert(1)>".encode_utf16().flat_map(u16::to_le_bytes).collect();
        let twice = gzip(&gzip(&utf16));
        let (bytes, partial) = decode(&twice, Some("gzip, GZIP"), Some("text/plain; charset=utf-16le"));
        assert_eq!((bytes.as_slice(), partial.len()), (&b"q=<svg onload=alert(1)>"[..], 0));
    }

    #[test]
    fn what_cannot_be_decoded_is_named() {
        assert_eq!(decode(b"xyz", Some("compress"), None).1, ["content-encoding:compress"]);
        assert_eq!(decode(b"xyz", Some("gzip"), None).1, ["content-encoding:gzip"]);
        assert_eq!(decode(b"xyz", None, Some("text/plain; charset=\"UTF-7\"")).1, ["charset:utf-7"]);
        assert_eq!(decode(b"xyz", Some("a\r\nb"), None).1, ["content-encoding:a__b"]);
        let bomb = gzip(&vec![0; 4 << 20]);
        let (bytes, partial) = decode(&bomb, Some("gzip"), None);
        assert_eq!((bytes.len(), partial.as_slice()), (1 << 20, &["decompression-limit".to_string()][..]));
    }

    #[test]
    fn a_cut_body_is_not_a_fault() {
        let packed = gzip(&(0..200_000u32).flat_map(|i| i.to_le_bytes()).collect::<Vec<_>>());
        let body =
            EncodedBody { bytes: &packed[..packed.len() / 2], content_encoding: Some("gzip"), truncated: true, ..Default::default() };
        let out = decode_body(body, LIMITS);
        assert!(out.partial.is_empty() && !out.bytes.is_empty());
    }
}
