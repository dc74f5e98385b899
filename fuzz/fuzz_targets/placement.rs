//! A marker attack placed anywhere, after any number of padding fields and bytes, is scored
//! or the verdict is marked partial. The request building and the property live in
//! `scoring::fuzzing` (its unit tests run fixed seeds of the same check).
#![no_main]

use libfuzzer_sys::fuzz_target;
use scoring::fuzzing::{check, engine, PlacementCase};

fuzz_target!(
    // The engine (Hyperscan compile, slow under ASan) is built before the first input, so it
    // does not count against libFuzzer's per-input -timeout.
    init: {
        engine();
    },
    |data: &[u8]| {
        if let Err(failure) = check(engine(), &PlacementCase::from_bytes(data)) {
            panic!("{failure}");
        }
    }
);
