//! Score results (spec 2.2 and 2.3) as the engine returns them.

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::detectors::{DetectorId, DETECTORS};
use crate::fields::{Field, FieldKind, Fields};
use crate::model::ModelError;

/// Spec 2.2: one detector's score and reason.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct DetectorScore {
    pub score: f32,
    pub reason: String,
}

/// Spec 2.3 plus what callers need to decide fail-open/closed.
#[derive(Clone, Debug)]
pub struct ScoreAll {
    pub score: f32,
    /// Reason of the winning detector; empty when the request is clean.
    pub reason: String,
    /// Slug of the detector with the maximum score; empty when every score is 0.
    pub detector: &'static str,
    pub breakdown: Breakdown,
    /// True when model detectors were skipped because a pattern already crossed the threshold.
    pub models_skipped: bool,
    /// A model that should have run could not (still loading, queue full...). Pattern results
    /// are still valid; callers decide whether that counts as a scoring failure.
    pub model_error: Option<ModelError>,
    /// Work bounds that were hit while scoring (slugs such as `arena-cap`, `decode-rounds`,
    /// `model-budget:sqli`): some bytes were not scored in full, so a low score is not a pass.
    /// Empty when everything was scored. Policy (WAF_ON_PARTIAL) decides what a partial
    /// verdict means.
    pub partial: Vec<String>,
    /// The detectors that scored above 0, best first (at most [`TOP_EVIDENCE`]): what each
    /// matched and where, for the audit log. Empty for a clean request (nothing allocated).
    pub evidence: Vec<Evidence>,
}

/// How many detectors a verdict's evidence lists.
pub const TOP_EVIDENCE: usize = 3;

/// One detector's best finding: its score, its reason (`xss:script-tag`) and the field it
/// matched in, written as a policy field selector (`query:q`, `body:name`, `header:referer`,
/// `cookie:id`, `path`), so an exclusion can be made from it as it stands.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Evidence {
    pub detector: String,
    pub score: f32,
    pub reason: String,
    /// None when the finding has no single field (a model over several, a request check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// Where a field sits, as a selector. Query names and values are both `query:NAME`, body keys
/// and values (form, multipart, JSON leaves: the parser keeps each leaf's own key)
/// `body:NAME`; an unstructured body is `body`, text recovered from base64 `base64:NAME`.
pub fn field_location(field: Field<'_>) -> String {
    let part = match field.kind {
        FieldKind::Path => return "path".into(),
        FieldKind::BodyRaw => return "body".into(),
        FieldKind::XmlDoctype => return "xml-doctype".into(),
        FieldKind::Overflow => return "overflow".into(),
        FieldKind::QueryName | FieldKind::QueryValue => "query",
        FieldKind::BodyKey | FieldKind::BodyValue => "body",
        FieldKind::Header => "header",
        FieldKind::Cookie => "cookie",
        FieldKind::Base64 => "base64",
    };
    format!("{part}:{}", field.name)
}

/// The evidence of the detectors that scored, best first: `reasons` and `fields` (a field
/// index per detector, when its finding had one) are indexed by detector.
pub fn top_evidence(breakdown: &Breakdown, reasons: &[String], fields: &[Option<usize>], request: &Fields) -> Vec<Evidence> {
    let mut scored: Vec<DetectorId> = (0..DETECTORS.len()).filter(|&id| breakdown.0[id] > 0.0).collect();
    if scored.is_empty() {
        return Vec::new();
    }
    scored.sort_by(|a, b| breakdown.0[*b].total_cmp(&breakdown.0[*a]));
    scored.truncate(TOP_EVIDENCE);
    scored
        .into_iter()
        .map(|id| Evidence {
            detector: DETECTORS[id].slug.to_string(),
            score: breakdown.0[id],
            reason: reasons[id].clone(),
            field: fields[id].and_then(|f| request.get(f)).map(field_location),
        })
        .collect()
}

/// Per-detector scores in catalog order; serialises as `{slug: score}`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Breakdown(pub [f32; DETECTORS.len()]);

impl Breakdown {
    pub fn get(&self, detector: DetectorId) -> f32 {
        self.0[detector]
    }
}

impl Serialize for Breakdown {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(DETECTORS.len()))?;
        for (d, score) in DETECTORS.iter().zip(self.0.iter()) {
            map.serialize_entry(d.slug, &round4(*score))?;
        }
        map.end()
    }
}

impl Serialize for ScoreAll {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("score", &round4(self.score))?;
        map.serialize_entry("reason", &self.reason)?;
        map.serialize_entry("detector", self.detector)?;
        map.serialize_entry("breakdown", &self.breakdown)?;
        // Beyond the spec's four keys, only when something was not scored in full: the
        // remote scorer carries it into the verdict so policy sees it on every front door.
        if !self.partial.is_empty() {
            map.serialize_entry("partial", &self.partial.join(","))?;
        }
        // Likewise the evidence, only when a detector scored: the remote scorer carries the
        // matched fields into the front door's events.
        if !self.evidence.is_empty() {
            map.serialize_entry("evidence", &self.evidence)?;
        }
        map.end()
    }
}

/// Scores travel as f32 internally; four decimals is what the spec's headers show and it
/// keeps JSON free of `0.949999988079071`.
pub fn round4(score: f32) -> f64 {
    (score as f64 * 10_000.0).round() / 10_000.0
}
