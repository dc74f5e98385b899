//! TLS for a listener (termination with SNI and certificate hot reload) and for the client
//! side of a proxy (https upstreams). rustls on the `ring` provider: TLS 1.2 and 1.3 only,
//! the provider's default cipher suites (AEAD only, forward secrecy only).

mod pem;
mod reload;
mod sni;
mod upstream;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rustls::crypto::CryptoProvider;
use rustls::ServerConfig;
use thiserror::Error;
use tokio_rustls::TlsAcceptor;

pub use pem::load_certs;
pub use sni::CertStore;
pub use upstream::{upstream_client_config, UpstreamTrust};

/// A TLS setting that cannot be used; each message names the setting and the file.
#[derive(Debug, Error)]
pub enum TlsError {
    #[error("{setting}: cannot read {path}: {source}")]
    Read { setting: &'static str, path: PathBuf, source: std::io::Error },
    #[error("{setting}: {path} is not PEM or holds no {what}{detail}")]
    Pem { setting: &'static str, path: PathBuf, what: &'static str, detail: String },
    #[error("WAF_TLS_KEY {key} is not the private key of the certificate in WAF_TLS_CERT {cert}: {detail}")]
    KeyMismatch { cert: PathBuf, key: PathBuf, detail: String },
    #[error("WAF_TLS_CERT lists {certs} file(s) but WAF_TLS_KEY lists {keys}: give one key per certificate, in the same order")]
    Unpaired { certs: usize, keys: usize },
    #[error("TLS configuration: {0}")]
    Config(#[from] rustls::Error),
}

/// The one crypto provider every TLS endpoint of the process uses.
pub(crate) fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// One certificate chain and its private key, both PEM files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertPair {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// What a TLS listener is built from.
#[derive(Clone, Debug)]
pub struct TlsSettings {
    /// Certificate files (WAF_TLS_CERT), paired by position with `keys`; the first pair is
    /// the default certificate, served when the client names no host or an unknown one.
    pub certs: Vec<PathBuf>,
    pub keys: Vec<PathBuf>,
    /// How often the files' modification times are checked; zero turns reloading off.
    pub reload_every: Duration,
}

/// A listener's TLS side: the acceptor and the certificates it serves, reloadable.
#[derive(Clone)]
pub struct TlsServer {
    pub(crate) acceptor: TlsAcceptor,
    pub(crate) store: Arc<CertStore>,
    pub(crate) pairs: Arc<[CertPair]>,
    pub(crate) reload_every: Duration,
}

impl TlsServer {
    /// Loads every certificate and key now: a missing, unreadable or mismatched file is an
    /// error here (start-up), never on a connection.
    pub fn new(settings: TlsSettings) -> Result<Self, TlsError> {
        if settings.certs.len() != settings.keys.len() {
            return Err(TlsError::Unpaired { certs: settings.certs.len(), keys: settings.keys.len() });
        }
        let pairs: Arc<[CertPair]> =
            settings.certs.into_iter().zip(settings.keys).map(|(cert, key)| CertPair { cert, key }).collect::<Vec<_>>().into();
        let provider = provider();
        let store = Arc::new(CertStore::new(pem::load_pairs(&pairs, &provider)?));
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
            .with_no_client_auth()
            .with_cert_resolver(store.clone());
        // hyper's server sniffs the HTTP/2 preface, so both protocols are served either way;
        // offering h2 lets browsers and gRPC clients multiplex without prior knowledge.
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(TlsServer { acceptor: TlsAcceptor::from(Arc::new(config)), store, pairs, reload_every: settings.reload_every })
    }

    /// The certificates served now (for tests and start-up logs).
    pub fn store(&self) -> &Arc<CertStore> {
        &self.store
    }

    /// Checks the files every `reload_every` until `self`'s listener is gone (the watcher
    /// holds the store weakly).
    pub(crate) fn spawn_reloader(&self) -> Option<tokio::task::JoinHandle<()>> {
        if self.reload_every.is_zero() {
            return None;
        }
        let watcher = reload::Watcher::new(Arc::downgrade(&self.store), self.pairs.clone(), provider());
        Some(tokio::spawn(watcher.run(self.reload_every)))
    }
}
