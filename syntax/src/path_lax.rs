//! `path-traversal:lax-encoded-dotdot`: a `../` step spelled so that only a lax decoder turns
//! it back into dots and a separator. Servers and frameworks have each accepted some of these
//! forms, and a WAF that decodes strictly sees none of them:
//!
//! - a stray `%` that is no escape, dropped by the decoder (`.%./`, `%.%./`);
//! - `%uXXXX` escapes of dots and separators, including their full-width and
//!   division-slash look-alikes (`%u002e`, `%uff0e`, `%u2215`);
//! - overlong UTF-8 of `.`, `/`, `\` at any length (`%c0%ae`, `%e0%80%af`, `%f0%80%80%ae`),
//!   with a continuation byte a strict decoder rejects (`%c0%2e`), or with the continuation
//!   byte's `%` left out (`%C0AE`);
//! - full-width and look-alike characters (`．．／`, `∕`, `∖`, `⁄`).
//!
//! The value is decoded with every one of these leniencies at once, up to [`MAX_ROUNDS`]
//! layers, and then read for `..` path steps. Plain and plainly percent-encoded steps are the
//! rules' (`scoring/rules/path-traversal.toml`); this check only reports a step whose decoding
//! needed a lenient form — no client spells a path that way. At the start of a value (where a
//! path parameter holds it) the finding is level 1; further into a long text, level 2.

use crate::{Check, Finding, Input, Trigger};

pub struct PathLax;

/// Percent layers undone (`%252e` is two).
const MAX_ROUNDS: usize = 4;
/// Bytes of a value read: a traversal is at the front of a path parameter.
const MAX_SCAN: usize = 8 * 1024;
/// Where the first step must begin for level 1 (the application's own prefix before it).
const LEVEL1_WINDOW: usize = 64;

impl Check for PathLax {
    fn trigger(&self) -> Trigger {
        // A percent form, or the lead byte of a full-width / look-alike character.
        Trigger::any_of(b"%\xef\xe2")
    }

    fn detector(&self) -> &'static str {
        "path-traversal"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        let raw = input.text.as_bytes();
        let raw = &raw[..raw.len().min(MAX_SCAN)];
        // Most fields hold no lenient form at all: decide that without a copy.
        if !(input.bytes.any(b"\xef\xe2") || (input.bytes.contains(b'%') && has_lax_percent(raw))) {
            return None;
        }
        let decoded = lax_decode(raw);
        let at = first_lax_step(&decoded)?;
        let level = if at <= LEVEL1_WINDOW && !decoded.bytes[..at].contains(&b'\n') { 1 } else { 2 };
        (level <= input.sensitivity).then_some(Finding { reason: "path-traversal:lax-encoded-dotdot", score: 0.95, level })
    }
}

/// Some `%` starts a form only a lax decoder reads, or may after another layer: `%u`, a `%`
/// before a dot or separator, an overlong lead byte (`%c0`, `%e0`, `%f8`...), or `%25` (one
/// more layer to look under). Plain `%2e%2e%2f` is the rules'.
fn has_lax_percent(raw: &[u8]) -> bool {
    raw.windows(3).any(|w| {
        w[0] == b'%'
            && (matches!(w[1], b'u' | b'U') || is_path_symbol(w[1]) || {
                let pair = [w[1].to_ascii_lowercase(), w[2].to_ascii_lowercase()];
                matches!(&pair, b"c0" | b"c1" | b"e0" | b"f0" | b"f8" | b"fc" | b"25")
            })
    })
}

/// `raw` decoded with every lenient form undone, with a mark on each byte that a lenient form
/// (not a plain `%XX`) produced.
fn lax_decode(raw: &[u8]) -> Marked {
    let mut cur = Marked { bytes: raw.to_vec(), lax: vec![false; raw.len()] };
    for _ in 0..MAX_ROUNDS {
        let next = byte_forms(&percent_round(&cur));
        if next.bytes == cur.bytes {
            return next;
        }
        cur = next;
    }
    cur
}

/// Bytes, and for each whether a lenient decoding produced it.
#[derive(Default)]
struct Marked {
    bytes: Vec<u8>,
    lax: Vec<bool>,
}

impl Marked {
    fn push(&mut self, b: u8, lax: bool) {
        self.bytes.push(b);
        self.lax.push(lax);
    }
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

fn hex2(s: &[u8], at: usize) -> Option<u8> {
    Some(hex(*s.get(at)?)? << 4 | hex(*s.get(at + 1)?)?)
}

fn is_path_symbol(b: u8) -> bool {
    matches!(b, b'.' | b'/' | b'\\')
}

/// Dots and separators among the code points `%uXXXX` and full-width forms name.
fn symbol_of(code: u32) -> Option<u8> {
    match code {
        0x2e | 0xff0e | 0xfe52 | 0x2024 => Some(b'.'),
        0x2f | 0xff0f | 0x2215 | 0x2044 => Some(b'/'),
        0x5c | 0xff3c | 0x2216 | 0xfe68 => Some(b'\\'),
        _ => None,
    }
}

/// One percent layer: `%XX` (a byte keeps the marks of its escape), `%uXXXX` of a path
/// symbol, and a `%` that starts no escape before a dot or separator (dropped by a lax
/// decoder: `.%./`).
fn percent_round(m: &Marked) -> Marked {
    let s = &m.bytes;
    let mut out = Marked::default();
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        if b != b'%' {
            out.push(b, m.lax[i]);
            i += 1;
            continue;
        }
        if let Some(v) = hex2(s, i + 1) {
            out.push(v, m.lax[i..i + 3].contains(&true));
            i += 3;
            continue;
        }
        if matches!(s.get(i + 1), Some(b'u' | b'U')) {
            if let Some(sym) = hex2(s, i + 2).zip(hex2(s, i + 4)).and_then(|(hi, lo)| symbol_of(u32::from(hi) << 8 | u32::from(lo))) {
                out.push(sym, true);
                i += 6;
                continue;
            }
        }
        if let Some(&next) = s.get(i + 1).filter(|&&n| is_path_symbol(n)) {
            out.push(next, true);
            i += 2;
            continue;
        }
        out.push(b, m.lax[i]);
        i += 1;
    }
    out
}

/// Overlong UTF-8 and full-width / look-alike characters that stand for `.`, `/` or `\`.
fn byte_forms(m: &Marked) -> Marked {
    let s = &m.bytes;
    let mut out = Marked::default();
    let mut i = 0;
    while i < s.len() {
        if let Some((sym, used)) = overlong(s, i).or_else(|| look_alike(s, i)) {
            out.push(sym, true);
            i += used;
        } else {
            out.push(s[i], m.lax[i]);
            i += 1;
        }
    }
    out
}

/// An overlong encoding of a path symbol at `i`: a lead byte whose payload bits are zero
/// (`C0`/`C1`, `E0 80`, `F0 80 80`, `F8 80 80 80`, `FC 80 80 80 80`; lax decoders ignore the
/// marker bits, so `E0 40` passes too) and a final byte whose low six bits, with the lead's
/// low bits, name the symbol (`C0 AE` is `.`, `C1 9C` is `\`, `C0 2E` is `.` to a decoder
/// that does not check continuation bytes). The final byte may be written as two hex digits
/// (`C0 'A' 'E'`: `%C0AE` with its second `%` left out). Returns the symbol and the bytes
/// used.
fn overlong(s: &[u8], i: usize) -> Option<(u8, usize)> {
    let lead = s[i];
    let fillers = match lead {
        0xc0 | 0xc1 => 0,
        0xe0 => 1,
        0xf0 => 2,
        0xf8 => 3,
        0xfc => 4,
        _ => return None,
    };
    let mut at = i + 1;
    for _ in 0..fillers {
        if s.get(at)? & 0x3f != 0 {
            return None;
        }
        at += 1;
    }
    let (last, used) = match hex2(s, at) {
        Some(v) if v >= 0x80 => (v, 2),
        _ => (*s.get(at)?, 1),
    };
    // Only a two-byte lead carries payload bits here (`C1` is 1); the longer leads are all
    // marker bits.
    let lead_bits = if fillers == 0 { u32::from(lead & 0x1f) } else { 0 };
    let sym = symbol_of(lead_bits << 6 | u32::from(last & 0x3f))?;
    Some((sym, at + used - i))
}

/// A full-width or look-alike dot or separator (three bytes of UTF-8) at `i`.
fn look_alike(s: &[u8], i: usize) -> Option<(u8, usize)> {
    if !matches!(s[i], 0xe2 | 0xef) {
        return None;
    }
    let c = std::str::from_utf8(s.get(i..i + 3)?).ok()?.chars().next()?;
    Some((symbol_of(c as u32)?, 3))
}

/// Where the first `..` path step that a lenient form helped spell begins: two or more dots
/// that start a segment (at the start, or after a separator, `=`, `:`, a quote or
/// whitespace) followed by an optional `;` and a separator (`../`, `..\\`, `....//`, `..;/`).
fn first_lax_step(m: &Marked) -> Option<usize> {
    let t = &m.bytes;
    let mut i = 0;
    while i < t.len() {
        if t[i] != b'.' {
            i += 1;
            continue;
        }
        let start = i;
        while i < t.len() && t[i] == b'.' {
            i += 1;
        }
        let starts_segment = start == 0 || matches!(t[start - 1], b'/' | b'\\' | b'=' | b':' | b' ' | b'\t' | b'"' | b'\'');
        let sep = if t.get(i) == Some(&b';') { i + 1 } else { i };
        if i - start >= 2 && starts_segment && matches!(t.get(sep), Some(b'/' | b'\\')) && m.lax[start..=sep].contains(&true) {
            return Some(start);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(text: &str) -> Option<u8> {
        let mut input = Input::new(text);
        input.sensitivity = 4;
        PathLax.inspect(&input).map(|f| f.level)
    }

    #[test]
    fn lax_forms() {
        for text in [
            "%C0AE%C0AE%C0AF%C0AE%C0AE%C0AFetc%C0AFpasswd",
            "file=.%./bla.txt",
            "%.%./%.%./etc/passwd",
            "%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd",
            "%c0%2e%c0%2e%c0%afwindows",
            "%e0%80%ae%e0%80%ae%e0%80%afboot.ini",
            "%f0%80%80%ae%f0%80%80%ae%f0%80%80%afx",
            "%u002e%u002e%u2215etc%u2215passwd",
            "%uff0e%uff0e%uff0fsecret",
            "\u{ff0e}\u{ff0e}\u{ff0f}\u{ff0e}\u{ff0e}\u{ff0f}etc/hosts",
            "..%c1%9c..%c1%9cwindows\\win.ini",
            "%25c0%25ae%25c0%25ae%25c0%25afetc",
            "images/..%c0%afconfig.php",
        ] {
            assert_eq!(level(text), Some(1), "{text}");
        }
        let long = format!("{} see %c0%ae%c0%ae/etc", "word ".repeat(20));
        assert_eq!(level(&long), Some(2));
    }

    #[test]
    fn ordinary_values() {
        for text in [
            "../../etc/passwd",
            "%2e%2e%2fetc%2fpasswd",
            "100%25 done",
            "50% off ... today",
            "a%2Fb%2Fc",
            "\u{ff0e}\u{ff0e}\u{ff0e} 日本語のテキスト",
            "v1.2..final%20report.pdf",
            "%E3%81%82%E3%81%84",
            "%",
            "%c0",
            "%u",
        ] {
            assert_eq!(level(text), None, "{text}");
        }
    }
}
