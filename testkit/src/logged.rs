//! A long-running child (Rampart, Envoy) with its stdout and stderr in a log file, killed on
//! drop; and waiting for an HTTP answer from it while noticing when it exits.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::KitError;

pub struct LoggedChild {
    child: Child,
    pub name: String,
    pub log: PathBuf,
}

impl LoggedChild {
    /// Spawns `cmd` with both output streams appended to `log_dir/<name>.log`.
    pub fn spawn(name: &str, mut cmd: Command, log_dir: &Path) -> Result<LoggedChild, KitError> {
        let log = log_dir.join(format!("{name}.log"));
        let file = std::fs::File::create(&log).map_err(KitError::io(format!("creating {}", log.display())))?;
        let err = file.try_clone().map_err(KitError::io("duplicating a log handle"))?;
        let child = cmd.stdin(Stdio::null()).stdout(file).stderr(err).spawn().map_err(KitError::io(format!("starting {name}")))?;
        Ok(LoggedChild { child, name: name.to_string(), log })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The last 40 lines of its log.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// How many log lines contain `needle` so far.
    pub fn log_count(&self, needle: &str) -> usize {
        std::fs::read_to_string(&self.log).unwrap_or_default().lines().filter(|l| l.contains(needle)).count()
    }

    /// Waits until GET `url` answers 200 (through curl: it speaks TLS too); an error with the
    /// log's tail when the child exits first or `within` passes.
    pub fn wait_200(&mut self, url: &str, within: Duration) -> Result<(), KitError> {
        let deadline = Instant::now() + within;
        loop {
            if curl_status(url, &[]) == Some(200) {
                return Ok(());
            }
            if let Ok(Some(exit)) = self.child.try_wait() {
                return Err(KitError::failed(format!("{} exited with {exit} before answering {url}", self.name), self.log_tail()));
            }
            if Instant::now() >= deadline {
                return Err(KitError::failed(format!("{} did not answer {url} with 200 within {within:?}", self.name), self.log_tail()));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for LoggedChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The status of a request made with curl (`extra` = more curl arguments: method, headers,
/// body); None when nothing answers.
pub fn curl_status(url: &str, extra: &[&str]) -> Option<u16> {
    let out = Command::new("curl")
        .args(["-sk", "-o", "/dev/null", "--max-time", "3", "-w", "%{http_code}"])
        .args(extra)
        .arg(url)
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok().filter(|&code| code != 0)
}

/// The body of GET `url` through curl (empty when nothing answers).
pub fn curl_body(url: &str) -> String {
    Command::new("curl")
        .args(["-s", "--max-time", "3", url])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}
