//! Scale-out fixtures: real nginx balancing round-robin over several proxies, and an upstream
//! that counts what reaches it and can be made slow (`/slow...` waits [`SLOW`]) so a test can
//! hold requests in flight.

use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};

use crate::common::nginx::free_port;

/// How long an upstream `/slow...` request takes.
pub const SLOW: Duration = Duration::from_millis(600);

pub struct Upstream {
    pub addr: SocketAddr,
    pub seen: Arc<AtomicUsize>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// Answers 200 `upstream ok` to everything, after [`SLOW`] for paths starting `/slow`.
pub async fn upstream() -> Upstream {
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    let listener = net::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(net::serve(
        listener,
        move |req: Request<Incoming>, _conn| {
            let count = count.clone();
            async move {
                let slow = req.uri().path().starts_with("/slow");
                let _ = req.into_body().collect().await;
                if slow {
                    tokio::time::sleep(SLOW).await;
                }
                count.fetch_add(1, Ordering::Relaxed);
                Response::new(Full::new(Bytes::from_static(b"upstream ok")))
            }
        },
        async move {
            let _ = rx.await;
        },
    ));
    Upstream { addr, seen, _stop: tx }
}

/// nginx round-robin over `backends` (a connect error moves the request to the next one, as
/// nginx does by default); stopped on Drop.
pub struct Balancer {
    child: Child,
    pub addr: SocketAddr,
    prefix: PathBuf,
}

impl Balancer {
    pub fn start(backends: &[SocketAddr]) -> Balancer {
        let prefix = std::env::temp_dir().join(format!("rampart-fleet-{}-{}", std::process::id(), free_port()));
        std::fs::create_dir_all(&prefix).unwrap();
        // Run as root, nginx's worker drops to `nobody`: it must be able to enter the prefix.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&prefix, std::fs::Permissions::from_mode(0o755)).unwrap();
        for _attempt in 0..3 {
            let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
            let conf = prefix.join("nginx.conf");
            std::fs::write(&conf, config(&prefix, addr, backends)).unwrap();
            let child = Command::new("nginx")
                .arg("-p")
                .arg(&prefix)
                .arg("-c")
                .arg(&conf)
                .arg("-e")
                .arg(prefix.join("error.log"))
                .args(["-g", "daemon off;"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("nginx starts (scripts/bootstrap installs it)");
            let mut balancer = Balancer { child, addr, prefix: prefix.clone() };
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = balancer.child.try_wait() {
                    break;
                }
                let pid = std::fs::read_to_string(prefix.join("nginx.pid")).unwrap_or_default();
                if pid.trim() == balancer.child.id().to_string() && TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                    return balancer;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let log = balancer.error_log();
            assert!(log.contains("Address already in use"), "nginx did not start:\n{log}");
            balancer.prefix = PathBuf::new();
        }
        panic!("nginx could not bind a free port in 3 attempts");
    }

    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.prefix.join("error.log")).unwrap_or_default()
    }
}

/// The whole nginx config: one round-robin upstream. `non_idempotent`: a proxy that stops
/// closes its listener, and a connection still in its accept backlog is reset after nginx
/// wrote the request, which the proxy never read; nginx only resends a POST then if told so.
pub fn config(prefix: &std::path::Path, listen: SocketAddr, backends: &[SocketAddr]) -> String {
    let servers: String = backends.iter().map(|b| format!("        server {b} max_fails=1 fail_timeout=10s;\n")).collect();
    let prefix = prefix.display();
    format!(
        "worker_processes 1;\npid {prefix}/nginx.pid;\nevents {{ worker_connections 1024; }}\nhttp {{\n    access_log off;\n    client_body_temp_path {prefix}/body;\n    proxy_temp_path {prefix}/proxy;\n    fastcgi_temp_path {prefix}/fastcgi;\n    uwsgi_temp_path {prefix}/uwsgi;\n    scgi_temp_path {prefix}/scgi;\n    upstream rampart {{\n{servers}    }}\n    server {{\n        listen {listen};\n        location / {{\n            proxy_pass http://rampart;\n            proxy_set_header Host $host;\n            proxy_next_upstream error timeout non_idempotent;\n        }}\n    }}\n}}\n"
    )
}

impl Drop for Balancer {
    fn drop(&mut self) {
        // SIGTERM to the master stops its worker too.
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !self.prefix.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.prefix);
        }
    }
}
