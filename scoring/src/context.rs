//! Who a score is for and how long it may take. The model queue uses both: work is shared
//! fairly between clients, and work whose request is past its deadline is dropped instead of
//! run (its answer would come too late to matter, and running it delays everyone else).

use std::time::{Duration, Instant};

#[derive(Clone, Debug, Default)]
pub struct ScoreContext {
    /// The client the front door resolved (an IP as text). `None` shares one anonymous lane.
    pub client: Option<String>,
    /// When the front door stops waiting. `None`: the engine's default deadline from now.
    pub deadline: Option<Instant>,
    /// The request's policy scope (sensitivity, exclusions); None: the engine's settings.
    pub scope: Option<std::sync::Arc<crate::exclusion::ScoringScope>>,
}

impl ScoreContext {
    pub fn new(client: Option<String>, deadline: Option<Instant>) -> Self {
        ScoreContext { client, deadline, scope: None }
    }

    /// A context whose deadline is `budget` from now.
    pub fn within(client: Option<String>, budget: Duration) -> Self {
        ScoreContext { client, deadline: Some(Instant::now() + budget), scope: None }
    }
}
