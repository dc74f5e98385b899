//! Scale-out fixtures: real nginx balancing round-robin over several proxies, and a request
//! held in flight by its client (the body arrives in two parts).

use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::nginx::free_port;

/// A POST whose head and first body bytes are sent; [`HeldRequest::finish`] sends the rest and
/// reads the answer. Between the two the request is in flight on the server.
pub struct HeldRequest {
    stream: tokio::net::TcpStream,
}

const HELD_BODY: (&str, &str) = ("note=hello", "+there+friend");

impl HeldRequest {
    pub async fn start(addr: SocketAddr) -> HeldRequest {
        let mut stream = tokio::net::TcpStream::connect(addr).await.expect("the proxy accepts");
        let head = format!(
            "POST /orders/notes HTTP/1.1\r\nHost: shop.example\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
            HELD_BODY.0.len() + HELD_BODY.1.len(),
            HELD_BODY.0
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        HeldRequest { stream }
    }

    /// The rest of the body, then the whole answer as text.
    pub async fn finish(mut self) -> String {
        self.stream.write_all(HELD_BODY.1.as_bytes()).await.expect("the connection is still open");
        let mut answer = Vec::new();
        let _ = self.stream.read_to_end(&mut answer).await;
        String::from_utf8_lossy(&answer).into_owned()
    }
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
