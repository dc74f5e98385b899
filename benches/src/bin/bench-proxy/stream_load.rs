//! The load driver of the WebSocket and gRPC rows (wrk speaks neither): `connections` clients
//! on the bench's own runtime, each making one call after the other until the time is up,
//! every call's latency kept for the percentiles. Benign traffic only.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use testkit::grpc_echo::{self, EchoRequest, Meta};
use tokio_tungstenite::tungstenite::Message;

/// What one target did under load.
pub struct Load {
    pub calls: u64,
    pub rps: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// Clients that failed (connect, a wrong or missing answer): each stopped there.
    pub errors: u64,
    /// The first failure, as said.
    pub first_error: Option<String>,
}

/// A chat line of the size a messaging app sends.
const WS_TEXT: &str = "hi! are we still on for the hike on saturday? I can bring the stove and two mugs";

/// WebSocket round trips: one text message out, its echo back, per call.
pub async fn websocket(addr: SocketAddr, connections: u32, duration: Duration) -> Load {
    drive(connections, duration, move |end| async move {
        let mut latencies = Vec::new();
        // Nagle off (the `true`), as wrk and every proxy here have it: a small message must
        // not wait for the previous one's ACK.
        let (mut ws, _) = tokio_tungstenite::connect_async_with_config(format!("ws://{addr}/chat?room=lobby"), None, true)
            .await
            .map_err(|e| (latencies.clone(), format!("WebSocket handshake: {e}")))?;
        let msg = Message::text(WS_TEXT);
        while Instant::now() < end {
            let start = Instant::now();
            ws.send(msg.clone()).await.map_err(|e| (latencies.clone(), format!("send: {e}")))?;
            match ws.next().await {
                Some(Ok(answer)) if answer == msg => latencies.push(micros(start)),
                other => return Err((latencies, format!("expected the echo, got {other:?}"))),
            }
        }
        let _ = ws.close(None).await;
        Ok(latencies)
    })
    .await
}

/// gRPC unary calls (`test.Echo/Say`) over one h2c connection per client.
pub async fn grpc_unary(addr: SocketAddr, connections: u32, duration: Duration) -> Load {
    drive(connections, duration, move |end| async move {
        let mut latencies = Vec::new();
        let mut grpc = grpc_echo::client(addr).await.map_err(|e| (latencies.clone(), format!("h2c connect: {e}")))?;
        let req = EchoRequest { text: WS_TEXT.into(), meta: Some(Meta { note: "sent from the mobile app".into() }), repeat: 0 };
        while Instant::now() < end {
            let start = Instant::now();
            match grpc_echo::say_on(&mut grpc, req.clone()).await {
                Ok(reply) if reply.get_ref().text == req.text => latencies.push(micros(start)),
                other => return Err((latencies, format!("expected the echo, got {other:?}"))),
            }
        }
        Ok(latencies)
    })
    .await
}

fn micros(start: Instant) -> u32 {
    u32::try_from(start.elapsed().as_micros()).unwrap_or(u32::MAX)
}

/// A client's latencies in µs, or those it had and why it stopped.
type ClientResult = Result<Vec<u32>, (Vec<u32>, String)>;

/// Runs `client(end)` `connections` times at once and merges their latencies.
async fn drive<F, Fut>(connections: u32, duration: Duration, client: F) -> Load
where
    F: Fn(Instant) -> Fut,
    Fut: std::future::Future<Output = ClientResult> + Send + 'static,
{
    let start = Instant::now();
    let end = start + duration;
    let tasks: Vec<_> = (0..connections).map(|_| tokio::spawn(client(end))).collect();
    let (mut all, mut errors, mut first_error) = (Vec::new(), 0, None);
    for task in tasks {
        match task.await {
            Ok(Ok(latencies)) => all.extend(latencies),
            Ok(Err((latencies, why))) => {
                all.extend(latencies);
                errors += 1;
                first_error.get_or_insert(why);
            }
            Err(join) => {
                errors += 1;
                first_error.get_or_insert(join.to_string());
            }
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    all.sort_unstable();
    let pct = |p: f64| all.get(((all.len() as f64 * p) as usize).min(all.len().saturating_sub(1))).map_or(0.0, |&us| us as f64 / 1000.0);
    Load {
        calls: all.len() as u64,
        rps: if elapsed > 0.0 { all.len() as f64 / elapsed } else { 0.0 },
        p50_ms: pct(0.50),
        p99_ms: pct(0.99),
        errors,
        first_error,
    }
}
