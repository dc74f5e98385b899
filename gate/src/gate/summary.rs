//! What a front door tells the gate about one request. Each door translates its protocol
//! (an HTTP request, nginx's subrequest headers, Envoy's ext_proc phases) into this.

use crate::events::RequestFacts;
use crate::request_id::RequestId;
use crate::scorer::{ScoreQuery, Verdict};
use crate::stats::Demo;

/// Which front door a request came through; recorded in its event (`component`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    Proxy,
    Auth,
    Extproc,
    /// A message on a WebSocket the proxy relays (its event has the handshake's path).
    Websocket,
}

impl Component {
    pub fn as_str(self) -> &'static str {
        match self {
            Component::Proxy => "proxy",
            Component::Auth => "auth",
            Component::Extproc => "extproc",
            Component::Websocket => "websocket",
        }
    }
}

/// One request to judge: the line the event shows, the client, and what is scored.
pub struct RequestSummary<'a> {
    /// The door's id for the request (its span carries it too); the event records it.
    pub request_id: &'a RequestId,
    pub component: Component,
    pub method: &'a str,
    pub path: &'a str,
    pub query: &'a str,
    /// The client as the door resolved it (trusted forwarded headers, else the peer): the
    /// event's source_ip and the model queue's fairness key.
    pub client: String,
    /// What the scorer reads (spec 4.2 rule 1 text, scored headers, the door's partial slugs).
    pub scored: ScoreQuery,
    /// A verdict the door already reached without scoring (the proxy's WAF_OVERSIZE_BODY=block):
    /// decided, counted and recorded like a scored one.
    pub preset: Option<Verdict>,
    /// The dashboard's demo-panel mark (proxy only): feeds the false-positive tile.
    pub demo: Option<Demo>,
}

impl RequestSummary<'_> {
    /// The request as its event describes it: `host` as the door read it, `scope` the policy
    /// scope that decided.
    pub fn facts<'s>(&'s self, host: &'s str, scope: &'s str) -> RequestFacts<'s> {
        RequestFacts {
            request_id: self.request_id.as_str(),
            method: self.method,
            path: self.path,
            query: self.query,
            source_ip: self.client.clone(),
            component: self.component.as_str(),
            host,
            user_agent: self.user_agent(),
            scope,
        }
    }

    /// The User-Agent among the scored headers (every door forwards it: it is always scored).
    fn user_agent(&self) -> &str {
        self.scored.headers.iter().find(|(name, _)| name.eq_ignore_ascii_case("user-agent")).map_or("", |(_, value)| value.as_str())
    }
}
