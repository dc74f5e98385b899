//! `application/x-www-form-urlencoded` bodies, split and decoded like the query string.

use crate::fields::{FieldKind, Fields};

/// Pushes each `name=value` pair: the value as `BodyValue` (named), unusual names as `BodyKey`.
pub fn parse_form(body: &str, fields: &mut Fields) {
    let body = body.trim_end_matches(['\r', '\n']);
    let mut scratch = String::new();
    crate::request::push_form_pairs(body, FieldKind::BodyKey, FieldKind::BodyValue, fields, &mut scratch);
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
}
