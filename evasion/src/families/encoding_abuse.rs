//! Encoding abuse: a NUL byte truncating a file name or value (`shell.php%00.jpg`), a second
//! percent layer over an attack byte (`%2500`, `%252e%252e`, `%253c`), and stray `%`s splitting
//! a keyword (`<s%cr%ipt>`), each around a payload of some other family, in any field.

use crate::mutate::join;
use crate::{Carrier, Family, Rng, Variant};

pub struct EncodingAbuse;

const FILES: &[&str] = &[
    "shell.php",
    "../../etc/passwd",
    "index.php",
    "config.inc",
    "cmd.asp",
    "upload/x.jsp",
    "../../../../boot.ini",
    "avatar.phtml",
    "c99.php",
];
const TAILS: &[&str] = &[".jpg", ".png", ".gif", ".pdf", ".html", ".txt", "x", "/"];
const WORDS: &[&str] =
    &["script", "select", "union", "alert", "onerror", "iframe", "passwd", "system", "execute", "javascript", "document", "cookie"];

fn null_byte(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    names.push("null-byte");
    let nul = match rng.below(3) {
        0 => "%00",
        1 => "\0",
        _ => {
            names.push("double");
            "%2500"
        }
    };
    format!("{}{nul}{}", rng.pick(FILES), rng.pick(TAILS))
}

fn double(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    names.push("double-encoding");
    match rng.below(4) {
        0 => format!("{}etc%252fpasswd", "%252e%252e%252f".repeat(rng.range(2, 6))),
        1 => format!("%253C{}%253E", rng.pick(&["script", "svg onload=alert(1)", "img src=x onerror=alert(1)", "iframe"])),
        2 => format!("x%250d%250aSet-Cookie:%2520a={}", rng.range(1, 99)),
        _ => format!("{}%2500{}", rng.pick(FILES), rng.pick(TAILS)),
    }
}

fn invalid(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    names.push("invalid-percent");
    let word = *rng.pick(WORDS);
    let mut out = String::new();
    let mut splits = 0;
    for (i, c) in word.chars().enumerate() {
        // A stray `%` only before a letter that is no hex digit, or the decoder would read it.
        if i > 0 && c.is_ascii_alphabetic() && !c.is_ascii_hexdigit() && (rng.chance(0.5) || splits == 0) {
            out.push('%');
            splits += 1;
        }
        out.push(c);
    }
    if splits < 2 {
        // Two splits at least: a second stray `%` before the last non-hex letter.
        let at = out.rfind(|c: char| c.is_ascii_alphabetic() && !c.is_ascii_hexdigit()).unwrap_or(1);
        if !out[..at].ends_with('%') {
            out.insert(at, '%');
        }
    }
    match rng.below(3) {
        0 => format!("<{out}>"),
        1 => format!("1 {out} 1"),
        _ => out,
    }
}

impl Family for EncodingAbuse {
    fn name(&self) -> &'static str {
        "encoding-abuse"
    }

    fn detector(&self) -> &'static str {
        "protocol"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut names = Vec::new();
        let payload = match rng.below(3) {
            0 => null_byte(rng, &mut names),
            1 => double(rng, &mut names),
            _ => invalid(rng, &mut names),
        };
        Variant { family: self.name(), mutation: join(&names), payload, carrier: Carrier::Value }
    }
}
