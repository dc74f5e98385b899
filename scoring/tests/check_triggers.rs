//! The code stage skips a check whose trigger (`syntax::Trigger`) refuses a field, without
//! calling it; a trigger that is not truly necessary would silently skip a detection. This
//! checks every check's trigger against the check itself: generated attacks of every evasion
//! family (plain and decoded), and the same texts stripped of the trigger's bytes, are given
//! to each check at every level in several places; whatever the trigger refuses must find
//! nothing.

use syntax::{checks, ByteSet, Input, Place, Trigger};

mod common;

fn texts() -> Vec<String> {
    common::attack_texts(11, 60)
}

const PLACES: [(Place, &str); 7] = [
    (Place::QueryValue, "q"),
    (Place::BodyValue, "_method"),
    (Place::BodyKey, "name"),
    (Place::Header, "user-agent"),
    (Place::Header, "x-scanner"),
    (Place::Cookie, "session"),
    (Place::Path, ""),
];

#[test]
fn a_field_the_trigger_refuses_never_yields_a_finding() {
    let texts = texts();
    let (mut refused, mut found) = (0usize, 0usize);
    for (check, trigger) in checks().iter().zip(syntax::registry_triggers()) {
        let strip = match trigger {
            Trigger::AnyByte(set) => Some(*set),
            _ => None,
        };
        for text in &texts {
            let stripped: Option<String> = strip.map(|set| text.chars().filter(|c| !c.is_ascii() || !set.contains(*c as u8)).collect());
            for candidate in std::iter::once(text.as_str()).chain(stripped.as_deref()) {
                for (place, name) in PLACES {
                    for decoded in [false, true] {
                        let input =
                            Input { text: candidate, place, name, method: "POST", bytes: ByteSet::of(candidate), decoded, sensitivity: 4 };
                        let finding = check.inspect(&input);
                        found += usize::from(finding.is_some());
                        if !trigger.admits(&input) {
                            refused += 1;
                            assert!(
                                finding.is_none(),
                                "{} ({trigger:?}) found {finding:?} in {candidate:?} at {place:?}/{name} though its trigger refuses it",
                                check.detector()
                            );
                        }
                    }
                }
            }
        }
    }
    assert!(refused > 100_000, "enough refused inputs were tried ({refused})");
    assert!(found > 10_000, "the attacks do trigger the checks ({found})");
}
