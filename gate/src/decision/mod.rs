//! The one place that turns a score into an action. Every front end (proxy, auth adapter,
//! ext_proc) asks here, so fail-open versus fail-closed and shadow versus active mean the same
//! thing everywhere; each front end only chooses how a kill looks on its protocol.

mod settings;

pub use settings::{FailMode, KillResponse, OversizeBody, PartialPolicy, WafMode};

use crate::scorer::{ScoreError, Verdict};

/// The action recorded for a request (spec 2.1 and the `waf_requests_total` label).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Passed,
    ShadowKill,
    ActiveKill,
    Error,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Passed => "passed",
            Action::ShadowKill => "shadow_kill",
            Action::ActiveKill => "active_kill",
            Action::Error => "error",
        }
    }
}

/// What happens to the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    Forward,
    Kill,
    /// Fail-closed: the request could not be scored and is refused (503; the auth adapter 403).
    Refuse,
}

/// Why a decision is not simply the score against the threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// No verdict at all (inference unreachable, timed out, bad answer): WAF_ON_SCORING_ERROR.
    ScoringError,
    /// A model's opinion is missing (loading, overloaded, past the deadline): WAF_ON_MODEL_MISSING.
    ModelMissing,
    /// Some bytes were not scored in full: WAF_ON_PARTIAL.
    Partial,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub action: Action,
    pub effect: Effect,
    /// Set when a policy, not the score alone, decided.
    pub cause: Option<Cause>,
}

impl Decision {
    pub fn would_have_killed(&self) -> bool {
        self.action == Action::ShadowKill
    }

    /// The event reason a policy decision gets instead of the detector's: `model-missing`,
    /// `partial:<slugs>`; None when the score decided (or a scoring error, which has its own).
    pub fn policy_reason(&self, verdict: &Verdict) -> Option<String> {
        match self.cause? {
            Cause::ModelMissing => Some("model-missing".to_string()),
            Cause::Partial if self.action != Action::Passed => Some(format!("partial:{}", verdict.partial.as_deref().unwrap_or(""))),
            _ => None,
        }
    }
}

/// How a front door treats verdicts that are not whole. The proxy reads all three from its
/// settings; the auth adapter and ext_proc always fail open on a scoring error (spec 4.3
/// rule 1: Envoy's failure_mode_allow or nginx decides that) but share the other two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    pub on_scoring_error: FailMode,
    pub on_model_missing: FailMode,
    pub on_partial: PartialPolicy,
}

impl Default for Policy {
    /// The defaults of the settings: fail open on an unreachable scorer, closed on a missing
    /// model, block a partial verdict.
    fn default() -> Self {
        Policy { on_scoring_error: FailMode::Open, on_model_missing: FailMode::Closed, on_partial: PartialPolicy::Block }
    }
}

/// Over threshold means strictly above it (spec 1.3). A kill on a pattern verdict is sound
/// even when a model is missing or the verdict is partial; a pass on either is not a pass:
/// the policy decides.
pub fn decide(mode: WafMode, threshold: f32, policy: &Policy, verdict: &Result<Verdict, ScoreError>) -> Decision {
    let v = match verdict {
        Ok(v) => v,
        Err(_) => return fail(mode, policy.on_scoring_error, Cause::ScoringError),
    };
    if v.score > threshold {
        return kill(mode, None);
    }
    if v.partial.is_some() && policy.on_partial == PartialPolicy::Block {
        return kill(mode, Some(Cause::Partial));
    }
    if v.incomplete.is_some() {
        return fail(mode, policy.on_model_missing, Cause::ModelMissing);
    }
    let cause = v.partial.is_some().then_some(Cause::Partial);
    Decision { action: Action::Passed, effect: Effect::Forward, cause }
}

fn kill(mode: WafMode, cause: Option<Cause>) -> Decision {
    match mode {
        WafMode::Shadow => Decision { action: Action::ShadowKill, effect: Effect::Forward, cause },
        WafMode::Active => Decision { action: Action::ActiveKill, effect: Effect::Kill, cause },
    }
}

fn fail(mode: WafMode, fail_mode: FailMode, cause: Cause) -> Decision {
    let effect = match (mode, fail_mode) {
        (WafMode::Active, FailMode::Closed) => Effect::Refuse,
        _ => Effect::Forward,
    };
    Decision { action: Action::Error, effect, cause: Some(cause) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(score: f32, incomplete: bool, partial: bool) -> Result<Verdict, ScoreError> {
        Ok(Verdict {
            score,
            reason: String::new(),
            detector: String::new(),
            incomplete: incomplete.then(|| "model-loading".to_string()),
            partial: partial.then(|| "arena-cap".to_string()),
            ..Default::default()
        })
    }

    fn policy(on_scoring_error: FailMode, on_model_missing: FailMode, on_partial: PartialPolicy) -> Policy {
        Policy { on_scoring_error, on_model_missing, on_partial }
    }

    #[test]
    fn table() {
        use Action::*;
        use Effect::*;
        use FailMode::{Closed, Open};
        use PartialPolicy::{Block, Pass};
        let down = || -> Result<Verdict, ScoreError> { Err(ScoreError::Unreachable("refused".into())) };
        let cases = [
            (WafMode::Shadow, policy(Open, Open, Pass), verdict(0.2, false, false), Passed, Forward, None),
            (WafMode::Active, policy(Open, Open, Pass), verdict(0.5, false, false), Passed, Forward, None),
            (WafMode::Shadow, policy(Open, Open, Pass), verdict(0.51, false, false), ShadowKill, Forward, None),
            (WafMode::Active, policy(Open, Open, Pass), verdict(0.51, false, false), ActiveKill, Kill, None),
            (WafMode::Active, policy(Closed, Closed, Pass), verdict(0.95, true, false), ActiveKill, Kill, None),
            // A missing model follows WAF_ON_MODEL_MISSING, not WAF_ON_SCORING_ERROR.
            (WafMode::Active, policy(Open, Closed, Pass), verdict(0.1, true, false), Error, Refuse, Some(Cause::ModelMissing)),
            (WafMode::Active, policy(Closed, Open, Pass), verdict(0.1, true, false), Error, Forward, Some(Cause::ModelMissing)),
            (WafMode::Shadow, policy(Open, Closed, Pass), verdict(0.1, true, false), Error, Forward, Some(Cause::ModelMissing)),
            // Partial verdicts follow WAF_ON_PARTIAL, like an oversize body.
            (WafMode::Active, policy(Open, Open, Block), verdict(0.1, false, true), ActiveKill, Kill, Some(Cause::Partial)),
            (WafMode::Shadow, policy(Open, Open, Block), verdict(0.1, false, true), ShadowKill, Forward, Some(Cause::Partial)),
            (WafMode::Active, policy(Open, Open, Pass), verdict(0.1, false, true), Passed, Forward, Some(Cause::Partial)),
            (WafMode::Active, policy(Open, Closed, Pass), verdict(0.1, true, true), Error, Refuse, Some(Cause::ModelMissing)),
            (WafMode::Shadow, policy(Closed, Closed, Block), down(), Error, Forward, Some(Cause::ScoringError)),
            (WafMode::Active, policy(Open, Closed, Block), down(), Error, Forward, Some(Cause::ScoringError)),
            (WafMode::Active, policy(Closed, Open, Pass), down(), Error, Refuse, Some(Cause::ScoringError)),
        ];
        for (mode, policy, v, action, effect, cause) in cases {
            let d = decide(mode, 0.5, &policy, &v);
            assert_eq!((d.action, d.effect, d.cause), (action, effect, cause), "{mode:?} {policy:?} {v:?}");
        }
    }

    #[test]
    fn policy_reasons_name_what_decided() {
        let v = verdict(0.1, true, true).unwrap();
        let d = decide(WafMode::Active, 0.5, &Policy::default(), &Ok(v.clone()));
        assert_eq!(d.policy_reason(&v).as_deref(), Some("partial:arena-cap"));
        let v = verdict(0.1, true, false).unwrap();
        let d = decide(WafMode::Active, 0.5, &Policy::default(), &Ok(v.clone()));
        assert_eq!(d.policy_reason(&v).as_deref(), Some("model-missing"));
        assert_eq!(d.effect, Effect::Refuse, "a missing model is refused by default");
    }
}
