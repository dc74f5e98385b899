//! What cmd.exe and PowerShell undo before they run a word, undone the same way for
//! `shell_windows`: carets, quotes and backticks inside words, `%VAR%` and `%VAR:~a,b%`
//! expansion (with the values of a default install and the payload's own `set` assignments).

/// Variables attackers expand or slice (`%ProgramData:~0,1%` = `c`), as on a default install.
const ENV: &[(&str, &str)] = &[
    ("comspec", "c:\\windows\\system32\\cmd.exe"),
    ("windir", "c:\\windows"),
    ("systemroot", "c:\\windows"),
    ("programdata", "c:\\programdata"),
    ("allusersprofile", "c:\\programdata"),
    ("programfiles", "c:\\program files"),
    ("commonprogramfiles", "c:\\program files\\common files"),
    ("public", "c:\\users\\public"),
    ("systemdrive", "c:"),
    ("homedrive", "c:"),
    ("os", "windows_nt"),
    ("pathext", ".com;.exe;.bat;.cmd;.vbs;.vbe;.js;.jse;.wsf;.wsh;.msc"),
    ("path", "c:\\windows\\system32;c:\\windows;c:\\windows\\system32\\wbem;c:\\windows\\system32\\windowspowershell\\v1.0\\"),
];

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'\\' | b':' | b'/')
}

/// Lower-cased, carets and in-word quotes / backticks removed, `%VAR%` and `%VAR:~a,b%`
/// expanded; `marks` flags bytes an obfuscation step produced or followed.
pub(crate) fn deobfuscate(s: &[u8]) -> (Vec<u8>, Vec<bool>) {
    // The space first: most windows of prose fail on it, before the three-letter comparison.
    let vars = if s.len() > 6 && s.contains(&b'%') && s.windows(4).any(|w| w[3] == b' ' && w[..3].eq_ignore_ascii_case(b"set")) {
        set_assignments(s)
    } else {
        Vec::new()
    };
    let mut out = Vec::with_capacity(s.len());
    let mut marks = Vec::with_capacity(s.len());
    let mut pending = false;
    let mut i = 0;
    while i < s.len() {
        let b = s[i].to_ascii_lowercase();
        let next = s.get(i + 1).copied().unwrap_or(b' ');
        let last = out.last().copied().unwrap_or(b' ');
        match b {
            b'^' if next != b' ' => {
                // The caret escapes the next byte and disappears.
                pending |= is_word(last) || is_word(next);
                out.push(next.to_ascii_lowercase());
                marks.push(pending);
                pending = false;
                i += 2;
            }
            b'"' | b'\'' | b'`' if is_word(last) && is_word(next) || b != b'`' && next == b => {
                pending = true;
                i += 1;
            }
            b'"' => i += 1,
            b'%' => {
                let rest = &s[i + 1..];
                let len = rest.iter().take(48).position(|&c| c == b'%');
                let expanded = len.and_then(|len| {
                    let name = rest[..len].to_ascii_lowercase();
                    let set = vars.iter().rev().find(|(n, _)| *n == name).map(|(_, v)| v.clone());
                    set.or_else(|| expand(&rest[..len])).map(|v| (v, len))
                });
                match expanded {
                    Some((value, len)) => {
                        out.extend_from_slice(&value);
                        marks.extend(std::iter::repeat_n(true, value.len()));
                        i += len + 2;
                    }
                    None => {
                        out.push(b'%');
                        marks.push(pending);
                        pending = false;
                        i += 1;
                    }
                }
            }
            _ => {
                // Up to the next byte the cases above handle, bytes are copied lower-cased in
                // one go: prose is mostly such runs.
                let run = 1 + s[i + 1..].iter().position(|c| matches!(c, b'^' | b'"' | b'\'' | b'`' | b'%')).unwrap_or(s.len() - i - 1);
                out.extend(s[i..i + run].iter().map(u8::to_ascii_lowercase));
                marks.push(pending);
                marks.resize(marks.len() + run - 1, false);
                pending = false;
                i += run;
            }
        }
    }
    (out, marks)
}

/// `set NAME=VALUE` at a command position (start, after `&`, `|`, a newline or `(`): the
/// variables a payload assigns to build a command word (`set a=who&&set b=ami&&call %a%%b%`),
/// lower-cased, at most 8, values up to 40 bytes.
fn set_assignments(s: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut vars = Vec::new();
    let mut at_command = true;
    let mut i = 0;
    while i < s.len() && vars.len() < 8 {
        let b = s[i];
        if matches!(b, b'&' | b'|' | b'\n' | b'\r' | b'(') {
            at_command = true;
            i += 1;
            continue;
        }
        if b == b' ' || b == b'\t' || b == b'@' {
            i += 1;
            continue;
        }
        if at_command && s.len() - i > 4 && s[i..i + 4].eq_ignore_ascii_case(b"set ") {
            let mut j = i + 4;
            while s.get(j) == Some(&b' ') {
                j += 1;
            }
            let quoted = s.get(j) == Some(&b'"');
            j += quoted as usize;
            let name_len = s[j..].iter().take(17).take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
            if (1..=16).contains(&name_len) && s.get(j + name_len) == Some(&b'=') {
                let start = j + name_len + 1;
                let len = s[start..].iter().take(41).take_while(|c| !matches!(c, b'&' | b'|' | b'\n' | b'\r' | b'"')).count();
                if len <= 40 {
                    vars.push((s[j..j + name_len].to_ascii_lowercase(), s[start..start + len].to_ascii_lowercase()));
                    i = start + len;
                    continue;
                }
            }
        }
        at_command = false;
        i += 1;
    }
    vars
}

/// `comspec` → its value; `programdata:~0,1` → `c`; negative start/length as cmd takes them.
pub(crate) fn expand(inner: &[u8]) -> Option<Vec<u8>> {
    let inner: Vec<u8> = inner.to_ascii_lowercase();
    let (name, slice) = match inner.iter().position(|&c| c == b':') {
        Some(p) => (&inner[..p], Some(&inner[p + 1..])),
        None => (&inner[..], None),
    };
    let value = ENV.iter().find(|(n, _)| n.as_bytes() == name)?.1.as_bytes();
    let Some(slice) = slice else { return Some(value.to_vec()) };
    let spec = std::str::from_utf8(slice.strip_prefix(b"~")?).ok()?;
    let mut parts = spec.split(',');
    let len = value.len() as i64;
    let start: i64 = parts.next()?.trim().parse().ok()?;
    let start = if start < 0 { (len + start).max(0) } else { start.min(len) };
    let end = match parts.next() {
        Some(l) => {
            let l: i64 = l.trim().parse().ok()?;
            if l < 0 {
                (len + l).max(start)
            } else {
                (start + l).min(len)
            }
        }
        None => len,
    };
    Some(value[start as usize..end as usize].to_vec())
}
