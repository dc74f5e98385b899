//! Shell expansions that build a command word out of pieces, for [`crate::shell_deobf`]:
//! variables the payload assigns itself (`a=c;b=at;$a$b /etc/passwd`), Bash ANSI-C quoting
//! (`$'\x63\141t'`) and `$(printf '\x63at')`. Each is what the shell computes before it runs
//! the word; undoing it lets the tokenizer see `cat`. All scans are forward and bounded.

/// Assignments a payload makes before using them, at most this many.
const MAX_VARS: usize = 8;
/// Longest variable name and value read.
const NAME_MAX: usize = 16;
const VALUE_MAX: usize = 40;
/// Longest quoted body decoded.
const BODY_MAX: usize = 1024;

/// `name=value` at a command position (start, or after `;`, `&`, `|`, a newline, `(` or a
/// backtick, blanks skipped) followed by a separator or a blank: the payload's own variables.
/// Quotes around the value are dropped.
pub(crate) fn assignments(s: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut vars = Vec::new();
    let mut at_command = true;
    let mut i = 0;
    while i < s.len() && vars.len() < MAX_VARS {
        let b = s[i];
        if matches!(b, b';' | b'&' | b'|' | b'\n' | b'(' | b'`') {
            at_command = true;
            i += 1;
            continue;
        }
        if b == b' ' || b == b'\t' {
            i += 1;
            continue;
        }
        if at_command && (b.is_ascii_alphabetic() || b == b'_') {
            let name_len = s[i..].iter().take(NAME_MAX + 1).take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
            if name_len <= NAME_MAX && s.get(i + name_len) == Some(&b'=') {
                let start = i + name_len + 1;
                let len =
                    s[start..].iter().take(VALUE_MAX + 1).take_while(|c| !matches!(c, b';' | b'&' | b'|' | b'\n' | b' ' | b'\t')).count();
                if len <= VALUE_MAX {
                    let value: Vec<u8> = s[start..start + len].iter().copied().filter(|&c| c != b'\'' && c != b'"').collect();
                    vars.push((s[i..i + name_len].to_vec(), value));
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

/// The value of `$name` / `${name}` at `rest` (the bytes after `$`) among `vars`, and how many
/// bytes of `rest` the reference takes.
pub(crate) fn lookup<'v>(rest: &[u8], vars: &'v [(Vec<u8>, Vec<u8>)]) -> Option<(&'v [u8], usize)> {
    if vars.is_empty() {
        return None;
    }
    let (name, used) = if rest.first() == Some(&b'{') {
        let len = rest[1..].iter().take(NAME_MAX + 1).take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
        if rest.get(1 + len) != Some(&b'}') {
            return None;
        }
        (&rest[1..1 + len], len + 2)
    } else {
        let len = rest.iter().take(NAME_MAX + 1).take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
        (&rest[..len], len)
    };
    vars.iter().rev().find(|(n, _)| n.as_slice() == name).map(|(_, v)| (v.as_slice(), used))
}

/// The body of `$'...'` starting at `start` (after the quote) with its escapes decoded, and the
/// index after the closing quote.
pub(crate) fn ansi_c(s: &[u8], start: usize) -> Option<(Vec<u8>, usize)> {
    let body = s.get(start..)?;
    let close = body.iter().take(BODY_MAX).position(|&c| c == b'\'')?;
    Some((unescape(&body[..close]), start + close + 1))
}

/// `$(printf FORMAT)` at `at` (`$`): the format (quoted or not) with printf's escapes decoded,
/// and the index after `)`. `None` when the format has `%` directives or arguments follow.
pub(crate) fn printf_subst(s: &[u8], at: usize) -> Option<(Vec<u8>, usize)> {
    let start = at + b"$(printf ".len();
    let body = s.get(start..)?;
    let close = body.iter().take(BODY_MAX).position(|&c| c == b')')?;
    let inner = body[..close].trim_ascii();
    let format = match inner.first() {
        Some(&q @ (b'\'' | b'"')) if inner.len() >= 2 && inner.last() == Some(&q) => &inner[1..inner.len() - 1],
        _ if !inner.contains(&b' ') => inner,
        _ => return None,
    };
    if format.is_empty() || format.contains(&b'%') {
        return None;
    }
    Some((unescape(format), start + close + 1))
}

/// `\xHH`, `\NNN` (octal), `\uHHHH` (ASCII only), `\n`, `\t`, `\\`, `\'` decoded.
fn unescape(b: &[u8]) -> Vec<u8> {
    let hex = |c: u8| (c as char).to_digit(16);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 >= b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = b[i + 1];
        match c {
            b'x' | b'u' => {
                let max = if c == b'x' { 2 } else { 4 };
                let digits = b[i + 2..].iter().take(max).take_while(|d| hex(**d).is_some()).count();
                let value = b[i + 2..i + 2 + digits].iter().fold(0u32, |v, d| v * 16 + hex(*d).unwrap_or(0));
                if digits > 0 && value < 0x80 {
                    out.push(value as u8);
                }
                i += 2 + digits;
            }
            b'0'..=b'7' => {
                let digits = b[i + 1..].iter().take(3).take_while(|d| (b'0'..=b'7').contains(*d)).count();
                let value = b[i + 1..i + 1 + digits].iter().fold(0u32, |v, d| v * 8 + (d - b'0') as u32);
                if value < 0x80 {
                    out.push(value as u8);
                }
                i += 1 + digits;
            }
            b'n' => {
                out.push(b'\n');
                i += 2;
            }
            b't' => {
                out.push(b'\t');
                i += 2;
            }
            _ => {
                out.push(c);
                i += 2;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces() {
        let vars = assignments(b"x; a=c;b='at';$a$b /etc/passwd");
        assert_eq!(vars, vec![(b"a".to_vec(), b"c".to_vec()), (b"b".to_vec(), b"at".to_vec())]);
        assert_eq!(lookup(b"{b}x", &vars), Some((&b"at"[..], 3)));
        assert_eq!(ansi_c(b"$'\\x63\\141t' x", 2), Some((b"cat".to_vec(), 12)));
        assert_eq!(printf_subst(b"$(printf 'c\\x61t') /etc", 0), Some((b"cat".to_vec(), 18)));
        assert_eq!(printf_subst(b"$(printf '%s' x)", 0), None);
        assert!(assignments(b"https://x.example/?a=1&b=2").len() <= 1);
    }
}
