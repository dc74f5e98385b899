//! Transport decoding (Content-Encoding + charset + multipart part charsets). The first line
//! picks the headers: `<content-encoding>|<charset>[|<boundary>]` (each may be empty; a
//! boundary makes the body multipart/form-data); the rest is the body. Asserts no panic
//! and the bounds: decompression never yields more than the output limit, and no charset more
//! than triples what decompression produced.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scoring::transport::{decode_body, DecodeLimits, EncodedBody};

const MAX_OUTPUT: usize = 64 * 1024;

fuzz_target!(|input: &[u8]| {
    let (header_line, body) = match input.iter().position(|&b| b == b'\n') {
        Some(i) => (&input[..i], &input[i + 1..]),
        None => (&b""[..], input),
    };
    let header_line = String::from_utf8_lossy(header_line);
    let mut header_fields = header_line.splitn(3, '|');
    let coding = header_fields.next().unwrap_or("");
    let charset = header_fields.next().unwrap_or("");
    let content_type = match header_fields.next() {
        Some(boundary) => format!("multipart/form-data; boundary={boundary}; charset={charset}"),
        None => format!("text/plain; charset={charset}"),
    };
    let encoded = EncodedBody {
        bytes: body,
        content_encoding: (!coding.is_empty()).then_some(coding),
        content_type: (!charset.is_empty() || content_type.starts_with("multipart")).then_some(content_type.as_str()),
        truncated: body.len() % 2 == 1,
    };
    let limits = DecodeLimits { max_output: MAX_OUTPUT, max_ratio: 100 };
    let decoded = decode_body(encoded, limits);
    let inflated_bound = if coding.is_empty() { body.len() } else { MAX_OUTPUT.max(body.len()) };
    assert!(decoded.bytes.len() <= 4 * inflated_bound, "{} bytes out of {}", decoded.bytes.len(), body.len());
    for slug in &decoded.partial {
        assert!(slug.len() <= 64 && !slug.contains(['\r', '\n', ',']), "{slug:?}");
    }
});
