//! A small JavaScript lexer and constant folder for the XSS checks.
//!
//! It is not a parser: it cuts a value into identifier, string, template, regex, number and
//! punctuation tokens (escapes undone, so `\x61lert` and `'\u0061lert'` read as `alert`), pairs
//! brackets, and folds the constant string expressions attackers use to hide a name
//! (`'ale'+'rt'`, `String.fromCharCode(97,...)`, `atob('...')`, `8680439..toString(30)`,
//! `/alert/.source`, `['al','ert'].join('')`). Every step is linear in the input; folding is
//! bounded by a depth cap and an output-length cap.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Ident,
    Str,
    /// A whole template literal; `subst` tells whether it had `${...}` parts.
    Template,
    Regex,
    Num,
    Punct,
    /// A line comment that reads as prose (a collapsed multi-line snippet's comment swallows
    /// the rest of the value): kept so the analysis can count it as prose.
    Comment,
}

#[derive(Clone, Debug)]
pub struct Token {
    pub kind: Kind,
    /// Identifiers: the name; strings, templates (cooked literal parts, then the source of any
    /// substitutions), regexes (source): the
    /// value; numbers: the digits; punctuation: the byte.
    pub val: String,
    /// The source spelled this token with escapes (an identifier `\u0061lert`, a string
    /// `'\x61'`): nobody types that by hand.
    pub escaped: bool,
    pub subst: bool,
    /// A string or template left unterminated: the rest of the page after a break-out, or
    /// prose that merely contains a quote.
    pub open: bool,
    /// Index of the matching bracket for `( ) [ ] { }`; `usize::MAX` when unmatched.
    pub partner: usize,
    /// Byte offset of the token's start in the source.
    pub at: usize,
}

impl Token {
    pub fn is(&self, p: u8) -> bool {
        self.kind == Kind::Punct && self.val.as_bytes()[0] == p
    }
    pub fn ident(&self, name: &str) -> bool {
        self.kind == Kind::Ident && self.val == name
    }
}

const MAX_TOKENS: usize = 20_000;
const MAX_FOLD: usize = 4096;

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

fn hex(b: u8) -> Option<u32> {
    (b as char).to_digit(16)
}

/// Reads a `\x..`, `\u....`, `\u{...}`, octal or one-character escape at `s[i] == b'\\'`;
/// returns the character and the index after it.
pub(crate) fn escape(s: &[u8], i: usize) -> (Option<char>, usize) {
    let Some(&c) = s.get(i + 1) else {
        return (None, i + 1);
    };
    let num = |from: usize, n: usize| -> Option<u32> {
        let d = s.get(from..from + n)?;
        d.iter().try_fold(0u32, |acc, &b| Some(acc * 16 + hex(b)?))
    };
    match c {
        b'x' => match num(i + 2, 2) {
            Some(v) => (char::from_u32(v), i + 4),
            None => (Some('x'), i + 2),
        },
        b'u' if s.get(i + 2) == Some(&b'{') => {
            let mut j = i + 3;
            let mut v: u32 = 0;
            while j < s.len() && j < i + 12 && hex(s[j]).is_some() {
                v = v.saturating_mul(16).saturating_add(hex(s[j]).unwrap_or(0));
                j += 1;
            }
            if s.get(j) == Some(&b'}') {
                (char::from_u32(v), j + 1)
            } else {
                (Some('u'), i + 2)
            }
        }
        b'u' => match num(i + 2, 4) {
            Some(v) => (char::from_u32(v), i + 6),
            None => (Some('u'), i + 2),
        },
        b'0'..=b'7' => {
            let mut j = i + 1;
            let mut v = 0u32;
            while j < s.len() && j < i + 4 && (b'0'..=b'7').contains(&s[j]) && v * 8 + ((s[j] - b'0') as u32) < 256 {
                v = v * 8 + (s[j] - b'0') as u32;
                j += 1;
            }
            (char::from_u32(v), j)
        }
        b'n' => (Some('\n'), i + 2),
        b't' => (Some('\t'), i + 2),
        b'r' => (Some('\r'), i + 2),
        b'b' => (Some('\u{8}'), i + 2),
        b'f' => (Some('\u{c}'), i + 2),
        b'v' => (Some('\u{b}'), i + 2),
        // A line continuation (`\` and a line break) stands for nothing.
        b'\n' => (None, i + 2),
        b'\r' => (None, if s.get(i + 2) == Some(&b'\n') { i + 3 } else { i + 2 }),
        _ => {
            // Any other escaped character stands for itself (`\'`, `\a`): decode one UTF-8 char.
            let rest = std::str::from_utf8(&s[i + 1..]).ok().or_else(|| {
                let end = (i + 5).min(s.len());
                (i + 2..=end).rev().find_map(|e| std::str::from_utf8(&s[i + 1..e]).ok())
            });
            match rest.and_then(|r| r.chars().next()) {
                Some(ch) => (Some(ch), i + 1 + ch.len_utf8()),
                None => (None, i + 2),
            }
        }
    }
}

/// Appends the UTF-8 character starting at `s[i]` (or U+FFFD) and returns the next index.
fn push_char(out: &mut String, s: &[u8], i: usize) -> usize {
    let len = match s[i] {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    };
    let end = (i + len).min(s.len());
    match std::str::from_utf8(&s[i..end]) {
        Ok(t) => out.push_str(t),
        Err(_) => out.push('\u{fffd}'),
    }
    end.max(i + 1)
}

/// Cuts `src` into tokens; comments are skipped. Never fails: a stray byte becomes punctuation.
pub fn lex(src: &str) -> Vec<Token> {
    let s = src.as_bytes();
    let mut toks: Vec<Token> = Vec::new();
    let mut i = 0;
    let tok = |kind, val: String, at| Token { kind, val, escaped: false, subst: false, open: false, partner: usize::MAX, at };
    while i < s.len() && toks.len() < MAX_TOKENS {
        let c = s[i];
        let at = i;
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'/' && s.get(i + 1) == Some(&b'/') || c == b'<' && s[i..].starts_with(b"<!--") {
            let mut spaces = 0;
            while i < s.len() && s[i] != b'\n' {
                spaces += (s[i] == b' ') as usize;
                i += 1;
            }
            if spaces >= 4 && i - at > 24 {
                toks.push(tok(Kind::Comment, String::new(), at));
            }
        } else if c == b'/' && s.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < s.len() && !s[i..].starts_with(b"*/") {
                i += 1;
            }
            i += 2;
        } else if is_ident_byte(c) && !c.is_ascii_digit() || c == b'\\' && s.get(i + 1) == Some(&b'u') {
            let mut val = String::new();
            let mut escaped = false;
            while i < s.len() {
                if is_ident_byte(s[i]) {
                    i = push_char(&mut val, s, i);
                } else if s[i] == b'\\' && s.get(i + 1) == Some(&b'u') {
                    let (ch, next) = escape(s, i);
                    val.extend(ch);
                    escaped = true;
                    i = next;
                } else {
                    break;
                }
            }
            toks.push(Token { escaped, ..tok(Kind::Ident, val, at) });
        } else if c.is_ascii_digit() || c == b'.' && s.get(i + 1).is_some_and(u8::is_ascii_digit) {
            let mut dot = false;
            while i < s.len() && (s[i].is_ascii_alphanumeric() || s[i] == b'.' && !dot) {
                dot |= s[i] == b'.';
                i += 1;
            }
            toks.push(tok(Kind::Num, src[at..i].to_string(), at));
        } else if c == b'"' || c == b'\'' {
            let mut val = String::new();
            let mut escaped = false;
            i += 1;
            while i < s.len() && s[i] != c && s[i] != b'\n' {
                if s[i] == b'\\' {
                    let (ch, next) = escape(s, i);
                    val.extend(ch);
                    escaped = true;
                    i = next;
                } else {
                    i = push_char(&mut val, s, i);
                }
            }
            let open = i >= s.len() || s[i] == b'\n';
            i += 1;
            toks.push(Token { escaped, open, ..tok(Kind::Str, val, at) });
        } else if c == b'`' {
            let (val, escaped, subst, next) = template(s, i);
            let open = next > s.len();
            i = next;
            toks.push(Token { escaped, subst, open, ..tok(Kind::Template, val, at) });
        } else if c == b'/' && regex_allowed(toks.last()) {
            let mut val = String::new();
            let mut class = false;
            i += 1;
            while i < s.len() && s[i] != b'\n' && (s[i] != b'/' || class) {
                if s[i] == b'\\' && i + 1 < s.len() {
                    val.push('\\');
                    i += 1;
                }
                class = (class || s[i] == b'[') && s[i] != b']';
                i = push_char(&mut val, s, i);
            }
            i += 1;
            while i < s.len() && s[i].is_ascii_alphabetic() {
                i += 1;
            }
            toks.push(tok(Kind::Regex, val, at));
        } else {
            i = push_char(&mut String::new(), s, i);
            toks.push(tok(Kind::Punct, (c as char).to_string(), at));
        }
    }
    pair(&mut toks);
    toks
}

/// A template literal from the backtick at `s[i]`: the cooked literal parts, whether it held
/// escapes, whether it held `${...}`, and the index after the closing backtick.
fn template(s: &[u8], mut i: usize) -> (String, bool, bool, usize) {
    let (mut val, mut escaped, mut subst) = (String::new(), false, false);
    i += 1;
    while i < s.len() && s[i] != b'`' {
        if s[i] == b'\\' {
            let (ch, next) = escape(s, i);
            val.extend(ch);
            escaped = true;
            i = next;
        } else if s[i] == b'$' && s.get(i + 1) == Some(&b'{') {
            // Skip the substitution by brace depth; strings inside it are not tracked (bounded
            // and linear, which is all a detector needs).
            subst = true;
            let mut depth = 0usize;
            let start = i;
            while i < s.len() {
                match s[i] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            // The substitution's source is kept after the literal text, so a check can see
            // what it reads (`${document.cookie}`); a template with substitutions never folds.
            val.push_str(&String::from_utf8_lossy(&s[start..i.min(s.len())]));
            i += 1;
        } else {
            i = push_char(&mut val, s, i);
        }
    }
    (val, escaped, subst, i + 1)
}

/// A `/` starts a regex literal unless it follows a value (then it divides).
fn regex_allowed(prev: Option<&Token>) -> bool {
    match prev {
        None => true,
        Some(t) => match t.kind {
            Kind::Ident => matches!(t.val.as_str(), "return" | "typeof" | "in" | "of" | "void" | "case" | "throw"),
            Kind::Punct => !matches!(t.val.as_bytes()[0], b')' | b']' | b'}'),
            _ => false,
        },
    }
}

fn pair(toks: &mut [Token]) {
    let mut stack: Vec<usize> = Vec::new();
    for i in 0..toks.len() {
        if toks[i].kind != Kind::Punct {
            continue;
        }
        let open = match toks[i].val.as_bytes()[0] {
            b'(' | b'[' | b'{' => {
                stack.push(i);
                continue;
            }
            b')' => b'(',
            b']' => b'[',
            b'}' => b'{',
            _ => continue,
        };
        // Pop to the nearest matching opener; unmatched closers stay unpaired.
        if let Some(pos) = stack.iter().rposition(|&o| toks[o].val.as_bytes()[0] == open) {
            let o = stack[pos];
            stack.truncate(pos);
            toks[o].partner = i;
            toks[i].partner = o;
        }
    }
}

/// A folded constant.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Str(String),
    Num(f64),
    Arr(Vec<String>),
}

impl Val {
    pub fn into_string(self) -> String {
        match self {
            Val::Str(s) => s,
            Val::Num(n) => num_text(n),
            Val::Arr(a) => a.join(","),
        }
    }
}

fn num_text(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// Folds `toks[from..to]` as one constant expression (`+`-joined terms); `None` when any part
/// is not constant. `work` counts the tokens visited so nested folds stay bounded.
pub fn fold(toks: &[Token], from: usize, to: usize) -> Option<Val> {
    let mut work = 0usize;
    let (v, end) = expr(toks, from, to, 0, &mut work)?;
    (end == to).then_some(v)
}

fn expr(t: &[Token], mut i: usize, to: usize, depth: usize, work: &mut usize) -> Option<(Val, usize)> {
    let (mut acc, next) = postfix(t, i, to, depth, work)?;
    i = next;
    while i < to && t[i].is(b'+') {
        let (rhs, next) = postfix(t, i + 1, to, depth, work)?;
        i = next;
        acc = match (acc, rhs) {
            (Val::Num(a), Val::Num(b)) => Val::Num(a + b),
            (a, b) => Val::Str(a.into_string() + &b.into_string()),
        };
        if let Val::Str(s) = &acc {
            if s.len() > MAX_FOLD {
                return None;
            }
        }
    }
    Some((acc, i))
}

fn postfix(t: &[Token], i: usize, to: usize, depth: usize, work: &mut usize) -> Option<(Val, usize)> {
    *work += 1;
    if depth > 6 || *work > 4 * t.len() + 64 || i >= to {
        return None;
    }
    let (mut v, mut i) = primary(t, i, to, depth, work)?;
    // Method calls and properties on a constant: `.concat(...)`, `.join(...)`, `.source`...
    while i + 1 < to && t[i].is(b'.') && t[i + 1].kind == Kind::Ident {
        let name = t[i + 1].val.as_str();
        let call = i + 2 < to && t[i + 2].is(b'(') && t[i + 2].partner < to;
        let (arg, after) = if call {
            let close = t[i + 2].partner;
            let arg = if close > i + 3 { Some(expr(t, i + 3, close, depth + 1, work).map(|(a, _)| a)?) } else { None };
            (arg, close + 1)
        } else {
            (None, i + 2)
        };
        v = match (name, v, arg) {
            ("source", v @ Val::Str(_), None) if !call => v,
            ("concat", Val::Str(s), Some(a)) => Val::Str(s + &a.into_string()),
            ("join", Val::Arr(a), sep) => Val::Str(a.join(&sep.map(Val::into_string).unwrap_or(",".into()))),
            ("reverse", Val::Arr(mut a), None) => {
                a.reverse();
                Val::Arr(a)
            }
            ("split", Val::Str(s), Some(Val::Str(sep))) if sep.is_empty() => Val::Arr(s.chars().map(String::from).collect()),
            ("split", Val::Str(s), Some(Val::Str(sep))) => Val::Arr(s.split(sep.as_str()).map(String::from).collect()),
            ("toLowerCase", Val::Str(s), None) => Val::Str(s.to_lowercase()),
            ("toUpperCase", Val::Str(s), None) => Val::Str(s.to_uppercase()),
            ("toString", Val::Num(n), Some(Val::Num(r))) => Val::Str(radix(n, r)?),
            ("toString", v, None) => Val::Str(v.into_string()),
            _ => return None,
        };
        i = after;
    }
    Some((v, i))
}

fn primary(t: &[Token], i: usize, to: usize, depth: usize, work: &mut usize) -> Option<(Val, usize)> {
    let tok = &t[i];
    match tok.kind {
        Kind::Str | Kind::Regex => Some((Val::Str(tok.val.clone()), i + 1)),
        Kind::Template if !tok.subst => Some((Val::Str(tok.val.clone()), i + 1)),
        Kind::Num => Some((Val::Num(number(&tok.val)?), i + 1)),
        Kind::Punct if tok.is(b'(') && tok.partner < to => {
            let (v, end) = expr(t, i + 1, tok.partner, depth + 1, work)?;
            (end == tok.partner).then_some((v, end + 1))
        }
        Kind::Punct if tok.is(b'[') && tok.partner < to => {
            let mut items = Vec::new();
            let mut j = i + 1;
            while j < tok.partner {
                let (v, end) = expr(t, j, tok.partner, depth + 1, work)?;
                items.push(v.into_string());
                if end == tok.partner {
                    break;
                }
                if !t[end].is(b',') {
                    return None;
                }
                j = end + 1;
            }
            Some((Val::Arr(items), tok.partner + 1))
        }
        Kind::Ident => decoder_call(t, i, to, depth, work),
        _ => None,
    }
}

/// `String.fromCharCode(...)`, `atob(...)`, `unescape(...)`, `decodeURI[Component](...)`.
fn decoder_call(t: &[Token], i: usize, to: usize, depth: usize, work: &mut usize) -> Option<(Val, usize)> {
    let (name, open) =
        if t[i].val == "String" && i + 3 < to && t[i + 1].is(b'.') { (t[i + 2].val.as_str(), i + 3) } else { (t[i].val.as_str(), i + 1) };
    if open >= to || !t[open].is(b'(') || t[open].partner >= to {
        return None;
    }
    let close = t[open].partner;
    let text = match name {
        "fromCharCode" | "fromCodePoint" => {
            let mut out = String::new();
            let mut j = open + 1;
            while j < close {
                let (v, end) = expr(t, j, close, depth + 1, work)?;
                let Val::Num(n) = v else { return None };
                out.push(char::from_u32(n as u32)?);
                j = end + 1;
            }
            out
        }
        "atob" | "unescape" | "decodeURI" | "decodeURIComponent" => {
            let (v, end) = expr(t, open + 1, close, depth + 1, work)?;
            if end != close {
                return None;
            }
            let s = v.into_string();
            if name == "atob" {
                base64(&s)?
            } else {
                percent(&s)
            }
        }
        _ => return None,
    };
    Some((Val::Str(text), close + 1))
}

fn number(text: &str) -> Option<f64> {
    let t = text.trim_end_matches('.');
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return i64::from_str_radix(h, 16).ok().map(|v| v as f64);
    }
    t.parse::<f64>().ok()
}

fn radix(n: f64, r: f64) -> Option<String> {
    let (mut n, r) = (n as u64, r as u64);
    if !(2..=36).contains(&r) {
        return None;
    }
    let mut digits = Vec::new();
    loop {
        digits.push(std::char::from_digit((n % r) as u32, r as u32)?);
        n /= r;
        if n == 0 {
            break;
        }
    }
    Some(digits.iter().rev().collect())
}

pub fn base64(s: &str) -> Option<String> {
    crate::base64::decode(s.as_bytes()).map(|out| String::from_utf8_lossy(&out).into_owned())
}

/// Percent-decoding repeated up to four layers, `+` kept (the engine's decoded view reads `+`
/// as a space, which would undo the `+` of a string concatenation or of JSFuck).
pub fn percent_deep(s: &str) -> String {
    let mut cur = s.to_string();
    for _ in 0..4 {
        if !cur.contains('%') {
            break;
        }
        let next = percent(&cur);
        if next == cur {
            break;
        }
        cur = next;
    }
    cur
}

fn percent(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A run of 40+ bytes made only of `[]()!+` (whitespace allowed) holding `![]` and `+[]`: the
/// JSFuck alphabet, which spells any program without a letter.
pub(crate) fn jsfuck(s: &[u8]) -> bool {
    let (mut run, mut bang, mut plus) = (0usize, false, false);
    let mut prev = 0u8;
    for &b in s {
        match b {
            b'[' | b']' | b'(' | b')' | b'!' | b'+' => {
                run += 1;
                bang |= prev == b'!' && b == b'[';
                plus |= prev == b'+' && b == b'[';
                if run >= 40 && bang && plus {
                    return true;
                }
                prev = b;
            }
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => {
                run = 0;
                bang = false;
                plus = false;
                prev = b;
            }
        }
    }
    false
}
