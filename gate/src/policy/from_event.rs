//! An exclusion proposed from a logged event (`POST /api/exclusions`): the event's route and
//! method become a scope, its rule (from the reason, `xss:script-tag`) or its detector (a
//! model's verdict, `sqli:model`) the exclusion, limited to the field the operator names. The
//! proposal is TOML appended to the policy file, so the operator's comments stay as they are.

use super::{Baseline, FieldSelector, PolicySet};

/// What an event says about the request it describes.
pub struct EventFacts<'a> {
    pub request_id: &'a str,
    pub method: &'a str,
    pub path: &'a str,
    pub detector: &'a str,
    pub reason: &'a str,
}

impl<'a> EventFacts<'a> {
    pub fn of(event: &'a serde_json::Value) -> Option<Self> {
        let text = |key: &str| event.get(key).and_then(|v| v.as_str());
        Some(EventFacts {
            request_id: text("request_id")?,
            method: text("method")?,
            path: text("path")?,
            detector: text("detector").unwrap_or(""),
            reason: text("reason").unwrap_or(""),
        })
    }
}

/// The scope to append for `event`, excluding in `field` (None: the whole route); checked by
/// parsing `current` (the file as it is) with the proposal appended.
pub fn propose(event: &EventFacts<'_>, field: Option<&str>, current: &str, baseline: Baseline) -> Result<String, String> {
    let (detector, rule) = event.reason.split_once(':').ok_or_else(|| {
        format!("event {} was not decided by a detector rule (reason `{}`): nothing to exclude", event.request_id, event.reason)
    })?;
    let rule = rule.trim_end_matches(" (decoded)");
    let target = if rule == "model" || rule.contains(':') || rule.contains(' ') {
        // A model's verdict (or a fallback's): the detector is what can be excluded.
        format!("detector = {}", quoted(if event.detector.is_empty() { detector } else { event.detector }))
    } else {
        format!("rule = {}", quoted(rule))
    };
    if event.path.contains('*') {
        return Err(format!("the event's path `{}` holds `*`: write this exclusion by hand", event.path));
    }
    let field = match field {
        Some(f) => {
            FieldSelector::try_from(f.to_string())?;
            format!(", field = {}", quoted(f))
        }
        None => String::new(),
    };
    let id = event.request_id;
    let proposal = format!(
        "\n# Added by POST /api/exclusions from event {id}.\n[[scope]]\nname = {}\npath = {}\nmethods = [{}]\nexclusions = [{{ {target}{field}, note = {} }}]\n",
        quoted(&format!("event-{id}")),
        quoted(event.path),
        quoted(event.method),
        quoted(&format!("from event {id}")),
    );
    PolicySet::parse(&format!("{current}{proposal}"), baseline).map_err(|e| format!("the proposal does not fit the policy file: {e}"))?;
    Ok(proposal)
}

/// A TOML basic string.
fn quoted(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_in_a_field_from_an_event() {
        let event =
            serde_json::json!({"request_id": "ab12", "method": "GET", "path": "/search", "detector": "xss", "reason": "xss:script-tag"});
        let facts = EventFacts::of(&event).unwrap();
        let baseline = Baseline { threshold: 0.5, fail: crate::decision::Policy::default() };
        let text = propose(&facts, Some("query:q"), "[defaults]\n", baseline).unwrap();
        assert!(text.contains("rule = \"script-tag\", field = \"query:q\""), "{text}");
        let set = PolicySet::parse(&format!("[defaults]\n{text}"), baseline).unwrap();
        assert_eq!(set.resolve("", "GET", "/search").exclusions.len(), 1);
        assert!(propose(&facts, Some("nope"), "", baseline).is_err());
        let model = serde_json::json!({"request_id": "c", "method": "POST", "path": "/a", "detector": "sqli", "reason": "sqli:model"});
        assert!(propose(&EventFacts::of(&model).unwrap(), None, "", baseline).unwrap().contains("detector = \"sqli\""));
    }
}
