//! The one place that turns a score into an action. Every front end (proxy, auth adapter,
//! ext_proc) asks here, so fail-open versus fail-closed and shadow versus active mean the same
//! thing everywhere; each front end only chooses how a kill looks on its protocol.

use crate::config::{FailMode, WafMode};
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
    /// Fail-closed: the request could not be scored and is refused (503).
    Refuse,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub action: Action,
    pub effect: Effect,
}

impl Decision {
    pub fn would_have_killed(&self) -> bool {
        self.action == Action::ShadowKill
    }
}

/// Over threshold means strictly above it (spec 1.3). A verdict missing a model's opinion
/// is a scoring failure unless the patterns alone already cross the threshold: a kill on a
/// pattern verdict is sound, a pass on a partial one is not a pass.
pub fn decide(mode: WafMode, threshold: f32, on_error: FailMode, verdict: &Result<Verdict, ScoreError>) -> Decision {
    let failed = match verdict {
        Ok(v) if v.score > threshold => {
            return match mode {
                WafMode::Shadow => Decision { action: Action::ShadowKill, effect: Effect::Forward },
                WafMode::Active => Decision { action: Action::ActiveKill, effect: Effect::Kill },
            }
        }
        Ok(v) => v.incomplete.is_some(),
        Err(_) => true,
    };
    if !failed {
        return Decision { action: Action::Passed, effect: Effect::Forward };
    }
    let effect = match (mode, on_error) {
        (WafMode::Active, FailMode::Closed) => Effect::Refuse,
        _ => Effect::Forward,
    };
    Decision { action: Action::Error, effect }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(score: f32, incomplete: bool) -> Result<Verdict, ScoreError> {
        Ok(Verdict {
            score,
            reason: String::new(),
            detector: String::new(),
            incomplete: incomplete.then(|| "model-loading".to_string()),
            partial: None,
        })
    }

    #[test]
    fn table() {
        use Action::*;
        use Effect::*;
        let down: Result<Verdict, ScoreError> = Err(ScoreError::Unreachable("refused".into()));
        let cases = [
            (WafMode::Shadow, FailMode::Open, verdict(0.2, false), Passed, Forward),
            (WafMode::Active, FailMode::Open, verdict(0.5, false), Passed, Forward),
            (WafMode::Shadow, FailMode::Open, verdict(0.51, false), ShadowKill, Forward),
            (WafMode::Active, FailMode::Open, verdict(0.51, false), ActiveKill, Kill),
            (WafMode::Active, FailMode::Closed, verdict(0.95, true), ActiveKill, Kill),
            (WafMode::Active, FailMode::Open, verdict(0.1, true), Error, Forward),
            (WafMode::Active, FailMode::Closed, verdict(0.1, true), Error, Refuse),
            (WafMode::Shadow, FailMode::Closed, down, Error, Forward),
        ];
        for (mode, on_error, v, action, effect) in cases {
            let d = decide(mode, 0.5, on_error, &v);
            assert_eq!((d.action, d.effect), (action, effect), "{mode:?} {on_error:?} {v:?}");
        }
        let d = decide(WafMode::Active, 0.5, FailMode::Closed, &Err(ScoreError::Timeout(std::time::Duration::from_millis(5))));
        assert_eq!((d.action, d.effect), (Error, Refuse));
    }
}
