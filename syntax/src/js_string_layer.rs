//! Markup written through a JavaScript string: a page that reflects a value into a string
//! literal and hands it to `innerHTML` or `document.write` runs the string's escapes first, so
//! `<svg onload\r\n=...>` (backslash, `r`, backslash, `n`) reaches the HTML parser with a real
//! line break before the `=`, an event handler. Every escape of that layer is undone here, as a
//! JavaScript engine reads a string literal: the single-character ones (`\n`, `\"`), any other
//! character escaped for nothing (`on\error` is `onerror`, `\<` is `<`), legacy octal of one
//! to three digits (`\74svg` is `<svg`), `\xXX`, `\uXXXX` and `\u{...}`. The engine's decoded
//! view only undoes the unambiguous numeric forms (a `\e` or `\74` there would bend Windows
//! paths and regular expressions for every other family).

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

/// `text` with every JavaScript string escape undone, or None when it holds no backslash
/// followed by anything.
pub fn unescape(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let first = memchr_backslash(b, 0)?;
    if first + 1 >= b.len() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..first]);
    let mut i = first;
    while i < b.len() {
        if b[i] != b'\\' {
            // A backslash is ASCII, so the run up to the next one ends on a char boundary.
            let end = memchr_backslash(b, i).unwrap_or(b.len());
            out.push_str(&text[i..end]);
            i = end;
            continue;
        }
        let (ch, next) = crate::js_lex::escape(b, i);
        out.extend(ch);
        i = next;
    }
    Some(out)
}

fn memchr_backslash(b: &[u8], from: usize) -> Option<usize> {
    b[from..].iter().position(|&c| c == b'\\').map(|k| from + k)
}

#[cfg(test)]
mod tests {
    use super::{unescape, unescape_deep};

    #[test]
    fn single_character_escapes() {
        assert_eq!(unescape(r#"<svg onload\r\n=alert(1)>"#).as_deref(), Some("<svg onload\r\n=alert(1)>"));
        assert_eq!(unescape(r#"<img src=\"x\" onerror=\"y\"><\/img>"#).as_deref(), Some(r#"<img src="x" onerror="y"></img>"#));
        assert_eq!(unescape("no escapes"), None);
        assert_eq!(unescape("trailing \\"), None);
    }

    #[test]
    fn identity_and_numeric_escapes() {
        assert_eq!(unescape(r"<img src=x on\error=\alert(1)>").as_deref(), Some("<img src=x onerror=alert(1)>"));
        assert_eq!(unescape(r"\<svg on\load=alert(1)\>").as_deref(), Some("<svg onload=alert(1)>"));
        assert_eq!(unescape(r"\74svg onload=alert(1)\76").as_deref(), Some("<svg onload=alert(1)>"));
        assert_eq!(unescape(r"\074a href=\x6a\u0061\u{76}ascript:x\076").as_deref(), Some("<a href=javascript:x>"));
        assert_eq!(unescape("a\\\r\nb\\\nc").as_deref(), Some("abc"));
        assert_eq!(unescape("\\\u{e9}t\u{e9}").as_deref(), Some("\u{e9}t\u{e9}"));
    }

    #[test]
    fn paths_without_markup_are_not_a_layer() {
        assert_eq!(unescape_deep(r"C:\Users\Public\Documents"), None);
        assert_eq!(unescape_deep(r"..\..\windows\win.ini"), None);
    }
}
