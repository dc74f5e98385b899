//! HTTP protocol anomalies as whole requests: method overrides that turn a safe request into
//! a state change (or ask for TRACE), legacy `Request-Range` and many or overlapping ranges,
//! repeated or header-stripping Connection options, Transfer-Encoding obfuscations,
//! non-numeric Content-Length, and multipart part names a parser splits differently.

use crate::mutate::join;
use crate::{Carrier, Family, Request, Rng, Variant};

pub struct Protocol;

const PATHS: &[&str] = &["/api/users/42", "/admin/posts/7", "/api/v2/orders/1001", "/files/report.pdf", "/account", "/index.php"];
const UA: &str = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15";

fn base(method: &str, rng: &mut Rng) -> Request {
    Request::new(method, PATHS[rng.below(PATHS.len())]).header("User-Agent", UA).header("Accept", "*/*")
}

fn case_variant(rng: &mut Rng, text: &str) -> String {
    match rng.below(3) {
        0 => text.to_ascii_lowercase(),
        1 => text.to_ascii_uppercase(),
        _ => text.to_string(),
    }
}

fn method_override(rng: &mut Rng, names: &mut Vec<&'static str>) -> Request {
    let header = *rng.pick(&["X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override"]);
    let (method, verb) = if rng.chance(0.35) {
        names.push("override-debug");
        (*rng.pick(&["GET", "POST", "HEAD"]), *rng.pick(&["TRACE", "TRACK", "CONNECT", "DEBUG"]))
    } else {
        names.push("override-unsafe");
        (*rng.pick(&["GET", "GET", "HEAD"]), *rng.pick(&["DELETE", "PUT", "PATCH", "POST", "PROPPATCH", "MKCOL"]))
    };
    let verb = case_variant(rng, verb);
    let req = base(method, rng);
    if rng.chance(0.3) {
        names.push("param");
        let mut req = req;
        req.path = format!("{}?_method={verb}", req.path);
        req
    } else {
        req.header(header, &verb)
    }
}

fn ranges(rng: &mut Rng, names: &mut Vec<&'static str>) -> Request {
    let header = if rng.chance(0.3) {
        names.push("request-range");
        "Request-Range"
    } else {
        "Range"
    };
    let specs: Vec<String> = if rng.chance(0.5) {
        names.push("many-ranges");
        (0..rng.range(6, 200))
            .map(|k| match rng.below(3) {
                0 => format!("{}-", k),
                1 => format!("{}-{}", k * 5, k * 5 + rng.range(0, 4)),
                _ => format!("0-{}", rng.range(1, 1000)),
            })
            .collect()
    } else {
        names.push("overlap");
        let a = rng.range(0, 500);
        vec![format!("{a}-{}", a + 100), format!("{}-{}", a + rng.range(1, 99), a + 300)]
    };
    let sep = *rng.pick(&[",", ", ", " , "]);
    base("GET", rng).header(header, &format!("bytes={}", specs.join(sep)))
}

fn connection(rng: &mut Rng, names: &mut Vec<&'static str>) -> Request {
    let value = if rng.chance(0.5) {
        names.push("connection-duplicate");
        let option = *rng.pick(&["close", "keep-alive", "Upgrade"]);
        let t = case_variant(rng, option);
        let n = rng.range(2, 5);
        vec![t; n].join(", ")
    } else {
        names.push("connection-strips");
        let named = *rng.pick(&[
            "X-Forwarded-For",
            "Authorization",
            "Cookie",
            "X-Real-IP",
            "X-Forwarded-Host",
            "X-Api-Key",
            "Forwarded",
            "X-Csrf-Token",
        ]);
        format!("{}, {named}", rng.pick(&["close", "keep-alive", "Keep-Alive"]))
    };
    base("GET", rng).header("Connection", &value)
}

/// `chunked` bent so that one parser honours it and another does not: padding, a second
/// coding, a prefix or suffix, another case.
fn bent_chunked(rng: &mut Rng) -> String {
    let pad = |rng: &mut Rng| *rng.pick(&[" ", "\t", "  ", " \t", "\x0b", "\x0c"]);
    match rng.below(6) {
        0 => format!("chunked{}", pad(rng)),
        1 => format!("{}chunked", pad(rng)),
        2 => format!("{}chunked", rng.pick(&["x", "cow; ", "gzip, ", "identity, ", "chunked, "])),
        3 => format!("chunked{}", rng.pick(&[", identity", ", chunked", ";q=1", "x", ",", "\"\""])),
        4 => rng.pick(&["identity", "chu nked", "chunk", "ch\"unked", "\"chunked\""]).to_string(),
        _ => format!("{}{}", rng.pick(&["Chunked", "CHUNKED", "cHuNkEd"]), pad(rng)),
    }
}

/// Framing headers that disagree: both Transfer-Encoding and Content-Length, two different
/// Content-Lengths, two Transfer-Encodings, or a framing header whose name is bent.
fn framing_pair(rng: &mut Rng, names: &mut Vec<&'static str>, req: Request) -> Request {
    let length = rng.range(1, 500).to_string();
    match rng.below(4) {
        0 => {
            names.push("te-and-cl");
            if rng.chance(0.5) {
                req.header("Content-Length", &length).header("Transfer-Encoding", "chunked")
            } else {
                req.header("Transfer-Encoding", "chunked").header("Content-Length", &length)
            }
        }
        1 => {
            names.push("cl-conflict");
            req.header("Content-Length", &length).header("Content-Length", &(rng.range(501, 9000)).to_string())
        }
        2 => {
            names.push("te-repeated");
            let second = rng.pick(&["chunked", "identity", "gzip"]).to_string();
            req.header("Transfer-Encoding", "chunked").header("Transfer-Encoding", &second)
        }
        _ => {
            names.push("bent-name");
            let name = *rng.pick(&[
                "Transfer-Encoding ",
                "Transfer_Encoding",
                " Transfer-Encoding",
                "Transfer-Encoding\t",
                "Content-Length ",
                "Content_Length",
                "Transfer--Encoding",
            ]);
            let value = if name.contains("ength") { length } else { "chunked".to_string() };
            req.header(name, &value)
        }
    }
}

fn framing(rng: &mut Rng, names: &mut Vec<&'static str>) -> Request {
    let body = "0\r\n\r\nGET /admin HTTP/1.1\r\nHost: localhost\r\n\r\n";
    let roll = rng.below(10);
    if roll < 4 {
        names.push("transfer-encoding");
        let te = bent_chunked(rng);
        base("POST", rng).header("Transfer-Encoding", &te).body(body)
    } else if roll < 7 {
        let req = base("POST", rng);
        framing_pair(rng, names, req).body(body)
    } else {
        names.push("content-length");
        let cl = match rng.below(5) {
            0 => format!("{0}, {0}", rng.range(1, 500)),
            1 => format!("+{}", rng.range(1, 500)),
            2 => format!("0x{:x}", rng.range(1, 500)),
            3 => format!("{} {}", rng.range(1, 50), rng.range(1, 50)),
            _ => format!("{}abc", rng.range(1, 500)),
        };
        base("POST", rng).header("Content-Length", &cl).body(body)
    }
}

fn multipart_name(rng: &mut Rng, names: &mut Vec<&'static str>) -> Request {
    let field = *rng.pick(&["file", "avatar", "upload", "doc", "user"]);
    // Names of only `[A-Za-z0-9_.[\]-]` are plain to the engine's multipart parser and never
    // reach a check, so `a[b` and `a..b` alone are not generated: each variant here carries a
    // byte the parser hands over.
    let (disposition, name) = match rng.below(5) {
        0 => (format!("name=\"{field}\\\"; filename=\\\"shell.php\""), "quote-in-name"),
        1 => (format!("name=\"{field}%0d%0aContent-Type: text/html\""), "crlf-in-name"),
        2 => (format!("name=\"{field}%00.jpg\""), "nul-in-name"),
        3 => (format!("name=\"{field}\"; filename=\"{}shell.php\"", rng.pick(&["../", "../../", "..\\", "a/../../"])), "dotdot-filename"),
        _ => (format!("name=\"{field}{}\"", rng.pick(&["../x", "..\\\\x", "[../a]"])), "dotdot-name"),
    };
    names.push(name);
    let boundary = format!("----WebKitFormBoundary{}", rng.below(1_000_000_000));
    let body = format!("--{boundary}\r\nContent-Disposition: form-data; {disposition}\r\nContent-Type: application/octet-stream\r\n\r\n<?php echo 1; ?>\r\n--{boundary}--\r\n");
    base("POST", rng).header("Content-Type", &format!("multipart/form-data; boundary={boundary}")).body(&body)
}

impl Family for Protocol {
    fn name(&self) -> &'static str {
        "protocol"
    }

    fn detector(&self) -> &'static str {
        "protocol"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut names: Vec<&'static str> = Vec::new();
        let request = match rng.below(5) {
            0 => method_override(rng, &mut names),
            1 => ranges(rng, &mut names),
            2 => connection(rng, &mut names),
            3 => framing(rng, &mut names),
            _ => multipart_name(rng, &mut names),
        };
        let payload = format!("{} {} {:?}", request.method, request.path, request.headers.last());
        Variant { family: "protocol", mutation: join(&names), payload, carrier: Carrier::Request(request) }
    }
}
