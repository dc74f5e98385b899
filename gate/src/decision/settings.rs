//! What an operator chooses about decisions, as domain values: not how it is spelled on the
//! command line (config.rs parses the names into these). They live with the decision rule
//! that gives them meaning, below the gate and the events that only carry them.

/// The operating mode (spec 1.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WafMode {
    Shadow,
    Active,
}

impl WafMode {
    pub fn as_str(self) -> &'static str {
        match self {
            WafMode::Shadow => "shadow",
            WafMode::Active => "active",
        }
    }
}

/// What a verdict that could not be had (scorer down, a model missing) does in active mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailMode {
    /// Forward the request unscored.
    Open,
    /// Refuse it: 503 `scoring_unavailable` (the auth adapter 403, ext_proc an immediate 503).
    Closed,
}

/// What a partial verdict (some bytes not scored in full) does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartialPolicy {
    /// Treat it as over the threshold (active: killed; shadow: would have been).
    Block,
    /// Forward it, marked `X-Waf-Partial`.
    Pass,
}

/// What a body larger than WAF_BODY_LIMIT_BYTES does to the proxy's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OversizeBody {
    /// Score the first WAF_BODY_LIMIT_BYTES and stream the whole body on.
    ScorePrefix,
    /// Treat the request as over the threshold (reason `body-limit:exceeded`).
    Block,
    /// Score the prefix; the verdict is partial (`body-limit`) and WAF_ON_PARTIAL decides.
    Partial,
}

/// What an active-mode kill looks like to the proxy's client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KillResponse {
    /// TCP reset (HTTP/2: RST_STREAM) before any response byte.
    Reset,
    /// 403 with the block body and `X-Waf-Killed: true`.
    Forbidden,
}
