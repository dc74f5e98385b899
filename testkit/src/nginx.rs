//! nginx as a child process from a config the caller renders: `nginx -p <prefix> -c <conf>`,
//! checked with `-t` first, ready once it holds its pid file and accepts on a probe address,
//! stopped with SIGTERM (then SIGKILL) on drop.

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::KitError;

pub struct Nginx {
    child: Child,
    pub prefix: PathBuf,
}

/// The lines every private instance needs: its own pid file and error log under `prefix`.
/// No `daemon` line: [`Nginx::start`] keeps every instance in the foreground with `-g`, so the
/// operator configs of deploy/nginx/ (which have none) run unchanged.
pub fn preamble(prefix: &Path, workers: &str) -> String {
    let p = prefix.display();
    format!("master_process on;\nworker_processes {workers};\npid {p}/nginx.pid;\nerror_log {p}/error.log warn;\nevents {{ worker_connections 4096; }}\n")
}

/// `http` block settings that keep a private instance off the packaged paths, without
/// access logging (benchmarks) and with long keep-alive.
pub fn http_common(prefix: &Path) -> String {
    let p = prefix.display();
    format!(
        "    access_log off;\n    keepalive_timeout 65;\n    keepalive_requests 1000000;\n    client_body_temp_path {p}/client_body;\n    proxy_temp_path {p}/proxy;\n    fastcgi_temp_path {p}/fastcgi;\n    uwsgi_temp_path {p}/uwsgi;\n    scgi_temp_path {p}/scgi;\n"
    )
}

/// A one-worker nginx answering `200 ok` (3 bytes) on every path, on a free loopback port: an
/// upstream that is never what limits a benchmark.
pub fn static_upstream(prefix: &Path) -> Result<(Nginx, SocketAddr), KitError> {
    let listen = SocketAddr::from(([127, 0, 0, 1], crate::free_port()));
    let config = format!(
        "{}http {{\n{}    server {{\n        listen {listen};\n        client_body_buffer_size 64k;\n        location / {{ default_type text/plain; return 200 \"ok\\n\"; }}\n    }}\n}}\n",
        preamble(prefix, "1"),
        http_common(prefix)
    );
    Ok((Nginx::start(prefix, &config, listen)?, listen))
}

impl Nginx {
    /// Writes `config` to `prefix/nginx.conf`, checks it, starts nginx and waits (10 s) until
    /// it accepts on `probe`.
    pub fn start(prefix: &Path, config: &str, probe: SocketAddr) -> Result<Nginx, KitError> {
        let conf = prefix.join("nginx.conf");
        std::fs::write(&conf, config).map_err(KitError::io(format!("writing {}", conf.display())))?;
        let command = |extra: &[&str]| {
            let mut cmd = Command::new("nginx");
            cmd.arg("-p").arg(prefix).arg("-c").arg(&conf).arg("-e").arg(prefix.join("error.log")).args(["-g", "daemon off;"]).args(extra);
            cmd
        };
        let test = command(&["-t", "-q"]).output().map_err(|source| KitError::Missing { tool: "nginx", source })?;
        if !test.status.success() {
            return Err(KitError::failed(
                format!("nginx rejected {}", conf.display()),
                format!("{}{}", String::from_utf8_lossy(&test.stdout), String::from_utf8_lossy(&test.stderr)),
            ));
        }
        // `nginx -t` leaves an empty pid file behind: readiness waits for this child's pid.
        let _ = std::fs::remove_file(prefix.join("nginx.pid"));
        let child = command(&[])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(KitError::io("starting nginx"))?;
        let mut nginx = Nginx { child, prefix: prefix.to_path_buf() };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if nginx.holds_pid() && TcpStream::connect_timeout(&probe, Duration::from_millis(200)).is_ok() {
                return Ok(nginx);
            }
            if let Ok(Some(status)) = nginx.child.try_wait() {
                return Err(KitError::failed(format!("nginx exited with {status} before accepting on {probe}"), nginx.error_log()));
            }
            if Instant::now() >= deadline {
                return Err(KitError::failed(format!("nginx did not accept on {probe} within 10 s"), nginx.error_log()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The master's pid (its workers are its children).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.prefix.join("error.log")).unwrap_or_default()
    }

    fn holds_pid(&self) -> bool {
        std::fs::read_to_string(self.prefix.join("nginx.pid")).is_ok_and(|text| text.trim() == self.child.id().to_string())
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM to the master stops its workers too; a SIGKILL would orphan them, still
        // holding the port. SIGKILL only if it has not gone within 5 s.
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
