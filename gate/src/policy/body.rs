//! A scope's request-body settings: how many bytes a door buffers and scores (`body_limit`) and
//! what a body longer than that does (`oversize_body`). Resolved from the method, host and path
//! before the body is read, so the door reads exactly the scope's limit. The words are the
//! flag's (WAF_OVERSIZE_BODY) plus `partial`, which hands the decision to `on_partial`.

use serde::Deserialize;

use crate::decision::OversizeBody;
use crate::scorer::{ScoreQuery, Verdict};

/// The most a scope may buffer per request: the flag's own ceiling (WAF_BODY_LIMIT_BYTES).
pub const MAX_BODY_LIMIT: u64 = 64 << 20;

/// The partial slug of a body whose tail was not scored.
pub const OVERSIZE_PARTIAL: &str = "body-limit";

/// What a body longer than the scope's limit does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Oversize {
    /// Score the first `body_limit` bytes and forward the whole body (the flag's default).
    ScorePrefix,
    /// An attack verdict, reason `body-limit:exceeded`.
    Block,
    /// The verdict is partial (`body-limit`): the scope's `on_partial` blocks it or passes it
    /// marked `X-Waf-Partial`.
    Partial,
}

impl Oversize {
    pub fn as_str(self) -> &'static str {
        match self {
            Oversize::ScorePrefix => "score-prefix",
            Oversize::Block => "block",
            Oversize::Partial => "partial",
        }
    }
}

impl From<OversizeBody> for Oversize {
    fn from(flag: OversizeBody) -> Self {
        match flag {
            OversizeBody::ScorePrefix => Oversize::ScorePrefix,
            OversizeBody::Block => Oversize::Block,
            OversizeBody::Partial => Oversize::Partial,
        }
    }
}

/// The resolved body settings; None: the door's own (its flag, or nginx's / Envoy's buffering).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BodyRules {
    pub limit: Option<usize>,
    pub oversize: Option<Oversize>,
}

impl BodyRules {
    /// The bytes to buffer and score: the scope's limit, else the door's.
    pub fn limit_or(&self, door: usize) -> usize {
        self.limit.unwrap_or(door)
    }

    /// Applies the oversize behaviour to a request whose body was cut (`truncated`): a preset
    /// attack verdict, or a partial slug the gate's `on_partial` decides on. A body read whole
    /// is left alone.
    pub fn on_oversize(&self, door: Oversize, truncated: bool, scored: &mut ScoreQuery, preset: &mut Option<Verdict>) {
        if !truncated {
            return;
        }
        match self.oversize.unwrap_or(door) {
            Oversize::ScorePrefix => {}
            Oversize::Block => {
                preset.get_or_insert_with(|| Verdict {
                    score: 1.0,
                    reason: "body-limit:exceeded".into(),
                    detector: "body-limit".into(),
                    ..Default::default()
                });
            }
            Oversize::Partial => scored.partial.push(OVERSIZE_PARTIAL.into()),
        }
    }
}

/// `body_limit = 65536`: bytes, 1 to 64 MiB (the flag's range).
pub(super) fn body_limit<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let v = i64::deserialize(d)?;
    match u64::try_from(v) {
        Ok(bytes @ 1..=MAX_BODY_LIMIT) => Ok(Some(bytes)),
        _ => Err(serde::de::Error::custom(format!("body_limit {v} is outside 1 to {MAX_BODY_LIMIT} bytes"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oversize_follows_the_scope_then_the_door() {
        let cut = |rules: BodyRules, door: Oversize, truncated: bool| {
            let (mut scored, mut preset) = (ScoreQuery::default(), None);
            rules.on_oversize(door, truncated, &mut scored, &mut preset);
            (scored.partial, preset.map(|v| v.reason))
        };
        let none = BodyRules::default();
        assert_eq!(cut(none, Oversize::ScorePrefix, true), (vec![], None));
        assert_eq!(cut(none, Oversize::Block, true), (vec![], Some("body-limit:exceeded".to_string())));
        let partial = BodyRules { limit: Some(16), oversize: Some(Oversize::Partial) };
        assert_eq!(cut(partial, Oversize::Block, true), (vec!["body-limit".to_string()], None), "the scope overrides the door");
        assert_eq!(cut(partial, Oversize::Block, false), (vec![], None), "a body read whole is not oversize");
        assert_eq!((partial.limit_or(1 << 20), none.limit_or(1 << 20)), (16, 1 << 20));
        // The door's own flag can say `partial` too (WAF_OVERSIZE_BODY=partial).
        assert_eq!(cut(none, OversizeBody::Partial.into(), true), (vec!["body-limit".to_string()], None));
    }
}
