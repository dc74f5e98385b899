//! The XML body parser, tolerant (hinted) and sniffed (well-formed only).
#![no_main]

use libfuzzer_sys::fuzz_target;
use scoring::body::xml::parse_xml;
use scoring::fields::{FieldKind, FieldLimits, Fields};

fuzz_target!(|input: &str| {
    let mut fields = Fields::with_limits(FieldLimits { max_depth: 4, ..FieldLimits::default() });
    if !parse_xml(input, &mut fields) {
        assert!(fields.is_empty(), "a rejected body must push nothing");
    }
    for content_type in [Some("application/xml"), None] {
        let mut fields = Fields::with_limits(FieldLimits::default());
        scoring::body::parse_body(input, content_type, &mut fields);
        // With the XML hint, input that is not markup at all is kept raw. Markup is what the
        // parser takes for it: `<` after ASCII whitespace and byte-order marks (a BOM before
        // `<` once failed this check: corpus entry crash-d638805a...).
        let markup = input.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '\u{feff}').starts_with('<');
        if content_type.is_some() && !markup && !input.is_empty() {
            assert!(fields.iter().any(|f| f.kind == FieldKind::BodyRaw), "body lost");
        }
    }
});
