//! Restricted file access: a request path naming a file a server must never serve —
//! version-control metadata, environment and credential files, server configuration, status
//! pages, backups and editor leftovers of scripts — under any directory prefix, with case,
//! percent-encoding, path parameters (`;x`) and doubled slashes as the mutations.

use crate::mutate::{join, random_case};
use crate::place::Request;
use crate::{Carrier, Family, Rng, Variant};

pub struct RestrictedFile;

const PREFIXES: &[&str] = &["", "/app", "/blog", "/wp", "/static", "/api/v1", "/admin", "/old", "/shop/public", "/~user"];
const VCS: &[&str] =
    &[".git/config", ".git/HEAD", ".git/index", ".git/logs/HEAD", ".svn/entries", ".svn/wc.db", ".hg/store/00manifest.i", ".bzr/README"];
const SECRETS: &[&str] = &[
    ".env",
    ".env.local",
    ".env.production",
    ".env.backup",
    ".htpasswd",
    ".htaccess",
    ".aws/credentials",
    ".ssh/id_rsa",
    "id_rsa",
    ".bash_history",
    ".npmrc",
    ".DS_Store",
    ".git-credentials",
    ".docker/config.json",
    ".pgpass",
];
const CONFIG: &[&str] =
    &["web.config", "WEB-INF/web.xml", "WEB-INF/classes/application.properties", "server-status", "server-info", "phpinfo.php"];
const SCRIPTS: &[&str] = &[
    "index.php",
    "config.php",
    "wp-config.php",
    "settings.py",
    "database.yml",
    "web.config",
    "default.aspx",
    "login.jsp",
    "db.inc",
    "app.config",
    "config.inc.php",
    "local.ini",
];

fn leftover(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    names.push("leftover");
    let script = *rng.pick(SCRIPTS);
    match rng.below(5) {
        0 => format!("{script}~"),
        1 => format!(".{script}.swp"),
        2 => format!("{script}.{}", rng.pick(&["bak", "old", "orig", "save", "backup", "swo", "tmp", "dist", "copy", "sav"])),
        3 => format!("{script}.{}", rng.pick(&["BAK", "Old", "ORIG"])),
        _ => format!("{script}_{}", rng.pick(&["bak", "old", "backup"])),
    }
}

impl Family for RestrictedFile {
    fn name(&self) -> &'static str {
        "restricted-file"
    }

    fn detector(&self) -> &'static str {
        "path-traversal"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut names = Vec::new();
        let target = match rng.below(4) {
            0 => {
                names.push("vcs");
                rng.pick(VCS).to_string()
            }
            1 => {
                names.push("secret");
                rng.pick(SECRETS).to_string()
            }
            2 => {
                names.push("config");
                rng.pick(CONFIG).to_string()
            }
            _ => leftover(rng, &mut names),
        };
        let mut path = format!("{}/{target}", rng.pick(PREFIXES));
        match rng.below(7) {
            0 => {
                names.push("case");
                path = random_case(rng, &path);
            }
            1 => {
                names.push("pct-dot");
                path = path.replace("/.", "/%2e");
            }
            2 => {
                names.push("double-slash");
                path = path.replace('/', "//");
            }
            3 => {
                names.push("path-param");
                path.push_str(";jsessionid=1");
            }
            4 => {
                names.push("query");
                let tail = *rng.pick(&["?", "?x=1", "?raw=true", "#"]);
                path.push_str(tail);
            }
            _ => {}
        }
        let method = *rng.pick(&["GET", "GET", "HEAD", "POST"]);
        let request = Request::new(method, &path).header("User-Agent", "Mozilla/5.0 (Windows NT 10.0; Win64; x64)");
        Variant { family: self.name(), mutation: join(&names), payload: path, carrier: Carrier::Request(request) }
    }
}
