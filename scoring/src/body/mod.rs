//! Body parsers: form, JSON, multipart, XML or raw, chosen by content sniffing.
//!
//! Each parser pushes fields into a [`Fields`] sink and never fails: input it cannot parse
//! is pushed whole as a `BodyRaw` field so that it is still scanned.
//!
//! The Content-Type hint decides when it names a structured type (`*json*`,
//! `application/x-www-form-urlencoded`, `multipart/*`, `*xml*`, gRPC: see [`grpc`]); otherwise (no hint,
//! `text/plain`, `application/octet-stream`...) the body is sniffed: a leading `{`/`[` is JSON,
//! `<` is XML when it is well-formed, `--boundary` plus `Content-Disposition` is multipart,
//! `name=value&...` is a form, and anything else is raw. Nesting (multipart parts with their
//! own content type, JSON and XML depth) is bounded by `FieldLimits::max_depth`, and all
//! parsers are iterative and linear in the body length.

pub mod binary;
pub mod form;
pub mod graphql_doc;
pub mod grpc;
pub mod json;
pub mod multipart;
pub mod part_encoding;
pub mod protobuf;
pub mod raw;
pub mod xml;

use crate::fields::Fields;

/// The structured body types a Content-Type can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyType {
    Form,
    Json,
    Multipart,
    Xml,
    /// gRPC / gRPC-Web: the `[name, text]` list `grpc::decode_messages` made of the frames.
    Grpc,
}

/// The body type a Content-Type value names, if any (`None` means: sniff).
pub fn content_type_kind(content_type: &str) -> Option<BodyType> {
    let media = content_type.split(';').next().unwrap_or("").trim();
    let media = media.to_ascii_lowercase();
    if grpc::grpc_wire(&media).is_some() {
        Some(BodyType::Grpc)
    } else if media.contains("json") {
        Some(BodyType::Json)
    } else if media == "application/x-www-form-urlencoded" {
        Some(BodyType::Form)
    } else if media.starts_with("multipart/") {
        Some(BodyType::Multipart)
    } else if media.ends_with("/xml") || media.ends_with("+xml") {
        Some(BodyType::Xml)
    } else {
        None
    }
}

/// Parses `body` (with an optional Content-Type hint) into fields.
pub fn parse_body(body: &str, content_type: Option<&str>, fields: &mut Fields) {
    parse_body_at(body, content_type, fields, 0);
}

/// [`parse_body`] at nesting depth `depth` (multipart parts recurse through here).
pub(crate) fn parse_body_at(body: &str, content_type: Option<&str>, fields: &mut Fields, depth: usize) {
    if body.is_empty() {
        return;
    }
    if depth > fields.limits().max_depth {
        raw::push_raw(body, fields);
        return;
    }
    let parsed = match content_type.and_then(content_type_kind) {
        Some(BodyType::Json) => json::parse_json_at(body, fields, depth),
        Some(BodyType::Form) => {
            form::parse_form(body, fields);
            true
        }
        Some(BodyType::Multipart) => multipart::parse_multipart_at(body, content_type, fields, depth),
        Some(BodyType::Xml) => xml::parse_xml_at(body, fields, depth, false),
        Some(BodyType::Grpc) => grpc::parse_leaves(body, fields),
        None => sniff(body, fields, depth),
    };
    if !parsed {
        raw::push_raw(body, fields);
    }
}

/// Parses an unhinted body by its look; returns false when it was not recognised or did not
/// parse (nothing pushed then).
fn sniff(body: &str, fields: &mut Fields, depth: usize) -> bool {
    let t = body.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '\u{feff}');
    match t.as_bytes().first() {
        Some(b'{' | b'[') => json::parse_json_at(body, fields, depth),
        Some(b'<') => xml::parse_xml_at(body, fields, depth, true),
        Some(b'-') if multipart::sniff_boundary(body).is_some() && contains_ignore_case(body, "content-disposition") => {
            multipart::parse_multipart_at(body, None, fields, depth)
        }
        _ if looks_like_form(body) => {
            form::parse_form(body, fields);
            true
        }
        _ => false,
    }
}

/// `name=value&...`: the first name is a short token and the body has no line breaks or
/// spaces (a form encoder would have escaped them).
pub fn looks_like_form(body: &str) -> bool {
    let body = body.trim_end_matches(['\r', '\n']);
    let Some(eq) = memchr::memchr(b'=', body.as_bytes()) else { return false };
    if eq == 0 || eq > 256 {
        return false;
    }
    let name_ok = body.as_bytes()[..eq]
        .iter()
        .all(|&b| b > b' ' && b != 0x7f && !matches!(b, b'<' | b'>' | b'"' | b'\'' | b'{' | b'}' | b'(' | b')' | b';'));
    name_ok && !body.bytes().any(|b| matches!(b, b'\n' | b'\r' | b' ' | b'\t'))
}

/// Names made only of these characters cannot carry an attack; skipping them saves scans
/// (the request parser uses the same rule). Except the names JavaScript resolves to an
/// object's prototype: `{"__proto__":{"isAdmin":true}}` is an attack made of plain characters
/// (prototype pollution), so those keys stay fields for the checks to see, as do Python's
/// `__class__`/`__init__`/`__globals__` (class pollution); so do Java bean
/// paths to a class loader (`names_a_class_loader`).
pub(crate) fn is_plain_name(name: &str) -> bool {
    name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'[' | b']'))
        && !names_a_prototype(name)
        && !names_a_class_loader(name)
        && !names_a_secret_filter(name)
}

/// An ORM query-string filter on a secret column (`filter[where][password][regexp]`,
/// `where[token][neq]`): LoopBack-style parsers turn it into a comparison that leaks the secret
/// or matches every row, and the attack is all name bytes (`nosqli:orm-filter-on-secret`).
fn names_a_secret_filter(name: &str) -> bool {
    const SECRETS: &[&str] = &["pass", "pwd", "secret", "token", "hash", "otp", "apikey", "api_key"];
    name.len() >= 10
        && memchr::memmem::find(name.as_bytes(), b"][").is_some()
        && SECRETS.iter().any(|word| contains_ignore_case(name, word))
}

/// Spring4Shell / Struts: a bean property path from `class` to its class loader
/// (`class.module.classLoader.resources.context.parent.pipeline.first.pattern`) is all name
/// bytes, yet the whole attack sits in the parameter name.
fn names_a_class_loader(name: &str) -> bool {
    name.len() >= 17 && name.get(..6).is_some_and(|head| head.eq_ignore_ascii_case("class.")) && contains_ignore_case(name, "classloader")
}

fn names_a_prototype(name: &str) -> bool {
    // Short names (most keys) cannot hold the shortest of the words. Python's `__class__`,
    // `__init__` and `__globals__` lead a dict merge to the module globals (class pollution).
    name.len() >= 8
        && ["__proto__", "prototype", "constructor", "__class__", "__init__", "__globals__"]
            .iter()
            .any(|word| memchr::memmem::find(name.as_bytes(), word.as_bytes()).is_some())
}

fn contains_ignore_case(haystack: &str, lower_needle: &str) -> bool {
    let n = lower_needle.as_bytes();
    let Some(&first) = n.first() else { return true };
    let h = haystack.as_bytes();
    let mut from = 0;
    while let Some(j) = memchr::memchr2(first, first.to_ascii_uppercase(), &h[from..]) {
        let at = from + j;
        if h.get(at..at + n.len()).is_some_and(|w| w.eq_ignore_ascii_case(n)) {
            return true;
        }
        from = at + 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::{Field, FieldKind, FieldLimits};

    fn parse(body: &str, ct: Option<&str>) -> Vec<(FieldKind, String, String)> {
        let mut fields = Fields::with_limits(FieldLimits::default());
        parse_body(body, ct, &mut fields);
        fields.iter().map(|f: Field<'_>| (f.kind, f.name.to_string(), f.value.to_string())).collect()
    }

    fn has(v: &[(FieldKind, String, String)], kind: FieldKind, name: &str, value: &str) -> bool {
        v.iter().any(|(k, n, val)| *k == kind && n == name && val == value)
    }

    #[test]
    fn content_type_hints() {
        assert_eq!(content_type_kind("application/json; charset=utf-8"), Some(BodyType::Json));
        assert_eq!(content_type_kind("application/vnd.api+json"), Some(BodyType::Json));
        assert_eq!(content_type_kind("Application/X-WWW-Form-Urlencoded"), Some(BodyType::Form));
        assert_eq!(content_type_kind("multipart/form-data; boundary=x"), Some(BodyType::Multipart));
        assert_eq!(content_type_kind("text/xml"), Some(BodyType::Xml));
        assert_eq!(content_type_kind("application/soap+xml"), Some(BodyType::Xml));
        assert_eq!(content_type_kind("text/plain"), None);
    }

    #[test]
    fn sniffing_without_a_hint() {
        let v = parse("{\"q\":\"<script>\"}", None);
        assert!(has(&v, FieldKind::BodyValue, "q", "<script>"));
        let v = parse("a=1&b=%3Cx%3E", Some("text/plain"));
        assert!(has(&v, FieldKind::BodyValue, "b", "<x>"));
        let v = parse("<?xml version=\"1.0\"?><a>hi</a>", None);
        assert!(has(&v, FieldKind::BodyValue, "a", "hi"));
        let v = parse("--xyz\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nval\r\n--xyz--\r\n", None);
        assert!(has(&v, FieldKind::BodyValue, "f", "val"));
        let v = parse("just some text = here", None);
        assert_eq!(v, [(FieldKind::BodyRaw, String::new(), "just some text = here".to_string())]);
    }

    #[test]
    fn hinted_but_unparseable_bodies_are_kept_raw() {
        let v = parse("{not json", Some("application/json"));
        assert_eq!(v, [(FieldKind::BodyRaw, String::new(), "{not json".to_string())]);
        let v = parse("no boundary here", Some("multipart/form-data"));
        assert_eq!(v, [(FieldKind::BodyRaw, String::new(), "no boundary here".to_string())]);
        let v = parse("plain text", Some("application/xml"));
        assert_eq!(v, [(FieldKind::BodyRaw, String::new(), "plain text".to_string())]);
        let v = parse("{\"a\": 1", None);
        assert_eq!(v, [(FieldKind::BodyRaw, String::new(), "{\"a\": 1".to_string())]);
    }

    #[test]
    fn sniffed_html_is_not_lost() {
        let v = parse("<img src=x onerror=alert(1)>", None);
        assert!(has(&v, FieldKind::BodyRaw, "", "<img src=x onerror=alert(1)>"));
        let v = parse("<script>alert(1)</script>", None);
        assert!(has(&v, FieldKind::BodyRaw, "", "<script>alert(1)</script>"));
    }

    #[test]
    fn form_sniffing_rules() {
        assert!(looks_like_form("a=1&b=2"));
        assert!(looks_like_form("q=a+b\r\n"));
        assert!(!looks_like_form("=x"));
        assert!(!looks_like_form("hello world=1"));
        assert!(!looks_like_form("<a=1"));
        assert!(!looks_like_form("plain"));
    }
}
