//! The verdict as headers (X-Waf-*) and the block body: the same on every front end — the
//! proxy's forwarded request, the auth adapter's answer to nginx, ext_proc's header mutation.

use hyper::header::{HeaderName, HeaderValue};
use hyper::HeaderMap;
use serde::Serialize;

use crate::decision::WafMode;
use crate::decision::{Action, Decision};
use crate::errors::SCORING_INCOMPLETE;
use crate::scorer::{ScoreError, Verdict};

/// Spec 2.9: the block body never carries the score or the reason.
#[derive(Serialize)]
pub struct BlockBody {
    pub error: &'static str,
    pub detail: &'static str,
}

impl BlockBody {
    pub fn json(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }
}

pub const BLOCK_BODY: BlockBody = BlockBody { error: "forbidden", detail: "This request was blocked by the web application firewall." };

pub fn block_body_json() -> Vec<u8> {
    BLOCK_BODY.json()
}

/// The refusal of a request that could not be inspected in full (fail-closed): the block
/// body's shape, with its own code.
pub const UNAVAILABLE_BODY: BlockBody =
    BlockBody { error: "scoring_unavailable", detail: "the request could not be inspected in full and the firewall fails closed" };

/// Four decimals, as spec 4.1 shows scores in headers.
pub fn format_score(score: f32) -> String {
    format!("{score:.4}")
}

/// `(name, value)` pairs describing a verdict; names are lower-case.
pub fn verdict_headers(verdict: &Result<Verdict, ScoreError>, decision: Decision, mode: WafMode) -> Vec<(&'static str, String)> {
    let mut pairs = vec![("x-waf-mode", mode.as_str().to_string())];
    match verdict {
        Ok(v) => {
            pairs.push(("x-waf-score", format_score(v.score)));
            pairs.push(("x-waf-reason", header_text(&v.reason)));
            if v.incomplete.is_some() && decision.action == Action::Error {
                pairs.push(("x-waf-error", SCORING_INCOMPLETE.to_string()));
            }
            if let Some(partial) = &v.partial {
                pairs.push(("x-waf-partial", header_text(partial)));
            }
        }
        Err(err) => pairs.push(("x-waf-error", err.waf_error().to_string())),
    }
    if decision.would_have_killed() {
        pairs.push(("x-waf-would-have-killed", "true".to_string()));
    }
    pairs
}

/// Replaces every X-Waf-* header in `headers` with the verdict's: whatever a client sent under
/// those names is dropped first, so an attacker cannot pre-stamp a request as clean.
pub fn stamp(headers: &mut HeaderMap, pairs: &[(&'static str, String)]) {
    let forged: Vec<HeaderName> = headers.keys().filter(|n| n.as_str().starts_with("x-waf-")).cloned().collect();
    for name in forged {
        headers.remove(name);
    }
    for (name, value) in pairs {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.insert(*name, value);
        }
    }
}

/// Reasons are ASCII by construction; anything else is replaced rather than dropped.
fn header_text(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_graphic() || c == ' ' { c } else { '?' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::Effect;

    #[test]
    fn client_cannot_forge_the_verdict_headers() {
        let mut headers = HeaderMap::new();
        headers.insert("x-waf-score", "0.0000".parse().unwrap());
        headers.insert("x-waf-would-have-killed", "false".parse().unwrap());
        let verdict = Ok(Verdict {
            score: 0.97,
            reason: "sqli:union".into(),
            detector: "sqli".into(),
            incomplete: None,
            partial: None,
            ..Default::default()
        });
        let decision = Decision { action: Action::ShadowKill, effect: Effect::Forward, cause: None };
        stamp(&mut headers, &verdict_headers(&verdict, decision, WafMode::Shadow));
        assert_eq!(headers["x-waf-score"], "0.9700");
        assert_eq!(headers["x-waf-reason"], "sqli:union");
        assert_eq!(headers["x-waf-mode"], "shadow");
        assert_eq!(headers["x-waf-would-have-killed"], "true");
        let passed = Decision { action: Action::Passed, effect: Effect::Forward, cause: None };
        stamp(&mut headers, &verdict_headers(&verdict, passed, WafMode::Active));
        assert!(!headers.contains_key("x-waf-would-have-killed"));
    }
}
