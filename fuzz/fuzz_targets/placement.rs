//! A marker attack placed anywhere, after any number of padding fields and bytes, is scored
//! or the verdict is marked partial. The request building and the property live in
//! `scoring::fuzzing` (its unit tests run fixed seeds of the same check).
#![no_main]

use libfuzzer_sys::fuzz_target;
use scoring::fuzzing::{check, engine, PlacementCase};

fuzz_target!(|data: &[u8]| {
    if let Err(failure) = check(engine(), &PlacementCase::from_bytes(data)) {
        panic!("{failure}");
    }
});
