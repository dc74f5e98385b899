//! A WebSocket echo server (tokio-tungstenite): every text or binary message comes back as
//! sent. The proxy tests read what it saw; the load benchmark runs it with nothing recorded
//! (a record per message would grow without bound there).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::handshake::server::{Request as WsRequest, Response as WsResponse};
use tokio_tungstenite::tungstenite::http::HeaderMap;
use tokio_tungstenite::tungstenite::Message;

pub use crate::Record;

/// A running echo server; `handshakes` holds the headers of every handshake it accepted,
/// `messages` every text or binary message it received (both empty under [`Record::Nothing`]).
pub struct EchoServer {
    pub addr: SocketAddr,
    pub handshakes: Arc<Mutex<Vec<HeaderMap>>>,
    pub messages: Arc<Mutex<Vec<Message>>>,
}

impl EchoServer {
    /// Binds 127.0.0.1 on a free port and serves on the current tokio runtime until it ends.
    pub async fn start(record: Record) -> std::io::Result<EchoServer> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let handshakes: Arc<Mutex<Vec<HeaderMap>>> = Arc::default();
        let messages: Arc<Mutex<Vec<Message>>> = Arc::default();
        let (seen, got) = (handshakes.clone(), messages.clone());
        let keep = record == Record::Everything;
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let _ = tcp.set_nodelay(true);
                let (seen, got) = (seen.clone(), got.clone());
                tokio::spawn(async move {
                    // The callback's error type is tungstenite's (an HTTP response), not ours.
                    #[allow(clippy::result_large_err)]
                    let note = |req: &WsRequest, resp: WsResponse| {
                        if keep {
                            seen.lock().unwrap_or_else(|e| e.into_inner()).push(req.headers().clone());
                        }
                        Ok(resp)
                    };
                    let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(tcp, note).await else { return };
                    while let Some(Ok(msg)) = ws.next().await {
                        if msg.is_text() || msg.is_binary() {
                            if keep {
                                got.lock().unwrap_or_else(|e| e.into_inner()).push(msg.clone());
                            }
                            if ws.send(msg).await.is_err() {
                                break;
                            }
                        }
                    }
                });
            }
        });
        Ok(EchoServer { addr, handshakes, messages })
    }

    /// The text and binary messages received so far, oldest first.
    pub fn received(&self) -> Vec<Message> {
        self.messages.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
