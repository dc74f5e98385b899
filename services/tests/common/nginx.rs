//! Real nginx for the auth_request tests: renders one of the operator configs in deploy/nginx/
//! (the very files operators use) with free ports and a private prefix, starts
//! `nginx -p <prefix> -c <conf>` through testkit (checked with `-t`, ready once it accepts, stopped
//! on Drop). A missing nginx or Lua module fails the test with a pointer to scripts/bootstrap.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::workspace_root;

/// The two configs of deploy/nginx/.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Config {
    /// `auth-request.conf`: plain `auth_request`, method + URI + headers, no body.
    HeaderOnly,
    /// `auth-request-body.conf`: Lua access handler, the body is scored too.
    WithBody,
}

impl Config {
    pub fn file_name(self) -> &'static str {
        match self {
            Config::HeaderOnly => "auth-request.conf",
            Config::WithBody => "auth-request-body.conf",
        }
    }

    pub fn path(self) -> PathBuf {
        workspace_root().join("deploy/nginx").join(self.file_name())
    }
}

/// The packages scripts/bootstrap installs for these tests (Debian's module paths).
const NGINX_BIN: &str = "nginx";
const LUA_MODULES: [&str; 2] = ["/usr/lib/nginx/modules/ndk_http_module.so", "/usr/lib/nginx/modules/ngx_http_lua_module.so"];

pub struct Nginx {
    /// The running master (testkit stops it on drop); `None` only while dropping.
    process: Option<testkit::nginx::Nginx>,
    pub addr: SocketAddr,
    pub prefix: PathBuf,
    pub config: Config,
}

impl Nginx {
    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// nginx's error log so far (for assertion messages).
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.prefix.join("error.log")).unwrap_or_default()
    }

    /// nginx's access log so far (the configs log the verdict per request).
    pub fn access_log(&self) -> String {
        std::fs::read_to_string(self.prefix.join("access.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // Stop nginx first (testkit's drop: SIGTERM to the master, which stops its worker),
        // then remove the prefix it was writing into.
        drop(self.process.take());
        let _ = std::fs::remove_dir_all(&self.prefix);
    }
}

pub use testkit::free_port;

/// An address where nothing listens, and nothing can start listening while the value lives:
/// the port is bound but never put into listening state, so connections to it are refused.
/// (A port merely released could be taken by another test's server in the meantime.)
pub struct ClosedAddr {
    _bound: socket2::Socket,
    pub addr: SocketAddr,
}

/// For "the adapter is down"; keep the value alive as long as the address is used.
pub fn closed_addr() -> ClosedAddr {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.bind(&SocketAddr::from(([127, 0, 0, 1], 0)).into()).unwrap();
    let addr = socket.local_addr().unwrap().as_socket().unwrap();
    ClosedAddr { _bound: socket, addr }
}

/// Panics with a message saying what to install when nginx (or the Lua module the body
/// config needs) is missing: these tests never skip silently.
pub fn require(config: Config) {
    let version = Command::new(NGINX_BIN).arg("-v").output();
    match version {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!("`nginx -v` failed ({}): {}; run scripts/bootstrap", out.status, String::from_utf8_lossy(&out.stderr)),
        Err(err) => panic!("nginx not found ({err}): run scripts/bootstrap (it installs Debian's nginx and libnginx-mod-http-lua)"),
    }
    if config == Config::WithBody {
        for module in LUA_MODULES {
            assert!(
                Path::new(module).is_file(),
                "{module} missing: the nginx Lua module is not installed; run scripts/bootstrap (Debian package libnginx-mod-http-lua)"
            );
        }
    }
}

/// The config file with its placeholders filled in.
pub fn render(config: Config, prefix: &Path, listen: SocketAddr, auth: SocketAddr, upstream: SocketAddr) -> String {
    let template = std::fs::read_to_string(config.path()).unwrap_or_else(|e| panic!("{}: {e}", config.path().display()));
    let text = template
        .replace("__PREFIX__", &prefix.display().to_string())
        .replace("__LISTEN__", &listen.to_string())
        .replace("__RAMPART_AUTH__", &auth.to_string())
        .replace("__UPSTREAM__", &upstream.to_string());
    assert!(!text.contains("__"), "a placeholder of {} was left unfilled", config.file_name());
    text
}

fn fresh_prefix() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("rampart-nginx-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // Run as root, nginx's worker drops to `nobody`: it must be able to enter the prefix.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// Starts nginx with `config`, in front of `upstream`, asking the auth adapter at `auth`;
/// returns once it accepts connections.
pub fn start(config: Config, auth: SocketAddr, upstream: SocketAddr) -> Nginx {
    require(config);
    let prefix = fresh_prefix();
    // Another process may take the free port before nginx binds it: retry with a new one.
    for _attempt in 0..3 {
        let listen = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let rendered = render(config, &prefix, listen, auth, upstream);
        match testkit::nginx::Nginx::start(&prefix, &rendered, listen) {
            Ok(process) => return Nginx { process: Some(process), addr: listen, prefix, config },
            Err(err) if err.to_string().contains("Address already in use") => continue,
            Err(err) => panic!("nginx ({}, rendered at {}): {err}", config.file_name(), prefix.join("nginx.conf").display()),
        }
    }
    panic!("nginx could not bind a free port in 3 attempts");
}
