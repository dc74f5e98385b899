//! What a relay knows about its connection (the scored handshake's host, path and client, the
//! settings) and how one client message is judged: through the gate like a request, so policy
//! scopes, the mode, WAF_ON_PARTIAL and the event stream all apply.

use std::sync::Arc;

use super::frame::close_code;
use super::message::Message;
use crate::settings::WsInspect;
use gate::budget::BodyBudget;
use gate::decision::{Cause, Effect, WafMode};
use gate::gate::{Component, Gate, RequestSummary};
use gate::policy::ScopeMode;
use gate::request_id::RequestId;
use gate::scorer::{compose_request_text, ScoreQuery};

/// The proxy's WebSocket settings (WAF_WS_INSPECT, WAF_WS_MAX_MESSAGE) and the buffered-body
/// budget held messages draw on.
#[derive(Clone)]
pub struct Settings {
    pub inspect: WsInspect,
    pub max_message: usize,
    pub budget: Arc<BodyBudget>,
}

/// One upgraded connection's facts, carried from the handshake to the relay in the request's
/// extensions.
#[derive(Clone)]
pub struct Session {
    pub(super) gate: Arc<Gate>,
    pub(super) settings: Settings,
    /// The handshake's Host (policy scopes match it) and request line.
    pub(super) host: String,
    pub(super) method: String,
    pub(super) path: String,
    pub(super) query: String,
    /// The client as the proxy resolved it for the handshake's event.
    pub(super) client: String,
}

/// What happens after a verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    Forward,
    /// Close the client with this code (the upstream is told 1001).
    Close(u16),
}

impl Session {
    /// Whether a verdict could stop the next message, so its frames must wait for it: only
    /// `close` in active mode (the process's, or the scope's of the handshake's route).
    /// In shadow mode frames go on as they arrive and the message is scored when complete.
    pub(super) fn holds_messages(&self) -> bool {
        self.settings.inspect == WsInspect::Close
            && match self.gate.policy().resolve(&self.host, &self.method, &self.path).mode {
                None => self.gate.mode() == WafMode::Active,
                Some(ScopeMode::Active) => true,
                Some(ScopeMode::Shadow | ScopeMode::Off) => false,
            }
    }

    /// A message starts: its frames wait for the verdict when [`Self::holds_messages`].
    pub(super) fn new_message(&self) -> Message {
        Message::new(self.settings.max_message, self.holds_messages(), self.settings.budget.reserve())
    }

    /// Scores one message (what [`Message::scored`] kept; `partial` names why that is not all
    /// of it) and records its event: component `websocket`, the handshake's method, path and
    /// query.
    pub(super) async fn judge(&self, message: &[u8], partial: Option<&'static str>) -> Next {
        let id = RequestId::next();
        // A message that looks like JSON is scored as a JSON body (field by field, like a JSON
        // API's POST); if it does not parse the engine falls back to the raw text. Anything else
        // goes without a content type, read as an unlabelled POST body is (form-looking text
        // as a form, markup as XML, else one raw text field): the paths the engine's false-
        // positive figures were measured on, rather than a new one for chat text.
        let json: &[(&str, &[u8])] = &[("content-type", b"application/json")];
        let headers = if looks_like_json(message) { json } else { &[] };
        // The query was scored with the handshake: only the path (scope context) and the
        // message are. Binary messages are scored too, lossily like any body (invalid UTF-8 as
        // U+FFFD; the engine keeps binary-looking text from the prose model): an attacker
        // picks the opcode, so scoring text frames alone would be a one-bit bypass.
        let text = compose_request_text(&self.method, &self.path, "", message);
        let mut scored = ScoreQuery::with_headers(text, headers.iter().copied());
        scored.partial.extend(partial.map(String::from));
        let summary = RequestSummary {
            request_id: &id,
            component: Component::Websocket,
            method: &self.method,
            path: &self.path,
            query: &self.query,
            client: self.client.clone(),
            scored,
            preset: None,
            demo: None,
        };
        let ruling = self.gate.inspect_at(summary, &self.host).await;
        if self.settings.inspect == WsInspect::Score {
            return Next::Forward;
        }
        match ruling.effect() {
            Effect::Forward => Next::Forward,
            Effect::Kill if ruling.decision.cause == Some(Cause::Partial) => Next::Close(close_code::MESSAGE_TOO_BIG),
            Effect::Kill => Next::Close(close_code::POLICY_VIOLATION),
            Effect::Refuse => Next::Close(close_code::INTERNAL_ERROR),
        }
    }
}

fn looks_like_json(message: &[u8]) -> bool {
    matches!(message.iter().find(|b| !b.is_ascii_whitespace()), Some(b'{' | b'['))
}

#[cfg(test)]
mod tests {
    use super::looks_like_json;

    #[test]
    fn json_is_told_by_its_first_byte() {
        assert!(looks_like_json(b"  {\"text\":\"hi\"}"));
        assert!(looks_like_json(b"[1,2]"));
        assert!(!looks_like_json(b"hello {there}"));
        assert!(!looks_like_json(b""));
    }
}
