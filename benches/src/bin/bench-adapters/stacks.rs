//! The five stacks in front of one upstream: A nginx bare (the deploy configs without their
//! Rampart part), nginx + auth_request and nginx + Lua (deploy/nginx/, the files operators
//! use, placeholders filled), B Envoy bare and Envoy + ext_proc (deploy/envoy/envoy.yaml).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use testkit::envoy::{self, Envoy, EnvoyOptions};
use testkit::logged::curl_status;
use testkit::nginx::Nginx;
use testkit::{free_port, KitError};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stack {
    Nginx,
    NginxAuth,
    NginxLua,
    Envoy,
    EnvoyExtproc,
}

pub const ALL: [Stack; 5] = [Stack::Nginx, Stack::NginxAuth, Stack::NginxLua, Stack::Envoy, Stack::EnvoyExtproc];

impl Stack {
    pub fn label(self) -> &'static str {
        match self {
            Stack::Nginx => "A nginx, bare proxy",
            Stack::NginxAuth => "  nginx + auth_request",
            Stack::NginxLua => "  nginx + Lua (body)",
            Stack::Envoy => "B Envoy, bare",
            Stack::EnvoyExtproc => "  Envoy + ext_proc",
        }
    }

    /// The stack a row is compared with (None for the baselines) and its letter.
    pub fn baseline(self) -> Option<(Stack, &'static str)> {
        match self {
            Stack::NginxAuth | Stack::NginxLua => Some((Stack::Nginx, "A")),
            Stack::EnvoyExtproc => Some((Stack::Envoy, "B")),
            Stack::Nginx | Stack::Envoy => None,
        }
    }

    pub fn dir_name(self) -> String {
        format!("{self:?}").to_lowercase()
    }
}

pub const NGINX_CONF_HDR: &str = "deploy/nginx/auth-request.conf";
pub const NGINX_CONF_BODY: &str = "deploy/nginx/auth-request-body.conf";
pub const ENVOY_CONF: &str = "deploy/envoy/envoy.yaml";
pub const LUA_MODULES: [&str; 2] = ["/usr/lib/nginx/modules/ndk_http_module.so", "/usr/lib/nginx/modules/ngx_http_lua_module.so"];

/// Where the stacks send what they ask Rampart and what they forward.
pub struct Wiring {
    pub upstream: SocketAddr,
    pub auth: SocketAddr,
    pub extproc: SocketAddr,
}

fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// Baseline A: the deploy configs with their Rampart part taken out (same worker count,
/// events, access log to a file, upstream keepalive 16, proxy_set_header lines), so what
/// differs between A and the other nginx rows is Rampart's part alone.
fn render_nginx_bare(prefix: &Path, listen: SocketAddr, upstream: SocketAddr) -> String {
    let p = prefix.display();
    format!(
        r#"worker_processes 1;
pid {p}/nginx.pid;
error_log {p}/error.log warn;

events {{
    worker_connections 1024;
}}

http {{
    log_format plain '$remote_addr "$request" $status';
    access_log {p}/access.log plain;

    client_body_temp_path {p}/client_body;
    proxy_temp_path {p}/proxy;
    fastcgi_temp_path {p}/fastcgi;
    uwsgi_temp_path {p}/uwsgi;
    scgi_temp_path {p}/scgi;

    upstream app {{
        server {upstream};
        keepalive 16;
    }}

    server {{
        listen {listen};

        location / {{
            proxy_pass http://app;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header X-Real-IP $remote_addr;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        }}
    }}
}}
"#
    )
}

fn unfilled(text: &str, what: &str) -> Result<(), KitError> {
    match text.lines().find(|l| l.contains("__")) {
        Some(line) => Err(KitError::failed(format!("a placeholder of {what} was left unfilled"), line.to_string())),
        None => Ok(()),
    }
}

/// Starts one nginx stack with `workers` worker processes.
pub fn start_nginx(stack: Stack, prefix: &Path, wiring: &Wiring, workers: &str) -> Result<(Nginx, SocketAddr), KitError> {
    let listen = loopback(free_port());
    let text = match stack {
        Stack::Nginx => render_nginx_bare(prefix, listen, wiring.upstream),
        Stack::NginxAuth | Stack::NginxLua => {
            let template = if stack == Stack::NginxAuth { NGINX_CONF_HDR } else { NGINX_CONF_BODY };
            let text = std::fs::read_to_string(template).map_err(KitError::io(format!("reading {template}")))?;
            let text = text
                .replace("__PREFIX__", &prefix.display().to_string())
                .replace("__LISTEN__", &listen.to_string())
                .replace("__RAMPART_AUTH__", &wiring.auth.to_string())
                .replace("__UPSTREAM__", &wiring.upstream.to_string());
            unfilled(&text, template)?;
            text
        }
        Stack::Envoy | Stack::EnvoyExtproc => return Err(KitError::failed(format!("{stack:?}"), "not an nginx stack")),
    };
    if !text.lines().any(|l| l == "worker_processes 1;") {
        return Err(KitError::failed(format!("the {stack:?} config"), "has no 'worker_processes 1;' line to adjust"));
    }
    let workers_line = format!("worker_processes {workers};");
    let text: String =
        text.lines().map(|l| if l == "worker_processes 1;" { workers_line.as_str() } else { l }).flat_map(|l| [l, "\n"]).collect();
    Ok((Nginx::start(prefix, &text, listen)?, listen))
}

/// deploy/envoy/envoy.yaml with its placeholders filled (ports 0: Envoy reports the ones it
/// got); for baseline B the ext_proc filter's list entry is dropped.
fn render_envoy(stack: Stack, wiring: &Wiring) -> Result<String, KitError> {
    let template = std::fs::read_to_string(ENVOY_CONF).map_err(KitError::io(format!("reading {ENVOY_CONF}")))?;
    let text =
        envoy::render(&template, &envoy::Wiring { listen_port: 0, admin_port: 0, extproc: wiring.extproc, upstream: wiring.upstream })?;
    // Taking the filter out also checks that the shipped config has one.
    let bare = envoy::without_ext_proc(&text)?;
    Ok(if stack == Stack::EnvoyExtproc { text } else { bare })
}

pub struct EnvoySpec<'a> {
    pub binary: &'a Path,
    pub concurrency: u32,
    pub dir: PathBuf,
}

/// Starts one Envoy stack without waiting for it ([`wait_ready`] does).
pub fn start_envoy(stack: Stack, spec: &EnvoySpec, wiring: &Wiring) -> Result<Envoy, KitError> {
    let options = EnvoyOptions { binary: spec.binary, concurrency: spec.concurrency, dir: &spec.dir, listener: "ingress" };
    Envoy::spawn(&options, &render_envoy(stack, wiring)?)
}

/// LIVE on its admin port, then a benign GET / through it answers 200.
pub fn wait_ready(envoy: &mut Envoy) -> Result<(), KitError> {
    envoy.wait_ready(Duration::from_secs(30))?;
    let url = format!("http://{}/", envoy.addr);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while curl_status(&url, &[]) != Some(200) {
        if std::time::Instant::now() >= deadline {
            return Err(KitError::failed(format!("envoy did not answer {url} with 200 within 10 s"), envoy.log_text()));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(())
}
