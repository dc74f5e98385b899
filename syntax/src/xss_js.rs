//! `xss:js-expression`: a value that is an executable JavaScript expression reaching a sink,
//! with no HTML tag around it (a reflected value inside a script block, an event handler or a
//! `javascript:` URL).
//!
//! The value is cut into JavaScript tokens ([`crate::js_lex`]) three ways: as it is, and as if
//! it continued a single- or double-quoted string (a break-out such as `';alert(1)//`). At each
//! call (`(` or a template literal) the callee is resolved through member access, computed
//! access with constant folding (`top['ale'+'rt']`), `.call/.apply/.bind`, parentheses
//! (`(0,alert)`) and calls of call results (`Function('...')()`). The level says how sure:
//!
//! - level 1: the forms nobody types by hand — a sink name built from escapes or concatenation,
//!   `constructor.constructor(...)`, `Function(...)()`, a string sink fed a constant holding
//!   code or a decoder (`eval(atob(...))`), a template-literal call of a sink, JSFuck; and a
//!   plain probe call (`alert(1)`) when the value is short and nothing but code.
//! - level 2: a probe call in a value that also holds prose (`alert(1) meaning`), or in a long
//!   multi-line field (pasted code in a chat message), a string sink fed a variable.
//! - level 3: network/navigation sinks (`fetch`, `import`, `document.write`) in plain code.

use crate::js_lex::{lex, Kind, Token, Val};
use std::cell::Cell;

thread_local! {
    /// Tokens the constant folder may still visit for the current value: every call site may
    /// fold a long bracket, so the total is bounded to keep the check linear.
    static FOLD_BUDGET: Cell<usize> = const { Cell::new(0) };
}

/// [`crate::js_lex::fold`] within the value's budget.
fn fold(t: &[Token], from: usize, to: usize) -> Option<Val> {
    let cost = to.saturating_sub(from) + 1;
    let left = FOLD_BUDGET.with(Cell::get);
    if cost > left {
        return None;
    }
    FOLD_BUDGET.with(|b| b.set(left - cost));
    crate::js_lex::fold(t, from, to)
}

/// Takes `n` from the budget if it holds that much.
fn spend(n: usize) -> bool {
    let left = FOLD_BUDGET.with(Cell::get);
    FOLD_BUDGET.with(|b| b.set(left.saturating_sub(n)));
    n <= left
}
use crate::{Check, Finding, Input, Trigger};

pub struct XssJs;

pub static XSS_JS: XssJs = XssJs;

const REASON: &str = "xss:js-expression";

/// Functions that run code or show the probe dialogs, reached by name.
const SINKS: &[&str] = &[
    "alert",
    "prompt",
    "confirm",
    "eval",
    "Function",
    "setTimeout",
    "setInterval",
    "execScript",
    "fetch",
    "import",
    "write",
    "writeln",
    "open",
    "print",
    "constructor",
    "setImmediate",
    "msSetImmediate",
];
/// The dialogs a tester calls to prove execution.
const PROBES: &[&str] = &["alert", "prompt", "confirm"];
/// Functions an attacker hands to a caller instead of calling them by name
/// (`Reflect.apply(eval, ...)`, `[1].find(print)`, `onerror=eval;throw ...`).
const HANDED: &[&str] = &["alert", "prompt", "confirm", "eval", "print", "Function", "setTimeout", "open"];
/// Sinks that compile a string argument as code.
const STRING_SINKS: &[&str] = &["eval", "Function", "setTimeout", "setInterval", "execScript", "constructor", "setImmediate"];
/// Objects whose properties are the global functions.
const GLOBALS: &[&str] = &["window", "self", "top", "parent", "frames", "globalThis", "this", "document", "content", "opener", "Reflect"];
/// Words that may stand between two values in valid JavaScript.
const KEYWORDS: &[&str] = &[
    "var",
    "let",
    "const",
    "new",
    "typeof",
    "void",
    "delete",
    "return",
    "in",
    "of",
    "instanceof",
    "throw",
    "if",
    "else",
    "for",
    "while",
    "do",
    "function",
    "class",
    "async",
    "await",
    "yield",
    "case",
    "default",
    "try",
    "catch",
    "finally",
    "with",
    "export",
    "extends",
    "import",
];

impl Check for XssJs {
    fn trigger(&self) -> Trigger {
        // A call, a template literal, an assignment (`=`), a `%` hiding one (see `inspect`), or
        // the lead byte of a full-width form (`（`) that a normalising back end reads as ASCII.
        Trigger::any_of(b"(`%=\xef")
    }

    fn detector(&self) -> &'static str {
        "xss"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        // Full-width and other compatibility forms reach a normalising back end as ASCII.
        crate::compat_fold::with_folded(input, inspect_text)
    }
}

fn inspect_text(input: &Input<'_>) -> Option<Finding> {
    // Every form needs a call (`(`), a template literal, or a handler assignment with
    // `throw`; `%` may hide them.
    let assigns = input.bytes.contains(b'=') && ["throw", "location", "src"].iter().any(|w| input.text.contains(w));
    if !input.bytes.any(b"(`%") && !assigns || input.text.len() > 64 * 1024 {
        return None;
    }
    // A `%` that starts no `%XX` (`50% off`) hides nothing, and without `(`, a backtick,
    // `=` or `[` (JSFuck) the lexer yields no call, template, assignment or JSFuck run:
    // such prose is not lexed at all.
    if !input.bytes.any(b"(`=[") && !has_percent_pair(input.text.as_bytes()) {
        return None;
    }
    // `{{constructor.constructor('...')()}}` is a template expression: the SSTI check's.
    if !worth_lexing(input) || input.text.contains("{{") && input.text.contains("}}") {
        return None;
    }
    let mut level = level_of(input.text);
    if input.bytes.contains(b'%') && level != Some(1) && has_percent_pair(input.text.as_bytes()) {
        let plain = crate::js_lex::percent_deep(input.text);
        if plain != input.text {
            level = match (level, level_of(&plain)) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
    }
    let level = level?;
    (level <= input.sensitivity).then_some(Finding { reason: REASON, score: 0.95, level })
}

/// Every finding needs an escape, a bracket, a template literal or an encoding, or a call
/// whose callee or first argument is a sink name, or a call of a call's result, or (with an
/// `=`) an alias or an assignment: prose with parentheses and none of those is not lexed.
fn worth_lexing(input: &Input<'_>) -> bool {
    if input.bytes.any(b"[\\%`") {
        return true;
    }
    let s = input.text.as_bytes();
    let word = |end: usize| {
        let mut start = end;
        while start > 0 && end - start < 32 && is_word(s[start - 1]) {
            start -= 1;
        }
        std::str::from_utf8(&s[start..end]).unwrap_or("")
    };
    // `match_indices` on one char searches with memchr: benign prose costs little.
    let calls = input.text.match_indices('(').take(512).any(|(open, _)| {
        let mut end = open;
        while end > 0 && open - end < 4 && s[end - 1] == b' ' {
            end -= 1;
        }
        if end >= 2 && &s[end - 2..end] == b"?." {
            end -= 2; // an optional call: `alert?.(1)`
        }
        let callee = word(end);
        let mut arg_end = open + 1;
        while arg_end < s.len() && arg_end - open < 32 && is_word(s[arg_end]) {
            arg_end += 1;
        }
        let arg = std::str::from_utf8(&s[open + 1..arg_end]).unwrap_or("");
        end > 0 && s[end - 1] == b')'
            || SINKS.contains(&callee)
            || matches!(callee, "call" | "apply" | "bind" | "sendBeacon")
            || HANDED.contains(&arg)
            || callee == "createElement"
    });
    // Assignments: `a=eval` (an alias), `onerror=alert`, `location=...`, `x.src=...`.
    let assigns = || {
        input.text.match_indices('=').take(256).any(|(eq, _)| {
            let before = word(eq);
            let mut from = eq + 1;
            while from < s.len() && s[from] == b' ' {
                from += 1;
            }
            let mut to = from;
            while to < s.len() && to - from < 32 && is_word(s[to]) {
                to += 1;
            }
            let after = std::str::from_utf8(&s[from..to]).unwrap_or("");
            SINKS.contains(&after) || matches!(before, "location" | "href" | "src") || before.starts_with("on")
        })
    };
    calls || input.bytes.contains(b'=') && assigns()
}

/// Some `%` is followed by two hex digits (what `percent_deep` would decode).
pub(crate) fn has_percent_pair(s: &[u8]) -> bool {
    (0..s.len()).any(|i| s[i] == b'%' && i + 2 < s.len() && s[i + 1].is_ascii_hexdigit() && s[i + 2].is_ascii_hexdigit())
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// The lowest level at which `text` is a JavaScript expression reaching a sink.
pub fn level_of(text: &str) -> Option<u8> {
    FOLD_BUDGET.with(|b| b.set(8 * text.len() + 1024));
    level_at(text, 0)
}

fn level_at(text: &str, depth: usize) -> Option<u8> {
    let mut best = crate::js_lex::jsfuck(text.as_bytes()).then_some(1u8);
    let long = text.len() > 1000 || text.bytes().filter(|&b| b == b'\n').count() >= 4;
    let consider = |best: &mut Option<u8>, level: Option<u8>| {
        if let Some(l) = level {
            *best = Some(best.map_or(l, |b| b.min(l)));
        }
    };
    consider(&mut best, scan(text, long, false, depth));
    // `java\tscript:` as a browser reads it: tabs and newlines inside the scheme are dropped.
    if let Some(colon) = text.as_bytes().iter().take(48).position(|&b| b == b':') {
        let scheme: String = text[..colon].chars().filter(|c| !c.is_whitespace() && !c.is_control()).collect();
        if scheme.eq_ignore_ascii_case("javascript") && best != Some(1) {
            consider(&mut best, scan(&text[colon + 1..], long, true, depth));
        }
    }
    // A break-out from a template literal: a value opening with a backtick and an operator
    // (`` `;x()// ``; markdown inline code opens with a word), or a `${...}` substitution.
    let trimmed = text.trim_start();
    if let Some(rest) = trimmed.strip_prefix('`') {
        if best != Some(1) && rest.trim_start().starts_with([';', '-', '+', ')', '}', ',', '|', '&']) {
            consider(&mut best, scan(rest, long, true, depth));
        }
    }
    if let Some(at) = text.find("${") {
        if best != Some(1) {
            consider(&mut best, scan(&text[at + 2..], long, true, depth));
        }
    }
    // A break-out from a quoted string: what follows the first quote is code.
    // (Not after a backtick: markdown inline code is everywhere in chat messages.)
    for q in ['\'', '"'] {
        if let Some(at) = text.find(q) {
            if best != Some(1) {
                consider(&mut best, scan(&text[at + 1..], long, true, depth));
            }
        }
    }
    best
}

/// What a call's callee resolves to.
#[derive(Debug, Default)]
struct Callee {
    /// The function's name (`alert`, or a folded computed name); empty when unknown.
    name: String,
    /// The object it was read from (`top`, `constructor`), empty when none.
    object: String,
    /// The name was computed (`x[...]`) or spelled with escapes.
    hidden: bool,
    /// A computed name that did not fold but was built (concatenation, a call, escapes).
    built: bool,
    /// The callee is itself a call's result: the inner callee (`Function('...')` in `...()`).
    result_of: Option<Box<Callee>>,
}

fn scan(text: &str, long: bool, breakout: bool, depth: usize) -> Option<u8> {
    let t = lex(text);
    let prose = juxtapositions(&t);
    let code_only = prose == 0 && !long;
    let short = code_only && text.len() <= 400;
    let mut best: Option<u8> = None;
    let mut found = |l: u8| best = Some(best.map_or(l, |b: u8| b.min(l)));
    // Variables assigned a sink (`a=eval;b=alert;a(b(1))`): bounded, as aliases are few.
    let mut aliases: Vec<(String, String)> = Vec::new();
    for k in 1..t.len() {
        let template = t[k].kind == Kind::Template;
        if !(t[k].is(b'(') || template) {
            if t[k].is(b'=') {
                if let Some(l) = assignment(&t, k, code_only, short, breakout) {
                    found(l);
                }
                if let Some(alias) = alias_of(&t, k) {
                    if aliases.len() < 16 {
                        aliases.push(alias);
                    }
                }
            }
            continue;
        }
        let Some(mut c) = callee(&t, k - 1, 0) else {
            continue;
        };
        if let Some((_, sink)) = aliases.iter().find(|(a, _)| *a == c.name) {
            c.name = sink.clone();
            c.hidden = true;
        }
        let close = if template { k } else { t[k].partner.min(t.len()) };
        let args = (k + 1, close);
        let name = c.name.as_str();
        let sink = SINKS.contains(&name);
        let global = GLOBALS.contains(&c.object.as_str());
        let mut level: Option<u8> = None;
        let mut at = |l: u8| level = Some(level.map_or(l, |b: u8| b.min(l)));
        if sink && c.hidden && (name != "constructor" || global || c.object == "constructor") {
            at(1);
        }
        if c.built && global {
            at(1);
        }
        if name == "constructor" && c.object == "constructor" {
            at(1);
        }
        if let Some(inner) = &c.result_of {
            if matches!(inner.name.as_str(), "Function" | "constructor" | "eval") {
                at(if inner.name == "Function" && !short { 2 } else { 1 });
            }
        }
        if template && sink && !t[k].val.is_empty() && !t[k].open {
            at(if short || c.hidden { 1 } else { 2 });
        }
        if STRING_SINKS.contains(&name) && !template {
            at(string_sink(&t, args, short, breakout, depth));
        }
        if PROBES.contains(&name) {
            at(if short { 1 } else { 2 });
        }
        if sink && !template && (name == "write" || name == "writeln") && c.object == "document" {
            at(if short { 1 } else { 3 });
        }
        // Network and navigation sinks: level 1 only in a short injected value or when they
        // carry the page's secrets out (`fetch('//x/?'+document.cookie)`).
        if matches!(name, "fetch" | "import" | "open" | "sendBeacon") && !template {
            let exfil = secrets(&t, args.0, args.1);
            at(if short && (breakout || exfil) {
                1
            } else if short {
                2
            } else {
                3
            });
        }
        // `document.createElement('script')`: a script element built to load code.
        if name == "createElement" && !template && args.0 < args.1 {
            if let Some(v) = fold(&t, args.0, args.1) {
                if v.into_string().eq_ignore_ascii_case("script") {
                    at(if short { 1 } else { 3 });
                }
            }
        }
        if name == "print" && !c.hidden {
            at(3);
        }
        // Higher-order calls handed a sink: `[1].find(alert)`, `Reflect.apply(alert, ...)`.
        if !template && args.0 < args.1 && t[args.0].kind == Kind::Ident && HANDED.contains(&t[args.0].val.as_str()) {
            let lone = args.0 + 1 == args.1 || t[args.0 + 1].is(b',');
            if lone && !name.is_empty() {
                at(if short { 1 } else { 2 });
            }
        }
        if let Some(mut l) = level {
            // Pasted source in a long field is reported above level 1 unless it is a form
            // nobody writes by hand.
            if long && l == 1 && !(c.hidden && sink) && name != "constructor" {
                l = 2;
            }
            found(l);
        }
    }
    best
}

/// The tokens in `from..to` read the page's secrets (cookies, storage).
fn secrets(t: &[Token], from: usize, to: usize) -> bool {
    (from..to.min(t.len())).any(|j| {
        t[j].kind == Kind::Ident && matches!(t[j].val.as_str(), "cookie" | "localStorage" | "sessionStorage")
            || t[j].kind == Kind::Template && (t[j].val.contains("cookie") || t[j].val.contains("Storage"))
    })
}

/// `x = alert` (then `x(1)`): the alias and the sink it names.
fn alias_of(t: &[Token], k: usize) -> Option<(String, String)> {
    let (lhs, rhs) = (&t[k - 1], t.get(k + 1)?);
    let ends = t.get(k + 2).is_none_or(|n| n.is(b';') || n.is(b',') || n.is(b')'));
    (lhs.kind == Kind::Ident && rhs.kind == Kind::Ident && ends && SINKS.contains(&rhs.val.as_str()) && lhs.val != rhs.val)
        .then(|| (lhs.val.clone(), rhs.val.clone()))
}

/// `location = 'javascript:...'`, `onerror = alert`, and navigation from an injected context.
fn assignment(t: &[Token], k: usize, code_only: bool, short: bool, breakout: bool) -> Option<u8> {
    if k + 1 >= t.len() || t[k + 1].is(b'=') || t[k - 1].kind != Kind::Ident || k >= 2 && t[k - 2].is(b'=') {
        return None;
    }
    let target = t[k - 1].val.as_str();
    let rhs = &t[k + 1];
    if target.starts_with("on") && target.len() > 4 && rhs.kind == Kind::Ident && HANDED.contains(&rhs.val.as_str()) {
        return Some(if code_only { 1 } else { 2 });
    }
    if matches!(target, "location" | "href" | "src") {
        let end = (k + 2..t.len().min(k + 256)).find(|&j| t[j].is(b';')).unwrap_or(t.len().min(k + 256));
        if let Some(v) = fold(t, k + 1, end) {
            let s = v.into_string();
            let scheme: String = s.chars().filter(|c| !c.is_whitespace()).take(11).collect();
            if scheme.eq_ignore_ascii_case("javascript:") && spend(s.len()) && level_at(&s, 2).is_some() {
                return Some(1);
            }
        }
        // Navigation or a request from injected code (`javascript:document.location='//x'`,
        // `';location=...`), or one carrying secrets (`new Image().src='//x?'+document.cookie`).
        if short && end > k + 1 && (breakout && target != "src" || secrets(t, k + 1, end)) {
            return Some(1);
        }
    }
    None
}

/// A sink that compiles its string argument: level 1 when the argument is a constant holding a
/// sink call, or a decoded/obfuscated constant; level 2 for any other argument in a short
/// code-only value after a break-out; else 3.
fn string_sink(t: &[Token], (from, to): (usize, usize), short: bool, breakout: bool, depth: usize) -> u8 {
    if from >= to || to > t.len() {
        return if short && breakout { 2 } else { 4 };
    }
    // The first argument ends at the first top-level comma (nested sinks share the budget).
    if !spend(to - from) {
        return 3;
    }
    let mut end = from;
    while end < to && !t[end].is(b',') {
        end = if t[end].partner != usize::MAX && t[end].partner > end { t[end].partner + 1 } else { end + 1 };
    }
    let end = end.min(to);
    let decoder = (from..end).any(|j| {
        t[j].kind == Kind::Ident && matches!(t[j].val.as_str(), "atob" | "fromCharCode" | "unescape" | "decodeURIComponent") || t[j].escaped
    });
    if decoder {
        return 1;
    }
    // Attacker-controlled DOM sources fed to a compiler: `eval(location.hash.slice(1))`.
    let source = (from..end).any(|j| {
        t[j].kind == Kind::Ident
            && matches!(t[j].val.as_str(), "location" | "hash" | "search" | "name" | "URL" | "documentURI" | "referrer" | "cookie")
    });
    if source && short {
        return 1;
    }
    // A short value that is nothing but `eval(...)` compiles whatever it is given.
    let named = |j: usize| matches!(t[j].val.as_str(), "eval" | "execScript");
    let optional = from >= 4 && t[from - 2].is(b'.') && t[from - 3].is(b'?') && named(from - 4);
    if short && (named(from - 2) || optional) && t[from - 1].is(b'(') {
        return 1;
    }
    if let Some(Val::Str(code)) = fold(t, from, end) {
        if depth < 2 && spend(code.len()) && level_at(&code, depth + 1).is_some() {
            return 1;
        }
    }
    if short && breakout {
        2
    } else {
        3
    }
}

/// Resolves the expression ending at token `e` to the function it names.
fn callee(t: &[Token], e: usize, depth: usize) -> Option<Callee> {
    if depth > 8 {
        return None;
    }
    let tok = &t[e];
    // `alert?.(1)`: skip the optional-call dot.
    if tok.is(b'.') && e >= 2 && t[e - 1].is(b'?') {
        return callee(t, e - 2, depth + 1);
    }
    match tok.kind {
        Kind::Ident if KEYWORDS.contains(&tok.val.as_str()) && tok.val != "import" => None,
        Kind::Ident => {
            let member = e >= 2 && t[e - 1].is(b'.');
            if member && matches!(tok.val.as_str(), "call" | "apply" | "bind") {
                return callee(t, e - 2, depth + 1);
            }
            let object = if member { object_name(t, e - 2) } else { String::new() };
            Some(Callee { name: tok.val.clone(), object, hidden: tok.escaped, ..Callee::default() })
        }
        Kind::Punct if tok.is(b']') && tok.partner < e => {
            let open = tok.partner;
            let object = if open >= 1 { object_name(t, open - 1) } else { String::new() };
            if open == 0 || !is_value_end(&t[open - 1]) {
                return None; // an array literal, not a member access
            }
            match fold(t, open + 1, e) {
                Some(v) => {
                    let name = v.into_string();
                    if matches!(name.as_str(), "call" | "apply" | "bind") {
                        return callee(t, open - 1, depth + 1);
                    }
                    Some(Callee { name, object, hidden: true, ..Callee::default() })
                }
                None => {
                    let built = (open + 1..e).any(|j| t[j].escaped || t[j].is(b'+') || t[j].is(b'(') || t[j].kind == Kind::Template);
                    Some(Callee { object, hidden: true, built, ..Callee::default() })
                }
            }
        }
        Kind::Punct if tok.is(b')') && tok.partner < e => {
            let open = tok.partner;
            if open >= 1 && is_value_end(&t[open - 1]) {
                let inner = callee(t, open - 1, depth + 1)?;
                return Some(Callee { result_of: Some(Box::new(inner)), ..Callee::default() });
            }
            // `(0, alert)` / `(alert)`: the last value in the group.
            if e >= 1 && e - 1 > open {
                callee(t, e - 1, depth + 1)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The object a member is read from, by name (`top`, `constructor` for `x.constructor.y`).
fn object_name(t: &[Token], j: usize) -> String {
    match t[j].kind {
        Kind::Ident => t[j].val.clone(),
        Kind::Punct if t[j].is(b']') && t[j].partner < j => fold(t, t[j].partner + 1, j).map(Val::into_string).unwrap_or_default(),
        _ => String::new(),
    }
}

fn is_value_end(t: &Token) -> bool {
    match t.kind {
        Kind::Ident => !KEYWORDS.contains(&t.val.as_str()) || t.val == "import",
        Kind::Str | Kind::Template | Kind::Regex | Kind::Num => true,
        Kind::Punct => t.is(b')') || t.is(b']'),
        Kind::Comment => false,
    }
}

/// Places where two values stand side by side with no operator between them (`alert(1)
/// meaning`, `how to use`): prose, not code. Statements split by newlines count too, which is
/// right: a multi-line snippet is not a reflected expression.
fn juxtapositions(t: &[Token]) -> usize {
    // A long prose comment, or a string left open over prose (the rest of a collapsed
    // multi-line snippet), counts as prose too.
    let wordy = |x: &Token| x.val.len() > 24 && x.val.bytes().filter(|&b| b == b' ').count() >= 4;
    t.iter().filter(|x| x.kind == Kind::Comment || x.kind == Kind::Str && x.open && wordy(x)).count()
        + t.windows(2)
            .filter(|w| {
                let starts_value = match w[1].kind {
                    Kind::Ident => !KEYWORDS.contains(&w[1].val.as_str()),
                    Kind::Str => !w[1].open,
                    Kind::Num => true,
                    _ => false,
                };
                starts_value && is_value_end(&w[0]) && !(w[0].kind == Kind::Ident && w[0].val == "import")
            })
            .count()
}
