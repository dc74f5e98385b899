//! Views: the request's fields concatenated into one buffer per normalisation level, so the
//! pattern database scans each level once. A NUL byte separates fields (decoded text never
//! contains NUL), and an offset table maps a match back to its field.

use crate::fields::{FieldKind, Fields};
use crate::normalize;
use syntax::ByteSet;

/// Which normalisation level a view holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewKind {
    /// Each field after one standard URL/form decoding: what the application sees.
    Plain,
    /// Deep decoding + comment/whitespace collapse (case kept), for fields that changed,
    /// and base64 segments decoded to text.
    Decoded,
}

pub const SEPARATOR: u8 = 0;

#[derive(Debug, Default)]
pub struct View {
    pub text: String,
    /// Start offset of each segment in `text`, ascending.
    starts: Vec<u32>,
    /// The field index of each segment.
    field_of_segment: Vec<u32>,
    /// Which bytes each segment holds, and all of them: the pattern stage skips databases
    /// whose guard bytes the view lacks, the code checks reject fields on them.
    pub segment_bytes: Vec<ByteSet>,
    pub bytes: ByteSet,
}

impl View {
    pub fn clear(&mut self) {
        self.text.clear();
        self.starts.clear();
        self.field_of_segment.clear();
        self.segment_bytes.clear();
        self.bytes = ByteSet::default();
    }

    fn push(&mut self, field: usize, text: &str) {
        self.push_known(field, text, ByteSet::of(text));
    }

    /// [`View::push`] for a text whose byte set the caller already has.
    fn push_known(&mut self, field: usize, text: &str, bytes: ByteSet) {
        if !self.text.is_empty() {
            self.text.push(SEPARATOR as char);
        }
        self.starts.push(self.text.len() as u32);
        self.field_of_segment.push(field as u32);
        self.text.push_str(text);
        self.bytes = self.bytes.union(&bytes);
        self.segment_bytes.push(bytes);
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Copies into `out` the segments holding a byte of `guard` (the only ones a rule group
    /// guarded by it can match in: rules never match across a separator), with their field
    /// indices, unless that is every segment or none.
    pub fn select(&self, guard: &ByteSet, out: &mut View) -> Selected {
        if !guard.intersects(&self.bytes) {
            return Selected::None;
        }
        // Stops at the first segment without a guard byte (the old count read them all).
        if self.segment_bytes.iter().all(|b| b.intersects(guard)) {
            return Selected::All;
        }
        out.clear();
        for (seg, bytes) in self.segment_bytes.iter().enumerate() {
            if !bytes.intersects(guard) {
                continue;
            }
            let start = self.starts[seg] as usize;
            let end = self.starts.get(seg + 1).map_or(self.text.len(), |&s| s as usize - 1);
            // The segment's byte set is known: no second pass over its text.
            out.push_known(self.field_of_segment[seg] as usize, &self.text[start..end], *bytes);
        }
        Selected::Some
    }

    /// The field holding byte `offset` of the view.
    pub fn field_at(&self, offset: usize) -> usize {
        let seg = self.starts.partition_point(|&s| s as usize <= offset).saturating_sub(1);
        self.field_of_segment.get(seg).copied().unwrap_or(0) as usize
    }

    /// The text of the segment holding byte `offset` (one field's value in this view).
    pub fn segment_text(&self, offset: usize) -> &str {
        self.text.get(self.segment_range(offset)).unwrap_or("")
    }

    /// Where the segment holding byte `offset` lies in `text`, separators excluded.
    pub fn segment_range(&self, offset: usize) -> std::ops::Range<usize> {
        let seg = self.starts.partition_point(|&s| s as usize <= offset).saturating_sub(1);
        let start = self.starts.get(seg).map_or(0, |&s| s as usize);
        let end = self.starts.get(seg + 1).map_or(self.text.len(), |&s| s as usize - 1);
        start..end
    }

    /// True when bytes `from..to` lie inside one field (never touching a separator).
    pub fn within_one_field(&self, from: usize, to: usize) -> bool {
        let seg = self.starts.partition_point(|&s| s as usize <= from).saturating_sub(1);
        let start = self.starts.get(seg).map(|&s| s as usize).unwrap_or(0);
        let end = self.starts.get(seg + 1).map(|&s| s as usize - 1).unwrap_or(self.text.len());
        from >= start && to <= end
    }
}

/// What [`View::select`] kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selected {
    None,
    All,
    /// Some segments, copied into the output view.
    Some,
}

/// `/*` or `<!--` anywhere (one memchr2 pass; no substring searcher to build per field).
fn has_comment_marker(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr2_iter(b'/', b'<', b).any(|i| match b[i] {
        b'/' => b.get(i + 1) == Some(&b'*'),
        _ => b.get(i + 1..i + 4) == Some(b"!--".as_slice()),
    })
}

/// Both views of one request, with the per-field decoded text kept for the models.
#[derive(Debug, Default)]
pub struct Views {
    pub plain: View,
    pub decoded: View,
    /// For each field, the decoded+collapsed text, or None when decoding changed nothing.
    pub decoded_fields: Vec<Option<String>>,
    /// Some field still decoded further when `decode_deep`'s round bound stopped it.
    pub decode_rounds_hit: bool,
    /// Some field had base64 candidates left when the per-field segment bounds stopped.
    pub base64_budget_hit: bool,
    /// Text decoded from base64 segments, with the index of the field it came from: the code
    /// detectors read it as well as the pattern scan.
    pub base64_texts: Vec<(usize, String)>,
}

impl Views {
    /// One normalisation pass over every field.
    pub fn build(fields: &Fields) -> Views {
        let mut views = Views::default();
        views.rebuild(fields);
        views
    }

    pub fn rebuild(&mut self, fields: &Fields) {
        self.plain.clear();
        self.decoded.clear();
        self.decoded_fields.clear();
        self.decode_rounds_hit = false;
        self.base64_budget_hit = false;
        self.base64_texts.clear();
        self.plain.text.reserve(fields.text_len() + fields.len());
        self.plain.starts.reserve(fields.len());
        self.plain.field_of_segment.reserve(fields.len());
        self.plain.segment_bytes.reserve(fields.len());
        self.decoded_fields.reserve(fields.len());
        let mut deep = String::new();
        let mut collapsed = String::new();
        let mut base64 = Vec::new();
        for (idx, field) in fields.iter().enumerate() {
            let bytes = ByteSet::of(field.value);
            self.plain.push_known(idx, field.value, bytes);
            let decoded = normalize::may_need_decoding_given(field.value, &bytes) && {
                let outcome = normalize::decode_deep_bounded(field.value, &mut deep);
                self.decode_rounds_hit |= outcome.bound_hit;
                outcome.changed
            };
            let source = if decoded { deep.as_str() } else { field.value };
            // Whitespace and case alone never need a second scan (rules are whitespace-tolerant,
            // and a case-sensitive rule wants the original case); comments do, because they
            // split keywords.
            let may_comment = decoded || bytes.all(b"/*") || bytes.all(b"<!");
            // A value with NBSP or a control byte between its words is read with spaces there
            // (`1\u{a0}UNION\u{a0}SELECT`), and without its zero-width characters, though nothing in
            // it was encoded.
            if decoded || may_comment && has_comment_marker(source) || normalize::collapse::has_odd_spacing(source, &bytes) {
                normalize::collapse(source, &mut collapsed);
                self.decoded.push(idx, &collapsed);
                self.decoded_fields.push(Some(collapsed.clone()));
            } else {
                self.decoded_fields.push(None);
            }
            base64.clear();
            if field.value.len() >= normalize::base64::MIN_SEGMENT {
                self.base64_budget_hit |= normalize::base64_segments(field.value, &mut base64);
            }
            for text in base64.drain(..) {
                self.decoded.push(idx, &text);
                self.base64_texts.push((idx, text));
            }
        }
        self.push_overflow_lines(fields, &mut deep, &mut collapsed);
    }

    /// Fields past the field cap share Overflow chunks, one `name=value` per line, and a rule
    /// anchored at a value's start (`^\s*\$ne`, Shellshock's `() {`) matches only a chunk's
    /// first line: 1,024 padding fields would hide every such payload. Each line's value is
    /// therefore also a segment of its own (decoded too, when decoding changes it), after
    /// every field's, so plain segment `idx` stays field `idx`. The chunk stays scanned whole
    /// as well, for rules that read `name=value`.
    fn push_overflow_lines(&mut self, fields: &Fields, deep: &mut String, collapsed: &mut String) {
        // Overflow chunks only follow the first `max_fields` fields (`Fields::push`): most
        // requests have fewer fields than that and skip this without reading one.
        let cap = fields.limits().max_fields;
        if fields.len() <= cap {
            return;
        }
        for (idx, field) in fields.iter().enumerate().skip(cap).filter(|(_, field)| field.kind == FieldKind::Overflow) {
            for value in crate::overflow_lines::line_values(field.value) {
                // A whole-field line (its `name=` was not plain) is the chunk's own text.
                if value.len() == field.value.len() {
                    continue;
                }
                self.plain.push(idx, value);
                if normalize::may_need_decoding(value) && normalize::decode_deep(value, deep) {
                    normalize::collapse(deep, collapsed);
                    self.decoded.push(idx, collapsed);
                }
            }
        }
    }

    /// The text a model should see for a field: decoded when decoding changed it.
    pub fn model_text<'a>(&'a self, fields: &'a Fields, field: usize) -> &'a str {
        match self.decoded_fields.get(field) {
            Some(Some(text)) => text,
            _ => fields.get(field).map(|f| f.value).unwrap_or(""),
        }
    }

    /// The field's SQL reading for the SQLi model (`normalize::sql_comments`): its decoded
    /// text without `#`/`--`/`/* */` comments and stray IIS percents. None when that reading
    /// is the model text already. The line breaks ending `#`/`--` comments matter, so it is
    /// read from the decoded text before whitespace was collapsed (decoded again here: this
    /// runs only on the model path, for fields whose bytes hold a comment or `%` sign).
    pub fn sql_text(&self, fields: &Fields, field: usize) -> Option<String> {
        let value = fields.get(field)?.value;
        let bytes = self.plain.segment_bytes.get(field).copied().unwrap_or_else(|| ByteSet::of(value));
        // `#`, `-` and `%` written plainly, or behind an encoding (`%23`, `&#35;`, `\x23`).
        if !bytes.any(b"#-%&\\") {
            return None;
        }
        let mut deep = String::new();
        let source = if normalize::may_need_decoding_given(value, &bytes) && normalize::decode_deep(value, &mut deep) {
            deep.as_str()
        } else {
            value
        };
        if !normalize::sql_comments::may_differ(source) {
            return None;
        }
        let mut sql = String::new();
        normalize::sql_comments::sql_reading(source, &mut sql);
        (sql != self.model_text(fields, field).trim()).then_some(sql)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comment_markers() {
        assert!(has_comment_marker("a/**/b"));
        assert!(has_comment_marker("<scr<!-- -->ipt>"));
        assert!(!has_comment_marker("a/b <b> 1<2 /"));
        assert!(!has_comment_marker("<!-"));
    }

    /// The SQL reading undoes the encodings first, keeps the line break that ends a `#`
    /// comment, and is absent where it would repeat the model text.
    #[test]
    fn sql_text_reads_past_encoded_comments() {
        let mut fields = Fields::default();
        fields.push(FieldKind::QueryValue, "id", "1%09union%23x%0A%0Dselect%2D%2D%0A1,2");
        fields.push(FieldKind::QueryValue, "q", "a%nd 1=0/(se%lect 1)");
        fields.push(FieldKind::QueryValue, "d", "2024-01-02 50% off");
        fields.push(FieldKind::QueryValue, "c", "un/**/ion");
        let views = Views::build(&fields);
        assert_eq!(views.sql_text(&fields, 0).as_deref(), Some("1 union select 1,2"));
        assert_eq!(views.sql_text(&fields, 1).as_deref(), Some("and 1=0/(select 1)"));
        assert_eq!(views.sql_text(&fields, 2), None);
        assert_eq!(views.sql_text(&fields, 3), None, "the decoded view already removed the block comment");
    }

    #[test]
    fn offsets_map_back_to_fields() {
        let mut fields = Fields::default();
        fields.push(FieldKind::QueryValue, "a", "first");
        fields.push(FieldKind::QueryValue, "b", "second");
        fields.push(FieldKind::QueryValue, "c", "third");
        let views = Views::build(&fields);
        assert_eq!(views.plain.text, "first\0second\0third");
        assert_eq!(views.plain.field_at(0), 0);
        assert_eq!(views.plain.field_at(4), 0);
        assert_eq!(views.plain.field_at(6), 1);
        assert_eq!(views.plain.field_at(13), 2);
        assert!(views.plain.within_one_field(6, 12));
        assert!(!views.plain.within_one_field(3, 6), "ends on the separator");
        assert!(!views.plain.within_one_field(4, 8));
        assert_eq!(views.plain.segment_text(7), "second");
        assert_eq!(views.plain.segment_text(18), "third");
    }
}
