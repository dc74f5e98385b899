//! SQL injection behind text of the attacker's choosing. A value the application puts inside a
//! SQL string literal may hold anything before the quote that ends it: a review sentence, a
//! name, an address, a search phrase. The break-out that follows works exactly as it does at
//! the start of the value, and whatever the literal held dilutes what a model reads of the
//! value as a whole. After a comment terminator the attacker can pad again: SQL never reads
//! it. The break-outs and techniques are `redteam_sqli`'s; the padding comes from small
//! grammars written here (no dataset row).

use super::redteam_sqli::{obfuscate, technique};
use crate::mutate::{join, random_case, transport_layer};
use crate::{Carrier, Family, Rng, Variant};

pub struct SqliPadded;

const ADJECTIVES: &[&str] = &["great", "solid", "decent", "lovely", "sturdy", "cheap", "fast", "quiet", "bright", "comfortable"];
const NOUNS: &[&str] = &["product", "jacket", "kettle", "service", "hotel room", "delivery", "blender", "chair", "phone case", "lamp"];
const CLAUSES: &[&str] = &[
    "it arrived two days early",
    "the colour matches the photos",
    "my kids use it every morning",
    "I would order it again",
    "support answered within an hour",
    "the battery lasts all week",
    "packaging could be better",
    "it fits perfectly in the hallway",
    "setup took five minutes",
    "worth every penny at this price",
];
const FIRST: &[&str] = &["maria", "john", "aiko", "pedro", "fatima", "lars", "chen", "olga", "kwame", "ines"];
const LAST: &[&str] = &["garcia", "smith", "tanaka", "silva", "haddad", "nilsson", "wang", "petrova", "mensah", "costa"];
const STREETS: &[&str] = &["oak street", "station road", "rue de la paix", "harbour lane", "main st", "hauptstrasse"];
const CITIES: &[&str] = &["springfield", "lyon", "porto", "osaka", "leeds", "graz"];
const SEARCH: &[&str] = &["blue", "running", "shoes", "winter", "sale", "size", "men", "waterproof", "kids", "leather", "gift"];

fn sentence(rng: &mut Rng) -> String {
    let adjective = *rng.pick(ADJECTIVES);
    let noun = *rng.pick(NOUNS);
    let clause = *rng.pick(CLAUSES);
    match rng.below(3) {
        0 => format!("{adjective} {noun}, {clause}."),
        1 => format!("The {noun} is {adjective} and {clause}."),
        _ => format!("{} {noun}; {clause}!", adjective[..1].to_uppercase() + &adjective[1..]),
    }
}

/// What the literal held before the break-out, and its kind for the per-mutation table.
fn padding(rng: &mut Rng) -> (String, &'static str) {
    match rng.below(5) {
        0 => (sentence(rng), "pad-sentence"),
        1 => {
            let n = rng.range(2, 5);
            ((0..n).map(|_| sentence(rng)).collect::<Vec<_>>().join(" "), "pad-review")
        }
        2 => (format!("{} {}", rng.pick(FIRST), rng.pick(LAST)), "pad-name"),
        3 => (format!("{} {}, {} {}", rng.range(1, 250), rng.pick(STREETS), rng.range(1000, 99999), rng.pick(CITIES)), "pad-address"),
        _ => {
            let n = rng.range(2, 6);
            ((0..n).map(|_| *rng.pick(SEARCH)).collect::<Vec<_>>().join(" "), "pad-search")
        }
    }
}

/// How the string is closed: a quote, a quote and the brackets around it, or a LIKE pattern.
const BREAKS: &[&str] = &["'", "\"", "')", "'))", "\")", "%'"];

impl Family for SqliPadded {
    fn name(&self) -> &'static str {
        "sqli-literal-padding"
    }

    fn detector(&self) -> &'static str {
        "sqli"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let (front, pad) = padding(rng);
        let quote = *rng.pick(BREAKS);
        let (body, tech, lit) = technique(rng);
        let (end, term) = match rng.below(4) {
            0 => ("-- -".to_string(), "dash-comment"),
            1 => ("#".to_string(), "hash-comment"),
            // Padding after the comment: the database never reads it.
            2 => (format!("-- {}", padding(rng).0), "tail-padding"),
            _ => (format!(" and '{0}'='{0}", (b'a' + rng.below(26) as u8) as char), "closing-tail"),
        };
        let (injection, obf) = obfuscate(rng, &format!("{quote}{body} {end}"));
        let (injection, case) = if rng.chance(0.3) { (random_case(rng, &injection), "case") } else { (injection, "") };
        let (payload, layer) = transport_layer(rng, &format!("{front}{injection}"));
        Variant { family: self.name(), mutation: join(&[pad, tech, lit, obf, term, case, layer]), payload, carrier: Carrier::Value }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varied_and_seeded() {
        super::super::assert_varied_and_seeded(&SqliPadded, 400, 350);
        let a = crate::sample(&SqliPadded, 5, 400);
        for kind in ["pad-sentence", "pad-review", "pad-name", "pad-address", "pad-search", "union", "tail-padding"] {
            assert!(a.iter().any(|v| v.mutation.split('+').any(|m| m == kind)), "{kind}");
        }
        assert!(a.iter().all(|v| !v.payload.starts_with(['\'', '"'])), "text always precedes the break-out");
    }
}
