//! The audit log's account of what matched (docs/AUDIT.md): the rule id behind a reason, and
//! the verdict's top detectors with the field each matched in, capped like every event field.

use serde::Serialize;

use super::caps;
use crate::scorer::Verdict;

/// One of the detectors that scored, best first.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TopDetector {
    pub detector: String,
    pub score: f64,
    /// The rule id (`script-tag`, a custom rule's id); empty for a model's verdict.
    pub rule: String,
    /// Where it matched, as a policy field selector (`query:q`); empty when not one field.
    pub field: String,
}

/// The rule id in a reason: `xss:script-tag` -> `script-tag`, `sqli:fallback:or-true
/// (decoded)` -> `or-true`; None for a model's verdict (`sqli:model`) or a reason that names
/// no rule (`ip-deny`).
pub fn rule_id(reason: &str) -> Option<&str> {
    let (_, rest) = reason.split_once(':')?;
    let rest = rest.trim_end_matches(" (decoded)");
    let rest = rest.strip_prefix("fallback:").unwrap_or(rest);
    (rest != "model" && !rest.is_empty() && !rest.contains([':', ' '])).then_some(rest)
}

/// The verdict's top detectors, each text field capped (names of cut fields go to `truncated`).
pub fn top_detectors(verdict: &Verdict, truncated: &mut Vec<&'static str>) -> Vec<TopDetector> {
    let mut cut = false;
    let mut cap = |text: &str, limit: usize| {
        let (text, was_cut) = caps::cap(text, limit);
        cut |= was_cut;
        text
    };
    let top = verdict
        .evidence
        .iter()
        .take(scoring::verdict::TOP_EVIDENCE)
        .map(|e| TopDetector {
            detector: cap(&e.detector, caps::DETECTOR),
            score: scoring::verdict::round4(e.score),
            rule: cap(rule_id(&e.reason).unwrap_or(""), caps::RULE),
            field: cap(e.field.as_deref().unwrap_or(""), caps::FIELD),
        })
        .collect();
    if cut {
        truncated.push("top_detectors");
    }
    top
}

/// The field the deciding detector matched in: the evidence of the verdict's detector.
pub fn matched_field(verdict: &Verdict) -> &str {
    verdict.evidence.iter().find(|e| e.detector == verdict.detector).and_then(|e| e.field.as_deref()).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_from_reasons() {
        assert_eq!(rule_id("xss:script-tag"), Some("script-tag"));
        assert_eq!(rule_id("xss:script-tag (decoded)"), Some("script-tag"));
        assert_eq!(rule_id("sqli:fallback:or-true"), Some("or-true"));
        assert_eq!(rule_id("custom:cve-2024-1"), Some("cve-2024-1"));
        assert_eq!(rule_id("sqli:model"), None);
        assert_eq!(rule_id("ip-deny"), None);
    }
}
