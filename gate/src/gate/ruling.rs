//! The gate's answer about one request: what was decided and what every door renders from it
//! (the X-Waf-* headers to stamp, the body of a block or refusal). Doors choose only how it
//! looks on their protocol: RST or 403, 200 or 403, CONTINUE or ImmediateResponse.

use std::time::Duration;

use super::{KillResponse, WafMode};
use crate::decision::{Decision, Effect};
use crate::scorer::{ScoreError, Verdict};
use crate::waf_headers::{verdict_headers, BlockBody, BLOCK_BODY, UNAVAILABLE_BODY};

pub struct Ruling {
    /// The mode the decision was taken in: the same value goes to X-Waf-Mode and the event,
    /// even if the mode is switched while the request is in flight.
    pub mode: WafMode,
    pub decision: Decision,
    pub verdict: Result<Verdict, ScoreError>,
    /// `(name, value)` X-Waf-* pairs, lower-case names, for forwarded requests and answers.
    pub headers: Vec<(&'static str, String)>,
    /// Time spent scoring (the event's latency_ms).
    pub scoring_time: Duration,
    /// The policy scope's kill style; None: the door's own (WAF_KILL_RESPONSE).
    pub kill_response: Option<KillResponse>,
    /// Set when a scope's rate limit killed the request: when the client may try again (the
    /// proxy answers 429 with Retry-After instead of its kill).
    pub retry_after: Option<Duration>,
}

impl Ruling {
    pub fn new(mode: WafMode, decision: Decision, verdict: Result<Verdict, ScoreError>, scoring_time: Duration) -> Self {
        let headers = verdict_headers(&verdict, decision, mode);
        Ruling { mode, decision, verdict, headers, scoring_time, kill_response: None, retry_after: None }
    }

    pub fn effect(&self) -> Effect {
        self.decision.effect
    }

    /// The body to send instead of forwarding: the block body for a kill (spec 2.9), its
    /// fail-closed sibling for a refusal; None when the request goes on.
    pub fn stop_body(&self) -> Option<&'static BlockBody> {
        match self.decision.effect {
            Effect::Kill => Some(&BLOCK_BODY),
            Effect::Refuse => Some(&UNAVAILABLE_BODY),
            Effect::Forward => None,
        }
    }

    /// `Err` with the scorer's failure when scoring failed and the fail mode let the request
    /// go on: ext_proc ends the stream with a gRPC error so Envoy's failure_mode_allow decides.
    pub fn failed_open(self) -> Result<Ruling, ScoreError> {
        match self {
            Ruling { verdict: Err(err), decision, .. } if decision.effect == Effect::Forward => Err(err),
            ruling => Ok(ruling),
        }
    }
}
