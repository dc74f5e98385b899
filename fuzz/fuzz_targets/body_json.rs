//! The JSON body parser (simd-json tape walk, serde_json fallback, depth limit).
#![no_main]

use libfuzzer_sys::fuzz_target;
use scoring::body::json::parse_json;
use scoring::fields::{FieldKind, FieldLimits, Fields};

fuzz_target!(|input: &str| {
    let mut fields = Fields::with_limits(FieldLimits { max_depth: 4, ..FieldLimits::default() });
    let parsed = parse_json(input, &mut fields);
    if !parsed {
        assert!(fields.is_empty(), "a rejected body must push nothing");
    }
    // Through the dispatcher: the body is never lost.
    let mut fields = Fields::with_limits(FieldLimits::default());
    scoring::body::parse_body(input, Some("application/json"), &mut fields);
    if !input.is_empty() && !parsed {
        assert!(fields.iter().any(|f| f.kind == FieldKind::BodyRaw && f.value == input));
    }
});
