//! `path-traversal:remote-file-include`: remote file inclusion. An include-like parameter
//! (`page`, `file`, `include`, `template`, `lang`, `module`...) whose value is a URL on another
//! host or a stream wrapper, so that a PHP `include($_GET['page'])` (or a JSP/ASP equivalent)
//! fetches the attacker's code and runs it.
//!
//! Real traffic is full of URLs (share links, analytics `page=` beacons, OAuth redirects), so
//! the check is bound to the parameter's *name* and the value's *shape*, not to any URL:
//!
//! - level 1: a name that only ever holds code to include (`include`, `template`, `lang`,
//!   `module`...) holding any remote URL; a page- or file-like name (`page`, `file`, `doc`)
//!   or one of the former holding a stream wrapper (`php://`, `data:`, `expect://`,
//!   `zip://`, `phar://`...), an `ftp://` or UNC (`\\host\share`) location, or an `http(s)` URL
//!   with an IP-literal host (dotted, decimal or hex), a truncation tail (a trailing `?`, a NUL,
//!   `%00`) or a plain-text script (`shell.txt`) — the shapes of an include payload; any
//!   parameter holding an IP-literal URL that ends in such a truncation tail;
//! - level 2: a page- or file-like name holding any other URL (a tracker's `page=https://...`).

use crate::{Check, Finding, Input, Place, Trigger};

pub struct RemoteFileInclude;

/// Parameter-name words that name code to include (one `_`/`-`/`.`/`[`-separated word of the
/// name must be one of these): any URL in them is an include payload.
const INCLUDE_WORDS: &[&str] = &[
    "include",
    "inc",
    "require",
    "template",
    "tpl",
    "tmpl",
    "lang",
    "language",
    "dir",
    "folder",
    "module",
    "mod",
    "layout",
    "skin",
    "theme",
    "conf",
    "config",
    "abspath",
    "basepath",
    "includepath",
    "widget",
    "plugin",
    "menu",
    "nav",
    "frame",
];

/// Words that name a page or file, which trackers and download links also fill with ordinary
/// URLs: a URL in them counts at level 1 only with an include payload's shape.
const PAGE_WORDS: &[&str] =
    &["file", "filename", "filepath", "page", "path", "doc", "document", "view", "load", "read", "pg", "cat", "pdf"];

/// Stream wrappers PHP's include follows (besides http/ftp).
const WRAPPERS: &[&str] = &[
    "php://",
    "data:",
    "expect://",
    "zip://",
    "phar://",
    "compress.zlib://",
    "compress.bzip2://",
    "glob://",
    "ssh2.",
    "rar://",
    "ogg://",
    "zlib:",
];

impl Check for RemoteFileInclude {
    fn trigger(&self) -> Trigger {
        // Every shape holds `:` (a scheme) or `\` (UNC).
        Trigger::any_of(b":\\")
    }

    fn detector(&self) -> &'static str {
        "path-traversal"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        if !matches!(input.place, Place::QueryValue | Place::BodyValue | Place::Cookie) {
            return None;
        }
        // The whole value: a prefix cap would let padding push the truncation tail or the
        // script's name out of sight. Every test below is one pass.
        let value = input.text.as_bytes().trim_ascii();
        let level = include_level(value, name_kind(input.name))?;
        (level <= input.sensitivity).then_some(Finding { reason: "path-traversal:remote-file-include", score: 0.95, level })
    }
}

/// What the parameter's name says it holds.
#[derive(Clone, Copy, PartialEq)]
enum NameKind {
    Include,
    Page,
    Other,
}

/// Judged by the words of `name` (split at `_`, `-`, `.`, `[`, `]`).
fn name_kind(name: &str) -> NameKind {
    let lower = name.to_ascii_lowercase();
    let words = || lower.split(['_', '-', '.', '[', ']']);
    if words().any(|w| INCLUDE_WORDS.contains(&w)) {
        NameKind::Include
    } else if words().any(|w| PAGE_WORDS.contains(&w)) {
        NameKind::Page
    } else {
        NameKind::Other
    }
}

fn starts_with_ci(hay: &[u8], prefix: &str) -> bool {
    hay.len() >= prefix.len() && hay[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

fn ends_with_ci(hay: &[u8], suffix: &[u8]) -> bool {
    hay.len() >= suffix.len() && hay[hay.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
}

/// The level of `value` as an include payload, for an include-like parameter or any other.
fn include_level(value: &[u8], kind: NameKind) -> Option<u8> {
    let include = kind != NameKind::Other;
    if include && WRAPPERS.iter().any(|w| starts_with_ci(value, w)) {
        return Some(1);
    }
    if include && (starts_with_ci(value, "ftp://") || starts_with_ci(value, "ftps://") || unc(value)) {
        return Some(1);
    }
    let rest = ["http://", "https://"].iter().find(|s| starts_with_ci(value, s)).map(|s| &value[s.len()..])?;
    let host_end = rest.iter().position(|&c| matches!(c, b'/' | b'?' | b'#' | b'\\')).unwrap_or(rest.len());
    let authority = &rest[..host_end];
    // `user:pass@host:port` → host.
    let host = authority.rsplit(|&c| c == b'@').next().unwrap_or(authority);
    let host = &host[..host.iter().position(|&c| c == b':').unwrap_or(host.len())];
    let ip = ip_literal(host);
    let truncated = truncation_tail(value);
    if ip && truncated {
        return Some(1);
    }
    if !include {
        return None;
    }
    let path = &rest[host_end..];
    let path = &path[..path.iter().position(|&c| c == b'?' || c == b'#').unwrap_or(path.len())];
    // `shell.txt`, `r57.inc`: code served as text so that the include runs it here.
    let text_script = [&b".txt"[..], b".inc", b".sh", b".pl", b".py"].iter().any(|e| ends_with_ci(path, e));
    Some(if ip || truncated || text_script || kind == NameKind::Include { 1 } else { 2 })
}

/// `\\host\share\...` (or `//host/share` with a backslash somewhere): an SMB location.
fn unc(value: &[u8]) -> bool {
    value.starts_with(b"\\\\") && value.get(2).is_some_and(|c| c.is_ascii_alphanumeric())
}

/// A host written as an IP: dotted quad, one decimal integer, hex (`0x7f000001`), or `[v6]`.
fn ip_literal(host: &[u8]) -> bool {
    if host.is_empty() {
        return false;
    }
    if host[0] == b'[' {
        return true;
    }
    if starts_with_ci(host, "0x") {
        return host.len() > 2 && host[2..].iter().all(u8::is_ascii_hexdigit);
    }
    let dots = host.iter().filter(|&&c| c == b'.').count();
    host.iter().all(|c| c.is_ascii_digit() || *c == b'.') && (dots == 3 || dots == 0 && host.len() >= 8)
}

/// The value ends the way an include payload cuts off the application's suffix: a trailing
/// `?` (the `.php` the application appends becomes a query), a NUL or `%00`, a `#`.
fn truncation_tail(value: &[u8]) -> bool {
    value.ends_with(b"?") || value.ends_with(b"#") || value.contains(&0) || value.windows(3).any(|w| w == b"%00")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(name: &str, value: &str) -> Option<u8> {
        let mut input = Input::new(value);
        input.name = name;
        input.sensitivity = 4;
        RemoteFileInclude.inspect(&input).map(|f| f.level)
    }

    #[test]
    fn include_payloads() {
        for (n, v) in [
            ("page", "http://203.0.113.9/shell.txt?"),
            ("file", "http://evil.example/s.txt"),
            ("include", "php://input"),
            ("template", "data://text/plain;base64,PD9waHAgcGhwaW5mbygpOz8+"),
            ("lang", "ftp://198.51.100.4/x"),
            ("inc_path", "\\\\10.0.0.5\\share\\x.php"),
            ("q", "http://10.1.2.3/x.txt?"),
            ("module", "https://3232235777/r.php"),
        ] {
            assert_eq!(level(n, v), Some(1), "{n}={v}");
        }
        for (n, v) in [
            ("q", "https://example.com/page?x=1"),
            ("url", "https://www.example.org/blog"),
            ("return_to", "http://10.0.0.1/callback"),
            ("page", "2"),
            ("file", "report.pdf"),
        ] {
            assert_ne!(level(n, v), Some(1), "{n}={v}");
        }
        assert_eq!(level("page", "https://www.example.com/products/shoes"), Some(2));
        assert_eq!(level("template", "https://cdn.example.org/x.jpg"), Some(1));
    }

    /// 100 KiB of benign path before the truncation tail or the script's name: the whole
    /// value is read, so padding hides neither.
    #[test]
    fn padding_hides_no_tail() {
        let pad = "a/".repeat(50 * 1024);
        assert_eq!(level("q", &format!("http://10.1.2.3/{pad}x.php?")), Some(1));
        assert_eq!(level("page", &format!("http://evil.example/{pad}shell.TXT")), Some(1));
        assert_eq!(level("q", &format!("http://10.1.2.3/{pad}x.php")), None);
    }
}
