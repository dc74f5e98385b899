//! The code-detector stage: every check of the `syntax` crate on each field's plain text, its
//! decoded text and the text of its base64 segments (an Overflow chunk line by line, each line
//! as the field it was). Runs after the pattern scans, before the
//! models; its findings join the pattern hits, so a code finding above the threshold skips the
//! models like a rule would.

use syntax::{ByteSet, Input, Place};

use crate::detectors::detector_id;
use crate::fields::{FieldKind, Fields};
use crate::patterns::Hits;
use crate::views::Views;

/// Runs every check on every field of one request and records what they find in `hits`
/// (at `hits.sensitivity`).
pub fn inspect_fields(fields: &Fields, views: &Views, method: &str, hits: &mut Hits) {
    let mut decoded_line = String::new();
    for (idx, field) in fields.iter().enumerate() {
        let place = place_of(field.kind);
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
        record(&input, idx, hits);
        // A decoded text equal to the plain one (a comment marker made the view keep it)
        // gives the same findings, which the plain input already recorded and which win ties.
        if let Some(Some(decoded)) = views.decoded_fields.get(idx).filter(|d| d.as_deref() != Some(field.value)) {
            input.text = decoded;
            input.bytes = ByteSet::of(decoded);
            input.decoded = true;
            record(&input, idx, hits);
        }
    }
    for (idx, text) in &views.base64_texts {
        let Some(field) = fields.get(*idx) else { continue };
        let input = Input {
            text,
            place: place_of(FieldKind::Base64),
            name: field.name,
            method,
            bytes: ByteSet::of(text),
            decoded: true,
            sensitivity: hits.sensitivity,
        };
        record(&input, *idx, hits);
    }
}

fn record(input: &Input<'_>, field: usize, hits: &mut Hits) {
    syntax::for_each_finding(input, |finding| {
        // A check naming a slug outside the catalog is a programming error caught by the
        // registry test; in production it is skipped rather than panicking.
        if let Some(detector) = detector_id(finding.detector()) {
            hits.record_code(detector, finding.reason, finding.score, input.decoded, field);
        }
    });
}

fn place_of(kind: FieldKind) -> Place {
    match kind {
        FieldKind::Path => Place::Path,
        FieldKind::QueryName => Place::QueryName,
        FieldKind::QueryValue => Place::QueryValue,
        FieldKind::BodyKey => Place::BodyKey,
        FieldKind::BodyValue => Place::BodyValue,
        FieldKind::BodyRaw => Place::BodyRaw,
        FieldKind::XmlDoctype => Place::XmlDoctype,
        FieldKind::Header => Place::Header,
        FieldKind::Cookie => Place::Cookie,
        FieldKind::Base64 => Place::Base64,
        FieldKind::Overflow => Place::Overflow,
    }
}

#[cfg(test)]
mod tests {
    use crate::detectors::detector_id;

    /// Every registered check scores for a detector of the catalog, and every reason names it.
    #[test]
    fn every_check_names_a_catalog_detector() {
        for check in syntax::checks() {
            assert!(detector_id(check.detector()).is_some(), "unknown detector `{}`", check.detector());
        }
    }
}
