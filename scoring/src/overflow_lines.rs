//! The SQLi model's view of an Overflow chunk (fields past the field cap, joined one
//! `name=value` per line into 4 KiB chunks, see `fields.rs`). Scored whole, a chunk of a
//! thousand padding lines around one injection dilutes the n-gram features below the
//! threshold (`?a&a&...&q=1' UNION SELECT ...`); each line is scored as the field it was.
//! Only lines the SQLi gate selects cost a model call, as whole fields do: padding and
//! benign lines do not spend the model budget (`model-budget:sqli`).

/// The texts the SQLi model scores for one Overflow chunk, in order: each line that can hold
/// an injection and that `gated` accepts (the SQLi gate rules, as for a whole field), as the
/// value its field had (`q=1' or 1=1` → `1' or 1=1`; a bare token keeps its `=`). Empty when
/// no line qualifies.
pub fn sqli_texts(chunk: &str, gated: impl Fn(&str) -> bool) -> Vec<&str> {
    line_values(chunk).filter(|value| gated(value)).collect()
}

/// Each line of an Overflow chunk that can hold an attack, as the value its field had. The
/// code detectors read these one by one: a chunk read whole is long, multi-line text, which
/// they rightly treat as pasted source (a higher level), and padding must not buy that.
pub fn line_values(chunk: &str) -> impl Iterator<Item = &str> {
    chunk.lines().filter(|line| !is_inert(line)).map(field_value)
}

/// Letters, digits and `_ . - = [ ]` only: a name, a number, `name=word` — no quote, space,
/// parenthesis, comment or operator for an injection to be made of.
fn is_inert(line: &str) -> bool {
    line.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'=' | b'[' | b']'))
}

/// The value of a `name=value` line. `fields.rs` writes `name=` only for a named field, and a
/// field name from the parsers is plain in nearly every request; text before the first `=`
/// that is not a plain name belongs to a bare value (`admin' or '1'='1`), kept whole.
fn field_value(line: &str) -> &str {
    match line.split_once('=') {
        Some((name, value))
            if !name.is_empty()
                && !value.is_empty()
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'[' | b']')) =>
        {
            value
        }
        _ => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_lines_are_left_out_and_values_lose_their_names() {
        let chunk = format!("{}q=1' UNION SELECT username, password FROM users--\npage=2\nx-request-id=5f1c-aa", "a\n".repeat(900));
        assert_eq!(sqli_texts(&chunk, |_| true), ["1' UNION SELECT username, password FROM users--"]);
        let prose = format!("{}last=\"Hello\" - said Tom", "f=red running shoes\n".repeat(300));
        assert_eq!(sqli_texts(&prose, |line| line.contains('"')), ["\"Hello\" - said Tom"], "only gated lines cost a model call");
    }

    #[test]
    fn bare_values_with_an_equals_sign_stay_whole() {
        let all = |_: &str| true;
        assert_eq!(sqli_texts("a=1\nadmin' OR '1'='1'--\n1; DROP TABLE users--", all), ["admin' OR '1'='1'--", "1; DROP TABLE users--"]);
        assert_eq!(sqli_texts("=1 or 1=1", all), ["=1 or 1=1"]);
        assert!(sqli_texts("a\nb=2\n", all).is_empty());
    }
}
