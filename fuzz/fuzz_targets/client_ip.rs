//! The client address from forwarded headers (gate/src/client_ip.rs): see `gate::fuzzing::client_ip`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| gate::fuzzing::client_ip(data));
