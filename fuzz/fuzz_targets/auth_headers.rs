//! The auth adapter's reading of a subrequest's headers (adapters/src/original.rs): see
//! `adapters::fuzzing::auth_headers`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| adapters::fuzzing::auth_headers(data));
