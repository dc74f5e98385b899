//! `xss:html-*`: a value that creates executable script when written into an HTML page.
//!
//! A small tokenizer after the HTML5 spec's tokenization states (tag open, tag name, before /
//! in / after attribute name, quoted and unquoted attribute values, comments, raw-text
//! elements) reads the tags a browser would build, then each tag is judged:
//!
//! - `html-script`: a `<script>` start tag with a source or code after it;
//! - `html-event-handler`: an `on*` attribute with a value (`<svg/onload=...>`, also in a tag
//!   left open at the end of the value, which the page's own `>` closes);
//! - `html-js-url`: a URL attribute whose value, entities decoded and tabs/newlines dropped as a
//!   browser does, is a `javascript:`/`vbscript:` URL that does something (`javascript:void(0)`
//!   does nothing);
//! - `html-data-url`: an HTML/SVG `data:` URL in a URL attribute;
//! - `html-srcdoc`: an iframe document holding markup; `html-style`: CSS `expression(`/bindings.
//!
//! A value that breaks out of a quoted attribute (`" onmouseover="alert(1)`) is read as the
//! rest of a tag. Ordinary markup has none of these, so Wikipedia HTML stays clean. Findings
//! in a long multi-line field (pasted page source in a chat message) are level 2.

use crate::{xss_js, Check, Finding, Input, Trigger};

pub struct XssHtml;

pub static XSS_HTML: XssHtml = XssHtml;

/// Attributes whose value the browser loads or navigates to as a URL.
const URL_ATTRS: &[&str] = &[
    "href",
    "src",
    "action",
    "formaction",
    "xlink:href",
    "data",
    "background",
    "poster",
    "lowsrc",
    "dynsrc",
    "codebase",
    "code",
    "archive",
    "classid",
    "to",
    "from",
    "values",
    "by",
    "content",
    "srcset",
    "cite",
    "longdesc",
    "ping",
    "icon",
    "manifest",
    "url",
    "style",
];
/// Elements whose content is raw text: tags inside them are not tags.
const RAW_TEXT: &[&str] = &["script", "style", "textarea", "title", "xmp", "noembed", "noframes", "iframe"];

#[derive(Default)]
struct Tag {
    name: String,
    attrs: Vec<(String, String)>,
    /// The tag ended with `>` inside the value.
    complete: bool,
}

impl Check for XssHtml {
    fn trigger(&self) -> Trigger {
        // A tag, an attribute break-out (needs `=`), a `%` hiding one, the lead byte of a
        // full-width form (`＜`, `＝`) that a normalising back end reads as ASCII, or a
        // backslash: markup written through a JavaScript string (`\74svg on\load\75...`).
        Trigger::any_of(b"<=%\xef\\")
    }

    fn detector(&self) -> &'static str {
        "xss"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        // Full-width and other compatibility forms reach a normalising back end as ASCII.
        let found = crate::compat_fold::with_folded(input, inspect_text);
        if found.is_some_and(|f| f.level == 1) || !input.bytes.any(b"\\%") {
            return found;
        }
        // Markup reflected through a JavaScript string loses the string's escapes first (the
        // backslash may still be percent-encoded in this text).
        let Some(text) = crate::js_string_layer::unescape_deep(input.text) else { return found };
        let again = crate::compat_fold::with_folded(&Input { text: &text, bytes: crate::ByteSet::of(&text), ..*input }, inspect_text);
        crate::compat_fold::lower_level(found, again)
    }
}

fn inspect_text(input: &Input<'_>) -> Option<Finding> {
    let encoded = input.bytes.contains(b'%');
    let tagged = input.bytes.contains(b'<');
    let breakout = input.bytes.any(b"\"'") && input.bytes.contains(b'=') && attr_hint(input.text.as_bytes());
    if !tagged && !breakout && !encoded || input.text.len() > 256 * 1024 {
        return None;
    }
    let long = input.text.len() > 1000 || input.text.bytes().filter(|&b| b == b'\n').count() >= 4;
    let mut found = judge(input.text, tagged, breakout, 0);
    // (Without a `%XX` pair `percent_deep` would copy the text unchanged.)
    if input.bytes.contains(b'%') && found.is_none_or(|(_, l)| l > 1) && crate::xss_js::has_percent_pair(input.text.as_bytes()) {
        let plain = crate::js_lex::percent_deep(input.text);
        if plain != input.text {
            let again = judge(&plain, plain.contains('<'), plain.contains('=') && attr_hint(plain.as_bytes()), 0);
            if again.is_some_and(|(_, l)| found.is_none_or(|(_, b)| l < b)) {
                found = again;
            }
        }
    }
    // `<scr<script>ipt>`: what a filter that strips a tag once leaves behind.
    if tagged && found.is_none_or(|(_, l)| l > 1) {
        if let Some(unnested) = unnest_tags(input.text.as_bytes()) {
            let again = judge(&unnested, true, false, 0);
            if again.is_some_and(|(_, l)| found.is_none_or(|(_, b)| l < b)) {
                found = again;
            }
        }
    }
    let (reason, mut level) = found?;
    if long {
        level = level.max(2);
    }
    (level <= input.sensitivity).then_some(Finding { reason, score: 0.95, level })
}

/// Some `=` follows an event-handler or URL attribute name: only then can a value without a
/// tag break out of an attribute into a dangerous one (JSON and query strings rarely do).
fn attr_hint(s: &[u8]) -> bool {
    let text = std::str::from_utf8(s).unwrap_or("");
    text.match_indices('=').take(256).any(|(eq, _)| {
        let mut end = eq;
        while end > 0 && eq - end < 8 && s[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        let mut start = end;
        while start > 0 && end - start < 24 && (s[start - 1].is_ascii_alphabetic() || s[start - 1] == b':') {
            start -= 1;
        }
        let name = String::from_utf8_lossy(&s[start..end]).to_ascii_lowercase();
        is_event(&name) || URL_ATTRS.contains(&name.as_str()) || name == "srcdoc" || name.ends_with(":href")
    })
}

/// The most confident finding in `text` as `(reason, level)`.
fn judge(text: &str, tagged: bool, breakout: bool, depth: usize) -> Option<(&'static str, u8)> {
    let mut best: Option<(&'static str, u8)> = None;
    let keep = |best: &mut Option<(&'static str, u8)>, f: Option<(&'static str, u8)>| {
        if let Some((r, l)) = f {
            if best.is_none_or(|(_, b)| l < b) {
                *best = Some((r, l));
            }
        }
    };
    if tagged {
        let s = text.as_bytes();
        let mut i = 0;
        while let Some(off) = s[i..].iter().position(|&b| b == b'<') {
            i += off + 1;
            let Some(&c) = s.get(i) else { break };
            if c.is_ascii_alphabetic() {
                let (tag, next) = read_tag(s, i);
                i = next;
                let raw_end = if tag.complete && RAW_TEXT.contains(&tag.name.as_str()) { skip_raw(s, i, &tag.name) } else { i };
                keep(&mut best, judge_tag(&tag, &text[i..raw_end], depth));
                i = raw_end;
            } else if s[i..].starts_with(b"!--") {
                i = find(s, i + 3, b"-->").map_or(s.len(), |e| e + 3);
            } else if c == b'!' || c == b'?' || c == b'/' {
                i = find(s, i, b">").map_or(s.len(), |e| e + 1);
            }
            if best.is_some_and(|(_, l)| l == 1) {
                return best;
            }
        }
    }
    if breakout {
        // The rest of a tag after a quote break-out: `" onfocus="alert(1)" autofocus="`.
        for q in [b'"', b'\''] {
            if let Some(at) = text.bytes().position(|b| b == q) {
                let (tag, _) = read_attrs(text.as_bytes(), at + 1, Tag::default());
                keep(&mut best, judge_breakout(&tag));
            }
        }
    }
    // Injected into an unquoted attribute value: ` onfocus=alert(1) autofocus`.
    if breakout && text.starts_with([' ', '\t', '\n', '/']) {
        let (tag, _) = read_attrs(text.as_bytes(), 0, Tag::default());
        keep(&mut best, judge_breakout(&tag));
    }
    best
}

/// The text with every simple tag (`<name>`, `</name>`, letters only) that interrupts another
/// tag's name removed (`<scr<script>ipt>` → `<script>`); `None` when there is none. One pass.
fn unnest_tags(s: &[u8]) -> Option<String> {
    // Most markup has no tag name cut by `<`: find one before copying anything.
    let interrupted = |i: usize| {
        let name = s[i + 1..].iter().take(16).take_while(|c| c.is_ascii_alphabetic()).count();
        name > 0 && s.get(i + 1 + name) == Some(&b'<')
    };
    if !(0..s.len()).any(|i| s[i] == b'<' && interrupted(i)) {
        return None;
    }
    let mut out = Vec::with_capacity(s.len());
    let mut changed = false;
    let mut i = 0;
    while i < s.len() {
        out.push(s[i]);
        if s[i] == b'<' {
            let name = s[i + 1..].iter().take(16).take_while(|c| c.is_ascii_alphabetic()).count();
            let inner = i + 1 + name;
            if name > 0 && s.get(inner) == Some(&b'<') {
                let slash = (s.get(inner + 1) == Some(&b'/')) as usize;
                let len = s[inner + 1 + slash..].iter().take(16).take_while(|c| c.is_ascii_alphabetic()).count();
                if len > 0 && s.get(inner + 1 + slash + len) == Some(&b'>') {
                    out.extend_from_slice(&s[i + 1..inner]);
                    i = inner + 2 + slash + len;
                    changed = true;
                    continue;
                }
            }
        }
        i += 1;
    }
    changed.then(|| String::from_utf8_lossy(&out).into_owned())
}

fn find(s: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    s.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|p| p + from)
}

/// Past the content of a raw-text element: at its end tag, or the end of the value.
fn skip_raw(s: &[u8], from: usize, name: &str) -> usize {
    let mut j = from;
    while let Some(off) = s.get(j..).and_then(|r| r.iter().position(|&b| b == b'<')) {
        j += off;
        let end = j + 2 + name.len();
        if s.get(j + 1) == Some(&b'/') && s.get(j + 2..end).is_some_and(|n| n.eq_ignore_ascii_case(name.as_bytes())) {
            return j;
        }
        j += 1;
    }
    s.len()
}

/// Tag name state then the attribute states, from the first letter of the name.
fn read_tag(s: &[u8], mut i: usize) -> (Tag, usize) {
    let start = i;
    while i < s.len() && !matches!(s[i], b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'/' | b'>') {
        i += 1;
    }
    let name = String::from_utf8_lossy(&s[start..i]).to_ascii_lowercase();
    read_attrs(s, i, Tag { name, ..Tag::default() })
}

fn read_attrs(s: &[u8], mut i: usize, mut tag: Tag) -> (Tag, usize) {
    let ws = |b: u8| matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ');
    while i < s.len() && tag.attrs.len() < 64 {
        // Before attribute name: whitespace and `/` separate attributes.
        while i < s.len() && (ws(s[i]) || s[i] == b'/') {
            i += 1;
        }
        if i >= s.len() {
            break;
        }
        if s[i] == b'>' {
            tag.complete = true;
            return (tag, i + 1);
        }
        let start = i;
        i += 1; // a leading `=` belongs to the name
        while i < s.len() && !ws(s[i]) && !matches!(s[i], b'/' | b'>' | b'=') {
            i += 1;
        }
        let name = String::from_utf8_lossy(&s[start..i]).to_ascii_lowercase();
        while i < s.len() && ws(s[i]) {
            i += 1;
        }
        let mut value = String::new();
        if i < s.len() && s[i] == b'=' {
            i += 1;
            while i < s.len() && ws(s[i]) {
                i += 1;
            }
            if i < s.len() && (s[i] == b'"' || s[i] == b'\'') {
                let q = s[i];
                let end = s[i + 1..].iter().position(|&b| b == q).map_or(s.len(), |p| p + i + 1);
                value = String::from_utf8_lossy(&s[i + 1..end]).into_owned();
                i = (end + 1).min(s.len());
            } else {
                let start = i;
                while i < s.len() && !ws(s[i]) && s[i] != b'>' {
                    i += 1;
                }
                value = String::from_utf8_lossy(&s[start..i]).into_owned();
            }
        }
        tag.attrs.push((name, value));
    }
    (tag, i.min(s.len()))
}

fn judge_tag(tag: &Tag, content: &str, depth: usize) -> Option<(&'static str, u8)> {
    let mut best: Option<(&'static str, u8)> = None;
    let mut keep = |r: &'static str, l: u8| {
        if best.is_none_or(|(_, b)| l < b) {
            best = Some((r, l));
        }
    };
    // `<a:script xmlns:a=...xhtml>` and Netscape's `<style type=text/javascript>` run too.
    let scripted_style = tag.name == "style" && tag.attrs.iter().any(|(a, v)| a == "type" && v.to_ascii_lowercase().contains("javascript"));
    if tag.name == "script" || tag.name.ends_with(":script") || scripted_style {
        let code = content.trim();
        // A same-site relative source is the page's own script (documentation HTML is full of
        // `<script src="_static/x.js">`); an attacker loads from another origin or a data URL.
        let foreign = tag.attrs.iter().any(|(a, v)| matches!(a.as_str(), "src" | "href" | "xlink:href") && foreign_source(v));
        let runs = foreign || !code.is_empty() && xss_js::level_of(code).is_some();
        let codeish = code.bytes().any(|b| matches!(b, b'(' | b'`' | b'=' | b';')) && !code.contains(' ');
        keep("xss:html-script", if tag.complete && (runs || codeish) || !tag.complete && !tag.attrs.is_empty() { 1 } else { 2 });
    }
    // SVG animation writing an event-handler attribute: `<set attributeName=onclick to=...>`.
    if tag.attrs.iter().any(|(a, v)| a == "attributename" && is_event(&entities(v).trim().to_ascii_lowercase()))
        && tag.attrs.iter().any(|(a, _)| matches!(a.as_str(), "to" | "values" | "from" | "by"))
    {
        keep("xss:html-event-handler", 1);
    }
    for (name, raw) in &tag.attrs {
        let value = entities(raw);
        if is_event(name) && !value.trim().is_empty() {
            keep("xss:html-event-handler", 1);
        } else if URL_ATTRS.contains(&name.as_str()) || name.ends_with(":href") {
            if let Some(r) = url_finding(name, &value) {
                keep(r, 1);
            }
        } else if name == "srcdoc" && value.contains('<') {
            let inner = if depth < 2 { judge(&value, true, false, depth + 1) } else { None };
            keep("xss:html-srcdoc", if inner.is_some() { 1 } else { 2 });
        }
    }
    if tag.name == "style" && style_runs(content) {
        keep("xss:html-style", 1);
    }
    // An injected form posting to another origin collects what the user types there (the
    // page's own forms post to a relative path; no real value holds one).
    if tag.attrs.iter().any(|(a, v)| (a == "action" && tag.name == "form" || a == "formaction") && foreign_source(v)) {
        keep("xss:html-form-hijack", 1);
    }
    if matches!(tag.name.as_str(), "iframe" | "frame" | "object" | "embed" | "base" | "applet") && !tag.attrs.is_empty() {
        keep("xss:html-embed", 2);
    }
    best
}

fn foreign_source(src: &str) -> bool {
    let v = entities(src);
    let v = v.trim_start_matches(|c: char| c <= ' ');
    v.starts_with("//") || v.starts_with("\\\\") || v.contains(':') || v.starts_with("/\\")
}

/// After a quote break-out only attribute syntax counts, and the handler must look like code.
fn judge_breakout(tag: &Tag) -> Option<(&'static str, u8)> {
    for (name, raw) in &tag.attrs {
        let value = entities(raw);
        if is_event(name) && (xss_js::level_of(&value).is_some_and(|l| l <= 2) || value.contains('(') && !value.contains(' ')) {
            return Some(("xss:html-event-handler", 1));
        }
        if (URL_ATTRS.contains(&name.as_str()) || name.ends_with(":href")) && url_finding(name, &value).is_some() {
            return Some(("xss:html-js-url", 1));
        }
    }
    None
}

/// `on` and three or more letters: every event handler content attribute has that shape.
fn is_event(name: &str) -> bool {
    name.len() >= 5 && name.starts_with("on") && name.bytes().skip(2).all(|b| b.is_ascii_lowercase())
}

fn url_finding(name: &str, value: &str) -> Option<&'static str> {
    if name == "style" {
        return style_runs(value).then_some("xss:html-style");
    }
    // `values="a;javascript:..."`, `content="0;url=javascript:..."`, `srcset="a 1x, b 2x"`.
    value.split([';', ',']).find_map(|part| {
        let part = part.trim_start();
        let part = part.strip_prefix("url=").or_else(|| part.strip_prefix("URL=")).unwrap_or(part);
        url_runs(part)
    })
}

/// What a URL does once the browser has dropped tabs and newlines and leading controls.
fn url_runs(url: &str) -> Option<&'static str> {
    let cleaned: String =
        url.trim_start_matches(|c: char| c <= ' ').chars().filter(|&c| !matches!(c, '\t' | '\n' | '\r')).take(512).collect();
    let lower = cleaned.to_ascii_lowercase();
    for scheme in ["javascript:", "vbscript:", "livescript:"] {
        if let Some(body) = lower.strip_prefix(scheme) {
            // The browser percent-decodes a script URL's body before it runs it, so a `//`
            // comment ends at an encoded line break (`javascript://x%0aalert(1)`; a raw or
            // entity newline was stripped by the URL parser above).
            let decoded = if body.contains('%') { crate::js_lex::percent_deep(body) } else { body.to_string() };
            let body = match decoded.trim().strip_prefix("//") {
                Some(comment) => comment.split_once(['\n', '\r', '\u{2028}', '\u{2029}']).map_or("", |(_, rest)| rest),
                None => decoded.as_str(),
            };
            let body = body.trim();
            let noop = matches!(body.trim_end_matches(';'), "" | "void(0)" | "void 0" | "void(0)return false" | "false" | "return false");
            return (!noop).then_some("xss:html-js-url");
        }
    }
    let data = lower.strip_prefix("data:")?.trim_start();
    ["text/html", "image/svg+xml", "application/xhtml+xml", "text/xml", "application/xml", "text/javascript", "application/javascript"]
        .iter()
        .any(|m| data.starts_with(m))
        .then_some("xss:html-data-url")
}

/// CSS that runs script: IE `expression(`, Mozilla bindings, `behavior:`, script URLs, after
/// CSS escapes (`\\65 xpression`, `\\-\\mo\\z`), comments and full-width letters are undone.
fn style_runs(css: &str) -> bool {
    let css = entities(css);
    let mut plain = String::with_capacity(css.len().min(4096));
    let mut chars = css.chars().take(4096).peekable();
    while let Some(c) = chars.next() {
        let c = match c {
            '/' if chars.peek() == Some(&'*') => {
                // A CSS comment splits nothing: `ex/**/pression`.
                chars.next();
                let mut prev = ' ';
                for d in chars.by_ref() {
                    if prev == '*' && d == '/' {
                        break;
                    }
                    prev = d;
                }
                continue;
            }
            '\\' => {
                let mut v = 0u32;
                let mut n = 0;
                while n < 6 && chars.peek().is_some_and(char::is_ascii_hexdigit) {
                    v = v * 16 + chars.next().and_then(|h| h.to_digit(16)).unwrap_or(0);
                    n += 1;
                }
                if n == 0 {
                    match chars.next() {
                        Some(e) => e,
                        None => break,
                    }
                } else {
                    if chars.peek() == Some(&' ') {
                        chars.next();
                    }
                    char::from_u32(v).unwrap_or('\u{fffd}')
                }
            }
            '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xfee0).unwrap_or(c),
            c => c,
        };
        if !c.is_whitespace() && c != '\0' {
            plain.push(c.to_ascii_lowercase());
        }
    }
    plain.contains("expression(")
        || plain.contains("-moz-binding:")
        || plain.contains("behavior:url")
        || ["url(javascript:", "url('javascript:", "url(\"javascript:", "@import'javascript:", "@import\"javascript:"]
            .iter()
            .any(|p| plain.contains(p))
}

/// Character references undone as in an attribute value: numeric with or without `;` and
/// leading zeros, and the named ones attackers use to hide URL syntax.
pub fn entities(v: &str) -> String {
    if !v.contains('&') {
        return v.to_string();
    }
    let s = v.as_bytes();
    let mut out = String::with_capacity(v.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'&' {
            if let Some((ch, next)) = reference(s, i + 1) {
                out.push(ch);
                i = next;
                continue;
            }
        }
        let start = i;
        i += 1;
        while i < s.len() && s[i] != b'&' {
            i += 1;
        }
        out.push_str(&String::from_utf8_lossy(&s[start..i]));
    }
    out
}

fn reference(s: &[u8], i: usize) -> Option<(char, usize)> {
    if s.get(i) == Some(&b'#') {
        let hex = matches!(s.get(i + 1), Some(b'x' | b'X'));
        let mut j = i + 1 + hex as usize;
        let mut v: u32 = 0;
        let digits = j;
        while j < s.len() && j < digits + 12 && (s[j].is_ascii_hexdigit() && hex || s[j].is_ascii_digit()) {
            v = v.saturating_mul(if hex { 16 } else { 10 }).saturating_add((s[j] as char).to_digit(16)?);
            j += 1;
        }
        if j == digits {
            return None;
        }
        let next = if s.get(j) == Some(&b';') { j + 1 } else { j };
        return Some((char::from_u32(v).unwrap_or('\u{fffd}'), next));
    }
    let len = s[i..].iter().take(10).position(|&b| !b.is_ascii_alphanumeric())?;
    if s.get(i + len) != Some(&b';') {
        return None;
    }
    let name = std::str::from_utf8(&s[i..i + len]).ok()?.to_ascii_lowercase();
    let ch = match name.as_str() {
        "colon" => ':',
        "tab" => '\t',
        "newline" => '\n',
        "lpar" => '(',
        "rpar" => ')',
        "quot" => '"',
        "apos" => '\'',
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "sol" => '/',
        "bsol" => '\\',
        "period" => '.',
        "comma" => ',',
        "excl" => '!',
        "equals" => '=',
        "plus" => '+',
        "grave" => '`',
        "lsqb" | "lbrack" => '[',
        "rsqb" | "rbrack" => ']',
        "semi" => ';',
        "nbsp" => ' ',
        "lcub" | "lbrace" => '{',
        "rcub" | "rbrace" => '}',
        "dollar" => '$',
        "percnt" => '%',
        "num" => '#',
        "quest" => '?',
        "ast" | "midast" => '*',
        "lowbar" | "underbar" => '_',
        "hyphen" | "dash" => '-',
        "verbar" | "vert" => '|',
        "commat" => '@',
        "hat" => '^',
        _ => return None,
    };
    Some((ch, i + len + 1))
}
