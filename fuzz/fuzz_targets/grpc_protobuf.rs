//! The gRPC body decoder and the schema-less protobuf walker. The first byte picks the wire
//! (even: binary frames, odd: gRPC-Web text) and the `grpc-encoding` (gzip, deflate, snappy,
//! none); the rest is the body. Asserts no panic, the walker's bounds (leaf paths no deeper
//! than its depth limit), that the scored view is either the `[name, text]` list the body
//! parser reads or the body itself with `grpc-framing`/`grpc-web-text` partial, and that the
//! extracted text stays within its cap.
#![no_main]

use std::borrow::Cow;

use libfuzzer_sys::fuzz_target;
use scoring::body::grpc::{decode_messages, parse_leaves, GrpcBody};
use scoring::body::protobuf::{walk, WalkLimits};
use scoring::fields::{FieldLimits, Fields};
use scoring::transport::DecodedBody;

const MAX_OUTPUT: usize = 64 * 1024;

fuzz_target!(|input: &[u8]| {
    let Some((&selector, body)) = input.split_first() else { return };
    let limits = WalkLimits { max_depth: 8, max_fields: 4096 };
    if let Ok(found) = walk(body, limits) {
        for leaf in &found.leaves {
            assert!(leaf.path.matches('/').count() <= limits.max_depth + 1, "{}", leaf.path);
        }
    }
    let content_type = if selector & 1 == 0 { "application/grpc" } else { "application/grpc-web-text" };
    let grpc_encoding = [None, Some("gzip"), Some("deflate"), Some("snappy")][usize::from(selector >> 1) % 4];
    let grpc = GrpcBody { content_type: Some(content_type), grpc_encoding, truncated: selector & 0x10 != 0, max_output: MAX_OUTPUT };
    let decoded = decode_messages(DecodedBody { bytes: Cow::Borrowed(body), partial: Vec::new() }, &grpc);
    let framing_failed = decoded.partial.iter().any(|p| p == "grpc-framing" || p == "grpc-web-text");
    if framing_failed {
        assert_eq!(&decoded.bytes[..], body, "a body that is not gRPC is scored as it came");
    } else if !body.is_empty() {
        assert!(decoded.bytes.len() <= 6 * 2 * MAX_OUTPUT.max(64 * 1024) + 1024, "{} bytes", decoded.bytes.len());
        let text = std::str::from_utf8(&decoded.bytes).expect("the scored view is UTF-8 JSON");
        let mut fields = Fields::with_limits(FieldLimits::default());
        assert!(parse_leaves(text, &mut fields), "the body parser reads what the decoder wrote: {text}");
    }
});
