//! Glob paths resolved the way the shell would expand them on a typical host, for
//! [`crate::shell_deobf`]: `/???/??t /???/p??s??` runs `/bin/cat /etc/passwd`. A glob word is
//! matched against a short list of the paths injections reach for and against
//! `<bin dir>/<known command>`; the resolved path is marked as produced by obfuscation.

/// Well-known binaries and files a glob path such as `/???/??t` is resolved against. Short on
/// purpose: the point is the handful of paths that injection payloads reach for.
const KNOWN_PATHS: &[&str] = &[
    "/bin/cat",
    "/bin/sh",
    "/bin/bash",
    "/bin/dash",
    "/bin/ls",
    "/bin/nc",
    "/bin/netcat",
    "/bin/ping",
    "/bin/echo",
    "/bin/sleep",
    "/bin/uname",
    "/bin/busybox",
    "/bin/rm",
    "/bin/id",
    "/usr/bin/id",
    "/usr/bin/whoami",
    "/usr/bin/wget",
    "/usr/bin/curl",
    "/usr/bin/nc",
    "/usr/bin/ncat",
    "/usr/bin/python",
    "/usr/bin/python3",
    "/usr/bin/perl",
    "/usr/bin/php",
    "/usr/bin/base64",
    "/usr/bin/head",
    "/usr/bin/tail",
    "/usr/bin/env",
    "/usr/bin/uname",
    "/etc/passwd",
    "/etc/shadow",
    "/etc/hosts",
    "/etc/group",
    "/etc/issue",
    "/etc/hostname",
    "/proc/self/environ",
];

/// Glob match of `pat` (`?`, `*`, `[a-z]`, `[!x]`) against `name`, by dynamic programming over
/// bounded lengths (both ≤ 64), so no backtracking blow-up.
fn glob_match(pat: &[u8], name: &[u8]) -> bool {
    if pat.len() > 64 || name.len() > 64 {
        return false;
    }
    // reach[j]: `name[..j]` matched by the pattern so far.
    let mut reach = [false; 65];
    reach[0] = true;
    let mut p = 0;
    while p < pat.len() {
        let mut next = [false; 65];
        match pat[p] {
            b'*' => {
                // `*` spans any run of bytes within one path segment.
                let mut on = false;
                for j in 0..=name.len() {
                    if j > 0 && name[j - 1] == b'/' {
                        on = false;
                    }
                    on |= reach[j];
                    next[j] = on;
                }
                p += 1;
            }
            b'[' => {
                let Some(close) = pat[p + 1..].iter().position(|&c| c == b']') else { return false };
                let class = &pat[p + 1..p + 1 + close];
                let (neg, class) = match class.first() {
                    Some(b'!' | b'^') => (true, &class[1..]),
                    _ => (false, class),
                };
                for j in 0..name.len() {
                    if reach[j] && class_has(class, name[j]) != neg {
                        next[j + 1] = true;
                    }
                }
                p += close + 2;
            }
            c => {
                for j in 0..name.len() {
                    if reach[j] && (c == b'?' && name[j] != b'/' || c == name[j]) {
                        next[j + 1] = true;
                    }
                }
                p += 1;
            }
        }
        reach = next;
    }
    reach[name.len()]
}

fn class_has(class: &[u8], b: u8) -> bool {
    let mut k = 0;
    while k < class.len() {
        if k + 2 < class.len() && class[k + 1] == b'-' {
            if (class[k]..=class[k + 2]).contains(&b) {
                return true;
            }
            k += 3;
        } else {
            if class[k] == b {
                return true;
            }
            k += 1;
        }
    }
    false
}

/// Replaces each absolute path word holding a glob character by the one well-known path it
/// matches (marked).
pub(crate) fn resolve_globs(text: Vec<u8>, marks: Vec<bool>) -> (Vec<u8>, Vec<bool>) {
    if !text.iter().any(|&c| matches!(c, b'?' | b'*' | b'[')) {
        return (text, marks);
    }
    let mut out = Vec::with_capacity(text.len());
    let mut out_marks = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let start_of_word = text[i] == b'/' && (i == 0 || !is_glob_word(text[i - 1]));
        if start_of_word {
            let len = text[i..].iter().take_while(|&&c| is_glob_word(c)).count();
            let word = &text[i..i + len];
            // A `?` before `name=` is a query string, not a glob.
            let query = text.get(i + len) == Some(&b'=');
            if !query && word.iter().any(|&c| matches!(c, b'?' | b'*' | b'[')) {
                if let Some(path) = resolve_glob(word) {
                    out_marks.extend(std::iter::repeat_n(true, path.len()));
                    out.extend_from_slice(&path);
                    i += len;
                    continue;
                }
            }
        }
        out.push(text[i]);
        out_marks.push(marks[i]);
        i += 1;
    }
    (out, out_marks)
}

/// Directories whose binaries a glob such as `/???/??t` names.
const BIN_DIRS: &[&str] = &["/bin", "/usr/bin", "/sbin", "/usr/sbin", "/usr/local/bin"];

/// The well-known file, or `<bin dir>/<known command>`, that a glob path matches.
fn resolve_glob(word: &[u8]) -> Option<Vec<u8>> {
    if word.iter().any(|&c| c == b'=' || c == b'&') || word.len() > 64 {
        return None;
    }
    // `?` and `*` never cross `/`, so a candidate has as many segments as the pattern.
    let slashes = |w: &[u8]| w.iter().filter(|&&c| c == b'/').count();
    let segments = slashes(word);
    if !(2..=3).contains(&segments) {
        return None;
    }
    if let Some(p) = KNOWN_PATHS.iter().find(|p| slashes(p.as_bytes()) == segments && glob_match(word, p.as_bytes())) {
        return Some(p.as_bytes().to_vec());
    }
    let slash = word.iter().rposition(|&c| c == b'/')?;
    let (dir, base) = (&word[..slash], &word[slash + 1..]);
    let dir = BIN_DIRS.iter().find(|d| glob_match(dir, d.as_bytes()))?;
    // Pattern units (a `[...]` class is one); without `*` the name must have exactly as many.
    let (mut units, mut star, mut k) = (0, false, 0);
    while k < base.len() {
        match base[k] {
            b'*' => star = true,
            b'[' => {
                units += 1;
                k += base[k..].iter().position(|&c| c == b']').unwrap_or(0);
            }
            _ => units += 1,
        }
        k += 1;
    }
    let name = crate::shell_commands::command_names()
        .find(|n| (if star { n.len() >= units } else { n.len() == units }) && glob_match(base, n.as_bytes()))?;
    Some([dir.as_bytes(), b"/", name.as_bytes()].concat())
}

/// A byte of a shell word (as `shell_deobf` reads words) or of a glob pattern.
fn is_glob_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'/' | b'.' | b'-' | b'?' | b'*' | b'[' | b']' | b'!' | b'^')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_within_segments() {
        assert!(glob_match(b"/e??/p?ss??", b"/etc/passwd"));
        assert!(!glob_match(b"/e??/p?ss??", b"/etc/shadow"));
        assert!(glob_match(b"/etc/[m-z]asswd", b"/etc/passwd"));
        assert!(!glob_match(b"/*", b"/etc/passwd"), "`*` stops at `/`");
        assert_eq!(resolve_glob(b"/???/??t").as_deref(), Some(&b"/bin/cat"[..]));
        assert_eq!(resolve_glob(b"/usr/b?n/wh*mi").as_deref(), Some(&b"/usr/bin/whoami"[..]));
        assert_eq!(resolve_glob(b"/a?c/def"), None);
    }
}
