//! Every code detector of the `syntax` crate on arbitrary text, in every place and at every
//! level: none may panic, and each must stay linear (libFuzzer's -timeout catches a check that
//! backtracks). A finding must name its own check's detector and a level within 1..=4.
#![no_main]

use libfuzzer_sys::fuzz_target;
use syntax::{checks, ByteSet, Input, Place};

const PLACES: [Place; 6] = [Place::QueryValue, Place::BodyValue, Place::Header, Place::Cookie, Place::Path, Place::BodyKey];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let place = PLACES[selector as usize % PLACES.len()];
    let name = ["q", "user-agent", "_method", "redirect", "x-http-method-override", "cookie"][(selector as usize / 8) % 6];
    for sensitivity in 1..=4 {
        let input = Input { text: &text, place, name, method: "GET", bytes: ByteSet::of(&text), decoded: selector & 1 == 1, sensitivity };
        for check in checks() {
            if let Some(finding) = check.inspect(&input) {
                assert_eq!(finding.detector(), check.detector(), "{}", finding.reason);
                assert!((1..=4).contains(&finding.level), "{}", finding.reason);
                assert!(finding.level <= sensitivity, "{} reported above the level in force", finding.reason);
                assert!((0.0..=1.0).contains(&finding.score), "{}", finding.reason);
            }
        }
    }
});
