//! The parsed request as a flat list of fields over one string arena.
//!
//! Every detector looks at fields, never at the raw request text: a field knows where
//! it came from (query value, JSON leaf, header...) so reasons and model gating can use it.

use std::ops::Range;

/// Where a field's text came from in the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldKind {
    /// The whole decoded path (`/a/b/c`).
    Path,
    QueryName,
    QueryValue,
    /// A JSON object key, form name, multipart part name or filename, XML attribute name.
    BodyKey,
    /// A JSON string leaf, form value, multipart part body, XML text or attribute value.
    BodyValue,
    /// A body that is not structured (or could not be parsed): scanned whole.
    BodyRaw,
    /// An XML prolog / DOCTYPE section (where XXE lives).
    XmlDoctype,
    /// A header value; the field name is the lower-cased header name.
    Header,
    /// A cookie value; the field name is the cookie name.
    Cookie,
    /// Text recovered from a base64 segment of another field.
    Base64,
}

impl FieldKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FieldKind::Path => "path",
            FieldKind::QueryName => "query-name",
            FieldKind::QueryValue => "query",
            FieldKind::BodyKey => "body-key",
            FieldKind::BodyValue => "body",
            FieldKind::BodyRaw => "body",
            FieldKind::XmlDoctype => "xml-doctype",
            FieldKind::Header => "header",
            FieldKind::Cookie => "cookie",
            FieldKind::Base64 => "base64",
        }
    }
}

#[derive(Clone, Debug)]
pub struct FieldSpan {
    pub kind: FieldKind,
    /// Parameter, key or header name (may be empty).
    pub name: Range<u32>,
    pub value: Range<u32>,
}

/// Limits that keep parsing linear and bounded whatever the input.
#[derive(Clone, Debug)]
pub struct FieldLimits {
    /// Most fields kept; later ones are merged into one trailing BodyRaw field.
    pub max_fields: usize,
    /// Deepest JSON/XML/multipart nesting followed.
    pub max_depth: usize,
    /// Total bytes stored in the arena.
    pub max_arena_bytes: usize,
}

impl Default for FieldLimits {
    fn default() -> Self {
        FieldLimits { max_fields: 1024, max_depth: 32, max_arena_bytes: 4 << 20 }
    }
}

/// Collects fields; body parsers push into it.
#[derive(Debug, Default)]
pub struct Fields {
    arena: String,
    spans: Vec<FieldSpan>,
    limits: FieldLimits,
    /// Set when a limit cut something off; the engine reports it.
    pub truncated: bool,
}

impl Fields {
    pub fn with_limits(limits: FieldLimits) -> Self {
        Fields { arena: String::new(), spans: Vec::new(), limits, truncated: false }
    }

    /// Reserves arena room for about `bytes` of field text (a request's length is a good guess).
    pub fn reserve(&mut self, bytes: usize) {
        self.arena.reserve(bytes.min(self.limits.max_arena_bytes));
        self.spans.reserve(16);
    }

    /// Total bytes of field values and names held.
    pub fn text_len(&self) -> usize {
        self.arena.len()
    }

    pub fn limits(&self) -> &FieldLimits {
        &self.limits
    }

    /// Adds a field; empty values are skipped (nothing to score).
    pub fn push(&mut self, kind: FieldKind, name: &str, value: &str) {
        if value.is_empty() && name.is_empty() {
            return;
        }
        if self.spans.len() >= self.limits.max_fields
            || self.arena.len() + name.len() + value.len() > self.limits.max_arena_bytes
        {
            self.truncated = true;
            return;
        }
        let name_start = self.arena.len() as u32;
        self.arena.push_str(name);
        let value_start = self.arena.len() as u32;
        self.arena.push_str(value);
        let end = self.arena.len() as u32;
        self.spans.push(FieldSpan { kind, name: name_start..value_start, value: value_start..end });
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = Field<'_>> {
        self.spans.iter().map(move |s| self.field_of(s))
    }

    pub fn get(&self, idx: usize) -> Option<Field<'_>> {
        self.spans.get(idx).map(|s| self.field_of(s))
    }

    fn field_of<'a>(&'a self, s: &FieldSpan) -> Field<'a> {
        Field {
            kind: s.kind,
            name: &self.arena[s.name.start as usize..s.name.end as usize],
            value: &self.arena[s.value.start as usize..s.value.end as usize],
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field<'a> {
    pub kind: FieldKind,
    pub name: &'a str,
    pub value: &'a str,
}
