//! Connection, header and buffered-body limits every listener and front door of one process
//! shares (the settings are the binary's `LimitArgs`; docs/SECURITY.md has the worst-case memory
//! of the defaults).

use std::sync::Arc;

use crate::budget::BodyBudget;

/// What a request does when the process-wide body budget cannot hold its body prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnBodyBudget {
    /// 503 `body_budget_exhausted` at once.
    Refuse,
    /// Score the part that fit, mark the verdict partial (`body-budget`), stream the rest on;
    /// WAF_ON_PARTIAL decides what a partial verdict does.
    ScorePartial,
}

/// What every listener and front door of one process shares.
#[derive(Clone)]
pub struct ProcessLimits {
    pub gate: Arc<net::ConnGate>,
    pub budget: Arc<BodyBudget>,
    pub on_body_budget: OnBodyBudget,
}

impl ProcessLimits {
    /// Default limits, refusals uncounted (the standalone inference service, tests).
    pub fn unobserved() -> Self {
        let defaults = net::ServeLimits::default();
        ProcessLimits {
            gate: net::ConnGate::unobserved(defaults),
            budget: BodyBudget::new(128 << 20),
            on_body_budget: OnBodyBudget::ScorePartial,
        }
    }
}
