//! Red-team path traversal and local file inclusion, written apart from the detectors (held
//! out in spirit): a way to reach the file (a `../` climb of some depth in one of many
//! spellings — percent, double percent, overlong UTF-8, `%u`, full-width, filter-stripping
//! `....//`, `..;/` — an absolute Unix or Windows path, a UNC path, `file://`, or a PHP/stream
//! wrapper) × a sensitive target × a truncation suffix (`%00`, `?`, `#`, `/.` runs) × where it
//! travels (any field, or the request path itself).

use crate::mutate::{join, transport_layer};
use crate::place::Request;
use crate::{Carrier, Family, Rng, Variant};

pub struct RedteamPath;

/// Unix targets the red team aims at first: credentials, process state, logs to poison,
/// the application's own configuration.
const UNIX_TARGETS: &[&str] = &[
    "etc/shadow",
    "etc/passwd",
    "proc/self/environ",
    "proc/self/fd/0",
    "proc/1/cmdline",
    "var/log/apache2/access.log",
    "var/log/httpd/error_log",
    "root/.ssh/id_ed25519",
    "home/www-data/.bash_history",
    "etc/ssh/sshd_config",
    "var/www/html/wp-config.php",
    "etc/crontab",
];
const WINDOWS_TARGETS: &[&str] = &[
    "windows/win.ini",
    "boot.ini",
    "windows/system32/drivers/etc/hosts",
    "inetpub/wwwroot/web.config",
    "windows/repair/sam",
    "windows/system32/config/SAM",
    "windows/php.ini",
    "xampp/apache/conf/httpd.conf",
];
const APP_TARGETS: &[&str] = &[
    "WEB-INF/web.xml",
    "META-INF/MANIFEST.MF",
    ".env",
    "config/database.yml",
    ".git/config",
    ".htpasswd",
    "wp-config.php",
    "application.properties",
];
const PREFIXES: &[&str] = &["", "", "images/", "uploads/", "/var/www/html/", "static/", "docs/", "en/"];

/// One `../` step in some spelling.
fn step(rng: &mut Rng, style: usize) -> &'static str {
    const STYLES: &[&[&str]] = &[
        &["../"],
        &["..\\"],
        &["..%2f", "..%2F"],
        &["%2e%2e/", "%2E%2E/"],
        &["%2e%2e%2f", "%2E%2E%2F"],
        &["..%5c", "%2e%2e%5c"],
        &["%252e%252e%252f", "..%252f"],
        &["..%c0%af", "%c0%ae%c0%ae/", "..%c1%9c"],
        &["%u002e%u002e%u2215", "..%u2216", "%uff0e%uff0e/"],
        &["....//", "....\\\\", "..././"],
        &["..;/"],
        &["../\\", "..\\/"],
        &[".%2e/", "%2e./"],
        &["\u{ff0e}\u{ff0e}\u{ff0f}", "..\u{ff0f}"],
        &["..//", "..///"],
    ];
    let options = STYLES[style % STYLES.len()];
    options[rng.below(options.len())]
}

const STYLE_NAMES: &[&str] = &[
    "plain",
    "backslash",
    "pct-slash",
    "pct-dots",
    "pct-all",
    "pct-backslash",
    "double-pct",
    "overlong-utf8",
    "pct-u",
    "filter-strip",
    "semicolon",
    "mixed-sep",
    "half-pct",
    "fullwidth",
    "doubled-sep",
];

fn target(rng: &mut Rng) -> (&'static str, bool) {
    match rng.below(5) {
        0 | 1 => (*rng.pick(UNIX_TARGETS), false),
        2 | 3 => (*rng.pick(WINDOWS_TARGETS), true),
        _ => (*rng.pick(APP_TARGETS), false),
    }
}

fn truncation(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    match rng.below(10) {
        0 => {
            names.push("null-byte");
            rng.pick(&["%00", "%00.jpg", "%00.php", "\0"]).to_string()
        }
        1 => {
            names.push("qmark");
            rng.pick(&["?", "?.png", "?x=1"]).to_string()
        }
        2 => {
            names.push("hash");
            "#".to_string()
        }
        3 => {
            names.push("dot-run");
            "/.".repeat(rng.range(8, 40))
        }
        _ => String::new(),
    }
}

fn traversal(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    let style = rng.below(STYLE_NAMES.len());
    names.push(STYLE_NAMES[style]);
    let depth = rng.range(1, 12);
    let (file, windows) = target(rng);
    let mut out = PREFIXES[rng.below(PREFIXES.len())].to_string();
    for _ in 0..depth {
        out.push_str(step(rng, style));
    }
    let file = if windows && rng.chance(0.5) { file.replace('/', "\\") } else { file.to_string() };
    out.push_str(&file);
    out
}

fn absolute(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    names.push("absolute");
    match rng.below(8) {
        0 | 1 => format!("/{}", rng.pick(UNIX_TARGETS)),
        2 => format!("{}:\\{}", rng.pick(&["C", "c", "D"]), rng.pick(WINDOWS_TARGETS).replace('/', "\\")),
        3 => format!("{}:/{}", rng.pick(&["C", "c"]), rng.pick(WINDOWS_TARGETS)),
        4 => {
            names.push("unc");
            format!(
                "\\\\{}\\{}",
                rng.pick(&["10.0.0.5\\share", "localhost\\c$", "?\\C:", "127.0.0.1\\admin$"]),
                rng.pick(WINDOWS_TARGETS).replace('/', "\\")
            )
        }
        5 => format!("/{}/{}", rng.pick(&["var/www/html", "opt/tomcat/webapps/ROOT", "usr/share/nginx/html"]), rng.pick(APP_TARGETS)),
        _ => {
            names.push("file-url");
            match rng.below(3) {
                0 => format!("file:///{}", rng.pick(UNIX_TARGETS)),
                1 => format!("file://localhost/{}", rng.pick(UNIX_TARGETS)),
                _ => format!("file:///C:/{}", rng.pick(WINDOWS_TARGETS)),
            }
        }
    }
}

fn wrapper(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    names.push("wrapper");
    let page = *rng.pick(&["index.php", "config.php", "../config.php", "/etc/passwd", "admin/db.php", "login"]);
    match rng.below(9) {
        0 => format!("php://filter/convert.base64-encode/resource={page}"),
        1 => format!(
            "php://filter/read={}/resource={page}",
            rng.pick(&["string.rot13", "convert.base64-encode", "string.toupper|string.rot13", "convert.iconv.utf-8.utf-16"])
        ),
        2 => format!("PHP://FILTER/{}/resource={page}", rng.pick(&["zlib.deflate", "convert.quoted-printable-encode"])),
        3 => format!("zip://uploads/avatar.jpg%23{}", rng.pick(&["shell.php", "x"])),
        4 => format!("phar://uploads/{}/shell", rng.pick(&["avatar.jpg", "x.gif", "a.phar"])),
        5 => format!("expect://{}", rng.pick(&["id", "ls", "whoami", "cat /etc/passwd"])),
        6 => format!("data://text/plain;base64,{}", rng.pick(&["PD9waHAgc3lzdGVtKCRfR0VUWydjJ10pOyA/Pg==", "PD9waHAgcGhwaW5mbygpOz8+"])),
        7 => "php://input".to_string(),
        _ => format!(
            "{}://{}",
            rng.pick(&["compress.zlib", "glob", "file"]),
            rng.pick(&["/etc/passwd", "/var/www/html/*", "/proc/self/environ"])
        ),
    }
}

impl Family for RedteamPath {
    fn name(&self) -> &'static str {
        "redteam-path-traversal"
    }

    fn detector(&self) -> &'static str {
        "path-traversal"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut names = Vec::new();
        let mut text = match rng.below(10) {
            0..=5 => traversal(rng, &mut names),
            6 | 7 => absolute(rng, &mut names),
            _ => wrapper(rng, &mut names),
        };
        text.push_str(&truncation(rng, &mut names));
        if rng.chance(0.2) && !text.contains('\0') {
            names.push("in-path");
            let path = match rng.below(3) {
                0 => format!("/static/{text}"),
                1 => format!("/index.php?page={text}"),
                _ => format!("/download?file={text}&type=pdf"),
            };
            let request = Request::new("GET", &path).header("User-Agent", "Mozilla/5.0");
            return Variant { family: self.name(), mutation: join(&names), payload: path, carrier: Carrier::Request(request) };
        }
        let (payload, layer) = transport_layer(rng, &text);
        names.push(layer);
        Variant { family: self.name(), mutation: join(&names), payload, carrier: Carrier::Value }
    }
}
