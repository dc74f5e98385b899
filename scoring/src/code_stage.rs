//! The code-detector stage: every check of the `syntax` crate on each field's plain text, its
//! decoded text and the text of its base64 segments (an Overflow chunk line by line, each line
//! as the field it was). Runs after the pattern scans, before the
//! models; its findings join the pattern hits, so a code finding above the threshold skips the
//! models like a rule would.
//!
//! Checks are pure functions of their input, so a text already inspected at the same place,
//! under the same name (the keys and values that every object of a JSON array repeats, a
//! form's repeated fields) replays its findings instead of running the checks again.

use syntax::{ByteSet, Finding, Input, Place};

use crate::detectors::detector_id;
use crate::fields::{FieldKind, Fields};
use crate::patterns::Hits;
use crate::views::Views;

/// Runs every check on every field of one request and records what they find in `hits`
/// (at `hits.sensitivity`).
pub fn inspect_fields(fields: &Fields, views: &Views, method: &str, hits: &mut Hits) {
    let mut decoded_line = String::new();
    let mut seen = Seen::default();
    for (idx, field) in fields.iter().enumerate() {
        let place = Place::from(field.kind);
        if field.kind == FieldKind::Overflow {
            for value in crate::overflow_lines::line_values(field.value) {
                let mut input = Input {
                    text: value,
                    place,
                    name: "",
                    method,
                    bytes: ByteSet::of(value),
                    decoded: false,
                    sensitivity: hits.sensitivity,
                };
                record(&input, idx, hits);
                if crate::normalize::may_need_decoding(value) && crate::normalize::decode_deep(value, &mut decoded_line) {
                    input.text = &decoded_line;
                    input.bytes = ByteSet::of(&decoded_line);
                    input.decoded = true;
                    record(&input, idx, hits);
                }
            }
            continue;
        }
        let mut input = Input {
            text: field.value,
            place,
            name: field.name,
            method,
            // The plain view holds every field in order: its segment `idx` is this value.
            bytes: views.plain.segment_bytes.get(idx).copied().unwrap_or_else(|| ByteSet::of(field.value)),
            decoded: false,
            sensitivity: hits.sensitivity,
        };
        seen.record(&input, idx, hits);
        // A decoded text equal to the plain one (a comment marker made the view keep it)
        // gives the same findings, which the plain input already recorded and which win ties.
        if let Some(Some(decoded)) = views.decoded_fields.get(idx).filter(|d| d.as_deref() != Some(field.value)) {
            input.text = decoded;
            input.bytes = ByteSet::of(decoded);
            input.decoded = true;
            seen.record(&input, idx, hits);
        }
    }
    for (idx, text) in &views.base64_texts {
        let Some(field) = fields.get(*idx) else { continue };
        let input = Input {
            text,
            place: Place::from(FieldKind::Base64),
            name: field.name,
            method,
            bytes: ByteSet::of(text),
            decoded: true,
            sensitivity: hits.sensitivity,
        };
        seen.record(&input, *idx, hits);
    }
}

/// Slots of [`Seen`], probed linearly from an input's hash: a collision moves on to the next
/// slot instead of losing the replay (with one slot per hash, json_1k's `gift` and `summer`
/// tags shared the slots of `notes` and `title` and were inspected 13 times each).
const SEEN_SLOTS: usize = 128;
/// Inputs remembered per request: past this, further texts are simply inspected, so probing
/// always finds an empty slot within a few steps (the table never grows; lookups stay O(1)).
const SEEN_INPUTS: usize = SEEN_SLOTS * 3 / 4;

/// The inputs of this request already inspected, with their findings.
#[derive(Default)]
struct Seen<'a> {
    /// 0: empty; otherwise 1 + an index into `inputs`.
    slots: SeenSlots,
    inputs: Vec<(Input<'a>, std::ops::Range<usize>)>,
    findings: Vec<Finding>,
}

struct SeenSlots([u8; SEEN_SLOTS]);

impl Default for SeenSlots {
    fn default() -> Self {
        SeenSlots([0; SEEN_SLOTS])
    }
}

impl<'a> Seen<'a> {
    /// Runs the checks on `input` for field `field`, or replays the findings of the same
    /// input seen earlier in the request.
    fn record(&mut self, input: &Input<'a>, field: usize, hits: &mut Hits) {
        let mut slot = slot_of(input);
        // The table is never more than 3/4 full, so an empty slot ends every probe.
        loop {
            let stored = self.slots.0[slot];
            if stored == 0 {
                break;
            }
            let (earlier, range) = &self.inputs[usize::from(stored - 1)];
            if same_input(earlier, input) {
                for finding in &self.findings[range.clone()] {
                    keep(finding, input.decoded, field, hits);
                }
                return;
            }
            slot = (slot + 1) % SEEN_SLOTS;
        }
        let start = self.findings.len();
        syntax::for_each_finding(input, |finding| {
            keep(&finding, input.decoded, field, hits);
            self.findings.push(finding);
        });
        if self.inputs.len() < SEEN_INPUTS {
            self.inputs.push((*input, start..self.findings.len()));
            self.slots.0[slot] = self.inputs.len() as u8;
        }
    }
}

/// Everything a check reads, compared (the method and sensitivity are the request's).
fn same_input(a: &Input<'_>, b: &Input<'_>) -> bool {
    a.place == b.place && a.decoded == b.decoded && a.bytes == b.bytes && a.text == b.text && a.name == b.name
}

/// A cheap hash of an input (length, ends, place, name), enough to spread a request's fields.
fn slot_of(input: &Input<'_>) -> usize {
    let word = |s: &[u8]| s.iter().take(8).fold(0u64, |h, &b| h << 8 | u64::from(b));
    let text = input.text.as_bytes();
    let tail = &text[text.len().saturating_sub(8)..];
    let mut h = word(text) ^ word(tail).rotate_left(29) ^ (text.len() as u64) << 40 ^ word(input.name.as_bytes()).rotate_left(13);
    h ^= (input.place as u64) << 56 ^ u64::from(input.decoded) << 63;
    h = h.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> 57) as usize % SEEN_SLOTS
}

fn keep(finding: &Finding, decoded: bool, field: usize, hits: &mut Hits) {
    // A check naming a slug outside the catalog is a programming error caught by the
    // registry test; in production it is skipped rather than panicking.
    if let Some(detector) = detector_id(finding.detector()) {
        hits.record_code(detector, finding.reason, finding.score, decoded, field);
    }
}

/// Runs the checks without the memo: for texts that live only for one call.
fn record(input: &Input<'_>, field: usize, hits: &mut Hits) {
    syntax::for_each_finding(input, |finding| keep(&finding, input.decoded, field, hits));
}

#[cfg(test)]
mod tests {
    use crate::detectors::detector_id;
    use crate::fields::{FieldKind, Fields};
    use crate::patterns::Hits;
    use crate::views::Views;

    /// The replay is keyed by everything a check reads: the same text under a name that makes
    /// it an include payload is inspected, not given the findings of the harmless name, and a
    /// repeated attack is found in its own field when the first copy is not.
    #[test]
    fn repeats_replay_only_the_same_input() {
        let url = "https://cdn.example.org/x.jpg";
        let mut fields = Fields::default();
        fields.push(FieldKind::QueryValue, "q", url);
        fields.push(FieldKind::QueryValue, "q", url);
        fields.push(FieldKind::QueryValue, "template", url);
        fields.push(FieldKind::QueryValue, "template", url);
        let views = Views::build(&fields);
        let mut hits = Hits::at_level(1);
        super::inspect_fields(&fields, &views, "GET", &mut hits);
        let traversal = detector_id("path-traversal").expect("catalog detector");
        assert_eq!(hits.best[traversal].map(|h| h.field), Some(2));
    }

    /// Two distinct texts whose hashes share a slot both replay: the second probes on to a
    /// free slot instead of being inspected again at every repeat.
    #[test]
    fn colliding_texts_both_replay() {
        fn input(text: &str) -> syntax::Input<'_> {
            syntax::Input { place: syntax::Place::BodyValue, name: "tags", ..syntax::Input::new(text) }
        }
        let texts: Vec<String> = (0..1000).map(|i| format!("tag{i}")).collect();
        let first = texts[0].as_str();
        let other = texts[1..]
            .iter()
            .map(String::as_str)
            .find(|t| super::slot_of(&input(t)) == super::slot_of(&input(first)))
            .expect("a collision");
        let mut seen = super::Seen::default();
        let mut hits = Hits::at_level(1);
        for text in [first, other, other, first, other] {
            seen.record(&input(text), 0, &mut hits);
        }
        assert_eq!(seen.inputs.len(), 2, "both texts are remembered");
        let slots = seen.slots.0.iter().filter(|&&s| s != 0).count();
        assert_eq!(slots, 2);
    }

    /// Every registered check scores for a detector of the catalog, and every reason names it.
    #[test]
    fn every_check_names_a_catalog_detector() {
        for check in syntax::checks() {
            assert!(detector_id(check.detector()).is_some(), "unknown detector `{}`", check.detector());
        }
    }
}
