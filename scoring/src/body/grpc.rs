//! gRPC and gRPC-Web request bodies (`application/grpc`, `application/grpc+proto`,
//! `application/grpc-web`, `application/grpc-web+proto`, and `application/grpc-web-text`,
//! base64 of the same).
//!
//! Two steps, because protobuf is binary and the request text is UTF-8:
//! 1. [`decode_messages`] runs on the body's bytes with the transport decoding (the front door
//!    calls it after `transport::decode_body`): undoes the base64 of `-text`, reads the
//!    length-prefixed frames (flag byte + big-endian u32 length), inflates compressed messages
//!    by `grpc-encoding` (gzip, deflate) within the body limit, and walks each message
//!    without a schema ([`super::protobuf`]). The scored view it returns is a JSON list of
//!    `[name, text]` pairs, names `grpc:/1/3` (field-number paths).
//! 2. [`parse_leaves`], the body parser for these content types, turns that list into fields.
//!
//! What cannot be read is named partial, never scored as if it were plain: `grpc-framing` (the
//! frames do not add up; the bytes are scored raw), `grpc-web-text` (bad base64),
//! `grpc-encoding:<token>` (a compressed message in a coding we cannot undo, or corrupt:
//! skipped), `decompression-limit`, `grpc-field-cap` (the walker's work bound).

use std::borrow::Cow;

use base64::Engine as _;

use super::protobuf::{self, WalkLimits};
use crate::fields::{FieldKind, Fields};
use crate::transport::compression::{self, Bounds, Coding, Stop};
use crate::transport::{DecodedBody, DEFAULT_MAX_RATIO};

/// Every gRPC field name starts so: `grpc:/1/3`, `grpc:` for a message that is not protobuf,
/// `grpc:trailers` for a gRPC-Web trailer frame.
pub const FIELD_PREFIX: &str = "grpc:";

/// The flag bit of a compressed message, and of a gRPC-Web trailer frame.
const COMPRESSED: u8 = 0x01;
const TRAILERS: u8 = 0x80;
const PREFIX_LEN: usize = 5;

/// How the frames travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrpcWire {
    Binary,
    /// gRPC-Web text: the frames in base64.
    Base64,
}

/// The gRPC wire a Content-Type names; `None` for anything else (`application/grpc+json`
/// included: its messages are JSON and are left to the JSON parser).
pub fn grpc_wire(content_type: &str) -> Option<GrpcWire> {
    // Runs for every request with a body: no allocation on the way to `None`.
    const BINARY: [&str; 4] = ["application/grpc", "application/grpc+proto", "application/grpc-web", "application/grpc-web+proto"];
    const BASE64: [&str; 2] = ["application/grpc-web-text", "application/grpc-web-text+proto"];
    let media = content_type.split(';').next().unwrap_or("").trim();
    if BINARY.iter().any(|known| media.eq_ignore_ascii_case(known)) {
        Some(GrpcWire::Binary)
    } else if BASE64.iter().any(|known| media.eq_ignore_ascii_case(known)) {
        Some(GrpcWire::Base64)
    } else {
        None
    }
}

/// The headers and bounds [`decode_messages`] reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct GrpcBody<'a> {
    pub content_type: Option<&'a str>,
    /// The `grpc-encoding` header: the coding of messages flagged compressed.
    pub grpc_encoding: Option<&'a str>,
    /// The body was cut at the body limit: a last frame ending early is expected.
    pub truncated: bool,
    /// Most bytes decompression may produce (the body limit).
    pub max_output: usize,
}

/// The framing does not add up.
#[derive(Debug, PartialEq, Eq)]
struct FramingError;

/// The scored view of a gRPC body (see the module comment); any other body is returned as it is.
pub fn decode_messages<'a>(decoded: DecodedBody<'a>, body: &GrpcBody<'_>) -> DecodedBody<'a> {
    let Some(wire) = body.content_type.and_then(grpc_wire) else { return decoded };
    if decoded.bytes.is_empty() {
        return decoded;
    }
    let mut partial = decoded.partial;
    let framed: Cow<'_, [u8]> = match wire {
        GrpcWire::Binary => Cow::Borrowed(&decoded.bytes),
        GrpcWire::Base64 => match web_text(&decoded.bytes, body.truncated) {
            Some(bytes) => Cow::Owned(bytes),
            None => {
                partial.push("grpc-web-text".into());
                return DecodedBody { bytes: decoded.bytes, partial };
            }
        },
    };
    let mut leaves = Leaves { pairs: Vec::new(), bytes: 0, cap: body.max_output.max(64 * 1024).saturating_mul(2), capped: false };
    if unframe(&framed, body, &mut leaves, &mut partial).is_err() {
        partial.push("grpc-framing".into());
        return DecodedBody { bytes: decoded.bytes, partial };
    }
    if leaves.capped {
        partial.push("grpc-limit".into());
    }
    let text = serde_json::to_string(&leaves.pairs).unwrap_or_default();
    DecodedBody { bytes: Cow::Owned(text.into_bytes()), partial }
}

/// The body parser for gRPC content types: the `[name, text]` list [`decode_messages`] wrote
/// becomes one `BodyValue` per pair. False for anything else (it is then scored raw).
pub fn parse_leaves(body: &str, fields: &mut Fields) -> bool {
    let Ok(pairs) = serde_json::from_str::<Vec<(String, String)>>(body) else { return false };
    for (name, text) in &pairs {
        fields.push(FieldKind::BodyValue, name, text);
    }
    true
}

/// The scored pairs, bounded in total size.
struct Leaves {
    pairs: Vec<(String, String)>,
    bytes: usize,
    cap: usize,
    capped: bool,
}

impl Leaves {
    fn push(&mut self, path: &str, text: String) {
        if text.is_empty() || self.capped {
            return;
        }
        self.bytes += path.len() + text.len();
        if self.bytes > self.cap {
            self.capped = true;
            return;
        }
        self.pairs.push((format!("{FIELD_PREFIX}{path}"), text));
    }
}

/// gRPC-Web text: base64, possibly several padded chunks one after another (one per frame).
fn web_text(text: &[u8], truncated: bool) -> Option<Vec<u8>> {
    let clean: Vec<u8> = text.iter().copied().filter(|b| !b.is_ascii_whitespace()).collect();
    let clean = if truncated { &clean[..clean.len() - clean.len() % 4] } else { &clean[..] };
    let mut out = Vec::with_capacity(clean.len() / 4 * 3);
    // A chunk ends after its padding: split there and decode each.
    let mut start = 0;
    let mut at = 0;
    while at < clean.len() {
        if clean[at] == b'=' {
            while at < clean.len() && clean[at] == b'=' {
                at += 1;
            }
            out.extend(base64::engine::general_purpose::STANDARD.decode(&clean[start..at]).ok()?);
            start = at;
        } else {
            at += 1;
        }
    }
    if start < clean.len() {
        out.extend(base64::engine::general_purpose::STANDARD.decode(&clean[start..]).ok()?);
    }
    Some(out)
}

/// Reads every frame and adds its leaves.
fn unframe(framed: &[u8], body: &GrpcBody<'_>, leaves: &mut Leaves, partial: &mut Vec<String>) -> Result<(), FramingError> {
    let mut at = 0;
    let mut inflated_total = 0usize;
    while at < framed.len() {
        let Some(prefix) = framed.get(at..at + PREFIX_LEN) else {
            return if body.truncated { Ok(()) } else { Err(FramingError) };
        };
        let flag = prefix[0];
        let len = u32::from_be_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]) as usize;
        at += PREFIX_LEN;
        let end = at.saturating_add(len);
        let cut = end > framed.len();
        if cut && !body.truncated {
            return Err(FramingError);
        }
        let payload = &framed[at..end.min(framed.len())];
        at = end.min(framed.len());
        if flag & !(COMPRESSED | TRAILERS) != 0 {
            return Err(FramingError);
        }
        let plain = if flag & COMPRESSED == 0 {
            Cow::Borrowed(payload)
        } else {
            let budget = body.max_output.saturating_sub(inflated_total);
            match inflate(payload, body.grpc_encoding, budget, cut, partial) {
                Some(bytes) => {
                    inflated_total += bytes.len();
                    Cow::Owned(bytes)
                }
                None => continue,
            }
        };
        if flag & TRAILERS != 0 {
            leaves.push("trailers", String::from_utf8_lossy(&plain).into_owned());
        } else {
            message(&plain, leaves, partial);
        }
    }
    Ok(())
}

/// A compressed message's bytes, or `None` (and a partial slug) when they cannot be read.
fn inflate(payload: &[u8], encoding: Option<&str>, budget: usize, cut: bool, partial: &mut Vec<String>) -> Option<Vec<u8>> {
    let token = encoding.map(|e| e.trim().to_ascii_lowercase()).unwrap_or_else(|| "none".into());
    let coding = match token.as_str() {
        "gzip" => Coding::Gzip,
        "deflate" => Coding::Deflate,
        // `identity` with the compressed flag set is a protocol error; snappy, zstd and the
        // rest are not undone here. Either way the bytes are not read as plain.
        _ => {
            partial.push(format!("grpc-encoding:{}", slug_safe(&token)));
            return None;
        }
    };
    let layer = compression::inflate(coding, payload, Bounds { max_output: budget, max_ratio: DEFAULT_MAX_RATIO });
    match layer.stop {
        None => {}
        Some(Stop::Limit) => partial.push("decompression-limit".into()),
        // The body limit cut this frame: ending mid-stream is expected.
        Some(Stop::Corrupt) if cut => {}
        Some(Stop::Corrupt) => {
            partial.push(format!("grpc-encoding:{token}"));
            return None;
        }
    }
    Some(layer.bytes)
}

/// One message's leaves: walked as protobuf, or scored whole when it is not protobuf.
fn message(bytes: &[u8], leaves: &mut Leaves, partial: &mut Vec<String>) {
    match protobuf::walk(bytes, WalkLimits::default()) {
        Ok(walk) => {
            if walk.field_cap && !partial.iter().any(|p| p == "grpc-field-cap") {
                partial.push("grpc-field-cap".into());
            }
            for leaf in walk.leaves {
                leaves.push(&leaf.path, leaf.text);
            }
        }
        // Another codec, or a message the body limit cut: every byte is still scored.
        Err(_) => leaves.push("", String::from_utf8_lossy(bytes).into_owned()),
    }
}

/// A client-chosen token made safe for a slug: `[a-z0-9._+-]`, at most 40 bytes.
fn slug_safe(token: &str) -> String {
    token.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-') { c } else { '_' }).take(40).collect()
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::super::protobuf::tests::field;
    use super::*;
    use crate::fields::FieldLimits;

    fn frame(flag: u8, message: &[u8]) -> Vec<u8> {
        let mut out = vec![flag];
        out.extend((message.len() as u32).to_be_bytes());
        out.extend_from_slice(message);
        out
    }

    fn decode(bytes: &[u8], content_type: &str, grpc_encoding: Option<&str>, truncated: bool) -> (String, Vec<String>) {
        let body = GrpcBody { content_type: Some(content_type), grpc_encoding, truncated, max_output: 1 << 20 };
        let out = decode_messages(DecodedBody { bytes: Cow::Borrowed(bytes), partial: Vec::new() }, &body);
        (String::from_utf8_lossy(&out.bytes).into_owned(), out.partial)
    }

    fn fields_of(text: &str) -> Vec<(String, String)> {
        let mut fields = Fields::with_limits(FieldLimits::default());
        super::super::parse_body(text, Some("application/grpc"), &mut fields);
        fields.iter().map(|f| (f.name.to_string(), f.value.to_string())).collect()
    }

    #[test]
    fn content_types() {
        for ct in ["application/grpc", "application/grpc+proto", "Application/gRPC-Web; x=1", "application/grpc-web+proto"] {
            assert_eq!(grpc_wire(ct), Some(GrpcWire::Binary), "{ct}");
        }
        assert_eq!(grpc_wire("application/grpc-web-text+proto"), Some(GrpcWire::Base64));
        assert_eq!(grpc_wire("application/grpc+json"), None);
        assert_eq!(grpc_wire("application/json"), None);
    }

    #[test]
    fn frames_become_named_fields() {
        let message = [field(1, b"hello"), field(2, &field(3, b"<script>alert(1)</script>"))].concat();
        let body = [frame(0, &message), frame(0, &field(1, b"second"))].concat();
        let (text, partial) = decode(&body, "application/grpc", None, false);
        assert!(partial.is_empty(), "{partial:?}");
        let found = fields_of(&text);
        assert!(found.contains(&("grpc:/1".into(), "hello".into())), "{found:?}");
        assert!(found.contains(&("grpc:/2/3".into(), "<script>alert(1)</script>".into())), "{found:?}");
        assert!(found.contains(&("grpc:/1".into(), "second".into())), "{found:?}");
    }

    #[test]
    fn gzip_messages_are_inflated_and_unknown_codings_are_partial() {
        let message = field(1, b"' OR 1=1 --");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&message).unwrap();
        let body = frame(1, &gz.finish().unwrap());
        let (text, partial) = decode(&body, "application/grpc", Some("gzip"), false);
        assert!(partial.is_empty());
        assert_eq!(fields_of(&text), [("grpc:/1".to_string(), "' OR 1=1 --".to_string())]);
        let (text, partial) = decode(&body, "application/grpc", Some("snappy"), false);
        assert_eq!(partial, ["grpc-encoding:snappy"]);
        assert!(fields_of(&text).is_empty(), "compressed bytes are never scored as plain");
        let (_, partial) = decode(&frame(1, b"not gzip at all"), "application/grpc", Some("gzip"), false);
        assert_eq!(partial, ["grpc-encoding:gzip"]);
    }

    #[test]
    fn web_text_is_base64_of_the_frames() {
        use base64::engine::general_purpose::STANDARD;
        let one = STANDARD.encode(frame(0, &field(1, b"first")));
        let two = STANDARD.encode(frame(0, &field(4, b"<svg onload=x>")));
        let (text, partial) = decode(format!("{one}{two}").as_bytes(), "application/grpc-web-text", None, false);
        assert!(partial.is_empty(), "{partial:?}");
        assert_eq!(fields_of(&text), [("grpc:/1".to_string(), "first".to_string()), ("grpc:/4".to_string(), "<svg onload=x>".to_string())]);
        let (_, partial) = decode(b"!!not base64!!", "application/grpc-web-text", None, false);
        assert_eq!(partial, ["grpc-web-text"]);
    }

    #[test]
    fn bad_framing_is_partial_and_scored_raw() {
        let (text, partial) = decode(b"{\"q\":\"' OR 1=1 --\"}", "application/grpc", None, false);
        assert_eq!(partial, ["grpc-framing"]);
        assert_eq!(fields_of(&text), [(String::new(), "{\"q\":\"' OR 1=1 --\"}".to_string())]);
        let short = &frame(0, &field(1, b"abcdef"))[..8];
        assert_eq!(decode(short, "application/grpc", None, false).1, ["grpc-framing"]);
        assert_eq!(decode(&[0x02, 0, 0, 0, 0], "application/grpc", None, false).1, ["grpc-framing"], "unknown flag bits");
    }

    #[test]
    fn a_body_cut_at_the_limit_scores_what_arrived() {
        let body = frame(0, &field(1, b"' UNION SELECT password FROM users --"));
        let (text, partial) = decode(&body[..30], "application/grpc", None, true);
        assert!(partial.is_empty(), "the front door reports the cut itself: {partial:?}");
        assert!(fields_of(&text).iter().any(|(name, value)| name == "grpc:" && value.contains("UNION SELECT")), "{text}");
    }

    #[test]
    fn a_message_that_is_not_protobuf_is_scored_whole() {
        let (text, partial) = decode(&frame(0, b"\x0bgroup <script>"), "application/grpc", None, false);
        assert!(partial.is_empty());
        assert_eq!(fields_of(&text), [("grpc:".to_string(), "\u{b}group <script>".to_string())]);
    }

    #[test]
    fn other_bodies_pass_unchanged() {
        let (text, partial) = decode(b"a=1", "application/x-www-form-urlencoded", None, false);
        assert_eq!((text.as_str(), partial.len()), ("a=1", 0));
    }

    #[test]
    fn noise_never_panics_and_the_parser_reads_what_the_decoder_wrote() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..3000 {
            let len = (next() % 96) as usize;
            let mut noise: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            // Half the inputs are one well-framed message of noise: the walker gets exercised.
            if round % 2 == 0 {
                noise = frame((round / 2 % 2) as u8, &noise);
            }
            let encoding = [None, Some("gzip"), Some("snappy")][round % 3];
            let (text, partial) = decode(&noise, "application/grpc", encoding, round % 5 == 0);
            if partial.iter().any(|p| p == "grpc-framing") {
                assert_eq!(text.as_bytes(), String::from_utf8_lossy(&noise).as_bytes());
            } else if !noise.is_empty() {
                let mut fields = Fields::with_limits(FieldLimits::default());
                assert!(parse_leaves(&text, &mut fields), "{text}");
            }
        }
    }

    #[test]
    fn a_policy_exclusion_names_a_field_by_its_path() {
        use crate::detectors::XSS;
        use crate::exclusion::{Excluded, Exclusion, FieldPart, FieldRef, ScoringScope, Target};
        let message = [field(1, b"<b>hi</b>"), field(2, &field(1, b"<b>hi</b>"))].concat();
        let (text, _) = decode(&frame(0, &message), "application/grpc", None, false);
        let mut fields = Fields::with_limits(FieldLimits::default());
        super::super::parse_body(&text, Some("application/grpc"), &mut fields);
        // What a policy file's `field = "body:grpc:/2/1"` becomes.
        let only = FieldRef { part: FieldPart::Body, name: "grpc:/2/1".into() };
        let scope = ScoringScope { exclusions: vec![Exclusion { target: Target::Detector(XSS), field: Some(only) }], ..Default::default() };
        let excluded = Excluded::resolve(&scope, &fields);
        let index = |name: &str| fields.iter().position(|f| f.name == name).unwrap();
        assert!(excluded.skips(XSS, None, index("grpc:/2/1")));
        assert!(!excluded.skips(XSS, None, index("grpc:/1")), "field 1 of the top message is another field");
    }
}
