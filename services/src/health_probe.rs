//! `rampart health URL`: one GET to a local health endpoint, exit 0 on a 2xx answer. The
//! container image's HEALTHCHECK runs it, so the image needs no curl or shell. Plain HTTP to
//! a literal address only: it probes this container, never a name to resolve.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use clap::Args;

#[derive(Clone, Debug, Args)]
pub struct HealthArgs {
    /// What to probe: http://ADDRESS:PORT/PATH (e.g. the proxy's /_waf/health, the inference
    /// service's /health, the auth adapter's and ext_proc's /_waf/health on their metrics port).
    #[arg(default_value = "http://127.0.0.1:8080/_waf/health")]
    pub url: String,
    /// Longest the probe waits for the answer, in milliseconds.
    #[arg(long = "timeout-ms", default_value = "2000", value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub timeout_ms: u64,
}

/// Probes `args.url`; the error says what failed (printed by `main`, exit status 1).
pub fn probe(args: &HealthArgs) -> Result<u16, String> {
    let rest = args.url.strip_prefix("http://").ok_or_else(|| format!("`{}`: only http:// URLs are probed", args.url))?;
    let (authority, path) = rest.split_once('/').map_or((rest, "/".to_string()), |(a, p)| (a, format!("/{p}")));
    let addr: SocketAddr = authority.parse().map_err(|_| format!("`{authority}` is not an IP:PORT address"))?;
    let timeout = Duration::from_millis(args.timeout_ms);
    let mut stream = TcpStream::connect_timeout(&addr, timeout).map_err(|e| format!("{addr}: {e}"))?;
    stream.set_read_timeout(Some(timeout)).and_then(|()| stream.set_write_timeout(Some(timeout))).map_err(|e| e.to_string())?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n").map_err(|e| format!("{addr}: {e}"))?;
    // The status line is all that is needed; 64 bytes hold it.
    let mut head = [0u8; 64];
    let mut read = 0;
    while read < head.len() {
        match stream.read(&mut head[read..]) {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(e) => return Err(format!("{addr}: {e}")),
        }
        if head[..read].contains(&b'\n') {
            break;
        }
    }
    let line = String::from_utf8_lossy(&head[..read]);
    let status: u16 = line
        .strip_prefix("HTTP/1.")
        .and_then(|l| l.get(2..5))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| format!("{addr}: not an HTTP answer: {:?}", line.lines().next().unwrap_or("")))?;
    if (200..300).contains(&status) {
        Ok(status)
    } else {
        Err(format!("{} answered {status}", args.url))
    }
}
