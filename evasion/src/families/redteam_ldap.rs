//! Red-team LDAP injection, written apart from the detectors (held out in spirit): a value that
//! closes the application's filter (`uid=<value>` inside `(&(uid=…)(pass=…))`) and opens new
//! clauses: always-true `(objectClass=*)`, `(|…)` alternations, `(&)` absolute-true, negations
//! `(!(…))`, blind attribute probes `(userPassword=a*)`, wildcard-only logins, NUL truncation
//! × attribute names (uid, cn, mail, sAMAccountName, userPassword, memberOf…) × spacing and
//! case × where the value travels (login form, query, JSON, header).

use crate::mutate::{join, random_case, transport_layer};
use crate::{Carrier, Family, Rng, Variant};

pub struct RedteamLdap;

const ATTRS: &[&str] =
    &["uid", "cn", "mail", "sAMAccountName", "userPassword", "objectClass", "memberOf", "sn", "givenName", "description"];

fn clause(rng: &mut Rng) -> String {
    let attr = *rng.pick(ATTRS);
    match rng.below(5) {
        0 => format!("({attr}=*)"),
        1 => "(objectClass=*)".into(),
        2 => format!("({attr}={}*)", (b'a' + rng.below(26) as u8) as char),
        3 => "(&)".into(),
        _ => format!("(!({attr}=void))"),
    }
}

impl Family for RedteamLdap {
    fn name(&self) -> &'static str {
        "redteam-ldap"
    }

    fn detector(&self) -> &'static str {
        "ldap-injection"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let user = *rng.pick(&["admin", "*", "jdoe", "a*", "Administrator", ""]);
        let (c1, c2) = (clause(rng), clause(rng));
        let (text, shape) = match rng.below(8) {
            0 => (format!("{user})({})", &c1[1..c1.len() - 1]), "close-and-clause"),
            1 => (format!("{user})(|{c1}{c2}"), "close-and-or"),
            2 => (format!("{user})(&)"), "absolute-true"),
            3 => (format!("*)(|{c1}"), "wildcard-or"),
            4 => (format!("{user})){c1}(|(cn=*"), "double-close"),
            5 => (format!("{user})(!(&(1=0)))"), "negation"),
            6 => (format!("{user}){c1}\u{0}"), "nul-truncate"),
            _ => (format!("*)(userPassword={}*", (b'a' + rng.below(26) as u8) as char), "blind-probe"),
        };
        let (text, case) = if rng.chance(0.3) { (random_case(rng, &text), "case") } else { (text, "") };
        let (text, spaced) = if rng.chance(0.25) { (text.replace(")(", ") ("), "spaced") } else { (text, "") };
        let (carrier, place) = match rng.below(8) {
            0 => (Carrier::Header("x-remote-user"), "in-header"),
            _ => (Carrier::Value, ""),
        };
        let (text, layer) = if place.is_empty() { transport_layer(rng, &text) } else { (text, "") };
        Variant { family: self.name(), mutation: join(&[shape, case, spaced, place, layer]), payload: text, carrier }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn varied_and_seeded() {
        super::super::assert_varied_and_seeded(&super::RedteamLdap, 300, 100);
    }
}
