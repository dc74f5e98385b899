//! The audit log: every event as one JSON line, to stdout or a file, written by its own
//! thread so a slow disk or pipe never holds up a request.

use std::fs::OpenOptions;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;

/// Where audit lines go (WAF_AUDIT_LOG: `stdout`, `off`, or a file path).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuditTarget {
    Stdout,
    Off,
    File(PathBuf),
}

impl std::str::FromStr for AuditTarget {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "stdout" | "-" => AuditTarget::Stdout,
            "off" | "none" => AuditTarget::Off,
            "" => return Err("WAF_AUDIT_LOG is empty; use stdout, off, or a file path".into()),
            path => AuditTarget::File(PathBuf::from(path)),
        })
    }
}

/// Lines waiting for the writer before new ones are dropped (and counted).
const QUEUE_LINES: usize = 16_384;
/// Bytes waiting for the writer before new lines are dropped (and counted): a stuck sink holds
/// at most this much, whatever the line sizes (a line is at most
/// [`super::caps::MAX_EVENT_BYTES`]).
pub const QUEUE_BYTES: usize = 8 << 20;

/// What the writer is handed: a line, or a request to write and flush everything before it.
enum Queued {
    Line(Bytes),
    Flush(SyncSender<()>),
}

/// Every writer this process started, for [`flush_all`] at exit.
static WRITERS: Mutex<Vec<SyncSender<Queued>>> = Mutex::new(Vec::new());

/// A handle on the writer thread; clones share it (one writer per process keeps lines whole).
#[derive(Clone)]
pub struct AuditLog {
    queue: SyncSender<Queued>,
    /// Bytes queued and not yet written.
    queued: Arc<AtomicUsize>,
}

impl AuditLog {
    /// Opens the target (appending to a file) and starts the writer; `None` for `off`.
    pub fn open(target: &AuditTarget) -> Result<Option<AuditLog>, std::io::Error> {
        let sink: Box<dyn Write + Send> = match target {
            AuditTarget::Off => return Ok(None),
            AuditTarget::Stdout => Box::new(std::io::stdout()),
            AuditTarget::File(path) => Box::new(OpenOptions::new().create(true).append(true).open(path)?),
        };
        Self::start(sink).map(Some)
    }

    fn start(sink: Box<dyn Write + Send>) -> Result<AuditLog, std::io::Error> {
        let (queue, lines) = sync_channel(QUEUE_LINES);
        let queued = Arc::new(AtomicUsize::new(0));
        let written = queued.clone();
        std::thread::Builder::new().name("rampart-audit".into()).spawn(move || write_lines(lines, sink, &written))?;
        WRITERS.lock().unwrap_or_else(|e| e.into_inner()).push(queue.clone());
        Ok(AuditLog { queue, queued })
    }

    /// Queues one event as a line, counting it in `metrics` when it had to be dropped.
    pub fn write_event(&self, event: &super::Event, metrics: &crate::metrics::Metrics) {
        match serde_json::to_vec(event) {
            Ok(line) => {
                if !self.write(Bytes::from(line)) {
                    metrics.audit_dropped.inc();
                }
            }
            Err(err) => tracing::error!(error = %err, "event not serialisable"),
        }
    }

    /// [`flush_all`] for this log alone.
    pub fn flush(&self, timeout: Duration) -> bool {
        flush_writer(&self.queue, Instant::now() + timeout)
    }

    /// Queues one line; false when the writer is this far behind and the line was dropped.
    pub fn write(&self, json: Bytes) -> bool {
        let size = json.len();
        if self.queued.fetch_add(size, Ordering::Relaxed) + size > QUEUE_BYTES {
            self.queued.fetch_sub(size, Ordering::Relaxed);
            return false;
        }
        match self.queue.try_send(Queued::Line(json)) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.queued.fetch_sub(size, Ordering::Relaxed);
                false
            }
        }
    }
}

/// How long the writer gathers lines after the first of a burst before writing them.
///
/// Why: a writer blocked in `recv` is woken by every line that finds the queue empty, and
/// under load that was every line: a futex wake and two context switches per request (about
/// 20 µs of CPU per proxied request with `WAF_AUDIT_LOG=stdout`, the default, against
/// `off`). While the writer sleeps, senders find no one to wake and only enqueue, so a busy
/// proxy pays one wake per window instead of one per request. 5 ms is nothing to a log reader,
/// and the queue's caps bound what a window can hold.
const GATHER: Duration = Duration::from_millis(5);

fn write_lines(lines: Receiver<Queued>, sink: Box<dyn Write + Send>, queued: &AtomicUsize) {
    let mut out = BufWriter::with_capacity(64 * 1024, sink);
    let mut acks = Vec::new();
    while let Ok(first) = lines.recv() {
        if matches!(first, Queued::Line(_)) {
            std::thread::sleep(GATHER);
        }
        let mut next = Some(first);
        // Drain what is queued, then flush once: one write per burst, not per line.
        while let Some(item) = next {
            match item {
                Queued::Line(line) => {
                    let ok = out.write_all(&line).and_then(|_| out.write_all(b"\n"));
                    if let Err(err) = ok {
                        tracing::error!(error = %err, "audit log write failed");
                    }
                    queued.fetch_sub(line.len(), Ordering::Relaxed);
                }
                Queued::Flush(ack) => acks.push(ack),
            }
            next = lines.try_recv().ok();
        }
        if let Err(err) = out.flush() {
            tracing::error!(error = %err, "audit log flush failed");
        }
        for ack in acks.drain(..) {
            let _ = ack.try_send(());
        }
    }
}

/// Writes and flushes every line queued so far in every audit log of the process, waiting at
/// most `timeout` in all; false when a writer did not answer in time (a stuck sink). Called
/// once the servers have stopped, so the last events (still inside a writer's gathering
/// window) are not lost when the process exits.
pub fn flush_all(timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    let writers = WRITERS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    // Every writer is asked, even after one has failed to answer.
    let answered = writers.iter().filter(|writer| flush_writer(writer, deadline)).count();
    answered == writers.len()
}

fn flush_writer(writer: &SyncSender<Queued>, deadline: Instant) -> bool {
    let (ack, done) = sync_channel(1);
    let mut request = Queued::Flush(ack);
    // A full queue is being drained by its writer: retry until there is room.
    loop {
        match writer.try_send(request) {
            Ok(()) => break,
            Err(TrySendError::Full(back)) if Instant::now() < deadline => {
                request = back;
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(_) => return false,
        }
    }
    done.recv_timeout(deadline.saturating_duration_since(Instant::now())).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink that never finishes a write: a stuck disk or a pipe nobody reads.
    struct Stuck;
    impl Write for Stuck {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            std::thread::park();
            Ok(0)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_stuck_sink_holds_at_most_the_queue_bytes() {
        let log = AuditLog::start(Box::new(Stuck)).unwrap();
        // 5 KB lines (the largest event): 16,384 of them would be 80 MB.
        let line = Bytes::from(vec![b'x'; super::super::caps::MAX_EVENT_BYTES]);
        let mut accepted = 0usize;
        for _ in 0..QUEUE_LINES {
            if log.write(line.clone()) {
                accepted += line.len();
            }
        }
        println!("audit queue held {accepted} bytes of 5 KB lines before dropping");
        assert!(accepted <= QUEUE_BYTES + (64 << 10) + line.len(), "{accepted}");
        assert!(!log.write(line), "a full queue drops");
    }

    /// An audit log on a fresh file in its own temporary folder (removed by the caller).
    fn log_in_temp(name: &str) -> (AuditLog, PathBuf, PathBuf) {
        let dir = std::env::temp_dir().join(format!("rampart-audit-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("audit.jsonl");
        let log = AuditLog::open(&AuditTarget::File(path.clone())).unwrap().unwrap();
        (log, dir, path)
    }

    #[test]
    fn lines_reach_the_file() {
        let (log, dir, path) = log_in_temp("lines");
        assert!(log.write(Bytes::from_static(b"{\"a\":1}")));
        assert!(log.write(Bytes::from_static(b"{\"a\":2}")));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            if text == "{\"a\":1}\n{\"a\":2}\n" {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "audit file holds {text:?}");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        std::fs::remove_dir_all(dir).ok();
    }

    /// The writer gathers lines for a few milliseconds; what is queued when the process stops
    /// must still reach the file.
    #[test]
    fn flush_all_writes_what_is_queued() {
        let (log, dir, path) = log_in_temp("flush");
        for n in 0..200 {
            assert!(log.write(Bytes::from(format!("{{\"n\":{n}}}"))));
        }
        assert!(log.flush(Duration::from_secs(5)), "the writer answered");
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 200, "{text:?}");
        assert!(text.ends_with("{\"n\":199}\n"));
        std::fs::remove_dir_all(dir).ok();
    }
}
