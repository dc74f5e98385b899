//! Mutations shared by the families' grammars. Each returns the new text; the family records
//! the mutation's name in [`crate::Variant::mutation`].

use crate::Rng;

/// Every byte as `%XX` (upper-case hex).
pub fn percent_all(text: &str) -> String {
    text.bytes().map(|b| format!("%{b:02X}")).collect()
}

/// Bytes outside `[A-Za-z0-9-_.~]` as `%XX`, as a client library encodes a value.
pub fn percent_specials(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Two layers of percent-encoding of the special bytes (`<` → `%253C`).
pub fn double_percent(text: &str) -> String {
    percent_specials(&percent_specials(text))
}

/// Each ASCII letter upper- or lower-cased at random.
pub fn random_case(rng: &mut Rng, text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphabetic() && rng.chance(0.5) { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() }).collect()
}

/// Some characters as HTML character references: decimal or hex, zero-padded or not, with or
/// without the closing `;` (browsers accept all of these in attribute values).
pub fn html_entities(rng: &mut Rng, text: &str, share: f64) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for c in text.chars() {
        if rng.chance(share) {
            let pad = if rng.chance(0.3) { rng.range(1, 4) } else { 0 };
            let semi = if rng.chance(0.8) { ";" } else { "" };
            if rng.chance(0.5) {
                out.push_str(&format!("&#x{:0width$x}{semi}", c as u32, width = pad + 1));
            } else {
                out.push_str(&format!("&#{:0width$}{semi}", c as u32, width = pad + 1));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Some ASCII characters as JavaScript escapes: `\xHH`, `\uHHHH` or `\u{H}`.
pub fn js_escapes(rng: &mut Rng, text: &str, share: f64) -> String {
    let mut out = String::with_capacity(text.len() * 4);
    for c in text.chars() {
        if c.is_ascii_alphanumeric() && rng.chance(share) {
            match rng.below(3) {
                0 => out.push_str(&format!("\\x{:02x}", c as u32)),
                1 => out.push_str(&format!("\\u{:04x}", c as u32)),
                _ => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A whitespace run as attackers write it between tokens: space, tab, newline, or several.
pub fn whitespace(rng: &mut Rng) -> &'static str {
    const RUNS: [&str; 7] = [" ", " ", "  ", "\t", "\n", "\r\n", " \t"];
    RUNS[rng.below(RUNS.len())]
}

/// Syntax characters written as their Unicode compatibility forms, each with probability
/// `share`: full-width (`＜`, `＝`, `（`), small (`﹤`, `﹦`, `﹙`) or vertical (`︵`) forms. NFKC
/// normalisation and Windows best-fit conversion turn them back into ASCII on the server.
pub fn compat_forms(rng: &mut Rng, text: &str, share: f64) -> String {
    text.chars()
        .map(|c| {
            if !"<>=()\"'/;{}[]`".contains(c) || !rng.chance(share) {
                return c;
            }
            let small = match c {
                '<' => Some('\u{fe64}'),
                '>' => Some('\u{fe65}'),
                '=' => Some('\u{fe66}'),
                '(' => Some(if rng.chance(0.5) { '\u{fe59}' } else { '\u{fe35}' }),
                ')' => Some(if rng.chance(0.5) { '\u{fe5a}' } else { '\u{fe36}' }),
                ';' => Some('\u{fe54}'),
                '{' => Some('\u{fe5b}'),
                '}' => Some('\u{fe5c}'),
                _ => None,
            };
            match small {
                Some(form) if rng.chance(0.4) => form,
                _ => char::from_u32(c as u32 - 0x21 + 0xff01).unwrap_or(c),
            }
        })
        .collect()
}

/// One extra transport encoding layer over the whole payload, chosen at random (or none):
/// returns the text and the mutation name (`""` when none).
pub fn transport_layer(rng: &mut Rng, text: &str) -> (String, &'static str) {
    match rng.below(6) {
        0 => (percent_specials(text), "url"),
        1 => (double_percent(text), "double-url"),
        2 => (percent_all(text), "url-all"),
        _ => (text.to_string(), ""),
    }
}

/// `base` + `name` joined the way [`crate::Variant::mutation`] lists them.
pub fn join(names: &[&str]) -> String {
    let kept: Vec<&str> = names.iter().copied().filter(|n| !n.is_empty()).collect();
    if kept.is_empty() {
        "base".to_string()
    } else {
        kept.join("+")
    }
}

/// Standard base64 with padding (what `atob`, `base64 -d`, `base64_decode`, PowerShell's
/// `-enc` and Log4j's `${base64:}` read).
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (k, &b)| acc | (b as u32) << (16 - 8 * k));
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_round_trip_by_eye() {
        assert_eq!(percent_specials("a b<"), "a%20b%3C");
        assert_eq!(double_percent("<"), "%253C");
        assert_eq!(percent_all("ab"), "%61%62");
        assert_eq!(join(&["", "case", "url"]), "case+url");
        assert_eq!(join(&[]), "base");
        let mut rng = Rng::new(3);
        let e = html_entities(&mut rng, "alert", 1.0);
        assert!(e.starts_with("&#"), "{e}");
        let j = js_escapes(&mut rng, "alert", 1.0);
        assert!(j.starts_with('\\'), "{j}");
    }
}
