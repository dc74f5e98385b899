//! The normaliser: decode_deep, collapse and base64_segments, with their documented bounds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scoring::normalize::{self, base64, max_decoded_len};

fuzz_target!(|input: &str| {
    let mut decoded = String::new();
    let changed = normalize::decode_deep(input, &mut decoded);
    assert!(decoded.len() <= max_decoded_len(input.len()), "decode_deep output over its bound");
    // No transformation makes text longer (see normalize/mod.rs).
    assert!(decoded.len() <= input.len(), "decode_deep grew the text");
    assert_eq!(changed, decoded != input);
    if !normalize::may_need_decoding(input) {
        assert!(!changed, "may_need_decoding said no but decode_deep changed the input");
    }

    let mut collapsed = String::new();
    let changed = normalize::collapse(&decoded, &mut collapsed);
    assert_eq!(changed, collapsed != decoded);
    assert!(collapsed.len() <= decoded.len() + 1);

    let mut segments = Vec::new();
    normalize::base64_segments(input, &mut segments);
    assert!(segments.len() <= base64::MAX_SEGMENTS);
    if !normalize::may_need_decoding(input) {
        assert!(segments.is_empty(), "may_need_decoding said no but base64_segments found text");
    }
    // Lossy conversion can turn one invalid byte into 3; the decoded bytes are bounded.
    assert!(segments.iter().map(String::len).sum::<usize>() <= 3 * base64::MAX_DECODED_BYTES);

    // Each transform on its own, as `decode_deep` chains them.
    let mut out = String::new();
    normalize::entities::decode(input, &mut out);
    out.clear();
    normalize::escapes::decode(input, &mut out);
    out.clear();
    normalize::percent::deep_decode_into(input, &mut out);
    out.clear();
    normalize::utf8::bytes_into(input.as_bytes(), &mut out);
});
