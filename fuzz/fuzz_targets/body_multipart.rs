//! The multipart body parser. A first line `boundary=...` becomes the Content-Type's
//! parameter; otherwise the boundary is sniffed from the body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scoring::body::multipart::parse_multipart;
use scoring::fields::{FieldLimits, Fields};

fuzz_target!(|input: &str| {
    let (content_type, body) = match input.split_once('\n') {
        Some((first, rest)) if first.starts_with("boundary=") => (Some(format!("multipart/form-data; {first}")), rest),
        _ => (None, input),
    };
    let mut fields = Fields::with_limits(FieldLimits { max_depth: 4, ..FieldLimits::default() });
    let parsed = parse_multipart(body, content_type.as_deref(), &mut fields);
    if !parsed {
        assert!(fields.is_empty(), "a rejected body must push nothing");
    }
    let mut fields = Fields::with_limits(FieldLimits::default());
    scoring::body::parse_body(body, content_type.as_deref(), &mut fields);
});
