//! Issue 12, red-team pass of session 38: families that passed every detector when written by
//! hand (Shellshock bodies other than `{ :; }`, XSLT extension calls, Ruby Marshal gadgets,
//! PHP-CGI ini switches, doT/EJS arithmetic probes, PowerShell cmdlets and wrapper flags after
//! a separator, other JavaScript runtimes' spawn calls, httpoxy, database dumps in the path).
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

#[test]
fn any_bash_function_definition_at_the_start_of_a_value_is_shellshock() {
    assert_flagged("command-injection:shellshock-definition", &["() { _; } >_[$($())] { id; }", "() { x;};echo vulnerable"]);
    for header in ["user-agent", "referer", "cookie"] {
        let value = if header == "cookie" { "lang=() { _; } >_[$($())] { id; }" } else { "() { _; }; /bin/id" };
        assert!(flagged("GET /cgi-bin/status\n", &[(header, value)]).is_some(), "{header}");
    }
    assert_passed(&["() => { return 1 }", "function () { x; }", "call f() { later }"]);
}

#[test]
fn xslt_extension_calls_are_xxe() {
    assert_flagged(
        "xxe:xslt-extension-call",
        &[
            "<xsl:value-of select=\"php:function('system','id')\"/>",
            "<xsl:stylesheet xmlns:rt=\"http://xml.apache.org/xalan/java/java.lang.Runtime\">",
            "<msxsl:script language=\"C#\" implements-prefix=\"u\">",
        ],
    );
    assert_passed(&["<xsl:value-of select=\"title\"/>", "php function list", "the php:function docs"]);
}

#[test]
fn ruby_marshal_gadget_chains_are_deserialization() {
    assert_flagged("deserialization:ruby-marshal-gadget", &["BAhvOhVHZW06OlJlcXVpcmVtZW50", "BAhbCG86FUdlbTo6U3BlY0ZldGNoZXI="]);
    // A Rails cookie-store session: a hash of strings and a number.
    assert_passed(&["BAh7B0kiD3Nlc3Npb25faWQGOgZFVEkiJTMyYWI5YzhmMWQyZTRmNjA3MTgyOTNhNGI1YzZkN2U4ZgY7AFRJIgx1c2VyX2lkBjsAVGkBKg=="]);
}

/// A protocol-0 pickle under two percent layers reaches the rules with its line breaks
/// collapsed to spaces (the decoded view); prose with the same words does not match.
#[test]
fn a_pickle_under_two_percent_layers_is_deserialization() {
    for value in ["cos\nsystem\n(S'id'\ntR.", "cposix\npopen\n(S'touch /tmp/x'\ntR."] {
        let text = format!("GET /s?q={}\n", encode(&encode(value)));
        assert_eq!(flagged(&text, &[]).as_deref(), Some("deserialization:python-pickle-collapsed (decoded)"), "{value:?}");
    }
    assert_passed(&["'cos system (the old one) failed", "cos system (S is for small)"]);
}

#[test]
fn php_ini_settings_are_php_injection() {
    assert_flagged("php-injection:php-ini-override", &["-d allow_url_include=1", "-d auto_prepend_file=x.txt", "disable_functions=none"]);
    assert_passed(&["safe_mode=1", "allow url include", "auto prepend file"]);
}

#[test]
fn dot_and_ejs_arithmetic_probes_are_ssti() {
    assert_flagged("ssti:arithmetic-probe", &["{{=7*7}}", "{{- 7*7 -}}", "<%- 7*7 %>", "{{:7*7}}"]);
    assert_passed(&["{{= it.name }}", "<%- include('header') %>", "7*7 = 49"]);
}

#[test]
fn cmdlets_wrapper_flags_and_runtime_spawns_are_command_injection() {
    for value in [";Start-Process calc", "| Get-ChildItem -Path C:\\ -Recurse", "| xargs -I{} sh -c id", ";getent passwd", ";crontab -l"] {
        let text = format!("GET /search?q={}\n", encode(value));
        assert!(flagged(&text, &[]).is_some_and(|r| r.starts_with("command-injection:")), "{value:?}");
    }
    for value in ["Deno.run({cmd:[\"id\"]})", "Bun.spawnSync([\"id\"])", "setTimeout('process.exit()',1)"] {
        let text = format!("GET /search?q={}\n", encode(value));
        assert!(flagged(&text, &[]).is_some_and(|r| r.starts_with("command-injection:nodejs-")), "{value:?}");
    }
    // A web shell's command parameter needs no separator in front of the command.
    assert_eq!(flagged("GET /uploads/a.php?cmd=id\n", &[]), Some("command-injection:unix-command".to_string()));
    assert_eq!(flagged("GET /x.jsp?exec=ls%20-la\n", &[]), Some("command-injection:unix-command".to_string()));
    for benign in [
        "GET /search?q=id\n",
        "GET /app?cmd=save\n",
        "GET /search?q=Get-Well%20cards%3B%20Get-Started\n",
        "GET /s?q=the%20process%20exits\n",
    ] {
        assert_eq!(flagged(benign, &[]), None, "{benign:?}");
    }
}

#[test]
fn a_proxy_request_header_is_httpoxy() {
    assert_eq!(flagged("GET /cgi-bin/app\n", &[("proxy", "http://203.0.113.9:8080")]), Some("protocol:httpoxy-proxy-header".to_string()));
    assert_eq!(flagged("GET /cgi-bin/app\n", &[("proxy-connection", "keep-alive")]), None);
}

#[test]
fn database_dumps_in_the_path_are_restricted_files() {
    for path in ["/backup.sql", "/db_dump.sql.gz", "/old/site-backup.mdb"] {
        assert_eq!(flagged(&format!("GET {path}\n"), &[]), Some("path-traversal:restricted-file".to_string()), "{path}");
    }
    for path in ["/files/schema.sql", "/docs/sql-tutorial", "/blog/backup-strategies"] {
        assert_eq!(flagged(&format!("GET {path}\n"), &[]), None, "{path}");
    }
}

/// Base64 runs of 12 to 15 characters are decoded now (16 before): a 9–11 byte payload such as
/// `' or 1=1--` reaches the SQLi model; random mixed-case ids of that length decode to bytes,
/// not text, and are not read.
#[tokio::test]
async fn short_base64_payloads_are_decoded() {
    let engine = engine_with_models();
    for value in ["JyBvciAxPTEtLQ==", "IiBvciAxPTEj"] {
        let text = format!("GET /s?token={}\n", encode(value));
        let r = engine.score_all(&ScoreInput { request_text: &text, headers: &[] }).await;
        assert!(r.breakdown.get(SQLI) > engine.threshold(), "{value:?}: {r:?}");
    }
    for value in ["aB3dE5fG7hJ9kL", "UserProfileId", "Xk9fQ2mZ7pLw"] {
        let text = format!("GET /s?token={value}\n");
        let r = engine.score_all(&ScoreInput { request_text: &text, headers: &[] }).await;
        assert!(r.score <= engine.threshold(), "{value:?}: {r:?}");
    }
}
