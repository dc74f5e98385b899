//! ext_proc message handling (extproc/src/exchange.rs) on decoded `ProcessingRequest`s: see
//! `extproc::fuzzing::extproc_messages`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| extproc::fuzzing::extproc_messages(data));
