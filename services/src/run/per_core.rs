//! `--runtime per-core`: the proxy's listener served by one single-threaded tokio runtime per
//! core, each accepting on its own SO_REUSEPORT socket (the kernel spreads new connections
//! over them) and forwarding through its own [`Proxy`] and so its own upstream pool. A
//! request never leaves the thread that accepted its connection: no work-stealing hand-off,
//! no cross-thread wake-ups, no upstream connection driven by another thread.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::sync::{oneshot, watch};

use super::{Running, StartError};
use crate::proxy::Proxy;

/// One runtime per available core (cgroup limits included, as tokio counts them).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A listening socket on `addr` that other sockets of this process can share (SO_REUSEPORT).
fn bind_shared(addr: SocketAddr) -> Result<std::net::TcpListener, StartError> {
    let map = |source| StartError::Net(net::NetError::Bind { addr, source });
    let domain = if addr.is_ipv6() { socket2::Domain::IPV6 } else { socket2::Domain::IPV4 };
    let socket = socket2::Socket::new(domain, socket2::Type::STREAM, Some(socket2::Protocol::TCP)).map_err(map)?;
    socket.set_reuse_address(true).map_err(map)?;
    socket.set_reuse_port(true).map_err(map)?;
    socket.set_nonblocking(true).map_err(map)?;
    socket.bind(&addr.into()).map_err(map)?;
    socket.listen(1024).map_err(map)?;
    Ok(socket.into())
}

/// What each core serves: the listener's address and the proxy instances, one per core.
pub struct PerCore {
    pub addr: SocketAddr,
    pub tls: Option<net::TlsServer>,
    pub gate: Arc<net::ConnGate>,
    pub proxies: Vec<Arc<Proxy>>,
}

/// Binds one SO_REUSEPORT listener per proxy (all on the same port: the first one's, when
/// `addr` asks for port 0) and serves each on its own thread and runtime. `stop` on the
/// returned handle stops every core and waits for them.
pub fn spawn(cores: PerCore) -> Result<Running, StartError> {
    let first = bind_shared(cores.addr)?;
    let addr = first.local_addr().map_err(|source| StartError::Net(net::NetError::Bind { addr: cores.addr, source }))?;
    let mut listeners = vec![first];
    for _ in 1..cores.proxies.len() {
        listeners.push(bind_shared(addr)?);
    }
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut threads = Vec::with_capacity(listeners.len());
    for (i, (listener, proxy)) in listeners.into_iter().zip(cores.proxies).enumerate() {
        // Built here, so a failure stops start-up with its cause instead of a dead thread.
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(StartError::Runtime)?;
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(listener).map_err(|source| StartError::Net(net::NetError::Bind { addr, source }))?
        };
        let (tls, gate, mut stop) = (cores.tls.clone(), cores.gate.clone(), stop_rx.clone());
        // Large queries are scored on the shared runtime, so one 1 MiB body does not stall
        // this core's other connections for the tens of milliseconds it takes to score.
        let shared = tokio::runtime::Handle::current();
        let handler = move |req, conn| proxy.clone().handle(req, conn);
        let thread = std::thread::Builder::new()
            .name(format!("rampart-core-{i}"))
            .spawn(move || {
                gate::scorer::offload::offload_to(shared);
                // The stop signal, or its sender gone (the handle dropped): stop either way.
                let shutdown = async move {
                    let _ = stop.wait_for(|stopped| *stopped).await;
                };
                runtime.block_on(net::serve_on(listener, tls, gate, handler, shutdown));
            })
            .map_err(StartError::Runtime)?;
        threads.push(thread);
    }
    let (tx, rx) = oneshot::channel();
    let task = tokio::spawn(async move {
        let _ = rx.await;
        let _ = stop_tx.send(true);
        for thread in threads {
            // Each core finishes its in-flight connections (bounded by serve_on's grace).
            if !matches!(tokio::task::spawn_blocking(move || thread.join()).await, Ok(Ok(()))) {
                tracing::error!("a proxy core thread panicked");
            }
        }
    });
    Ok(Running { addr, shutdown: Some(tx), task: Some(task) })
}
