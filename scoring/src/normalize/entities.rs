//! HTML/XML character references: named (`&lt;`, `&Tab;`, `&colon;`...), decimal (`&#60;`)
//! and hex (`&#x3c;`), with or without the trailing `;` and with any number of leading zeros.
//!
//! Named references without `;` are matched by longest known prefix, the way browsers decode
//! legacy entities in text (`&ltscript` → `<script`). Unknown names are kept literally.

/// Longest name in [`lookup`].
const MAX_NAME: usize = 16;

/// Decodes character references. Appends to `out`; returns whether anything was decoded.
pub fn decode(input: &str, out: &mut String) -> bool {
    let bytes = input.as_bytes();
    let Some(first) = memchr::memchr(b'&', bytes) else {
        out.push_str(input);
        return false;
    };
    let mut changed = false;
    let mut last = 0;
    let mut i = first;
    loop {
        // `bytes[i]` is `&`.
        if let Some(len) = reference_at(input, i, out, last) {
            changed = true;
            last = i + len;
            i = last;
        } else {
            i += 1;
        }
        match memchr::memchr(b'&', bytes.get(i..).unwrap_or(&[])) {
            Some(j) => i += j,
            None => break,
        }
    }
    out.push_str(&input[last..]);
    changed
}

/// Decodes the reference starting at `amp` (a `&`). On success, appends
/// `input[last..amp]` then the replacement and returns the reference length.
fn reference_at(input: &str, amp: usize, out: &mut String, last: usize) -> Option<usize> {
    let b = input.as_bytes();
    let mut i = amp + 1;
    if b.get(i) == Some(&b'#') {
        i += 1;
        let hex = matches!(b.get(i), Some(b'x' | b'X'));
        if hex {
            i += 1;
        }
        let start = i;
        let mut v: u32 = 0;
        while let Some(&c) = b.get(i) {
            let d = match c {
                b'0'..=b'9' => u32::from(c - b'0'),
                b'a'..=b'f' if hex => u32::from(c - b'a' + 10),
                b'A'..=b'F' if hex => u32::from(c - b'A' + 10),
                _ => break,
            };
            v = v.saturating_mul(if hex { 16 } else { 10 }).saturating_add(d);
            i += 1;
        }
        if i == start {
            return None;
        }
        if b.get(i) == Some(&b';') {
            i += 1;
        }
        out.push_str(&input[last..amp]);
        if v != 0 {
            out.push(char::from_u32(v).unwrap_or('\u{FFFD}'));
        }
        return Some(i - amp);
    }
    let start = i;
    while i < b.len() && i - start < MAX_NAME && b[i].is_ascii_alphanumeric() {
        i += 1;
    }
    let run = i - start;
    if run < 2 {
        return None;
    }
    let mut lower = [0u8; MAX_NAME];
    for (d, s) in lower.iter_mut().zip(&b[start..i]) {
        *d = s.to_ascii_lowercase();
    }
    for len in (2..=run).rev() {
        let name = &input[start..start + len];
        let value = lookup(name).or_else(|| {
            // Case-insensitive fallback (`&LT;`, `&Colon;` written by hand or by fuzzers).
            std::str::from_utf8(&lower[..len]).ok().and_then(lookup)
        });
        if let Some(value) = value {
            let mut end = start + len;
            if b.get(end) == Some(&b';') {
                end += 1;
            }
            out.push_str(&input[last..amp]);
            out.push_str(value);
            return Some(end - amp);
        }
    }
    None
}

/// Named references: HTML's syntax characters, the ones attackers use, and common text ones.
/// No value is longer than its name plus one, so decoding never grows the text.
pub fn lookup(name: &str) -> Option<&'static str> {
    Some(match name {
        "lt" | "LT" => "<",
        "gt" | "GT" => ">",
        "amp" | "AMP" => "&",
        "quot" | "QUOT" => "\"",
        "apos" => "'",
        "nbsp" | "NonBreakingSpace" => "\u{A0}",
        "Tab" | "tab" => "\t",
        "NewLine" | "newline" => "\n",
        "colon" => ":",
        "Colon" => "\u{2237}",
        "sol" => "/",
        "bsol" => "\\",
        "lpar" => "(",
        "rpar" => ")",
        "lsqb" | "lbrack" => "[",
        "rsqb" | "rbrack" => "]",
        "lcub" | "lbrace" => "{",
        "rcub" | "rbrace" => "}",
        "semi" => ";",
        "comma" => ",",
        "period" => ".",
        "excl" => "!",
        "quest" => "?",
        "num" => "#",
        "dollar" => "$",
        "percnt" => "%",
        "ast" | "midast" => "*",
        "plus" => "+",
        "equals" => "=",
        "commat" => "@",
        "Hat" => "^",
        "lowbar" | "UnderBar" => "_",
        "grave" | "DiacriticalGrave" => "`",
        "verbar" | "vert" | "VerticalLine" => "|",
        "tilde" => "\u{2DC}",
        "circ" => "\u{2C6}",
        "hyphen" | "dash" => "\u{2010}",
        "ensp" => "\u{2002}",
        "emsp" => "\u{2003}",
        "thinsp" => "\u{2009}",
        "zwnj" => "\u{200C}",
        "zwj" => "\u{200D}",
        "lrm" => "\u{200E}",
        "rlm" => "\u{200F}",
        "shy" => "\u{AD}",
        "iexcl" => "\u{A1}",
        "cent" => "\u{A2}",
        "pound" => "\u{A3}",
        "curren" => "\u{A4}",
        "yen" => "\u{A5}",
        "brvbar" => "\u{A6}",
        "sect" => "\u{A7}",
        "uml" => "\u{A8}",
        "copy" | "COPY" => "\u{A9}",
        "ordf" => "\u{AA}",
        "laquo" => "\u{AB}",
        "not" => "\u{AC}",
        "reg" | "REG" => "\u{AE}",
        "macr" => "\u{AF}",
        "deg" => "\u{B0}",
        "plusmn" => "\u{B1}",
        "sup2" => "\u{B2}",
        "sup3" => "\u{B3}",
        "acute" => "\u{B4}",
        "micro" => "\u{B5}",
        "para" => "\u{B6}",
        "middot" => "\u{B7}",
        "cedil" => "\u{B8}",
        "sup1" => "\u{B9}",
        "ordm" => "\u{BA}",
        "raquo" => "\u{BB}",
        "frac14" => "\u{BC}",
        "frac12" | "half" => "\u{BD}",
        "frac34" => "\u{BE}",
        "iquest" => "\u{BF}",
        "times" => "\u{D7}",
        "divide" => "\u{F7}",
        "Agrave" => "\u{C0}",
        "Aacute" => "\u{C1}",
        "Acirc" => "\u{C2}",
        "Atilde" => "\u{C3}",
        "Auml" => "\u{C4}",
        "Aring" => "\u{C5}",
        "AElig" => "\u{C6}",
        "Ccedil" => "\u{C7}",
        "Egrave" => "\u{C8}",
        "Eacute" => "\u{C9}",
        "Ntilde" => "\u{D1}",
        "Ouml" => "\u{D6}",
        "Uuml" => "\u{DC}",
        "szlig" => "\u{DF}",
        "agrave" => "\u{E0}",
        "aacute" => "\u{E1}",
        "acirc" => "\u{E2}",
        "atilde" => "\u{E3}",
        "auml" => "\u{E4}",
        "aring" => "\u{E5}",
        "aelig" => "\u{E6}",
        "ccedil" => "\u{E7}",
        "egrave" => "\u{E8}",
        "eacute" => "\u{E9}",
        "ecirc" => "\u{EA}",
        "euml" => "\u{EB}",
        "igrave" => "\u{EC}",
        "iacute" => "\u{ED}",
        "icirc" => "\u{EE}",
        "iuml" => "\u{EF}",
        "ntilde" => "\u{F1}",
        "ograve" => "\u{F2}",
        "oacute" => "\u{F3}",
        "ocirc" => "\u{F4}",
        "otilde" => "\u{F5}",
        "ouml" => "\u{F6}",
        "oslash" => "\u{F8}",
        "ugrave" => "\u{F9}",
        "uacute" => "\u{FA}",
        "ucirc" => "\u{FB}",
        "uuml" => "\u{FC}",
        "yacute" => "\u{FD}",
        "yuml" => "\u{FF}",
        "ndash" => "\u{2013}",
        "mdash" => "\u{2014}",
        "lsquo" => "\u{2018}",
        "rsquo" => "\u{2019}",
        "sbquo" => "\u{201A}",
        "ldquo" => "\u{201C}",
        "rdquo" => "\u{201D}",
        "bdquo" => "\u{201E}",
        "dagger" => "\u{2020}",
        "bull" => "\u{2022}",
        "hellip" => "\u{2026}",
        "prime" => "\u{2032}",
        "lsaquo" => "\u{2039}",
        "rsaquo" => "\u{203A}",
        "euro" => "\u{20AC}",
        "trade" | "TRADE" => "\u{2122}",
        "larr" => "\u{2190}",
        "rarr" => "\u{2192}",
        "ne" => "\u{2260}",
        "le" => "\u{2264}",
        "ge" => "\u{2265}",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &str) -> (String, bool) {
        crate::normalize::apply(decode, s)
    }

    #[test]
    fn numeric_references() {
        assert_eq!(dec("&#x3C;script&#62;").0, "<script>");
        assert_eq!(dec("&#60;&#X3e;").0, "<>");
        assert_eq!(dec("&#0000060script&#x00003e").0, "<script>");
        assert_eq!(dec("&#60&#62").0, "<>");
        assert_eq!(dec("java&#x09;script&#58;").0, "java\tscript:");
        assert_eq!(dec("&#0;x&#99999999999999;").0, "x\u{FFFD}");
        assert_eq!(dec("&#xD800;").0, "\u{FFFD}");
    }

    #[test]
    fn named_references() {
        assert_eq!(dec("&lt;script&gt;").0, "<script>");
        assert_eq!(dec("javascript&colon;alert&lpar;1&rpar;").0, "javascript:alert(1)");
        assert_eq!(dec("java&Tab;script&NewLine;").0, "java\tscript\n");
        assert_eq!(dec("&ltscript&gt").0, "<script>");
        assert_eq!(dec("&LT;&Lt;").0, "<<");
        assert_eq!(dec("&quot;&apos;&sol;&amp;").0, "\"'/&");
        assert_eq!(dec("&amp;lt;").0, "&lt;");
    }

    #[test]
    fn unknown_and_broken_references_are_kept() {
        assert_eq!(dec("a&b=c&unknownname;&#;&#x;&"), ("a&b=c&unknownname;&#;&#x;&".to_string(), false));
        assert_eq!(dec("no refs"), ("no refs".to_string(), false));
        assert_eq!(dec("é&é;&#xé").0, "é&é;&#xé");
    }

    #[test]
    fn values_never_longer_than_references() {
        let names = ["lt", "nbsp", "Colon", "ne", "le", "ge", "euro", "Tab", "trade", "zwj", "lrm", "rlm"];
        for n in names {
            let v = lookup(n).unwrap();
            assert!(v.len() <= n.len() + 1, "{n}");
        }
    }
}
