//! A check's cheap precondition, tested by the caller before the call: most benign fields
//! hold none of a check's trigger bytes, and a bit test in a loop costs far less than a
//! virtual call that rejects the field (13 checks × 2 texts × every field of a request).
//! The check keeps its own, finer tests; the trigger only has to be *necessary*: an input it
//! refuses must never produce a finding (`syntax/tests/triggers.rs` checks that on every
//! check with generated attacks).

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
