//! The live dashboard (spec 1.8), served by the proxy at `/_waf/dashboard`, admin-restricted
//! like the admin APIs. Assets are compiled into the binary: the page works offline, with no
//! CDN or external font, under a strict Content-Security-Policy (no inline script, nothing
//! from other origins) — the feed shows attack payloads, and the page must never run them.

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE, LOCATION, SET_COOKIE};
use hyper::{Response, StatusCode};

pub const PREFIX: &str = "/_waf/dashboard";

/// The cookie [`login_redirect`] sets: the admin token, for a browser that cannot send a
/// bearer header. The proxy's admin policy reads it and strips it from forwarded requests.
pub const ADMIN_COOKIE: &str = "rampart_admin";

const INDEX: &str = include_str!("assets/index.html");
const APP_JS: &str = include_str!("assets/app.js");
const DEMO_JS: &str = include_str!("assets/demo.js");
const EXCLUDE_JS: &str = include_str!("assets/exclude.js");
const APP_CSS: &str = include_str!("assets/app.css");
/// The demo panel's catalogue is data, not code: groups of items with a title, description,
/// method, path, body and whether the item is an attack.
const DEMOS: &str = include_str!("assets/demos.json");

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The asset at `path` (below [`PREFIX`]), with its content type.
pub fn asset(path: &str) -> Option<(&'static str, &'static str)> {
    Some(match path.strip_prefix(PREFIX)? {
        "" | "/" => (INDEX, "text/html; charset=utf-8"),
        "/app.js" => (APP_JS, "text/javascript; charset=utf-8"),
        "/demo.js" => (DEMO_JS, "text/javascript; charset=utf-8"),
        "/exclude.js" => (EXCLUDE_JS, "text/javascript; charset=utf-8"),
        "/app.css" => (APP_CSS, "text/css; charset=utf-8"),
        "/demos.json" => (DEMOS, "application/json"),
        _ => return None,
    })
}

/// The page's only dynamic resource: whether a policy file is in use (the feed's "exclude"
/// button writes to it; without one the page says why there is none).
pub const POLICY_INFO: &str = "/_waf/dashboard/policy.json";

pub fn policy_info(file: Option<&std::path::Path>) -> Response<Full<Bytes>> {
    let body = serde_json::json!({ "policy_file": file.is_some(), "path": file.map(|p| p.display().to_string()) });
    let mut resp = asset_response("", "application/json");
    *resp.body_mut() = Full::new(Bytes::from(body.to_string()));
    resp
}

pub fn asset_response(body: &'static str, content_type: &'static str) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    let headers = resp.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert("content-security-policy", HeaderValue::from_static(CSP));
    headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// `?token=` accepted: keep it in a cookie and drop it from the address bar.
/// Rampart's own path prefixes: the admin cookie is sent to these only (one cookie per path),
/// never to the application behind the proxy.
const COOKIE_PATHS: [&str; 2] = ["/_waf", "/api"];

pub fn login_redirect(token: &str, secure: bool) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::new()));
    *resp.status_mut() = StatusCode::SEE_OTHER;
    resp.headers_mut().insert(LOCATION, HeaderValue::from_static(PREFIX));
    let secure = if secure { "; Secure" } else { "" };
    for path in COOKIE_PATHS {
        let cookie = format!("{}={token}; Path={path}; HttpOnly; SameSite=Strict{secure}", ADMIN_COOKIE);
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            resp.headers_mut().append(SET_COOKIE, value);
        }
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assets_resolve_and_the_catalogue_is_valid_json() {
        assert!(asset("/_waf/dashboard").is_some());
        assert!(asset("/_waf/dashboard/app.js").is_some());
        assert!(asset("/_waf/dashboard/demo.js").is_some());
        assert!(asset("/_waf/dashboard/exclude.js").is_some());
        assert!(asset("/_waf/dashboard/nope").is_none());
        assert!(asset("/other").is_none());
        let demos: serde_json::Value = serde_json::from_str(DEMOS).expect("demos.json is JSON");
        assert!(demos["groups"].is_array());
    }
}
