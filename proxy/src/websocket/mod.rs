//! WebSocket after the handshake. The handshake is scored like any request; once the upstream
//! switches protocols, every message the client sends is reassembled (up to
//! WAF_WS_MAX_MESSAGE) and judged by the gate with the handshake's host and path, so an
//! injection sent over a chat socket is seen. WAF_WS_INSPECT chooses: `close` (a blocked
//! message closes the client with 1008 and never reaches the upstream), `score` (events only)
//! or `off` (a plain byte tunnel: messages are not scored). The upstream's messages are
//! relayed unscored, like response bodies.
//!
//! Compression: permessage-deflate is taken out of the handshake (no Sec-WebSocket-Extensions
//! reaches the upstream, so none is negotiated) rather than inflated here: inflating would
//! need a decompressor per connection with its sliding window (32 KiB each way for context
//! takeover) and a second ratio bound, while the messages of a chat are small. A frame with an
//! RSV bit set anyway is refused with close 1002, never forwarded unscored.

mod frame;
mod message;
mod reader;
mod relay;
mod session;

use std::sync::Arc;

use hyper::header::HOST;
use hyper::upgrade::OnUpgrade;
use hyper::Request;
use hyper_util::rt::TokioIo;

pub use session::{Session, Settings};

use crate::settings::WsInspect;
use gate::gate::Gate;

impl Settings {
    /// The facts the relay needs from a WebSocket handshake; None when messages are not
    /// inspected (`off`: the plain tunnel).
    pub fn session<B>(&self, gate: &Arc<Gate>, req: &Request<B>, client: String) -> Option<Session> {
        if self.inspect == WsInspect::Off {
            return None;
        }
        let host = req.headers().get(HOST).and_then(|h| h.to_str().ok()).or_else(|| req.uri().authority().map(|a| a.as_str()));
        Some(Session {
            gate: gate.clone(),
            settings: self.clone(),
            host: host.unwrap_or("").to_string(),
            method: req.method().as_str().to_string(),
            path: req.uri().path().to_string(),
            query: req.uri().query().unwrap_or("").to_string(),
            client,
        })
    }
}

/// The session a scored handshake carries, taken out of the request before it is sent; the
/// extension offer goes with it (see the module comment), so the upstream cannot agree to
/// compression the relay could not read.
pub fn take_session<B>(req: &mut Request<B>) -> Option<Session> {
    let session = req.extensions_mut().remove::<Session>()?;
    req.headers_mut().remove(hyper::header::SEC_WEBSOCKET_EXTENSIONS);
    Some(session)
}

/// Joins the two upgraded connections: inspected when the handshake carried a session, else
/// copied both ways as bytes.
pub async fn relay(client: OnUpgrade, upstream: OnUpgrade, session: Option<Session>) {
    match tokio::try_join!(client, upstream) {
        Ok((client, upstream)) => {
            let (mut client, mut upstream) = (TokioIo::new(client), TokioIo::new(upstream));
            match session {
                Some(session) => relay::run(client, upstream, session).await,
                None => {
                    if let Err(err) = tokio::io::copy_bidirectional(&mut client, &mut upstream).await {
                        tracing::debug!(error = %err, "WebSocket tunnel closed with error");
                    }
                }
            }
        }
        Err(err) => tracing::debug!(error = %err, "WebSocket upgrade did not complete"),
    }
}
