//! Red-team NoSQL injection, written apart from the detectors (held out in spirit): MongoDB
//! query operators smuggled where the application expects a scalar (`user[$ne]=x` in a query or
//! form, `{"$gt":""}` objects in JSON, nested `$or`/`$where`/`$regex`/`$expr`/`$function`)
//! × JavaScript injected into a `$where` string (quote breaks, `sleep`, `this.` field probes,
//! constructor walks) × spacing, quoting and key encodings (`%24ne`, `%5B`, unicode escapes).

use crate::mutate::{join, percent_specials};
use crate::place::{json_string, Request};
use crate::{Carrier, Family, Rng, Variant};

pub struct RedteamNosqli;

const OPERATORS: &[(&str, &str)] = &[
    ("$ne", "null"),
    ("$ne", "\"x\""),
    ("$gt", "\"\""),
    ("$gte", "0"),
    ("$lt", "\"~\""),
    ("$regex", "\"^adm\""),
    ("$regex", "\".*\""),
    ("$exists", "true"),
    ("$nin", "[\"a\"]"),
    ("$in", "[\"admin\",\"root\"]"),
    ("$where", "\"1==1\""),
    ("$expr", "{\"$eq\":[1,1]}"),
];

/// JavaScript that a `$where` clause or a server-side `eval` runs.
fn where_js(rng: &mut Rng) -> (String, &'static str) {
    let ms = rng.range(2, 9) * 1000;
    match rng.below(7) {
        0 => ("'; return true; var x='".into(), "js-quote-break"),
        1 => ("' || '1'=='1".into(), "js-quote-break"),
        2 => (format!("1; sleep({ms})"), "js-sleep"),
        3 => (format!("this.password.match(/^{}.*/)", (b'a' + rng.below(26) as u8) as char), "js-field-probe"),
        4 => ("'||this.constructor.constructor('return process')().exit()||'".into(), "js-constructor"),
        5 => (format!("\";while(true){{}};var a=\"{ms}"), "js-dos"),
        _ => ("0;return db.getCollectionNames()".into(), "js-db"),
    }
}

impl Family for RedteamNosqli {
    fn name(&self) -> &'static str {
        "redteam-nosqli"
    }

    fn detector(&self) -> &'static str {
        "nosqli"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let field = *rng.pick(&["username", "password", "email", "token", "id", "user"]);
        let (op, arg) = *rng.pick(OPERATORS);
        let sp = if rng.chance(0.4) { " " } else { "" };
        let (request, payload, names): (Request, String, Vec<&'static str>) = match rng.below(7) {
            0 | 1 => {
                let scalar = arg.trim_matches('"');
                let scalar = if scalar.starts_with('[') || scalar.starts_with('{') { "1" } else { scalar };
                let (key, spell) = match rng.below(3) {
                    0 => (format!("{field}[{op}]"), "brackets"),
                    1 => (format!("{field}%5B{op}%5D"), "pct-brackets"),
                    _ => (format!("{field}[%24{}]", &op[1..]), "pct-dollar"),
                };
                let q = format!("{key}={}&password[$ne]=1", percent_specials(scalar));
                let r = if rng.chance(0.5) {
                    Request::new("GET", &format!("/login?{q}"))
                } else {
                    Request::new("POST", "/login").header("Content-Type", "application/x-www-form-urlencoded").body(&q)
                };
                (r, q, vec!["query-operator", spell])
            }
            2 | 3 => {
                let key = if rng.chance(0.2) { format!("\\u0024{}", &op[1..]) } else { op.to_string() };
                let body = format!("{{\"{field}\":{sp}{{\"{key}\":{sp}{arg}}},\"password\":{{\"$ne\":null}}}}");
                let spell = if key.starts_with('\\') { "unicode-dollar" } else { "" };
                (
                    Request::new("POST", "/api/login").header("Content-Type", "application/json").body(&body),
                    body,
                    vec!["json-operator", spell],
                )
            }
            4 => {
                let body = format!("{{\"$or\":[{{\"{field}\":\"admin\"}},{{\"{field}\":{{\"{op}\":{arg}}}}}]}}");
                (Request::new("POST", "/api/users/find").header("Content-Type", "application/json").body(&body), body, vec!["json-logical"])
            }
            5 => {
                let (js, kind) = where_js(rng);
                let body = format!("{{\"$where\":{}}}", json_string(&js));
                (Request::new("POST", "/api/search").header("Content-Type", "application/json").body(&body), body, vec!["where-json", kind])
            }
            _ => {
                let (js, kind) = where_js(rng);
                let q = format!("{field}={}", percent_specials(&js));
                (Request::new("GET", &format!("/api/users?{q}")), js, vec!["where-string", kind])
            }
        };
        Variant { family: self.name(), mutation: join(&names), payload, carrier: Carrier::Request(request) }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn varied_and_seeded() {
        super::super::assert_varied_and_seeded(&super::RedteamNosqli, 300, 100);
    }
}
