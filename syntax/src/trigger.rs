//! A check's cheap precondition, tested by the caller before the call: most benign fields
//! hold none of a check's trigger bytes, and a bit test in a loop costs far less than a
//! virtual call that rejects the field (13 checks × 2 texts × every field of a request).
//! The check keeps its own, finer tests; the trigger only has to be *necessary*: an input it
//! refuses must never produce a finding (`scoring/tests/check_triggers.rs` checks that on
//! every check with generated attacks).

use crate::{ByteSet, Input, Place};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// No cheap precondition: called on every input.
    Always,
    /// Called only when one of these bytes occurs in the text.
    AnyByte(ByteSet),
    /// Called only on inputs from this place.
    At(Place),
}

impl Trigger {
    /// Called when any of `bytes` occurs.
    pub const fn any_of(bytes: &[u8]) -> Trigger {
        Trigger::AnyByte(ByteSet::of_bytes(bytes))
    }

    /// Whether the check may find something in `input` (false: it certainly finds nothing).
    #[inline]
    pub fn admits(&self, input: &Input<'_>) -> bool {
        match self {
            Trigger::Always => true,
            Trigger::AnyByte(set) => set.intersects(&input.bytes),
            Trigger::At(place) => input.place == *place,
        }
    }
}

/// Checks per table: one bit of a `u64` each.
pub const MAX_CHECKS: usize = 64;
const PLACES: usize = Place::Overflow as usize + 1;

/// Every check's trigger as data, so one input is tested against all of them without a
/// branch per check (a branch per check mispredicted on about one field in three and cost
/// more than the bit tests themselves): bit `k` of [`TriggerTable::admitted`] is
/// `triggers[k].admits(input)`.
pub struct TriggerTable {
    /// The trigger bytes of each check; empty for a check without a byte trigger.
    bytes: Vec<ByteSet>,
    /// Checks admitted whatever the input.
    always: u64,
    /// Checks admitted at each place (by `Place as usize`).
    at: [u64; PLACES],
}

impl TriggerTable {
    pub fn new(triggers: &[Trigger]) -> TriggerTable {
        assert!(triggers.len() <= MAX_CHECKS, "more than {MAX_CHECKS} checks: widen the trigger mask");
        let mut table = TriggerTable { bytes: vec![ByteSet::default(); triggers.len()], always: 0, at: [0; PLACES] };
        for (k, trigger) in triggers.iter().enumerate() {
            match trigger {
                Trigger::Always => table.always |= 1 << k,
                Trigger::AnyByte(set) => table.bytes[k] = *set,
                Trigger::At(place) => table.at[*place as usize] |= 1 << k,
            }
        }
        table
    }

    /// One bit per check whose trigger admits `input`.
    #[inline]
    pub fn admitted(&self, input: &Input<'_>) -> u64 {
        let mut mask = self.always | self.at[input.place as usize];
        for (k, set) in self.bytes.iter().enumerate() {
            mask |= u64::from(set.intersects(&input.bytes)) << k;
        }
        mask
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table admits exactly what each trigger admits, on every kind of trigger.
    #[test]
    fn table_agrees_with_each_trigger() {
        let triggers =
            [Trigger::Always, Trigger::any_of(b"%"), Trigger::At(Place::Header), Trigger::any_of(b"<>"), Trigger::At(Place::Path)];
        let table = TriggerTable::new(&triggers);
        for text in ["", "plain", "50% off", "<b>", "a>b%"] {
            for place in [Place::Path, Place::QueryValue, Place::Header, Place::Overflow] {
                let input = Input { place, ..Input::new(text) };
                let mask = table.admitted(&input);
                for (k, t) in triggers.iter().enumerate() {
                    assert_eq!(mask >> k & 1 == 1, t.admits(&input), "{t:?} on {text:?} at {place:?}");
                }
            }
        }
    }
}
