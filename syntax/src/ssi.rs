//! Server-side include directives hidden under an encoding layer. The `ssi` rules match
//! `<!--#exec cmd=...-->` in the plain view, but the decoded view removes `<!-- -->` comments,
//! so a directive that is still percent- or entity-encoded in the plain view (`%3C!--%23exec`)
//! is seen by neither. This check undoes those layers itself (bounded passes) and reads the
//! directive grammar: `<!--`, `#`, a directive name, and for level 1 its argument.

use crate::{Check, Finding, Input, Trigger};

pub struct SsiCheck;

/// Directives and the argument each takes (`None`: a directive without arguments).
const DIRECTIVES: &[(&[u8], &[&[u8]])] = &[
    (b"exec", &[b"cmd", b"cgi"]),
    (b"include", &[b"virtual", b"file"]),
    (b"echo", &[b"var", b"encoding"]),
    (b"config", &[b"errmsg", b"timefmt", b"sizefmt", b"echomsg"]),
    (b"fsize", &[b"virtual", b"file"]),
    (b"flastmod", &[b"virtual", b"file"]),
    (b"set", &[b"var"]),
    (b"if", &[b"expr"]),
    (b"elif", &[b"expr"]),
    (b"printenv", &[]),
];

impl Check for SsiCheck {
    fn trigger(&self) -> Trigger {
        // An encoded `<` (raw directives are the rules' job).
        Trigger::any_of(b"%&")
    }

    fn detector(&self) -> &'static str {
        "ssi"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        // Raw directives are the rules' job; this check is for encoded ones.
        // The decoded view has comments removed; only the plain view can show one.
        let bytes = input.bytes;
        let may_encode_lt = (bytes.all(b"%3") && bytes.any(b"cC")) || bytes.all(b"&;") || bytes.all(b"&#");
        if input.decoded || !may_encode_lt || input.text.len() < 8 {
            return None;
        }
        if !has_encoded_lt(input.text.as_bytes()) {
            return None;
        }
        let text = crate::mail::normalize(input.text.as_bytes());
        let b: &[u8] = &text;
        let mut best: Option<u8> = None;
        let mut from = 0;
        while let Some(at) = find(b, b"<!--", from) {
            from = at + 4;
            if let Some(level) = directive_at(b, from) {
                best = Some(best.map_or(level, |l| l.min(level)));
                if level == 1 {
                    break;
                }
            }
        }
        let level = best?;
        (level <= input.sensitivity).then_some(Finding { reason: "ssi:encoded-directive", score: 0.95, level })
    }
}

/// Whether an encoded `<` occurs: `%3c` under any number of `%25` layers, `&lt;`, `&#60;` or
/// `&#x3c;`. A pass over the `%` and `&` positions, so other fields skip the normalization.
fn has_encoded_lt(b: &[u8]) -> bool {
    let at = |i: usize, s: &[u8]| b.get(i..i + s.len()).is_some_and(|w| w.eq_ignore_ascii_case(s));
    (0..b.len()).any(|i| match b[i] {
        b'%' => {
            let mut j = i + 1;
            while at(j, b"25") {
                j += 2;
            }
            at(j, b"3c")
        }
        b'&' => at(i + 1, b"lt;") || at(i + 1, b"#60") || at(i + 1, b"#x3c") || at(i + 1, b"#x003c") || at(i + 1, b"#060"),
        _ => false,
    })
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    hay.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|p| p + from)
}

fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// After `<!--`: `#name` and its argument → level 1, `#name` alone → level 2.
fn directive_at(b: &[u8], at: usize) -> Option<u8> {
    let mut i = skip_blanks(b, at);
    if b.get(i) != Some(&b'#') {
        return None;
    }
    i = skip_blanks(b, i + 1);
    let start = i;
    while i < b.len() && b[i].is_ascii_alphabetic() && i - start < 10 {
        i += 1;
    }
    let name = &b[start..i];
    let (_, args) = DIRECTIVES.iter().find(|(d, _)| d.eq_ignore_ascii_case(name))?;
    if b.get(i).is_some_and(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    let j = skip_blanks(b, i);
    if args.is_empty() {
        return Some(if b.get(j..j + 3) == Some(b"-->") { 1 } else { 2 });
    }
    let arg_start = j;
    let mut k = j;
    while k < b.len() && b[k].is_ascii_alphabetic() && k - arg_start < 10 {
        k += 1;
    }
    let arg = &b[arg_start..k];
    let k = skip_blanks(b, k);
    let has_argument = args.iter().any(|a| a.eq_ignore_ascii_case(arg)) && b.get(k) == Some(&b'=');
    Some(if has_argument { 1 } else { 2 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(text: &str) -> Option<u8> {
        let mut input = Input::new(text);
        input.sensitivity = 4;
        SsiCheck.inspect(&input).map(|f| f.level)
    }

    #[test]
    fn encoded_directives() {
        assert_eq!(level("%3C%21--%23exec%20cmd%3D%22id%22--%3E"), Some(1));
        assert_eq!(level("%253C%2521--%2520%2523%2520include%2520virtual%253D%2522%252Fetc%252Fpasswd%2522--%253E"), Some(1));
        assert_eq!(level("&lt;!--#printenv --&gt;".replace("&lt;", "&#60;").replace("&gt;", "&#62;").as_str()), Some(1));
        assert_eq!(level("&lt;!--#include file=\"/etc/passwd\"--&gt;"), Some(1));
        assert_eq!(level("%3C!--%23echo--%3E"), Some(2));
        assert_eq!(level("%3C!-- a comment 100% --%3E"), None);
        assert_eq!(level("50% off"), None);
    }
}
