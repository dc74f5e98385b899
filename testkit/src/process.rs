//! The `rampart` binary (or any server) as a child process: started with a given environment,
//! its listeners read from its log ("<what> listening addr=…"), killed on drop. For tests: the
//! functions panic with the child's log, which is what a failing test should print.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub struct Started {
    pub child: Child,
    pub listeners: Vec<SocketAddr>,
}

impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Spawns `cmd` (stderr is read here) and returns once it has logged `listeners` listening
/// addresses; panics with its log if it exits or takes longer than 90 s.
pub fn start_logged(mut cmd: Command, listeners: usize, what: &str) -> Started {
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap_or_else(|e| panic!("{what}: {e}"));
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut found = Vec::new();
    let mut log = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(90);
    while found.len() < listeners {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(line) = rx.recv_timeout(left) else {
            panic!("{what}: {} of {listeners} listeners within 90 s:\n{}", found.len(), log.join("\n"));
        };
        let plain = strip_ansi(&line);
        if let Some(addr) = plain.split("listening addr=").nth(1) {
            found.push(addr.trim().parse().unwrap());
        }
        log.push(plain);
    }
    // Keep draining the pipe so the child never blocks on a full stderr.
    std::thread::spawn(move || while rx.recv().is_ok() {});
    Started { child, listeners: found }
}

/// The log without terminal colour codes.
pub fn strip_ansi(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The status of `GET path` (None: no HTTP answer, e.g. a gRPC listener).
pub fn status(addr: SocketAddr, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").ok()?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).ok()?;
    std::str::from_utf8(&head).ok()?.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()
}

/// Waits (up to 90 s) until one of `listeners` answers `path` with `want`.
pub fn wait_for(listeners: &[SocketAddr], path: &str, want: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if listeners.iter().any(|&a| status(a, path) == Some(want)) {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: no listener of {listeners:?} answered {path} with {want}");
        std::thread::sleep(Duration::from_millis(100));
    }
}
