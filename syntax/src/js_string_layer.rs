//! Markup written through a JavaScript string: a page that reflects a value into a string
//! literal and hands it to `innerHTML` or `document.write` runs the string's escapes first, so
//! `<svg onload\r\n=...>` (backslash, `r`, backslash, `n`) reaches the HTML parser with a real
//! line break before the `=`, an event handler. The engine's decoded view undoes `\xXX` and
//! `\uXXXX`; this undoes the single-character escapes the same layer also has.

/// [`unescape`] of `text`, or of `text` with its percent layers undone when the backslashes
/// are percent-encoded (`%5Cn`); None when there is no escape or no markup (`<`, `=`).
pub fn unescape_deep(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let markup = |t: &str| t.contains(['<', '=']);
    if b.contains(&b'\\') {
        return unescape(text).filter(|t| markup(t));
    }
    let encoded = b.windows(3).any(|w| w[0] == b'%' && w[1..].eq_ignore_ascii_case(b"5c"));
    if !encoded {
        return None;
    }
    unescape(&crate::js_lex::percent_deep(text)).filter(|t| markup(t))
}

/// `text` with `\n`, `\r`, `\t`, `\f`, `\v`, `\"`, `\'`, `\/` and `\\` undone, or None when it
/// holds none of them.
pub fn unescape(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let escape = |k: usize| b[k] == b'\\' && matches!(b.get(k + 1), Some(b'n' | b'r' | b't' | b'f' | b'v' | b'"' | b'\'' | b'/' | b'\\'));
    if !(0..b.len()).any(escape) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('f') => out.push('\x0c'),
            Some('v') => out.push('\x0b'),
            Some(e @ ('"' | '\'' | '/' | '\\')) => out.push(e),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::unescape;

    #[test]
    fn single_character_escapes() {
        assert_eq!(unescape(r#"<svg onload\r\n=alert(1)>"#).as_deref(), Some("<svg onload\r\n=alert(1)>"));
        assert_eq!(unescape(r#"<img src=\"x\" onerror=\"y\"><\/img>"#).as_deref(), Some(r#"<img src="x" onerror="y"></img>"#));
        assert_eq!(unescape(r"C:\Users\Public\Documents"), None);
        assert_eq!(unescape("no escapes"), None);
    }
}
