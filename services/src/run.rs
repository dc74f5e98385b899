//! Starting servers: bind, build the engine, serve until shutdown. Shared by `main` and tests.

use std::net::SocketAddr;
use std::sync::Arc;

use thiserror::Error;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::config::InferenceArgs;
use crate::inference::InferenceService;
use scoring::{Engine, EngineError};

/// Start-up failures; each names what to fix.
#[derive(Debug, Error)]
pub enum StartError {
    #[error("scoring engine: {0}")]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Net(#[from] net::NetError),
}

/// A server running on a background task.
pub struct Running {
    pub addr: SocketAddr,
    pub engine: Arc<Engine>,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl Running {
    /// Stops accepting, finishes in-flight requests and waits for the server to end.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let _ = (&mut self.task).await;
    }

    /// Waits until the server ends (it only ends after `stop`).
    pub async fn wait(&mut self) {
        let _ = (&mut self.task).await;
    }

    pub fn shutdown_handle(&mut self) -> Option<oneshot::Sender<()>> {
        self.shutdown.take()
    }
}

/// Binds the inference service and serves it on a background task.
pub fn start_inference(args: &InferenceArgs) -> Result<Running, StartError> {
    let engine = Arc::new(Engine::new(args.engine.engine_config())?);
    start_inference_with(engine, args.addr, args.max_body_bytes)
}

pub fn start_inference_with(engine: Arc<Engine>, addr: SocketAddr, max_body_bytes: usize) -> Result<Running, StartError> {
    let listener = net::bind(addr)?;
    let addr = listener.local_addr().map_err(|source| net::NetError::Bind { addr, source })?;
    let service = Arc::new(InferenceService::new(engine.clone(), max_body_bytes));
    let (tx, rx) = oneshot::channel();
    let task = tokio::spawn(net::serve(
        listener,
        move |req, _conn| {
            let service = service.clone();
            async move { service.handle(req).await }
        },
        async move {
            let _ = rx.await;
        },
    ));
    Ok(Running { addr, engine, shutdown: Some(tx), task })
}
