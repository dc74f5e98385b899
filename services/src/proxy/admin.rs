//! Who may use the admin endpoints (POST /api/mode, /api/events, /api/events/recent, the
//! dashboard). The spec leaves authentication open, but an open mode switch on the public
//! port would let anyone turn the firewall off: by default only local peers (the socket
//! address, never a forwarded header) get in; WAF_ADMIN_TOKEN opens them to a bearer token.

use std::net::IpAddr;

use hyper::header::AUTHORIZATION;
use hyper::HeaderMap;

use crate::client_ip::{any_contains, IpNet};
use crate::http::ApiError;

pub struct AdminPolicy {
    allow: Vec<IpNet>,
    token: Option<String>,
}

impl AdminPolicy {
    pub fn new(allow: Vec<IpNet>, token: Option<String>) -> Self {
        AdminPolicy { allow, token: token.filter(|t| !t.is_empty()) }
    }

    pub fn check(&self, peer: IpAddr, headers: &HeaderMap) -> Result<(), ApiError> {
        if self.token.is_some() {
            let bearer = headers
                .get(AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")));
            if bearer.is_some_and(|p| self.token_matches(p.trim())) || cookie_token(headers).is_some_and(|c| self.token_matches(c)) {
                return Ok(());
            }
        }
        if any_contains(&self.allow, peer) {
            return Ok(());
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

pub const ADMIN_COOKIE: &str = "rampart_admin";

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

    #[test]
    fn loopback_peer_or_token() {
        let policy = AdminPolicy::new(vec!["127.0.0.1".parse().unwrap()], Some("s3cret".into()));
        let mut headers = HeaderMap::new();
        assert!(policy.check("127.0.0.1".parse().unwrap(), &headers).is_ok());
        assert!(policy.check("127.0.0.2".parse().unwrap(), &headers).is_err());
        headers.insert(AUTHORIZATION, "Bearer wrong".parse().unwrap());
        assert!(policy.check("127.0.0.2".parse().unwrap(), &headers).is_err());
        headers.insert(AUTHORIZATION, "Bearer s3cret".parse().unwrap());
        assert!(policy.check("203.0.113.5".parse().unwrap(), &headers).is_ok());
        headers.insert(AUTHORIZATION, "Bearer s3cret-and-more".parse().unwrap());
        assert!(policy.check("127.0.0.2".parse().unwrap(), &headers).is_err());
        headers.insert(AUTHORIZATION, "Bearer s3cre".parse().unwrap());
        assert!(policy.check("127.0.0.2".parse().unwrap(), &headers).is_err());
        let mut cookie = HeaderMap::new();
        cookie.insert(hyper::header::COOKIE, "theme=dark; rampart_admin=s3cret".parse().unwrap());
        assert!(policy.check("203.0.113.5".parse().unwrap(), &cookie).is_ok());
        let mut forwarded = cookie.clone();
        strip_admin_cookie(&mut forwarded);
        assert_eq!(forwarded[hyper::header::COOKIE], "theme=dark");
        let no_token = AdminPolicy::new(vec![], Some(String::new()));
        assert!(no_token.check("127.0.0.1".parse().unwrap(), &headers).is_err());
    }
}
