//! `path-traversal:restricted-file`: a request path that names a file a web server must never
//! serve — version-control metadata (`/.git/`, `/.svn/`, `/.hg/`, `/.bzr/`), environment and
//! credential files (`/.env`, `/.htpasswd`, `/.aws/credentials`, `id_rsa`), server
//! configuration (`.htaccess`, `web.config`, `WEB-INF/`), status pages (`/server-status`,
//! `phpinfo.php`), and the backups and editor leftovers of a script or configuration file
//! (`index.php.bak`, `config.php~`, `.wp-config.php.swp`, `web.config.old`), whose source the
//! server returns as text; Spring Boot actuator endpoints that leak secrets or run code
//! (`/actuator/env`, `/actuator/heapdump`, `/jolokia`; `/actuator/health` and `/metrics` are
//! monitoring and pass), and test harness files that evaluate their input (PHPUnit's
//! `eval-stdin.php`).
//!
//! Only the path is read (a file name in a query value is the application's business, and the
//! traversal rules judge it). Segments are compared whole, so `/blog/git-tips` or
//! `/environment` are not these names. A leftover of any other file (`photo.jpg.bak`), and
//! `META-INF/` (a few Java stacks serve resources from it), count from level 2.

use crate::{Check, Finding, Input, Place, Trigger};

pub struct RestrictedFile;

/// Directories whose content is never public (any segment equal to one, case-insensitive).
const DIRS: &[&str] = &[".git", ".svn", ".hg", ".bzr", "cvs", "web-inf", ".aws", ".ssh", ".docker", ".idea", ".vscode", "_darcs"];

/// Whole file names (any segment equal to one).
const FILES: &[&str] = &[
    ".htaccess",
    ".htpasswd",
    ".htdigest",
    ".htgroups",
    "web.config",
    ".ds_store",
    ".bash_history",
    ".zsh_history",
    ".mysql_history",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".pgpass",
    ".my.cnf",
    ".dockercfg",
    ".git-credentials",
    ".gitconfig",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "server-status",
    "server-info",
    "phpinfo.php",
    "wp-config.php.bak",
    "localsettings.php.bak",
    // PHPUnit's `src/Util/PHP/eval-stdin.php` runs the request body as PHP (CVE-2017-9841).
    "eval-stdin.php",
    // A JVM heap dump (passwords and keys in memory) and the JMX-over-HTTP bridge.
    "heapdump",
    "jolokia",
];

/// Spring Boot actuator endpoints that expose configuration, memory or control (the segment
/// after `actuator`): `env` lists secrets, `gateway` routes take SpEL, `shutdown` stops the app.
const ACTUATOR_ENDPOINTS: &[&str] = &[
    "env",
    "heapdump",
    "threaddump",
    "dump",
    "jolokia",
    "configprops",
    "shutdown",
    "restart",
    "refresh",
    "gateway",
    "logfile",
    "httptrace",
    "trace",
];

/// Extensions whose file holds source or secrets when read as text.
const SCRIPT_EXTENSIONS: &[&str] = &[
    "php",
    "php3",
    "php4",
    "php5",
    "php7",
    "phtml",
    "inc",
    "asp",
    "aspx",
    "asa",
    "asax",
    "ascx",
    "config",
    "jsp",
    "jspx",
    "cfm",
    "cgi",
    "pl",
    "py",
    "rb",
    "sh",
    "conf",
    "cfg",
    "ini",
    "env",
    "yml",
    "yaml",
    "properties",
    "sql",
    "xml",
    "json",
    "js",
    "ts",
    "java",
    "cs",
];

/// Suffixes editors and admins leave behind.
const LEFTOVER_SUFFIXES: &[&str] = &["bak", "old", "orig", "save", "swp", "swo", "backup", "bkp", "copy", "tmp", "sav", "dist"];

impl Check for RestrictedFile {
    fn trigger(&self) -> Trigger {
        Trigger::At(Place::Path)
    }

    fn detector(&self) -> &'static str {
        "path-traversal"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        if input.place != Place::Path {
            return None;
        }
        let path = input.text.as_bytes();
        // The whole path is read (one linear pass): a cap would let `/<3 KB of padding>/.git/config`
        // through, and the path is already bounded by the header size limit.
        // The query never belongs to the path here.
        let path = &path[..path.iter().position(|&c| c == b'?' || c == b'#').unwrap_or(path.len())];
        let mut best: Option<u8> = None;
        let mut after_actuator = false;
        for segment in path.split(|&c| c == b'/' || c == b'\\') {
            // `;jsessionid=...` path parameters are not part of the name.
            let segment = &segment[..segment.iter().position(|&c| c == b';').unwrap_or(segment.len())];
            let actuator = after_actuator && ACTUATOR_ENDPOINTS.iter().any(|e| eq(segment, e));
            after_actuator = eq(segment, "actuator");
            if let Some(level) = segment_level(segment).or(actuator.then_some(1)) {
                best = Some(best.map_or(level, |b: u8| b.min(level)));
                if level == 1 {
                    break;
                }
            }
        }
        let level = best?;
        (level <= input.sensitivity).then_some(Finding { reason: "path-traversal:restricted-file", score: 0.95, level })
    }
}

fn eq(segment: &[u8], name: &str) -> bool {
    segment.eq_ignore_ascii_case(name.as_bytes())
}

/// The level at which `segment` (one path segment) is a restricted name, if it is one.
fn segment_level(segment: &[u8]) -> Option<u8> {
    if segment.len() < 2 {
        return None;
    }
    if DIRS.iter().any(|d| eq(segment, d)) || FILES.iter().any(|f| eq(segment, f)) {
        // `CVS` is also a pharmacy chain's name in a path (`/stores/cvs/`): level 2 alone.
        return Some(if eq(segment, "cvs") { 2 } else { 1 });
    }
    if eq(segment, "meta-inf") {
        return Some(2);
    }
    // `.env`, `.env.local`, `.env.production`, `.env.bak`.
    if segment.len() >= 4 && eq(&segment[..4], ".env") && (segment.len() == 4 || segment[4] == b'.') {
        return Some(1);
    }
    leftover_level(segment).or_else(|| dump_level(segment))
}

/// Database files and dumps (`backup.sql`, `dump.sql.gz`, `users.sqlite`, `site.mdb`): a
/// scanner's forced browsing for a dump left in the web root. A name that says backup or dump
/// is level 1; any other is level 2, since a few sites publish a schema or sample data.
fn dump_level(segment: &[u8]) -> Option<u8> {
    // Most segments have no dot: one scan, no allocation.
    if !segment.contains(&b'.') {
        return None;
    }
    let name = [".gz", ".zip", ".bz2", ".xz", ".7z", ".tar"].iter().fold(segment, |n, c| {
        let cut = n.len().saturating_sub(c.len());
        if n.len() > c.len() && eq(&n[cut..], c) {
            &n[..cut]
        } else {
            n
        }
    });
    let dot = name.iter().rposition(|&c| c == b'.')?;
    if !["sql", "mdb", "sqlite", "sqlite3", "dump", "psql", "mysql"].iter().any(|e| eq(&name[dot + 1..], e)) {
        return None;
    }
    let stem = &name[..dot];
    let says_backup = ["backup", "dump", "bak", "bkp"].iter().any(|w| stem.windows(w.len()).any(|x| eq(x, w)));
    Some(if says_backup { 1 } else { 2 })
}

/// `name.php.bak`, `name.php~`, `.name.php.swp`, `name.php_old`: a leftover of a script or
/// configuration file is level 1; of any other file, level 2.
fn leftover_level(segment: &[u8]) -> Option<u8> {
    let (stem, tilde) = match segment.strip_suffix(b"~") {
        Some(stem) => (stem, true),
        None => (segment, false),
    };
    let inner = if tilde {
        stem
    } else {
        let dot = segment.iter().rposition(|&c| c == b'.' || c == b'_')?;
        let suffix = &segment[dot + 1..];
        if !LEFTOVER_SUFFIXES.iter().any(|s| eq(suffix, s)) {
            return None;
        }
        &segment[..dot]
    };
    let dot = inner.iter().rposition(|&c| c == b'.')?;
    let ext = &inner[dot + 1..];
    if ext.is_empty() || !ext.iter().all(u8::is_ascii_alphanumeric) {
        return None;
    }
    // `report.2024.1` / `v1.2` are versions, not leftovers: the inner extension names a type.
    if SCRIPT_EXTENSIONS.iter().any(|e| eq(ext, e)) {
        return Some(1);
    }
    (tilde || (ext.len() <= 5 && ext.iter().any(u8::is_ascii_alphabetic))).then_some(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(path: &str) -> Option<u8> {
        let mut input = Input::new(path);
        input.place = Place::Path;
        input.sensitivity = 4;
        RestrictedFile.inspect(&input).map(|f| f.level)
    }

    #[test]
    fn padding_before_the_name_does_not_hide_it() {
        let padded = format!("/{}/.git/config", "a/".repeat(2000));
        assert_eq!(level(&padded), Some(1));
    }

    #[test]
    fn restricted_names() {
        for p in [
            "/.git/config",
            "/app/.git/HEAD",
            "/.env",
            "/api/.env.production",
            "/.htpasswd",
            "/WEB-INF/web.xml",
            "/web.config",
            "/server-status",
            "/index.php.bak",
            "/config.php~",
            "/.wp-config.php.swp",
            "/web.config.old",
            "/.svn/entries",
            "/home/.aws/credentials",
            "/phpinfo.php",
            "/actuator/env",
            "/management/actuator/heapdump",
            "/api/actuator/gateway/routes/x",
            "/jolokia/exec/java.lang:type=Memory/gc",
            "/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php",
        ] {
            assert_eq!(level(p), Some(1), "{p}");
        }
        // Monitoring endpoints and the same words elsewhere in a path pass.
        for p in ["/actuator/health", "/actuator/prometheus", "/actuator/metrics/jvm.memory.used", "/api/v1/env", "/projects/42/env/prod"] {
            assert_eq!(level(p), None, "{p}");
        }
        for p in [
            "/blog/git-tips",
            "/environment",
            "/static/app.js",
            "/docs/v1.2/intro",
            "/api/v2/users/42",
            "/envelope.png",
            "/a/b.old-style/c",
        ] {
            assert_eq!(level(p), None, "{p}");
        }
        assert_eq!(level("/photos/cat.jpg.bak"), Some(2));
        assert_eq!(level("/backup.sql"), Some(1));
        assert_eq!(level("/db_dump.sql.gz"), Some(1));
        assert_eq!(level("/files/schema.sql"), Some(2));
        assert_eq!(level("/data/users.sqlite"), Some(2));
        assert_eq!(level("/docs/sql-tutorial"), None);
    }
}
