//! Prototype pollution: a key path that reaches `Object.prototype` (`__proto__`,
//! `constructor.prototype`, in bracket, dot or JSON form) × the property an attacker sets
//! (privilege flags, template options that lead to code execution, shell options) × where the
//! key path travels (a query or form key, a JSON body, a query value that a client-side
//! parser merges, a URL fragment-style value) × encodings of the key.

use crate::mutate::{join, percent_specials};
use crate::place::Request;
use crate::{Carrier, Family, Rng, Variant};

pub struct PrototypePollution;

/// `(property, value)`: what polluting it does.
const PROPS: &[(&str, &str)] = &[
    ("isAdmin", "true"),
    ("admin", "1"),
    ("role", "admin"),
    ("polluted", "yes"),
    ("outputFunctionName", "x;process.mainModule.require('child_process').execSync('id');x"),
    ("shell", "/proc/self/exe"),
    ("NODE_OPTIONS", "--require /proc/self/environ"),
    ("sourceURL", "\\u000areturn process"),
    ("innerHTML", "<img src=x onerror=alert(1)>"),
    ("transport_url", "data:,alert(1)//"),
    ("allowedTags", "script"),
    ("debug", "true"),
];

/// The path segments to `Object.prototype`, with the spelling's name.
fn root(rng: &mut Rng) -> (Vec<&'static str>, &'static str) {
    match rng.below(5) {
        0 | 1 => (vec!["__proto__"], "proto"),
        2 => (vec!["constructor", "prototype"], "constructor-prototype"),
        3 => (vec![*rng.pick(&["user", "a", "settings", "x"]), "__proto__"], "nested-proto"),
        _ => (vec![*rng.pick(&["user", "options", "0"]), "constructor", "prototype"], "nested-constructor"),
    }
}

fn key_path(rng: &mut Rng, segs: &[&str], prop: &str) -> (String, &'static str) {
    let mut all: Vec<&str> = segs.to_vec();
    all.push(prop);
    match rng.below(3) {
        0 => (format!("{}[{}]", all[0], all[1..].join("][")), "brackets"),
        1 => (all.join("."), "dots"),
        _ => (format!("{}{}", all[0], all[1..].iter().map(|s| format!("[\"{s}\"]")).collect::<String>()), "quoted-brackets"),
    }
}

fn json_body(segs: &[&str], prop: &str, value: &str) -> String {
    let leaf = if value == "true" || value == "1" {
        value.to_string()
    } else {
        format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""))
    };
    let mut inner = format!("{{\"{prop}\":{leaf}}}");
    for s in segs.iter().rev() {
        inner = format!("{{\"{s}\":{inner}}}");
    }
    format!("{{\"name\":\"bob\",\"profile\":{inner}}}")
}

impl Family for PrototypePollution {
    fn name(&self) -> &'static str {
        "prototype-pollution"
    }

    fn detector(&self) -> &'static str {
        "prototype-pollution"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let (segs, root_name) = root(rng);
        let (prop, value) = *rng.pick(PROPS);
        let (key, key_form) = key_path(rng, &segs, prop);
        let encode = rng.chance(0.25);
        let enc_key = if encode {
            percent_specials(&key).replace("_", "%5F")
        } else {
            key.replace('[', "%5B").replace(']', "%5D").replace('"', "%22")
        };
        let (carrier, payload, place) = match rng.below(5) {
            0 => {
                let path = format!("/api/search?page=1&{enc_key}={}", percent_specials(value));
                (Carrier::Request(Request::new("GET", &path)), path, "query-key")
            }
            1 => {
                let body = format!("name=bob&{enc_key}={}", percent_specials(value));
                let r = Request::new("POST", "/account").header("Content-Type", "application/x-www-form-urlencoded").body(&body);
                (Carrier::Request(r), body, "form-key")
            }
            2 | 3 => {
                let body = json_body(&segs, prop, value);
                let r = Request::new("POST", "/api/v1/settings").header("Content-Type", "application/json").body(&body);
                (Carrier::Request(r), body, "json-body")
            }
            _ => (Carrier::Value, format!("{key}={value}"), "value"),
        };
        let mutation = join(&[root_name, if place == "json-body" { "" } else { key_form }, place, if encode { "url" } else { "" }]);
        Variant { family: "prototype-pollution", mutation, payload, carrier }
    }
}
