//! `path-traversal:absolute-system-path`: a parameter value that is nothing but an absolute
//! path into an operating system's own folders — `?file=/etc/fstab`, `?page=/proc/self/status`,
//! `?doc=C:\Windows\win.ini`, `?f=/.bash_history`. That is the shape of local file inclusion
//! whatever file it names, so no list of sensitive files is needed: web applications take
//! names or paths under their own roots, never `/etc/…` or `C:\Windows\…`.
//!
//! Only values of parameters, JSON/form/XML leaves and cookies are read: a request *path* may
//! well be `/etc/designs/…` (Adobe Experience Manager serves its assets there), and a header
//! or a raw body is not a file name. The whole value must be the path (a chat message quoting
//! one is more than the path); every byte of it is read, so padding (`/etc/./././…/fstab`)
//! does not hide it.

use crate::{Check, Finding, Input, Place, Trigger};

pub struct SystemPath;

/// Unix system folders, as their first path segments.
const UNIX_ROOTS: &[&[&str]] = &[
    &["etc"],
    &["proc"],
    &["sys"],
    &["boot"],
    &["root"],
    &["dev"],
    &["var", "log"],
    &["var", "lib"],
    &["var", "spool"],
    &["var", "mail"],
    &["var", "run"],
    &["var", "db"],
    &["var", "adm"],
    &["var", "backups"],
    // Older Unix layouts fuzzing lists still probe (System V `lp`/`saf`/`cron` logs, BSD
    // `/usr/spool`, `/usr/adm`).
    &["var", "cron"],
    &["var", "lp"],
    &["var", "saf"],
    &["var", "lock"],
    &["var", "apache"],
    &["usr", "spool"],
    &["usr", "adm"],
    &["usr", "local", "etc"],
    &["usr", "etc"],
    &["usr", "lib"],
    &["usr", "libexec"],
    &["usr", "sbin"],
];

/// Shell, history and credential dotfiles directly under `/`.
const ROOT_DOTFILES: &[&str] = &[
    ".bash_profile",
    ".bashrc",
    ".bash_history",
    ".bash_logout",
    ".profile",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".logout",
    ".zshrc",
    ".zsh_history",
    ".history",
    ".ssh",
    ".netrc",
    ".gitconfig",
    ".htpasswd",
    ".htaccess",
    ".env",
    ".viminfo",
    ".mysql_history",
    // Remote-login trust, mail forwarding (it can pipe to a program) and password files.
    ".rhosts",
    ".shosts",
    ".forward",
    ".passwd",
    "master.passwd",
];

/// Windows system folders, as the first segment after the drive.
const WINDOWS_ROOTS: &[&str] = &[
    "windows",
    "winnt",
    "program files",
    "program files (x86)",
    "programdata",
    "inetpub",
    "boot.ini",
    "system32",
    "appserv",
    "xampp",
    "wamp",
    "documents and settings",
];

impl Check for SystemPath {
    fn trigger(&self) -> Trigger {
        Trigger::any_of(b"/\\")
    }

    fn detector(&self) -> &'static str {
        "path-traversal"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        if !matches!(input.place, Place::QueryValue | Place::BodyValue | Place::Cookie) || input.sensitivity < 1 {
            return None;
        }
        let value = input.text.trim();
        if value.len() < 4 {
            return None;
        }
        let value = strip_file_scheme(value);
        let found = unix_system_path(value) || windows_system_path(value);
        found.then_some(Finding { reason: "path-traversal:absolute-system-path", score: 0.95, level: 1 })
    }
}

/// `file:`, `file:/`, `file:///` before the path.
fn strip_file_scheme(value: &str) -> &str {
    match value.get(..5) {
        Some(scheme) if scheme.eq_ignore_ascii_case("file:") => {
            let rest = &value[5..];
            // Keep one slash of a Unix path (`file:///etc` is `/etc`).
            let slashes = rest.len() - rest.trim_start_matches('/').len();
            &rest[slashes.saturating_sub(1)..]
        }
        _ => value,
    }
}

/// `/etc/fstab`, `//proc/./self/environ`, `/.bashrc`: an absolute path with no whitespace whose
/// first segments are a system folder and which names something inside it (or a root dotfile).
fn unix_system_path(value: &str) -> bool {
    if !value.starts_with('/') || value.bytes().any(|b| b.is_ascii_whitespace() || b == b'?' || b == b'&' || b == b'=') {
        return false;
    }
    let segments: Vec<&str> = value.split('/').filter(|s| !s.is_empty() && *s != ".").take(8).collect();
    let Some(first) = segments.first() else { return false };
    if segments.len() == 1 && ROOT_DOTFILES.iter().any(|d| first.eq_ignore_ascii_case(d)) {
        return true;
    }
    UNIX_ROOTS.iter().any(|root| {
        // Something inside the folder, not the folder alone.
        segments.len() > root.len() && root.iter().zip(&segments).all(|(want, got)| got.eq_ignore_ascii_case(want))
    })
}

/// `C:\Windows\win.ini`, `c:/inetpub/wwwroot/web.config`, `D:\Program Files\…`: a drive, then
/// a system folder. A browser's `C:\fakepath\…` (what file inputs report) is not one.
fn windows_system_path(value: &str) -> bool {
    // `/C:/…` is how a `file:` URL spells a drive path, and the form file-list probes send.
    let value = value.strip_prefix('/').filter(|v| v.as_bytes().get(1) == Some(&b':')).unwrap_or(value);
    let b = value.as_bytes();
    if b.len() < 4 || !b[0].is_ascii_alphabetic() || b[1] != b':' || !matches!(b[2], b'\\' | b'/') {
        return false;
    }
    let rest = value[2..].trim_start_matches(['\\', '/']);
    let first = rest.split(['\\', '/']).next().unwrap_or_default();
    WINDOWS_ROOTS.iter().any(|root| first.eq_ignore_ascii_case(root))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(place: Place, text: &str) -> bool {
        SystemPath.inspect(&Input { place, name: "file", ..Input::new(text) }).is_some()
    }

    #[test]
    fn system_paths_in_values() {
        for text in [
            "/etc/fstab",
            "/etc/apt/sources.list",
            "//proc/./self/environ",
            "/var/log/apache2/access.log",
            "/usr/local/etc/php.ini",
            "file:///etc/hostname",
            "/.bash_history",
            "/root/.ssh/authorized_keys",
            "C:\\Windows\\win.ini",
            "c:/inetpub/wwwroot/web.config",
            "D:\\Program Files\\app\\conf.xml",
            "c:\\AppServ\\MySQL",
            "/C:\\Program Files\\",
            "/.rhosts",
            "/master.passwd",
            "/var/cron/log",
            "/usr/spool/mqueue/syslog",
            &format!("/etc/{}fstab", "./".repeat(400)),
        ] {
            assert!(hit(Place::QueryValue, text), "{text}");
            assert!(hit(Place::BodyValue, text), "{text}");
        }
    }

    #[test]
    fn application_paths_and_other_places_pass() {
        for text in [
            "/api/v1/users",
            "/static/css/site.css",
            "/etc",
            "/var/www/html",
            "C:\\fakepath\\photo.jpg",
            "/C:\\fakepath\\photo.jpg",
            "/var/cron",
            "/usr/spool",
            "/etc/passwd is the file where accounts live",
            "see /etc/hosts",
            "https://example.com/etc/designs/site.css",
            "/search?q=/etc/fstab",
        ] {
            assert!(!hit(Place::QueryValue, text), "{text}");
        }
        // A request path may be /etc/... (AEM assets); a header is not a file name.
        assert!(!hit(Place::Path, "/etc/designs/site/frontend.css"));
        assert!(!hit(Place::Header, "/etc/fstab"));
    }
}
