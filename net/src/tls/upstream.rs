//! The client side: how a proxy trusts its https upstream.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

use super::{provider, TlsError};

/// Which certificates an https upstream may present.
#[derive(Clone, Debug, Default)]
pub struct UpstreamTrust {
    /// Extra roots (WAF_UPSTREAM_CA_FILE), trusted besides the system's.
    pub ca: Vec<CertificateDer<'static>>,
    /// Accept any certificate (WAF_UPSTREAM_INSECURE_SKIP_VERIFY): the connection is still
    /// encrypted, but anyone on the path can impersonate the upstream.
    pub skip_verify: bool,
    /// Load the operating system's roots (off for a plain http upstream: nothing to verify).
    pub system_roots: bool,
}

/// A client configuration for the upstream connection: TLS 1.2/1.3, HTTP/1.1 by ALPN.
pub fn upstream_client_config(trust: &UpstreamTrust) -> Result<ClientConfig, TlsError> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?;
    let config = if trust.skip_verify {
        builder.dangerous().with_custom_certificate_verifier(Arc::new(AnyCertificate(provider))).with_no_client_auth()
    } else {
        builder.with_root_certificates(roots(trust)?).with_no_client_auth()
    };
    Ok(config)
}

fn roots(trust: &UpstreamTrust) -> Result<RootCertStore, TlsError> {
    let mut roots = RootCertStore::empty();
    if trust.system_roots {
        let native = rustls_native_certs::load_native_certs();
        for err in &native.errors {
            tracing::warn!(error = %err, "a system root certificate could not be loaded");
        }
        let (added, ignored) = roots.add_parsable_certificates(native.certs);
        tracing::debug!(added, ignored, "system root certificates for https upstreams");
    }
    for cert in &trust.ca {
        roots.add(cert.clone())?;
    }
    Ok(roots)
}

/// Trusts every certificate; still checks the handshake signatures, so the session key is
/// bound to the key the upstream presented.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
