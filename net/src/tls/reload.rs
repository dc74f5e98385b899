//! Certificate hot reload: the files' modification times (and sizes) are polled; when any
//! changes, every pair is loaded again and swapped in whole. A pair that fails to load (a
//! half-written file, a key that does not match) keeps the old certificates and logs why;
//! the next change of any file tries again. Polling, not inotify: it sees a file replaced
//! by rename, a Kubernetes secret's symlink swap and network file systems alike.

use std::path::Path;
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime};

use rustls::crypto::CryptoProvider;

use super::{pem, CertPair, CertStore};

/// What identifies one version of a file.
type Stamp = Option<(SystemTime, u64)>;

fn stamp(path: &Path) -> Stamp {
    // `metadata` follows symlinks: a swapped link target counts as a change.
    std::fs::metadata(path).ok().and_then(|m| Some((m.modified().ok()?, m.len())))
}

pub(super) struct Watcher {
    store: Weak<CertStore>,
    pairs: Arc<[CertPair]>,
    provider: Arc<CryptoProvider>,
    seen: Vec<Stamp>,
}

impl Watcher {
    pub(super) fn new(store: Weak<CertStore>, pairs: Arc<[CertPair]>, provider: Arc<CryptoProvider>) -> Self {
        let seen = Self::stamps(&pairs);
        Watcher { store, pairs, provider, seen }
    }

    fn stamps(pairs: &[CertPair]) -> Vec<Stamp> {
        pairs.iter().flat_map(|p| [stamp(&p.cert), stamp(&p.key)]).collect()
    }

    pub(super) async fn run(mut self, every: Duration) {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tick.tick().await;
            let Some(store) = self.store.upgrade() else { return };
            self.check(&store);
        }
    }

    fn check(&mut self, store: &CertStore) {
        let now = Self::stamps(&self.pairs);
        if now == self.seen {
            return;
        }
        self.seen = now;
        match pem::load_pairs(&self.pairs, &self.provider) {
            Ok(certs) => {
                store.replace(certs);
                tracing::info!(certificates = self.pairs.len(), "TLS certificates reloaded");
            }
            Err(err) => tracing::error!(error = %err, "TLS certificate reload failed; still serving the previous certificates"),
        }
    }
}
