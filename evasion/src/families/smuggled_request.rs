//! A second HTTP message inside a value: a request line (`GET /admin HTTP/1.1`) and its `Host`
//! or framing headers, or a status line and response headers, after a value prefix and a
//! line break (CRLF, LF, or none when the value *is* the message), in any field the harness
//! places it in; mutations: method, target, version, header case and order, extra headers.

use crate::mutate::{join, random_case};
use crate::{Carrier, Family, Rng, Variant};

pub struct SmuggledRequest;

const METHODS: &[&str] = &["GET", "POST", "GET", "PUT", "DELETE", "HEAD", "OPTIONS", "TRACE"];
const TARGETS: &[&str] =
    &["/admin", "/internal/debug", "/", "/api/users/1/delete", "/login", "http://127.0.0.1/", "/%2e%2e/admin", "/metrics", "/actuator/env"];
const HOSTS: &[&str] = &["localhost", "127.0.0.1", "backend", "internal.example", "admin.example.com", "169.254.169.254"];
const PREFIXES: &[&str] = &["", "x", "0", "abc", "foo=bar", "1"];

fn request(rng: &mut Rng, names: &mut Vec<&'static str>, eol: &str) -> String {
    let method = *rng.pick(METHODS);
    let version = *rng.pick(&["HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "http/1.1"]);
    let mut headers = vec![format!("Host: {}", rng.pick(HOSTS))];
    if rng.chance(0.3) {
        names.push("framing");
        headers.push(rng.pick(&["Content-Length: 10", "Transfer-Encoding: chunked", "Content-Length: 0"]).to_string());
    }
    if rng.chance(0.3) {
        headers.push(rng.pick(&["X-Forwarded-For: 127.0.0.1", "Cookie: admin=1", "X-Ignore: x"]).to_string());
    }
    if rng.chance(0.3) {
        names.push("header-order");
        headers.reverse();
        if !headers[0].starts_with("Host") && !headers[0].starts_with("Content") && !headers[0].starts_with("Transfer") {
            headers.insert(0, format!("Host: {}", rng.pick(HOSTS)));
        }
    }
    if rng.chance(0.2) {
        names.push("header-case");
        headers = headers.iter().map(|h| random_case(rng, h)).collect();
    }
    format!("{method} {} {version}{eol}{}{eol}{eol}", rng.pick(TARGETS), headers.join(eol))
}

fn response(rng: &mut Rng, names: &mut Vec<&'static str>, eol: &str) -> String {
    names.push("response");
    let status = *rng.pick(&["200 OK", "302 Found", "200 OK", "401 Unauthorized"]);
    let header = *rng.pick(&[
        "Content-Type: text/html",
        "Set-Cookie: session=attacker; Path=/",
        "Location: http://evil.example/",
        "Content-Length: 35",
    ]);
    format!("HTTP/1.1 {status}{eol}{header}{eol}{eol}<html><script>alert(1)</script></html>")
}

impl Family for SmuggledRequest {
    fn name(&self) -> &'static str {
        "smuggled-request"
    }

    fn detector(&self) -> &'static str {
        "protocol"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut names = Vec::new();
        let eol = match rng.below(3) {
            0 => {
                names.push("lf");
                "\n"
            }
            _ => "\r\n",
        };
        let message = if rng.chance(0.2) { response(rng, &mut names, eol) } else { request(rng, &mut names, eol) };
        let prefix = *rng.pick(PREFIXES);
        let payload = match rng.below(4) {
            0 => {
                names.push("bare");
                message
            }
            1 => {
                names.push("chunk-end");
                format!("0{eol}{eol}{message}")
            }
            _ => format!("{prefix}{eol}{eol}{message}"),
        };
        Variant { family: self.name(), mutation: join(&names), payload, carrier: Carrier::Value }
    }
}
