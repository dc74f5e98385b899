//! PHP code injection: PHP *call syntax* in a data field, read token by token.
//!
//! A call counts when a dangerous function (`system`, `passthru`, `assert`, `create_function`,
//! `posix_getpwuid`, ...) is followed — after optional whitespace and `/* */` or `#` comments —
//! by `(` and an argument that is PHP: a string literal, a variable, a backtick command, a
//! nested call of a PHP function, or, at the start of the value, a bare constant (`system(id)`).
//! `system (noun)` or "the exec(s)" in prose have none of these. The callee may also be
//! namespace-qualified (`\system(...)`), parenthesised (`(system)(ls)`, `(sy.(st).em)(id)`), a
//! concatenation of string literals (`"sys"."tem"(...)`) or a variable (`$f(...)`,
//! `$_GET[0]($_GET[1])`). Besides calls: `<?php` / `<?=` openers, `include` of a URL or stream
//! wrapper, `php://` / `expect://` / `phar://` / `zip://` wrappers, backtick execution and
//! `print(md5(...))` probes after `echo`/`print`/`die`, php.ini overrides
//! (`allow_url_include=1`), and well-known webshell file names as path segments.
//!
//! Level: 1 in a short, code-like value; 2 when the field is pasted source or prose (a chat
//! message asking about PHP code, a long multi-line snippet) — see [`pasted_source`].
//! Linear: every look-ahead from a position is bounded by a constant.

use crate::php_mention::mentions_php;
use crate::php_names::{CANDIDATES, HELPERS, JS_DOLLAR, NO_ARG, PROBES, SINKS, SUPERGLOBALS, WEBSHELLS, WORDS};
use crate::{Check, Finding, Input, Trigger};

pub struct Php;

impl Check for Php {
    fn trigger(&self) -> Trigger {
        // A call, an opener, a backtick, a wrapper or path, a variable.
        Trigger::any_of(b"(<`:.$")
    }

    fn detector(&self) -> &'static str {
        "php-injection"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        if !input.bytes.any(b"(<`:.$") {
            return None;
        }
        // Calls, openers and backticks need `(`, `<` or a backtick; without them only a
        // wrapper (`php://`), a webshell path or (level 2) a superglobal can be present, and
        // those need `:`, `.` or `$` before the full scan runs.
        let code_bytes = input.bytes.any(b"(<`");
        let wrapper_or_path = input.bytes.contains(b':') && input.bytes.contains(b'/') || input.bytes.contains(b'.');
        let wrapper_or_path = wrapper_or_path && mentions_php(input.text.as_bytes());
        let superglobal = input.sensitivity >= 2 && input.bytes.contains(b'$');
        if !(code_bytes || wrapper_or_path || superglobal) {
            return None;
        }
        let reason = find(input.text.as_bytes())?;
        let level = if pasted_source(input.text) { 2 } else { reason.1 };
        (level <= input.sensitivity).then_some(Finding { reason: reason.0, score: 0.95, level })
    }
}

/// A field that is a chat message or a pasted source file rather than a parameter: long,
/// multi-line, fenced, or mostly prose. Code findings there count from level 2. Shared with the
/// Java check.
pub(crate) fn pasted_source(text: &str) -> bool {
    let bytes = text.as_bytes();
    // Length alone does not decide: a Struts OGNL or an obfuscated PHP payload is a long single
    // line with hardly a word of prose.
    if bytes.len() > 4000 || text.contains("```") {
        return true;
    }
    // Lines, or — in the engine's decoded view, where line breaks have become spaces —
    // statements and blocks.
    let lines = bytes.iter().filter(|&&b| b == b'\n').count();
    let statements = bytes.iter().filter(|&&b| b == b';').count();
    let blocks = bytes.iter().filter(|&&b| b == b'{').count();
    // (Braces alone are not enough: `new String[]{"sh","-c","{echo,aWQ=}|{base64,-d}"}` is a
    // one-line payload.)
    if lines >= 4 || statements >= 6 || blocks >= 4 && statements >= 3 || blocks >= 8 {
        return true;
    }
    // Prose: words of two or more letters followed by a space and another word, as in a
    // sentence (`getInstance ( #x` in spaced-out code is not).
    let mut words = 0;
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b.is_ascii_alphabetic() {
            run += 1;
            continue;
        }
        if run >= 2 {
            let next = match (b, bytes.get(i + 1)) {
                (b' ', Some(&n)) => Some(n),
                (b',', Some(b' ')) => bytes.get(i + 2).copied(),
                _ => None,
            };
            if next.is_some_and(|n| n.is_ascii_alphabetic()) {
                words += 1;
            }
        }
        run = 0;
    }
    words >= 8
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Index of the first byte after whitespace and PHP comments from `i` (at most 64 bytes on).
fn skip_gap(t: &[u8], mut i: usize) -> usize {
    let limit = (i + 64).min(t.len());
    while i < limit {
        match t[i] {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => i += 1,
            b'/' if t.get(i + 1) == Some(&b'*') => match find_from(t, i + 2, b"*/", limit) {
                Some(end) => i = end + 2,
                None => return i,
            },
            // A `#` comment runs to the end of the line; in a decoded view the line break has
            // become a space, so a `#` without one is read as an empty comment.
            b'/' if t.get(i + 1) == Some(&b'/') => match t[i..limit].iter().position(|&b| b == b'\n') {
                Some(nl) => i += nl + 1,
                None => return i,
            },
            b'#' => match t[i..limit].iter().position(|&b| b == b'\n') {
                Some(nl) => i += nl + 1,
                None => i += 1,
            },
            _ => return i,
        }
    }
    i
}

fn find_from(t: &[u8], from: usize, needle: &[u8], limit: usize) -> Option<usize> {
    let end = limit.min(t.len());
    if from >= end {
        return None;
    }
    t[from..end].windows(needle.len()).position(|w| w == needle).map(|p| p + from)
}

/// A lower-cased identifier of at most 32 bytes, held without allocating (the check runs on
/// every field, so a benign field must cost no allocation per word).
#[derive(Clone, Copy)]
struct Word {
    buf: [u8; 32],
    len: usize,
}

impl Word {
    const EMPTY: Word = Word { buf: [0; 32], len: 0 };

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }

    fn push(&mut self, b: u8) {
        if self.len < self.buf.len() {
            self.buf[self.len] = b.to_ascii_lowercase();
            self.len += 1;
        }
    }
}

/// Lower-cased identifier starting at `i` (at most 32 bytes kept) and its end.
fn ident_at(t: &[u8], i: usize) -> (Word, usize) {
    let mut word = Word::EMPTY;
    let mut end = i;
    while end < t.len() && is_ident(t[end]) {
        word.push(t[end]);
        end += 1;
    }
    (word, end)
}

fn starts_with_ci(t: &[u8], i: usize, word: &[u8]) -> bool {
    t.len() >= i + word.len() && t[i..i + word.len()].eq_ignore_ascii_case(word)
}

/// The first PHP construct in `t`: its reason and base level.
fn find(t: &[u8]) -> Option<(&'static str, u8)> {
    let mut best: Option<(&'static str, u8)> = None;
    let note = |found: (&'static str, u8), best: &mut Option<(&'static str, u8)>| {
        if best.is_none_or(|b| found.1 < b.1) {
            *best = Some(found);
        }
    };
    let mut i = 0;
    let mut after_declaration = false;
    while i < t.len() {
        let b = t[i];
        if b == b'$' {
            if let Some(found) = variable(t, i) {
                note(found, &mut best);
                if found.1 == 1 {
                    return best;
                }
            }
            i += 1;
            continue;
        }
        if b == b'\'' || b == b'"' {
            if string_callee(t, i) {
                return Some(("php-injection:string-callee", 1));
            }
            i += 1;
            continue;
        }
        if b == b'(' && paren_callee(t, i) {
            return Some(("php-injection:paren-callee", 1));
        }
        if b == b'<' && t.get(i + 1) == Some(&b'?') {
            let after = i + 2;
            if starts_with_ci(t, after, b"php") && t.get(after + 3).is_none_or(|b| !is_ident(*b)) {
                return Some(("php-injection:opener", 1));
            }
            // `<?=` with something after it to echo.
            if t.get(after) == Some(&b'=') && t.len() > after + 1 {
                return Some(("php-injection:opener", 1));
            }
        }
        if b == b':' && t.get(i + 1) == Some(&b'/') && t.get(i + 2) == Some(&b'/') && wrapper_before(t, i) {
            return Some(("php-injection:stream-wrapper", 1));
        }
        if b == b'.' && starts_with_ci(t, i + 1, b"php") && t.get(i + 4).is_none_or(|b| !b.is_ascii_alphabetic()) && webshell_before(t, i) {
            return Some(("php-injection:webshell", 1));
        }
        // (`\system('id')` is a call in the global namespace, so a backslash may precede.)
        if (b.is_ascii_alphabetic() || b == b'_') && (i == 0 || !(is_ident(t[i - 1]) || t[i - 1] == b'$')) {
            let mut end = i;
            while end < t.len() && is_ident(t[end]) {
                end += 1;
            }
            let first = b.to_ascii_lowercase();
            let len = end - i;
            // Most words of a benign field are rejected here, before one is copied.
            if first.is_ascii_lowercase() && len < 32 && CANDIDATES[(first - b'a') as usize] & (1 << len) != 0 {
                let (word, _) = ident_at(t, i);
                if let Some(found) = word_construct(t, i, end, word.as_str(), after_declaration) {
                    return Some(found);
                }
            }
            let word = &t[i..end];
            after_declaration = [&b"function"[..], b"def", b"fn", b"func", b"new"].iter().any(|d| word.eq_ignore_ascii_case(d));
            i = end;
            continue;
        }
        i += 1;
    }
    best
}

/// `$f(...)`, `$_GET[0]($_GET[1])`, `${'_GET'}[x](...)`; a superglobal alone is level 2.
fn variable(t: &[u8], at: usize) -> Option<(&'static str, u8)> {
    if at > 0 && is_ident(t[at - 1]) {
        return None;
    }
    let mut i = at + 1;
    let name;
    if t.get(i) == Some(&b'{') {
        let close = t[i..(i + 40).min(t.len())].iter().position(|&b| b == b'}')?;
        let mut word = Word::EMPTY;
        t[i + 1..i + close].iter().filter(|b| is_ident(**b)).for_each(|&b| word.push(b));
        name = word;
        i += close + 1;
    } else {
        if !t.get(i).is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_') {
            return None;
        }
        let (word, end) = ident_at(t, i);
        name = word;
        i = end;
    }
    let name = name.as_str();
    let superglobal = SUPERGLOBALS.contains(&name);
    let mut subscripts = 0;
    while t.get(i) == Some(&b'[') && subscripts < 3 {
        let close = t[i..(i + 40).min(t.len())].iter().position(|&b| b == b']')?;
        i += close + 1;
        subscripts += 1;
    }
    let open = skip_gap(t, i);
    if t.get(open) != Some(&b'(') {
        return (superglobal && subscripts > 0).then_some(("php-injection:superglobal", 2));
    }
    let arg = skip_gap(t, open + 1);
    let arg_byte = t.get(arg).copied().unwrap_or(b')');
    let php_arg = arg_byte == b'$' || arg_byte == b'`';
    let string_arg = arg_byte == b'\'' || arg_byte == b'"';
    // A bare constant argument only for the short variable names webshells use (`$f(id)`), not
    // JavaScript's `$ensureProvider(providerId)`.
    let bare_arg = arg_byte.is_ascii_alphabetic() && name.len() <= 4 && {
        let (_, end) = ident_at(t, arg);
        t.get(end) == Some(&b')')
    };
    if superglobal || php_arg || ((string_arg || bare_arg) && !JS_DOLLAR.contains(&name) && open == i) {
        return Some(("php-injection:variable-function", 1));
    }
    None
}

/// A concatenation of string literals called as a function: `"sys"."tem"(...)`,
/// `('ex'.'ec')(...)` — when the literals spell a sink.
fn string_callee(t: &[u8], at: usize) -> bool {
    let mut name = Word::EMPTY;
    let mut i = at;
    let mut parts = 0;
    loop {
        let quote = t[i];
        let limit = (i + 41).min(t.len());
        let Some(len) = t[i + 1..limit].iter().position(|&b| b == quote) else { return false };
        if len > 32 {
            return false;
        }
        t[i + 1..i + 1 + len].iter().for_each(|&b| name.push(b));
        parts += 1;
        i = skip_gap(t, i + len + 2);
        while t.get(i) == Some(&b')') {
            i = skip_gap(t, i + 1);
        }
        match t.get(i) {
            Some(b'.') => {
                i = skip_gap(t, i + 1);
                while t.get(i) == Some(&b'(') {
                    i = skip_gap(t, i + 1);
                }
                if !matches!(t.get(i), Some(b'\'' | b'"')) || parts > 12 || name.len >= 32 {
                    return false;
                }
            }
            Some(b'(') => return SINKS.contains(&name.as_str()),
            _ => return false,
        }
    }
}

/// `(system)(ls)`, `(sy.(st).em)(id)`, `('sys'.'tem')(id)`: a parenthesised expression whose
/// bare words and string literals, concatenated, spell a sink — and which is called.
fn paren_callee(t: &[u8], open: usize) -> bool {
    let limit = (open + 64).min(t.len());
    let mut name = Word::EMPTY;
    let mut depth = 1;
    let mut parts = 0;
    let mut i = open + 1;
    while i < limit {
        match t[i] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    let after = skip_gap(t, i + 1);
                    return parts > 0 && t.get(after) == Some(&b'(') && SINKS.contains(&name.as_str());
                }
            }
            b'.' | b' ' | b'\t' | b'\n' | b'\r' => {}
            b'\'' | b'"' => {
                let quote = t[i];
                let Some(len) = t[i + 1..limit].iter().position(|&b| b == quote) else { return false };
                t[i + 1..i + 1 + len].iter().for_each(|&b| name.push(b));
                parts += 1;
                i += len + 1;
            }
            b if is_ident(b) => {
                while i < limit && is_ident(t[i]) {
                    name.push(t[i]);
                    i += 1;
                }
                parts += 1;
                continue;
            }
            _ => return false,
        }
        i += 1;
    }
    false
}

/// `php://`, `expect://`, `phar://`, `data://`: PHP stream wrappers (the `://` is at `colon`).
fn wrapper_before(t: &[u8], colon: usize) -> bool {
    ["php", "expect", "phar", "data", "zlib", "zip"].iter().any(|w| {
        let w = w.as_bytes();
        colon >= w.len()
            && t[colon - w.len()..colon].eq_ignore_ascii_case(w)
            && (colon == w.len() || !is_ident(t[colon - w.len() - 1]) || w == b"zlib")
    })
}

/// The path segment ending at `dot` (`/c99.php`) is a webshell name.
fn webshell_before(t: &[u8], dot: usize) -> bool {
    let start = t[..dot].iter().rposition(|&b| matches!(b, b'/' | b'\\' | b'=' | b' ' | b'?' | b'&' | b'"' | b'\'')).map_or(0, |p| p + 1);
    if dot - start > 24 {
        return false;
    }
    let mut name = Word::EMPTY;
    t[start..dot].iter().for_each(|&b| name.push(b));
    WEBSHELLS.contains(&name.as_str())
}

/// A construct that starts with the identifier `word` (`t[i..end]`): a sink call, `include` of
/// a URL, `echo` of a backtick command. `after_declaration`: the word before was `function`,
/// `def`, `new`... (a declaration or a constructor, not a call of the sink).
fn word_construct(t: &[u8], i: usize, end: usize, word: &str, after_declaration: bool) -> Option<(&'static str, u8)> {
    if matches!(word, "include" | "include_once" | "require" | "require_once") {
        let mut j = skip_gap(t, end);
        let paren = t.get(j) == Some(&b'(');
        if paren {
            j = skip_gap(t, j + 1);
        }
        let quoted = matches!(t.get(j), Some(b'\'' | b'"'));
        if quoted {
            j += 1;
        }
        if (paren || quoted) && (url_at(t, j) || t.get(j) == Some(&b'$')) {
            return Some(("php-injection:include-url", 1));
        }
        return None;
    }
    if matches!(word, "echo" | "print" | "die" | "exit") {
        let j = skip_gap(t, end);
        if j > end && t.get(j) == Some(&b'`') && t[j + 1..(j + 80).min(t.len())].contains(&b'`') {
            return Some(("php-injection:backtick", 1));
        }
        // `print(md5(31337))`, `echo phpversion();`: the output of a PHP-only function, the
        // probe scanners use to confirm evaluation.
        let k = if t.get(j) == Some(&b'(') { skip_gap(t, j + 1) } else { j };
        if k > end && t.get(k).is_some_and(|b| b.is_ascii_alphabetic()) {
            let (inner, inner_end) = ident_at(t, k);
            if PROBES.contains(&inner.as_str()) && t.get(skip_gap(t, inner_end)) == Some(&b'(') {
                return Some(("php-injection:function-call", 1));
            }
        }
        return None;
    }
    if matches!(word, "allow_url_include" | "auto_prepend_file" | "auto_append_file") {
        // php.ini directives set from a request (`-d allow_url_include=1`, CVE-2012-1823).
        let j = skip_gap(t, end);
        return (t.get(j) == Some(&b'=')).then_some(("php-injection:ini-override", 1));
    }
    if !SINKS.contains(&word) || after_declaration {
        return None;
    }
    if !callable_position(t, i) {
        return None;
    }
    let open = skip_gap(t, end);
    if t.get(open) != Some(&b'(') {
        return None;
    }
    let arg = skip_gap(t, open + 1);
    let strong = match t.get(arg) {
        None => false,
        Some(b'\'' | b'"') => word != "preg_replace" || preg_e(t, arg),
        Some(b'$' | b'`') => word != "preg_replace",
        Some(b')') => NO_ARG.contains(&word),
        Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {
            let (inner, inner_end) = ident_at(t, arg);
            let after = skip_gap(t, inner_end);
            match t.get(after) {
                Some(b'(') => HELPERS.contains(&inner.as_str()) || SINKS.contains(&inner.as_str()),
                Some(b')' | b',') => {
                    // A bare constant (`system(id)`): for a sink that is also an English word,
                    // code only when written tight at the start of a statement — not a plural
                    // (`the system(s)`) or a gloss (`system (noun)`).
                    let tight = open == end;
                    let not_plural = !matches!(inner.as_str(), "s" | "es" | "ies");
                    let command_sink = matches!(word, "system" | "exec");
                    not_plural && (!WORDS.contains(&word) || command_sink && tight && statement_start(t, i))
                }
                _ => false,
            }
        }
        Some(c) if c.is_ascii_digit() => !WORDS.contains(&word),
        _ => false,
    };
    strong.then_some(("php-injection:function-call", 1))
}

/// The sink is called as a function: not a method (`->exec(`, `::exec(`, `obj.exec(`), except
/// after a closed string (`'.system('id').'`, PHP concatenation).
fn callable_position(t: &[u8], i: usize) -> bool {
    let mut j = i;
    let floor = i.saturating_sub(8);
    while j > floor && t[j - 1].is_ascii_whitespace() {
        j -= 1;
    }
    if j == 0 {
        return true;
    }
    match t[j - 1] {
        b'>' if j >= 2 && t[j - 2] == b'-' => false,
        b':' if j >= 2 && t[j - 2] == b':' => false,
        b'.' => j >= 2 && matches!(t[j - 2], b'\'' | b'"'),
        _ => true,
    }
}

/// The identifier at `i` starts the value or a statement (after `;`, a quote, `(`, `|`, `&`,
/// `=`, `{`, `?>`-style openers and whitespace).
fn statement_start(t: &[u8], i: usize) -> bool {
    let mut j = i;
    let floor = i.saturating_sub(8);
    while j > floor && t[j - 1].is_ascii_whitespace() {
        j -= 1;
    }
    let j = if j > 0 && t[j - 1] == b'\\' { j - 1 } else { j };
    j == 0 || matches!(t[j - 1], b';' | b'\'' | b'"' | b'(' | b'|' | b'&' | b'=' | b'{' | b'?' | b'`' | b'>' | b'.')
}

/// `preg_replace('/x/e', ...)`: the pattern's modifiers include `e` (evaluate the replacement).
fn preg_e(t: &[u8], quote_at: usize) -> bool {
    let quote = t[quote_at];
    let limit = (quote_at + 200).min(t.len());
    let Some(len) = t[quote_at + 1..limit].iter().position(|&b| b == quote) else { return false };
    let pattern = &t[quote_at + 1..quote_at + 1 + len];
    let mods = pattern.iter().rev().take_while(|b| b.is_ascii_alphabetic()).count();
    mods > 0 && pattern.len() > mods && !pattern[..pattern.len() - mods].is_empty() && pattern[pattern.len() - mods..].contains(&b'e')
}

/// A remote or wrapper URL at `i`.
fn url_at(t: &[u8], i: usize) -> bool {
    ["http://", "https://", "ftp://", "php://", "data:", "expect://", "zip://", "phar://", "\\\\"]
        .iter()
        .any(|s| starts_with_ci(t, i, s.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::Php;
    use crate::{Check, Input};

    fn hit(text: &str) -> Option<&'static str> {
        Php.inspect(&Input::new(text)).map(|f| f.reason)
    }

    #[test]
    fn calls_and_forms() {
        for text in [
            "system('id')",
            "file_exists (\"/etc/passwd\")",
            "posix_getpwuid(posix_geteuid())",
            "system(id)",
            "(system)(ls)",
            "\"sys\".\"tem\"('id')",
            "$f('id')",
            "$_GET[0]($_GET[1])",
            "<?php echo 1; ?>",
            "<?=`id`?>",
            "phpinfo()",
            "eval(base64_decode('ZWNobyAx'))",
            "include('http://evil/x.txt')",
            "php://filter/convert.base64-encode/resource=index.php",
            "/uploads/c99.php",
            "'.passthru('ls').'",
            "system/**/('id')",
            "preg_replace('/.*/e','system(\"id\")','')",
            "echo `id`;",
            "${'_GET'}[a]($_GET[b])",
        ] {
            assert!(hit(text).is_some(), "{text}");
        }
    }

    #[test]
    fn prose_passes() {
        for text in [
            "system (noun): a set of things working together",
            "the exec(s) will meet",
            "system requirements",
            "the system(s) under test",
            "regex.exec(str)",
            "$this->exec('x')",
            "$t('home.title')",
            "$(document).ready(fn)",
            "please include http://example.com in the mail",
            "O'Brien's \"best\" (really)",
            "price $5 (USD)",
            "shell scripts",
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64)",
        ] {
            assert_eq!(hit(text), None, "{text}");
        }
    }
}
