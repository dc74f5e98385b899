//! Request-level checks: findings no single field shows, decided over the request as a whole
//! after the per-field code stage. Framing headers read together (request smuggling:
//! `syntax::framing`), and GraphQL documents batched across fields (a JSON array of
//! `{"query": ...}` objects runs every element, so their operations add up).
//!
//! Framing reads the headers as received, not the fields: an exempt `Content-Length: 5` is
//! no field (`headers::scored_value`), yet it is half of a `Transfer-Encoding` + `Content-Length`
//! pair.

use crate::detectors::detector_id;
use crate::fields::{FieldKind, Fields};
use crate::patterns::Hits;
use crate::request::ScoreInput;

/// Records the request-level findings of `input` (parsed into `fields`) in `hits`.
pub fn inspect_request(input: &ScoreInput<'_>, fields: &Fields, hits: &mut Hits) {
    let headers = input.headers.iter().map(|(name, value)| (name.as_str(), value.as_str()));
    if let Some(finding) = syntax::framing::framing_anomaly(headers, hits.sensitivity) {
        record(finding, first_header(fields), hits);
    }
    if let Some((finding, field)) = batched_graphql(fields, hits.sensitivity) {
        record(finding, field, hits);
    }
}

fn record(finding: syntax::Finding, field: usize, hits: &mut Hits) {
    if let Some(detector) = detector_id(finding.detector()) {
        hits.record_code(detector, finding.reason, finding.score, false, field);
    }
}

/// The field a framing finding points at: the first header field (framing headers are often
/// exempt and have none), else the first field.
fn first_header(fields: &Fields) -> usize {
    fields.iter().position(|f| f.kind == FieldKind::Header).unwrap_or(0)
}

/// More GraphQL operations across the request's `query` values (JSON keys, form or query
/// parameters) than one document may hold; the field of the last document counted.
fn batched_graphql(fields: &Fields, sensitivity: u8) -> Option<(syntax::Finding, usize)> {
    let mut documents = 0u32;
    let mut operations = 0u32;
    let mut last = 0usize;
    for (idx, field) in fields.iter().enumerate() {
        let holds_document = matches!(field.kind, FieldKind::BodyValue | FieldKind::QueryValue) && field.name == "query";
        if !holds_document {
            continue;
        }
        if let Some(count) = syntax::graphql::operation_count(field.value) {
            documents += 1;
            // An anonymous `{ ... }` document is one operation.
            operations = operations.saturating_add(count.max(1));
            last = idx;
        }
    }
    let batched = documents > 1 && operations > syntax::graphql::MAX_BATCHED_OPERATIONS;
    let finding = syntax::Finding { reason: "graphql:batched-operations", score: 0.95, level: 1 };
    (batched && finding.level <= sensitivity).then_some((finding, last))
}
