//! The whole request parser: arbitrary request text plus arbitrary headers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scoring::fields::FieldLimits;
use scoring::request::{parse_request, ScoreInput};

fuzz_target!(|input: (String, Vec<(String, String)>, bool)| {
    let (text, mut headers, small_limits) = input;
    headers.truncate(16);
    let limits = if small_limits {
        FieldLimits { max_fields: 16, max_depth: 3, max_arena_bytes: 4096 }
    } else {
        FieldLimits::default()
    };
    let max_arena = limits.max_arena_bytes;
    let req = parse_request(&ScoreInput { request_text: &text, headers: &headers }, limits);
    let total: usize = req.fields.iter().map(|f| f.name.len() + f.value.len()).sum();
    assert!(total <= max_arena);
});
