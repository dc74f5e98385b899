//! What an operator's policy scope takes out of scoring for one request: whole detectors, rule
//! ids, either everywhere or only in one named field (a query or body parameter, a header, a
//! cookie). A scope is resolved against the request's parsed fields once ([`Excluded`]); the
//! pattern stage then drops matching hits as they are recorded, so an excluded rule's hit
//! cannot hide the next-best hit of the same detector, and a model never reads a field its
//! detector is excluded from.

use crate::detectors::{DetectorId, DETECTORS};
use crate::fields::{FieldKind, Fields};

/// The scoring part of a policy scope. `Default` changes nothing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScoringScope {
    /// Replaces the engine's sensitivity level (1 to 4).
    pub sensitivity: Option<u8>,
    /// Replaces the engine's threshold where it decides whether models still need to run
    /// (a pattern hit above it skips them).
    pub threshold: Option<f32>,
    pub exclusions: Vec<Exclusion>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Exclusion {
    pub target: Target,
    /// None: everywhere in the request.
    pub field: Option<FieldRef>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    Detector(DetectorId),
    /// A rule id as in scoring/rules/*.toml.
    Rule(String),
}

/// Which part of the request a field selector names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldPart {
    Query,
    /// A form, multipart or JSON body key (JSON: the leaf's own key; the parser keeps no path).
    Body,
    Header,
    Cookie,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FieldRef {
    pub part: FieldPart,
    /// Header names compare case-insensitively, the others exactly.
    pub name: String,
}

impl FieldRef {
    fn matches(&self, kind: FieldKind, name: &str) -> bool {
        let part = match kind {
            FieldKind::QueryName | FieldKind::QueryValue => FieldPart::Query,
            FieldKind::BodyKey | FieldKind::BodyValue => FieldPart::Body,
            FieldKind::Header => FieldPart::Header,
            FieldKind::Cookie => FieldPart::Cookie,
            _ => return false,
        };
        part == self.part && if part == FieldPart::Header { name.eq_ignore_ascii_case(&self.name) } else { name == self.name }
    }
}

/// A scope resolved against one request's fields: what the pattern stage and the models skip.
#[derive(Clone, Debug, Default)]
pub struct Excluded {
    everywhere: Vec<Target>,
    /// (field index, what is excluded there)
    in_fields: Vec<(usize, Target)>,
}

impl Excluded {
    pub fn resolve(scope: &ScoringScope, fields: &Fields) -> Self {
        let mut excluded = Excluded::default();
        for exclusion in &scope.exclusions {
            match &exclusion.field {
                None => excluded.everywhere.push(exclusion.target.clone()),
                Some(selector) => {
                    for (idx, field) in fields.iter().enumerate() {
                        if selector.matches(field.kind, field.name) {
                            excluded.in_fields.push((idx, exclusion.target.clone()));
                        }
                    }
                }
            }
        }
        excluded
    }

    pub fn is_empty(&self) -> bool {
        self.everywhere.is_empty() && self.in_fields.is_empty()
    }

    /// True when a hit of `detector` (by rule `rule_id`, or a code detector when None) in
    /// field `field` must not count.
    pub fn skips(&self, detector: DetectorId, rule_id: Option<&str>, field: usize) -> bool {
        let hits = |target: &Target| match target {
            Target::Detector(d) => *d == detector,
            Target::Rule(id) => rule_id == Some(id.as_str()),
        };
        self.everywhere.iter().any(hits) || self.in_fields.iter().any(|(f, target)| *f == field && hits(target))
    }
}

/// A detector's id by slug, for policy files; the error lists the known slugs.
pub fn detector_by_slug(slug: &str) -> Result<DetectorId, String> {
    crate::detectors::detector_id(slug).ok_or_else(|| {
        let known: Vec<&str> = DETECTORS.iter().map(|d| d.slug).collect();
        format!("`{slug}` is not a detector; known: {}", known.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detectors::{SQLI, XSS};

    #[test]
    fn field_exclusions_apply_to_that_field_only() {
        let mut fields = Fields::default();
        fields.push(FieldKind::QueryValue, "q", "<script>");
        fields.push(FieldKind::QueryValue, "name", "<script>");
        fields.push(FieldKind::Header, "x-note", "<script>");
        let scope = ScoringScope {
            exclusions: vec![
                Exclusion { target: Target::Rule("xss-1".into()), field: Some(FieldRef { part: FieldPart::Query, name: "q".into() }) },
                Exclusion { target: Target::Detector(SQLI), field: Some(FieldRef { part: FieldPart::Header, name: "X-Note".into() }) },
            ],
            ..Default::default()
        };
        let excluded = Excluded::resolve(&scope, &fields);
        assert!(excluded.skips(XSS, Some("xss-1"), 0));
        assert!(!excluded.skips(XSS, Some("xss-2"), 0), "another rule in the same field still counts");
        assert!(!excluded.skips(XSS, Some("xss-1"), 1), "the same rule in another parameter still counts");
        assert!(excluded.skips(SQLI, None, 2));
    }
}
