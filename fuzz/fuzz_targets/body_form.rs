//! The form body parser.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scoring::body::form::parse_form;
use scoring::fields::{FieldLimits, Fields};

fuzz_target!(|input: &str| {
    let mut fields = Fields::with_limits(FieldLimits::default());
    parse_form(input, &mut fields);
    let mut fields = Fields::with_limits(FieldLimits::default());
    scoring::body::parse_body(input, Some("application/x-www-form-urlencoded"), &mut fields);
});
