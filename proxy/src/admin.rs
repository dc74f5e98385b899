//! Who may use the admin endpoints (POST /api/mode, /api/events, /api/events/recent, the
//! dashboard). The spec leaves authentication open, but an open mode switch on the public
//! port would let anyone turn the firewall off: by default only local peers (the socket
//! address, never a forwarded header) get in; WAF_ADMIN_TOKEN opens them to a bearer token.
//!
//! A browser on an allowed machine is a confused deputy: any page it visits can POST to
//! 127.0.0.1 (CSRF), and a page whose DNS name is re-pointed at 127.0.0.1 can read the answers
//! (DNS rebinding). So state-changing requests must not come from another site (`Origin`,
//! `Sec-Fetch-Site`), and admission by address only counts when the `Host` the browser sent
//! is one a rebinding page cannot have: an IP literal, a loopback name, or WAF_ADMIN_HOSTS.
//! Content-type checks (JSON only) are in [`require_json`]: an HTML form cannot send JSON.

use std::net::IpAddr;

use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST, ORIGIN};
use hyper::{HeaderMap, Method, Request};

use crate::dashboard::ADMIN_COOKIE;
use gate::client_ip::{any_contains, IpNet};
use gate::http::ApiError;

pub struct AdminPolicy {
    allow: Vec<IpNet>,
    token: Option<String>,
    /// Extra `Host` names (lower-case, no port) admission by address accepts (WAF_ADMIN_HOSTS).
    hosts: Vec<String>,
}

/// What the policy reads from a request.
pub struct AdminAsk<'a> {
    pub peer: IpAddr,
    pub method: &'a Method,
    pub headers: &'a HeaderMap,
    /// `Host`, or the URI's authority (HTTP/2 `:authority`).
    pub authority: Option<&'a str>,
}

impl<'a> AdminAsk<'a> {
    pub fn of<B>(peer: IpAddr, req: &'a Request<B>) -> Self {
        let authority = req.headers().get(HOST).and_then(|v| v.to_str().ok()).or_else(|| req.uri().authority().map(|a| a.as_str()));
        AdminAsk { peer, method: req.method(), headers: req.headers(), authority }
    }
}

impl AdminPolicy {
    pub fn new(allow: Vec<IpNet>, token: Option<String>, hosts: Vec<String>) -> Self {
        let hosts = hosts.into_iter().map(|h| h.trim().to_ascii_lowercase()).filter(|h| !h.is_empty()).collect();
        AdminPolicy { allow, token: token.filter(|t| !t.is_empty()), hosts }
    }

    pub fn check(&self, ask: &AdminAsk<'_>) -> Result<(), ApiError> {
        let changes_state = !matches!(*ask.method, Method::GET | Method::HEAD | Method::OPTIONS);
        if changes_state {
            reject_cross_site(ask)?;
        }
        let headers = ask.headers;
        if self.token.is_some() {
            let bearer = headers
                .get(AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")));
            // A rebinding page has neither: the cookie belongs to the real host name.
            if bearer.is_some_and(|p| self.token_matches(p.trim())) || cookie_token(headers).is_some_and(|c| self.token_matches(c)) {
                return Ok(());
            }
        }
        if any_contains(&self.allow, ask.peer) {
            // No Host at all (an HTTP/1.0 tool) cannot be a browser, so it cannot be rebinding.
            let Some(host) = ask.authority.map(host_of) else {
                return Ok(());
            };
            if self.host_allowed(&host) {
                return Ok(());
            }
            return Err(ApiError::Forbidden(format!(
                "admin endpoint: Host `{host}` is not a loopback name or IP; add it to WAF_ADMIN_HOSTS"
            )));
        }
        let how = if self.token.is_some() {
            "send `Authorization: Bearer <WAF_ADMIN_TOKEN>`"
        } else {
            "connect from an address in WAF_ADMIN_ALLOW or set WAF_ADMIN_TOKEN"
        };
        Err(ApiError::Forbidden(format!("admin endpoint: {how}")))
    }
}

impl AdminPolicy {
    /// The browser's way in: a page load cannot send a bearer header, so the dashboard accepts
    /// the token once (`?token=`) and keeps it in an HttpOnly, SameSite=Strict cookie (which
    /// other sites cannot make the browser send: no cross-site mode switch).
    pub fn token_matches(&self, presented: &str) -> bool {
        self.token.as_ref().is_some_and(|token| constant_time_eq(presented.as_bytes(), token.as_bytes()))
    }
}

impl AdminPolicy {
    /// IP literals and loopback names cannot be re-pointed by an attacker's DNS.
    fn host_allowed(&self, host: &str) -> bool {
        host.parse::<IpAddr>().is_ok() || host == "localhost" || host.ends_with(".localhost") || self.hosts.iter().any(|h| h == host)
    }
}

/// `host[:port]` or `[v6][:port]` → the lower-case host, brackets removed.
fn host_of(authority: &str) -> String {
    let authority = authority.trim();
    let host = match authority.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => {
            authority.rsplit_once(':').map_or(authority, |(h, port)| if port.bytes().all(|b| b.is_ascii_digit()) { h } else { authority })
        }
    };
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// Browsers label cross-site requests (`Sec-Fetch-Site`) and send `Origin` on every POST;
/// either naming another site refuses the request before credentials are even looked at.
fn reject_cross_site(ask: &AdminAsk<'_>) -> Result<(), ApiError> {
    let fetch_site = ask.headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()).unwrap_or("");
    if matches!(fetch_site, "cross-site" | "same-site") {
        return Err(ApiError::Forbidden(format!("admin endpoint: refused a {fetch_site} request (Sec-Fetch-Site)")));
    }
    if let Some(origin) = ask.headers.get(ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let origin_authority = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://"));
        let same = match (origin_authority, ask.authority) {
            (Some(o), Some(a)) => o.trim_end_matches('/').eq_ignore_ascii_case(a.trim()),
            _ => false,
        };
        if !same {
            return Err(ApiError::Forbidden(format!("admin endpoint: refused a request from origin `{origin}`")));
        }
    }
    Ok(())
}

/// State-changing admin requests carry JSON: a cross-site HTML form or a "simple" fetch can
/// only send text/plain, form or multipart bodies without a CORS preflight.
pub fn require_json(headers: &HeaderMap) -> Result<(), ApiError> {
    let content_type = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let essence = content_type.split(';').next().unwrap_or("").trim();
    if essence.eq_ignore_ascii_case("application/json") {
        return Ok(());
    }
    Err(ApiError::UnsupportedMediaType(format!("send Content-Type: application/json (got `{content_type}`)")))
}

fn cookie_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(hyper::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(ADMIN_COOKIE)?.strip_prefix('='))
}

/// Removes the admin cookie from a request bound for the upstream: the browser sends it with
/// every request to this origin (Path=/, the admin endpoints live under /api and /_waf), and
/// the application must never see the token.
pub fn strip_admin_cookie(headers: &mut HeaderMap) {
    let cookies: Vec<String> = headers.get_all(hyper::header::COOKIE).iter().filter_map(|v| v.to_str().ok().map(str::to_string)).collect();
    if !cookies.iter().any(|c| c.contains(ADMIN_COOKIE)) {
        return;
    }
    headers.remove(hyper::header::COOKIE);
    let kept: Vec<&str> = cookies
        .iter()
        .flat_map(|v| v.split(';'))
        .map(str::trim)
        .filter(|pair| !pair.is_empty() && pair.split('=').next() != Some(ADMIN_COOKIE))
        .collect();
    if !kept.is_empty() {
        if let Ok(value) = hyper::header::HeaderValue::from_str(&kept.join("; ")) {
            headers.insert(hyper::header::COOKIE, value);
        }
    }
}

/// Compares without an early exit: the loop always runs over the secret's length, so timing
/// reveals neither a matching prefix nor how long the secret is relative to the guess.
fn constant_time_eq(presented: &[u8], secret: &[u8]) -> bool {
    let mut diff = (presented.len() != secret.len()) as u8;
    for (i, s) in secret.iter().enumerate() {
        diff |= presented.get(i).copied().unwrap_or(0) ^ s;
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(policy: &AdminPolicy, peer: &str, headers: &HeaderMap) -> Result<(), ApiError> {
        policy.check(&AdminAsk { peer: peer.parse().unwrap(), method: &Method::GET, headers, authority: Some("127.0.0.1:8080") })
    }

    #[test]
    fn loopback_peer_or_token() {
        let policy = AdminPolicy::new(vec!["127.0.0.1".parse().unwrap()], Some("s3cret".into()), vec![]);
        let mut headers = HeaderMap::new();
        assert!(check(&policy, "127.0.0.1", &headers).is_ok());
        assert!(check(&policy, "127.0.0.2", &headers).is_err());
        headers.insert(AUTHORIZATION, "Bearer wrong".parse().unwrap());
        assert!(check(&policy, "127.0.0.2", &headers).is_err());
        headers.insert(AUTHORIZATION, "Bearer s3cret".parse().unwrap());
        assert!(check(&policy, "203.0.113.5", &headers).is_ok());
        headers.insert(AUTHORIZATION, "Bearer s3cret-and-more".parse().unwrap());
        assert!(check(&policy, "127.0.0.2", &headers).is_err());
        headers.insert(AUTHORIZATION, "Bearer s3cre".parse().unwrap());
        assert!(check(&policy, "127.0.0.2", &headers).is_err());
        let mut cookie = HeaderMap::new();
        cookie.insert(hyper::header::COOKIE, "theme=dark; rampart_admin=s3cret".parse().unwrap());
        assert!(check(&policy, "203.0.113.5", &cookie).is_ok());
        let mut forwarded = cookie.clone();
        strip_admin_cookie(&mut forwarded);
        assert_eq!(forwarded[hyper::header::COOKIE], "theme=dark");
        let no_token = AdminPolicy::new(vec![], Some(String::new()), vec![]);
        assert!(check(&no_token, "127.0.0.1", &headers).is_err());
    }

    #[test]
    fn rebinding_hosts_and_cross_site_posts_are_refused() {
        let policy = AdminPolicy::new(vec!["127.0.0.1".parse().unwrap()], None, vec!["waf.internal".into()]);
        let headers = HeaderMap::new();
        let ask = |method: &'static Method, headers: &'static HeaderMap, authority: &'static str| AdminAsk {
            peer: "127.0.0.1".parse().unwrap(),
            method,
            headers,
            authority: Some(authority),
        };
        let empty: &'static HeaderMap = Box::leak(Box::new(headers));
        for ok in ["127.0.0.1:8080", "localhost:8080", "[::1]:8080", "app.localhost", "WAF.internal:80", "10.1.2.3"] {
            assert!(policy.check(&ask(&Method::GET, empty, ok)).is_ok(), "{ok}");
        }
        assert!(policy.check(&ask(&Method::GET, empty, "rebind.attacker.example:8080")).is_err());
        let mut evil = HeaderMap::new();
        evil.insert(ORIGIN, "http://evil.example".parse().unwrap());
        let evil: &'static HeaderMap = Box::leak(Box::new(evil));
        assert!(policy.check(&ask(&Method::POST, evil, "127.0.0.1:8080")).is_err());
        let mut same = HeaderMap::new();
        same.insert(ORIGIN, "http://127.0.0.1:8080".parse().unwrap());
        same.insert("sec-fetch-site", "same-origin".parse().unwrap());
        let same: &'static HeaderMap = Box::leak(Box::new(same));
        assert!(policy.check(&ask(&Method::POST, same, "127.0.0.1:8080")).is_ok());
        let mut cross = HeaderMap::new();
        cross.insert("sec-fetch-site", "cross-site".parse().unwrap());
        let cross: &'static HeaderMap = Box::leak(Box::new(cross));
        assert!(policy.check(&ask(&Method::POST, cross, "127.0.0.1:8080")).is_err());
        let mut json = HeaderMap::new();
        json.insert(CONTENT_TYPE, "application/json; charset=utf-8".parse().unwrap());
        assert!(require_json(&json).is_ok());
        json.insert(CONTENT_TYPE, "text/plain".parse().unwrap());
        assert!(require_json(&json).is_err());
        assert!(require_json(&HeaderMap::new()).is_err());
    }
}
