//! Raw bodies: anything that is not (or does not parse as) a structured type.

use crate::fields::{FieldKind, Fields};

/// Pushes `body` whole as one `BodyRaw` field (nothing for an empty body).
pub fn push_raw(body: &str, fields: &mut Fields) {
    if !body.is_empty() {
        fields.push(FieldKind::BodyRaw, "", body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::FieldLimits;

    #[test]
    fn raw_is_one_field() {
        let mut fields = Fields::with_limits(FieldLimits::default());
        push_raw("", &mut fields);
        assert!(fields.is_empty());
        push_raw("x y", &mut fields);
        let f = fields.get(0).unwrap();
        assert_eq!((f.kind, f.name, f.value), (FieldKind::BodyRaw, "", "x y"));
    }
}
