//! Reading PEM files into rustls types; every failure names the setting and the file.

use std::path::Path;
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use super::{CertPair, TlsError};

fn read(setting: &'static str, path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read { setting, path: path.to_path_buf(), source })
}

/// Every certificate in a PEM file (a chain, leaf first; or a CA bundle).
pub fn load_certs(setting: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem_error = |detail: String| TlsError::Pem { setting, path: path.to_path_buf(), what: "certificate", detail };
    let text = read(setting, path)?;
    let certs = CertificateDer::pem_slice_iter(&text).collect::<Result<Vec<_>, _>>().map_err(|e| pem_error(format!(" ({e})")))?;
    if certs.is_empty() {
        return Err(pem_error(String::new()));
    }
    Ok(certs)
}

fn load_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let text = read("WAF_TLS_KEY", path)?;
    PrivateKeyDer::from_pem_slice(&text).map_err(|e| TlsError::Pem {
        setting: "WAF_TLS_KEY",
        path: path.to_path_buf(),
        what: "private key (PKCS#8, PKCS#1 or SEC1)",
        detail: format!(" ({e})"),
    })
}

/// One chain and its key, checked to belong together.
fn load_pair(pair: &CertPair, provider: &CryptoProvider) -> Result<Arc<CertifiedKey>, TlsError> {
    let chain = load_certs("WAF_TLS_CERT", &pair.cert)?;
    let key = load_key(&pair.key)?;
    let mismatch = |e: rustls::Error| TlsError::KeyMismatch { cert: pair.cert.clone(), key: pair.key.clone(), detail: e.to_string() };
    CertifiedKey::from_der(chain, key, provider).map(Arc::new).map_err(mismatch)
}

/// Every pair, or the first failure: a reload is all or nothing.
pub(super) fn load_pairs(pairs: &[CertPair], provider: &CryptoProvider) -> Result<Vec<Arc<CertifiedKey>>, TlsError> {
    pairs.iter().map(|pair| load_pair(pair, provider)).collect()
}
