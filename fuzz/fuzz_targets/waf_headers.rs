//! Verdict-header preparation and stamping (gate/src/waf_headers.rs): see `gate::fuzzing::waf_headers`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| gate::fuzzing::waf_headers(data));
