//! Issue 12's probes and spellings, each at the sensitivity level its rule carries: LDAP and
//! XPath metacharacter probes wait for levels 3–4 (a search box receives `(` and `admin*`
//! too), real filter break-outs and the traversal spellings fuzzing lists use score at level 1,
//! and ordinary values stay unflagged at every level.

mod common;

use common::patterns_only;
use scoring::detectors::detector_id;
use scoring::{Engine, ScoreInput};

/// The reason of the given detector's best hit on `GET /search?q=<value>` at `level`, if it
/// scores above the kill threshold.
fn reason_at(engine: &Engine, value: &str, detector: &str, level: u8) -> Option<String> {
    let text = format!("GET /search?q={}\n", percent(value));
    let input = ScoreInput { request_text: &text, headers: &[] };
    let analysis = engine.analyze_at(&input, level);
    let (score, reason) = engine.pattern_score(&analysis, detector_id(detector).expect("known detector"));
    (score > engine.threshold()).then_some(reason)
}

/// Every byte outside unreserved characters percent-encoded, as a browser sends a form value.
fn percent(value: &str) -> String {
    value
        .bytes()
        .map(|b| if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

/// The lowest level (1..=4) at which `detector` flags `value`.
fn lowest_level(engine: &Engine, value: &str, detector: &str) -> Option<u8> {
    (1..=4).find(|l| reason_at(engine, value, detector, *l).is_some())
}

#[test]
fn ldap_metacharacter_probes_wait_for_level_3_and_wildcards_for_4() {
    let engine = patterns_only();
    for probe in ["%28", "%29", "\\28", "\\2a)", "*)*", "*|", "(", ")(", "!"] {
        assert_eq!(lowest_level(engine, probe, "ldap-injection"), Some(3), "{probe}");
    }
    for probe in ["admin*", "@*", "jdoe*"] {
        assert_eq!(lowest_level(engine, probe, "ldap-injection"), Some(4), "{probe}");
    }
    // Real injections stay level 1.
    for attack in ["*)(objectClass=*", "admin)(|(uid=*))", "x)(&)"] {
        assert_eq!(lowest_level(engine, attack, "ldap-injection"), Some(1), "{attack}");
    }
}

#[test]
fn xpath_wildcard_steps_are_level_4_and_the_reopened_tautology_level_2() {
    let engine = patterns_only();
    for probe in ["//*", "/*"] {
        assert_eq!(lowest_level(engine, probe, "xpath-injection"), Some(4), "{probe}");
    }
    for attack in ["x' or 1=1 or 'x'='y", "admin' or '1'='1", "\" and \"a\"=\"a"] {
        // Level 1 leaves it to the SQLi model (a pattern hit would skip the model).
        assert_eq!(lowest_level(engine, attack, "xpath-injection"), Some(2), "{attack}");
    }
}

#[test]
fn fuzzing_list_traversal_spellings_score_at_level_1() {
    let engine = patterns_only();
    for attack in [
        "/%%32%65%%32%65%%32%66boot.ini",
        "/..%%35%63windows",
        "..2f..2f..2fetc2fpasswd",
        "..2fetc2fpasswd%00",
        "images/..5c..5cwindows5cwin.ini",
        &format!("../config.php{}", "/.".repeat(40)),
    ] {
        assert_eq!(lowest_level(engine, attack, "path-traversal"), Some(1), "{attack}");
    }
}

#[test]
fn ordinary_values_pass_at_every_level() {
    let engine = patterns_only();
    for value in [
        "*",
        "smith",
        "(555) 123-4567",
        "rock & roll",
        "Tom's or Jerry's",
        "it's 'yes' = 'no'",
        "*/*",
        "//",
        "1e10",
        "..",
        "2f..2f",
        "./",
        "cats (and dogs)",
    ] {
        for detector in ["ldap-injection", "xpath-injection", "path-traversal"] {
            assert_eq!(reason_at(engine, value, detector, 4), None, "{value} at level 4 ({detector})");
        }
    }
}
