//! Picking the certificate for a handshake by the client's SNI name.
//!
//! Names come from the certificates themselves (their DNS and IP subject alternative names,
//! checked by webpki exactly as a client would), so an operator lists files, not names. The
//! first certificate whose names cover the SNI name wins; no SNI, or a name no certificate
//! covers, gets the first certificate (the default) rather than a failed handshake.

use std::sync::{Arc, RwLock};

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls_pki_types::ServerName;

/// The certificates a listener serves, swapped whole by a reload.
#[derive(Debug)]
pub struct CertStore {
    current: RwLock<Arc<Vec<Arc<CertifiedKey>>>>,
}

impl CertStore {
    pub(crate) fn new(certs: Vec<Arc<CertifiedKey>>) -> Self {
        CertStore { current: RwLock::new(Arc::new(certs)) }
    }

    pub(crate) fn replace(&self, certs: Vec<Arc<CertifiedKey>>) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(certs);
    }

    fn snapshot(&self) -> Arc<Vec<Arc<CertifiedKey>>> {
        self.current.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The certificate a handshake naming `sni` gets.
    pub fn pick(&self, sni: Option<&str>) -> Option<Arc<CertifiedKey>> {
        let certs = self.snapshot();
        let default = certs.first().cloned();
        if certs.len() < 2 {
            return default;
        }
        let Some(name) = sni.and_then(|n| ServerName::try_from(n).ok()) else {
            return default;
        };
        certs.iter().find(|c| covers(c, &name)).cloned().or(default)
    }
}

fn covers(cert: &CertifiedKey, name: &ServerName<'_>) -> bool {
    let Some(leaf) = cert.cert.first() else { return false };
    webpki::EndEntityCert::try_from(leaf).is_ok_and(|leaf| leaf.verify_is_valid_for_subject_name(name).is_ok())
}

impl ResolvesServerCert for CertStore {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.pick(hello.server_name())
    }
}
