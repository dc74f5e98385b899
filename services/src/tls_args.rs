//! TLS settings of the proxy: terminating TLS on PROXY_ADDR, and trusting an https upstream.
//! Without WAF_TLS_CERT / WAF_TLS_KEY the proxy listens in plain HTTP, as it always has.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use net::tls::{upstream_client_config, UpstreamTrust};
use net::{NetError, TlsServer, TlsSettings};
use rustls::pki_types::CertificateDer;

#[derive(Clone, Debug, Args)]
pub struct TlsArgs {
    /// PEM certificate chain(s), leaf first; comma-separated (or the flag repeated) for several
    /// host names (SNI). The first is the default certificate. Set with WAF_TLS_KEY: the proxy
    /// then speaks TLS 1.2/1.3 only on PROXY_ADDR (ALPN h2 and http/1.1).
    #[arg(
        id = "tls_cert",
        long = "tls-cert",
        env = "WAF_TLS_CERT",
        value_name = "WAF_TLS_CERT",
        value_delimiter = ',',
        requires = "tls_key"
    )]
    pub certs: Vec<PathBuf>,
    /// PEM private key(s) (PKCS#8, PKCS#1 or SEC1), one per WAF_TLS_CERT file, in the same order.
    #[arg(id = "tls_key", long = "tls-key", env = "WAF_TLS_KEY", value_name = "WAF_TLS_KEY", value_delimiter = ',', requires = "tls_cert")]
    pub keys: Vec<PathBuf>,
    /// Seconds between checks of the certificate and key files for changes (a change loads
    /// them again; a bad new file keeps the old certificate). 0: no reloading.
    #[arg(long = "tls-reload-secs", env = "WAF_TLS_RELOAD_SECS", value_name = "WAF_TLS_RELOAD_SECS", default_value = "5", value_parser = clap::value_parser!(u64).range(0..=86_400))]
    pub reload_secs: u64,
    /// PEM CA bundle trusted for an https TARGET_URL besides the system's roots.
    #[arg(long = "upstream-ca-file", env = "WAF_UPSTREAM_CA_FILE", value_name = "WAF_UPSTREAM_CA_FILE", value_parser = parse_ca_file)]
    pub upstream_ca: Option<CaBundle>,
    /// Accept any certificate from an https TARGET_URL (self-signed upstreams). The traffic
    /// stays encrypted but the upstream is not authenticated; logged at start-up.
    #[arg(
        long = "upstream-insecure-skip-verify",
        env = "WAF_UPSTREAM_INSECURE_SKIP_VERIFY",
        value_name = "WAF_UPSTREAM_INSECURE_SKIP_VERIFY"
    )]
    pub upstream_insecure: bool,
}

/// The certificates of WAF_UPSTREAM_CA_FILE, read when the setting is parsed so that a bad
/// file stops start-up.
#[derive(Clone, Debug)]
pub struct CaBundle(pub Vec<CertificateDer<'static>>);

fn parse_ca_file(s: &str) -> Result<CaBundle, String> {
    let certs = net::tls::load_certs("WAF_UPSTREAM_CA_FILE", s.as_ref()).map_err(|e| e.to_string())?;
    // Trial build: a certificate rustls refuses as a root is reported now, not on a request.
    let trial = UpstreamTrust { ca: certs.clone(), skip_verify: false, system_roots: false };
    upstream_client_config(&trial).map_err(|e| format!("WAF_UPSTREAM_CA_FILE: {s}: {e}"))?;
    Ok(CaBundle(certs))
}

/// TARGET_URL: `http://` or `https://`, an authority, no query string.
pub fn parse_target_url(s: &str) -> Result<hyper::Uri, String> {
    let uri: hyper::Uri = s.parse().map_err(|e| format!("`{s}` is not a URL ({e}); expected http://host:port or https://host:port"))?;
    match (uri.scheme_str(), uri.authority()) {
        (Some("http" | "https"), Some(_)) if uri.query().is_none() => Ok(uri),
        (Some("http" | "https"), Some(_)) => Err(format!("`{s}` must not carry a query string")),
        _ => Err(format!("`{s}` must be an absolute http:// or https:// URL such as http://127.0.0.1:3000")),
    }
}

impl TlsArgs {
    /// The proxy terminates TLS.
    pub fn enabled(&self) -> bool {
        !self.certs.is_empty()
    }

    /// The listener's TLS side, certificates loaded now; `None` for plain HTTP.
    pub fn server(&self) -> Result<Option<TlsServer>, NetError> {
        if !self.enabled() {
            return Ok(None);
        }
        let settings =
            TlsSettings { certs: self.certs.clone(), keys: self.keys.clone(), reload_every: Duration::from_secs(self.reload_secs) };
        let server = TlsServer::new(settings)?;
        tracing::info!(certificates = self.certs.len(), reload_secs = self.reload_secs, "the proxy terminates TLS");
        Ok(Some(server))
    }

    /// The client configuration for `target` (used only when it is https).
    pub fn upstream_client(&self, target: &hyper::Uri) -> rustls::ClientConfig {
        let https = target.scheme_str() == Some("https");
        if https && self.upstream_insecure {
            tracing::warn!(
                target = %target,
                "WAF_UPSTREAM_INSECURE_SKIP_VERIFY is on: the upstream's certificate is NOT verified; anyone on the path can impersonate it"
            );
        }
        let trust = UpstreamTrust {
            ca: self.upstream_ca.as_ref().map(|ca| ca.0.clone()).unwrap_or_default(),
            skip_verify: self.upstream_insecure,
            system_roots: https,
        };
        upstream_client_config(&trust).unwrap_or_else(|err| {
            // The CA file was parsed at start-up; only a certificate rustls refuses as a root
            // lands here. Nothing is trusted then: every https call fails with a 502.
            tracing::error!(error = %err, "WAF_UPSTREAM_CA_FILE cannot be used as trust roots; https upstream calls will fail");
            upstream_client_config(&UpstreamTrust::default()).expect("an empty root store builds")
        })
    }
}
