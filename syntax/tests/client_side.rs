//! The client-side and server-side JavaScript families of session 27: Node.js injection
//! (`command-injection:nodejs-*`), prototype pollution and session fixation. Recall of the
//! code checks on generated variants (per mutation) with requests cut into fields as the
//! engine cuts them, and hand-written hard negatives of the shapes real traffic and chat
//! messages carry.

use std::collections::BTreeMap;

mod new_families_support;

use evasion::{place::to_request, Family, Placement, Variant};
use new_families_support::detect;
use syntax::{checks, Input, Place};

/// Recall of `family`'s own detector on `n` variants whose mutation passes `keep`.
fn recall(family: &dyn Family, n: usize, keep: impl Fn(&str) -> bool) -> f64 {
    let variants: Vec<Variant> = evasion::sample(family, 27, n).into_iter().filter(|v| keep(&v.mutation)).collect();
    let mut per_mutation: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let (mut caught, mut misses) = (0, Vec::new());
    for (k, v) in variants.iter().enumerate() {
        let placement = Placement::ALL[k % Placement::ALL.len()];
        let hit = detect(&to_request(v, placement), 1).iter().any(|(reason, _)| reason.starts_with(&format!("{}:", family.detector())));
        for m in v.mutation.split('+') {
            let e = per_mutation.entry(m.to_string()).or_default();
            e.1 += 1;
            e.0 += hit as usize;
        }
        if hit {
            caught += 1;
        } else if misses.len() < 8 {
            misses.push(format!("{} [{}] {:?}", v.mutation, placement.name(), v.payload.chars().take(160).collect::<String>()));
        }
    }
    let rate = caught as f64 / variants.len().max(1) as f64;
    println!("{}: recall {caught}/{} = {:.1} %", family.name(), variants.len(), rate * 100.0);
    for (m, (c, t)) in &per_mutation {
        println!("  {m:<28} {c}/{t}");
    }
    misses.iter().for_each(|m| println!("  miss: {m}"));
    rate
}

/// The support's decoded view undoes one percent layer; the engine's undoes them all, so the
/// two-layer variants are measured by `rampart eval --evasion` (the whole engine), not here.
fn one_layer(mutation: &str) -> bool {
    !mutation.contains("double-url")
}

#[test]
fn nodejs_injection_recall() {
    let family = evasion::family("nodejs-injection").expect("registered");
    assert!(recall(family, 2000, one_layer) >= 0.95);
}

#[test]
fn session_fixation_recall() {
    let family = evasion::family("session-fixation").expect("registered");
    assert!(recall(family, 2000, one_layer) >= 0.95);
}

/// Key paths in query and form keys and in values. A JSON body's `__proto__` key is not a
/// field today (the engine drops plain key names), so those variants are measured apart.
#[test]
fn prototype_pollution_recall() {
    let family = &evasion::families::prototype_pollution::PrototypePollution;
    assert!(recall(family, 2000, |m| !m.contains("json-body") && one_layer(m)) >= 0.95);
    let json = recall(family, 2000, |m| m.contains("json-body"));
    println!("json-body (needs the engine to keep `__proto__` keys as fields): {:.1} %", json * 100.0);
}

fn level_of(text: &str, place: Place, name: &str) -> Option<(&'static str, u8)> {
    let mut input = Input::new(text);
    input.place = place;
    input.name = name;
    input.sensitivity = 4;
    checks()
        .iter()
        .filter(|c| matches!(c.detector(), "prototype-pollution" | "session-fixation") || c.detector() == "command-injection")
        .filter_map(|c| c.inspect(&input))
        .filter(|f| f.reason.starts_with("prototype-pollution") || f.reason.starts_with("session-fixation") || f.reason.contains("nodejs"))
        .map(|f| (f.reason, f.level))
        .min_by_key(|f| f.1)
}

#[test]
fn hard_negatives_stay_below_level_1() {
    let values = [
        // Node.js in prose and package names.
        "npm install child_process-promise --save",
        "the child process exited with code 1",
        "const path = require('path'); module.exports = { entry: './src/index.js' }",
        "import('./pages/Home').then(m => m.default)",
        "process.env.NODE_ENV === 'production'",
        // Prototype words in data.
        "prototype",
        "constructor",
        "Object.prototype.hasOwnProperty.call(obj, key)",
        "proto=https&host=example.com",
        "__proto__",
        // Cookies read, consent banners, docs.
        "cookie_consent=accepted",
        "var theme = document.cookie.split('; ').find(r => r.startsWith('theme='))",
        "Set-Cookie header missing SameSite",
        "session=abc123",
        "https://shop.example/cart;jsessionid",
    ];
    for v in values {
        let found = level_of(v, Place::QueryValue, "q");
        assert!(found.is_none_or(|(_, l)| l > 1), "{v:?} -> {found:?}");
    }
    // Ordinary keys: brackets and dots in names are not key paths to a prototype.
    for key in ["user[name]", "filter[price][gte]", "a.b.c", "items[0][prototype_id]", "constructor_name"] {
        let found = level_of("1", Place::QueryValue, key);
        assert!(found.is_none(), "{key:?} -> {found:?}");
    }
}

#[test]
fn chat_messages_with_code_are_level_2() {
    let chat = [
        "I'm building an Express server. When I call const { exec } = require('child_process'); exec('git pull') it works locally but not on Heroku, why?",
        "Can someone explain why obj.__proto__.isAdmin = true changes every object in my app? I thought it only changes obj.",
        "In my React app I set document.cookie = 'token=' + jwt + '; path=/' after login, is that safe or should the server set it?",
    ];
    for text in chat {
        let found = level_of(text, Place::BodyValue, "message");
        assert!(found.is_some_and(|(_, l)| l == 2), "{text:?} -> {found:?}");
    }
}
