//! XML bodies, with a hand-written tolerant tokenizer (no recursion, linear).
//!
//! - Text nodes: `BodyValue` named by the enclosing element (entity references decoded once,
//!   as an XML parser would); whitespace-only text is skipped.
//! - Attributes: the value is a `BodyValue` named by the attribute; unusual attribute names
//!   are also `BodyKey` fields.
//! - `<![CDATA[...]]>`: its content, verbatim, as a `BodyValue` named by the element.
//! - `<!DOCTYPE ...>` with its whole internal subset (to the matching `]>`), and any other
//!   `<!...>` declaration such as a stray `<!ENTITY ...>`: one `XmlDoctype` field each, so XXE
//!   rules see `<!ENTITY x SYSTEM "file:///etc/passwd">`.
//! - Processing instructions (including the `<?xml ...?>` declaration): a `BodyValue` named by
//!   the target.
//! - Comments: their text as a `BodyValue` named `#comment` (an LLM reading the document
//!   reads them).
//! - Elements nested deeper than `FieldLimits::max_depth`: the rest of the body from the first
//!   too-deep start tag is pushed as one `BodyRaw` field.
//!
//! With a Content-Type hint the tokenizer is tolerant (unterminated constructs run to the end
//! of the body). A sniffed body (no hint) only counts as XML when it is well-formed: balanced,
//! matching tags, quoted attributes, no text outside the root; and when it has no `<?xml` or
//! `<!DOCTYPE` prolog (HTML, a bare `<script>`) it is also pushed whole as `BodyRaw`.

use std::borrow::Cow;

use super::{is_plain_name, raw};
use crate::fields::{FieldKind, Fields};
use crate::normalize::entities;

/// Field name of an XML comment's text.
pub const COMMENT_NAME: &str = "#comment";

/// Parses an XML body with a tolerant tokenizer; returns false (nothing pushed) when the body
/// does not start with markup.
pub fn parse_xml(body: &str, fields: &mut Fields) -> bool {
    parse_xml_at(body, fields, 0, false)
}

/// [`parse_xml`] at nesting depth `depth`; `sniffed` asks for a well-formed document.
pub(crate) fn parse_xml_at(body: &str, fields: &mut Fields, depth: usize, sniffed: bool) -> bool {
    let trimmed = body.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '\u{feff}');
    if !trimmed.starts_with('<') {
        return false;
    }
    let max_depth = fields.limits().max_depth.saturating_sub(depth);
    let doc = tokenize(body, max_depth);
    if !doc.saw_element && !doc.saw_declaration {
        return false;
    }
    if sniffed && (doc.errors > 0 || !doc.saw_element) {
        return false;
    }
    for (kind, name, value) in &doc.events {
        fields.push(*kind, name, value);
    }
    if let Some(tail) = doc.raw_tail {
        raw::push_raw(body.get(tail..).unwrap_or(body), fields);
    }
    if sniffed && !(trimmed.starts_with("<?xml") || starts_with_ignore_case(trimmed, "<!doctype")) {
        raw::push_raw(body, fields);
    }
    true
}

fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.as_bytes().get(..prefix.len()).is_some_and(|p| p.eq_ignore_ascii_case(prefix.as_bytes()))
}

#[derive(Default)]
struct Doc<'a> {
    events: Vec<(FieldKind, &'a str, Cow<'a, str>)>,
    errors: usize,
    saw_element: bool,
    saw_declaration: bool,
    raw_tail: Option<usize>,
}

fn decode_text(text: &str) -> Cow<'_, str> {
    if memchr::memchr(b'&', text.as_bytes()).is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    entities::decode(text, &mut out);
    Cow::Owned(out)
}

fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b':' || c >= 0x80
}

fn is_name_char(c: u8) -> bool {
    !(c.is_ascii_whitespace() || matches!(c, b'/' | b'>' | b'=' | b'<' | b'"' | b'\''))
}

/// Position just after the `>` closing the declaration at `i` (`<!DOCTYPE`, `<!ENTITY`...),
/// skipping quoted strings, a bracketed internal subset and comments inside it; `None` when
/// unterminated.
fn declaration_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 2;
    let mut quote: Option<u8> = None;
    let mut brackets = 0usize;
    while j < b.len() {
        let c = b[j];
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            j += 1;
            continue;
        }
        match c {
            b'"' | b'\'' => quote = Some(c),
            b'[' => brackets += 1,
            b']' => brackets = brackets.saturating_sub(1),
            b'<' if b.get(j + 1..j + 4) == Some(b"!--") => {
                j = memchr::memmem::find(&b[j + 4..], b"-->").map_or(b.len(), |k| j + 4 + k + 3);
                continue;
            }
            b'>' if brackets == 0 => return Some(j + 1),
            _ => {}
        }
        j += 1;
    }
    None
}

fn tokenize(body: &str, max_depth: usize) -> Doc<'_> {
    let b = body.as_bytes();
    let n = b.len();
    let mut doc = Doc::default();
    let mut stack: Vec<&str> = Vec::new();
    let mut text_start = 0;
    let mut i = 0;
    let mut roots = 0usize;
    loop {
        let lt = memchr::memchr(b'<', &b[i..]).map(|j| i + j);
        let text_end = lt.unwrap_or(n);
        let text = body.get(text_start..text_end).unwrap_or("");
        if !text.trim().is_empty() {
            if stack.is_empty() {
                doc.errors += 1; // text outside the root element
            }
            doc.events.push((FieldKind::BodyValue, stack.last().copied().unwrap_or(""), decode_text(text)));
        }
        let Some(p) = lt else { break };
        let rest = &b[p..];
        if rest.starts_with(b"<!--") {
            let (end, next) = match memchr::memmem::find(&b[p + 4..], b"-->") {
                Some(k) => (p + 4 + k, p + 4 + k + 3),
                None => {
                    doc.errors += 1;
                    (n, n)
                }
            };
            // An LLM handed the document reads its comments: a classic hiding place for an
            // instruction addressed to it.
            let comment = body.get(p + 4..end).unwrap_or("");
            if !comment.trim().is_empty() {
                doc.events.push((FieldKind::BodyValue, COMMENT_NAME, Cow::Borrowed(comment)));
            }
            i = next;
        } else if rest.starts_with(b"<![CDATA[") {
            let start = p + 9;
            let (end, next) = match memchr::memmem::find(&b[start..], b"]]>") {
                Some(k) => (start + k, start + k + 3),
                None => {
                    doc.errors += 1;
                    (n, n)
                }
            };
            if stack.is_empty() {
                doc.errors += 1;
            }
            let content = body.get(start..end).unwrap_or("");
            if !content.is_empty() {
                doc.events.push((FieldKind::BodyValue, stack.last().copied().unwrap_or(""), Cow::Borrowed(content)));
            }
            i = next;
        } else if rest.starts_with(b"<!") {
            let end = declaration_end(b, p).unwrap_or_else(|| {
                doc.errors += 1;
                n
            });
            doc.saw_declaration = true;
            doc.events.push((FieldKind::XmlDoctype, "", Cow::Borrowed(body.get(p..end).unwrap_or(""))));
            i = end;
        } else if rest.starts_with(b"<?") {
            let (end, next) = match memchr::memmem::find(&b[p + 2..], b"?>") {
                Some(k) => (p + 2 + k, p + 2 + k + 2),
                None => {
                    doc.errors += 1;
                    (n, n)
                }
            };
            let mut t = p + 2;
            while t < end && is_name_char(b[t]) && b[t] != b'?' {
                t += 1;
            }
            let target = body.get(p + 2..t).unwrap_or("");
            let content = body.get(p + 2..end).unwrap_or("");
            doc.events.push((FieldKind::BodyValue, target, Cow::Borrowed(content)));
            i = next;
        } else if rest.starts_with(b"</") {
            let start = p + 2;
            let mut t = start;
            while t < n && is_name_char(b[t]) {
                t += 1;
            }
            let name = body.get(start..t).unwrap_or("");
            i = match memchr::memchr(b'>', &b[t..]) {
                Some(k) => t + k + 1,
                None => {
                    doc.errors += 1;
                    n
                }
            };
            if body.get(t..i.saturating_sub(1)).is_some_and(|s| !s.trim().is_empty()) {
                doc.errors += 1;
            }
            match stack.iter().rposition(|&open| open == name) {
                Some(k) => {
                    if k + 1 != stack.len() {
                        doc.errors += 1;
                    }
                    stack.truncate(k);
                }
                None => doc.errors += 1,
            }
        } else if rest.len() > 1 && is_name_start(rest[1]) {
            let start = p + 1;
            let mut t = start;
            while t < n && is_name_char(b[t]) {
                t += 1;
            }
            let name = body.get(start..t).unwrap_or("");
            let (next, self_closing) = attributes(body, t, &mut doc);
            if stack.is_empty() {
                roots += 1;
                if roots > 1 {
                    doc.errors += 1;
                }
            }
            doc.saw_element = true;
            if !self_closing {
                if stack.len() + 1 > max_depth {
                    doc.raw_tail = Some(p);
                    return doc;
                }
                stack.push(name);
            }
            i = next;
        } else {
            // A stray `<` (`a < b`): part of the text.
            doc.errors += 1;
            i = p + 1;
            continue;
        }
        text_start = i;
        if i >= n {
            break;
        }
    }
    if !stack.is_empty() {
        doc.errors += 1;
    }
    doc
}

/// Reads the attributes of a start tag from `i` (just after the element name) and pushes
/// their events; returns the position after the tag and whether it was self-closing (`/>`).
fn attributes<'a>(body: &'a str, mut i: usize, doc: &mut Doc<'a>) -> (usize, bool) {
    let b = body.as_bytes();
    let n = b.len();
    loop {
        while i < n && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= n {
            doc.errors += 1;
            return (n, false);
        }
        match b[i] {
            b'>' => return (i + 1, false),
            b'/' if b.get(i + 1) == Some(&b'>') => return (i + 2, true),
            b'/' | b'=' | b'"' | b'\'' | b'<' => {
                doc.errors += 1;
                if b[i] == b'<' {
                    // An unclosed tag: let the main loop read the next one.
                    return (i, false);
                }
                i += 1;
                continue;
            }
            _ => {}
        }
        let name_start = i;
        while i < n && is_name_char(b[i]) {
            i += 1;
        }
        let name = body.get(name_start..i).unwrap_or("");
        while i < n && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if b.get(i) != Some(&b'=') {
            doc.errors += 1; // attribute without a value (HTML style)
            continue;
        }
        i += 1;
        while i < n && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let value = match b.get(i) {
            Some(&q @ (b'"' | b'\'')) => {
                let start = i + 1;
                let end = memchr::memchr(q, &b[start..]).map_or(n, |k| start + k);
                if end == n {
                    doc.errors += 1;
                }
                i = (end + 1).min(n);
                body.get(start..end).unwrap_or("")
            }
            _ => {
                doc.errors += 1; // unquoted
                let start = i;
                while i < n && !b[i].is_ascii_whitespace() && b[i] != b'>' {
                    i += 1;
                }
                body.get(start..i).unwrap_or("")
            }
        };
        if !is_plain_name(name) {
            doc.events.push((FieldKind::BodyKey, "", Cow::Borrowed(name)));
        }
        doc.events.push((FieldKind::BodyValue, name, decode_text(value)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::{Field, FieldLimits};

    fn parse(body: &str, sniffed: bool, limits: FieldLimits) -> (bool, Vec<(FieldKind, String, String)>) {
        let mut fields = Fields::with_limits(limits);
        let ok = parse_xml_at(body, &mut fields, 0, sniffed);
        let v = fields.iter().map(|f: Field<'_>| (f.kind, f.name.to_string(), f.value.to_string())).collect();
        (ok, v)
    }

    fn field(kind: FieldKind, name: &str, value: &str) -> (FieldKind, String, String) {
        (kind, name.to_string(), value.to_string())
    }

    #[test]
    fn text_attributes_cdata_and_pis() {
        let body = "<?xml version=\"1.0\"?>\n<order id='7' x:note=\"a &lt;b&gt;\">\n  <item>book &amp; pen</item>\n  \
                    <q><![CDATA[<script>alert(1)</script>]]></q><?php echo 1; ?><!-- hidden --><empty/>\n</order>";
        let (ok, v) = parse(body, false, FieldLimits::default());
        assert!(ok);
        assert!(v.contains(&field(FieldKind::BodyValue, "xml", "xml version=\"1.0\"")));
        assert!(v.contains(&field(FieldKind::BodyValue, "id", "7")));
        assert!(v.contains(&field(FieldKind::BodyKey, "", "x:note")));
        assert!(v.contains(&field(FieldKind::BodyValue, "x:note", "a <b>")));
        assert!(v.contains(&field(FieldKind::BodyValue, "item", "book & pen")));
        assert!(v.contains(&field(FieldKind::BodyValue, "q", "<script>alert(1)</script>")));
        assert!(v.contains(&field(FieldKind::BodyValue, "php", "php echo 1; ")));
        // A comment is read too (an LLM handed the document reads it).
        assert!(v.contains(&field(FieldKind::BodyValue, COMMENT_NAME, " hidden ")), "{v:?}");
        assert!(!v.iter().any(|f| f.0 == FieldKind::BodyRaw), "{v:?}");
    }

    #[test]
    fn doctype_with_internal_subset_is_one_field() {
        let doctype = "<!DOCTYPE foo [ <!ELEMENT foo ANY > <!-- ] > --> <!ENTITY xxe SYSTEM \"file:///etc/passwd\" > ]>";
        let body = format!("<?xml version=\"1.0\"?>\n{doctype}\n<foo>&xxe;</foo>");
        let (ok, v) = parse(&body, false, FieldLimits::default());
        assert!(ok);
        assert!(v.contains(&field(FieldKind::XmlDoctype, "", doctype)), "{v:?}");
        assert!(v.contains(&field(FieldKind::BodyValue, "foo", "&xxe;")));
        // A stray ENTITY declaration outside any DOCTYPE, and an unterminated DOCTYPE.
        let (_, v) = parse("<a><!ENTITY x SYSTEM 'http://evil/'></a>", false, FieldLimits::default());
        assert!(v.contains(&field(FieldKind::XmlDoctype, "", "<!ENTITY x SYSTEM 'http://evil/'>")));
        let (ok, v) = parse("<!DOCTYPE x [ <!ENTITY y \"z\">", false, FieldLimits::default());
        assert!(ok && v.contains(&field(FieldKind::XmlDoctype, "", "<!DOCTYPE x [ <!ENTITY y \"z\">")));
    }

    #[test]
    fn sniffing_requires_well_formed_xml() {
        for bad in ["<a><b></a>", "<a x=1></a>", "<a>", "<a></a><b></b>", "<a></a>tail", "< a>", "<!-- only -->"] {
            assert!(!parse(bad, true, FieldLimits::default()).0, "{bad}");
        }
        let (ok, v) = parse("<a><b k=\"v\">t</b></a>", true, FieldLimits::default());
        assert!(ok);
        assert!(v.contains(&field(FieldKind::BodyValue, "b", "t")));
        assert!(v.contains(&field(FieldKind::BodyRaw, "", "<a><b k=\"v\">t</b></a>")));
        let (ok, v) = parse("<?xml version=\"1.0\"?><a>t</a>", true, FieldLimits::default());
        assert!(ok && !v.iter().any(|f| f.0 == FieldKind::BodyRaw));
    }

    #[test]
    fn tolerant_with_a_hint() {
        let (ok, v) = parse("<a href=x onclick=alert(1)>text <b>bold</a> more", false, FieldLimits::default());
        assert!(ok);
        assert!(v.contains(&field(FieldKind::BodyValue, "onclick", "alert(1)")));
        assert!(v.contains(&field(FieldKind::BodyValue, "b", "bold")));
        assert!(v.contains(&field(FieldKind::BodyValue, "", " more")));
        assert!(!parse("not xml", false, FieldLimits::default()).0);
        for s in ["<", "<a", "<a b", "<a b=", "<a b='", "</", "<?", "<!", "<![CDATA[", "<!--", "<a/", "<é>é</é>"] {
            let _ = parse(s, false, FieldLimits::default());
            let _ = parse(s, true, FieldLimits::default());
        }
    }

    #[test]
    fn depth_is_bounded() {
        let limits = FieldLimits { max_depth: 3, ..FieldLimits::default() };
        let (ok, v) = parse("<a><b><c><d>deep</d></c></b></a>", false, limits);
        assert!(ok);
        assert!(v.contains(&field(FieldKind::BodyRaw, "", "<d>deep</d></c></b></a>")));
        let deep = "<a>".repeat(100_000);
        let (ok, v) = parse(&deep, false, FieldLimits::default());
        assert!(ok && v.len() == 1);
    }
}
