//! `application/x-www-form-urlencoded` bodies, split and decoded like the query string.

use super::is_plain_name;
use crate::fields::{FieldKind, Fields};
use crate::normalize::percent::form_decode_into;

/// Pushes each `name=value` pair: the value as `BodyValue` (named), unusual names as `BodyKey`.
pub fn parse_form(body: &str, fields: &mut Fields) {
    let body = body.trim_end_matches(['\r', '\n']);
    let mut scratch = String::new();
    push_form_pairs(body, FieldKind::BodyKey, FieldKind::BodyValue, fields, &mut scratch);
}

/// Splits an `application/x-www-form-urlencoded` string into name/value fields.
pub fn push_form_pairs(input: &str, name_kind: FieldKind, value_kind: FieldKind, fields: &mut Fields, scratch: &mut String) {
    let mut name_buf = String::new();
    for pair in input.split('&') {
        if pair.is_empty() {
            continue;
        }
        match memchr::memchr(b'=', pair.as_bytes()) {
            Some(i) => {
                form_decode_into(&pair[..i], &mut name_buf);
                form_decode_into(&pair[i + 1..], scratch);
                if !is_plain_name(&name_buf) {
                    fields.push(name_kind, "", &name_buf);
                }
                fields.push(value_kind, &name_buf, scratch);
            }
            // A bare token (`?../../etc/passwd`) is a value in all but name.
            None => {
                form_decode_into(pair, scratch);
                fields.push(value_kind, "", scratch);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::{Field, FieldLimits};

    #[test]
    fn pairs_become_fields() {
        let mut fields = Fields::with_limits(FieldLimits::default());
        parse_form("user=bob&comment=%3Cscript%3E+x&x%3Cy=1&bare\r\n", &mut fields);
        let v: Vec<Field<'_>> = fields.iter().collect();
        assert!(v.contains(&Field { kind: FieldKind::BodyValue, name: "comment", value: "<script> x" }));
        assert!(v.contains(&Field { kind: FieldKind::BodyKey, name: "", value: "x<y" }));
        assert!(v.contains(&Field { kind: FieldKind::BodyValue, name: "", value: "bare" }));
        assert!(!v.iter().any(|f| f.kind == FieldKind::BodyKey && f.value == "user"));
    }

    #[test]
    fn a_bean_path_to_the_class_loader_stays_a_field() {
        let mut fields = Fields::with_limits(FieldLimits::default());
        parse_form("class.module.classLoader.resources.context.parent.pipeline.first.suffix=.jsp&user.address.city=Oslo", &mut fields);
        let keys: Vec<&str> = fields.iter().filter(|f| f.kind == FieldKind::BodyKey).map(|f| f.value).collect();
        assert_eq!(keys, ["class.module.classLoader.resources.context.parent.pipeline.first.suffix"]);
    }
}
