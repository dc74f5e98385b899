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
    /// Fields past the count cap, joined (`name=value`, one per line) into chunks of about
    /// [`OVERFLOW_CHUNK_BYTES`]: still scanned by every detector, at a bounded cost per field.
    Overflow,
}

/// The syntax checks' name for the same place (kept as its own enum there so the `syntax` crate
/// does not depend on the engine).
impl From<FieldKind> for syntax::Place {
    fn from(kind: FieldKind) -> Self {
        use syntax::Place;
        match kind {
            FieldKind::Path => Place::Path,
            FieldKind::QueryName => Place::QueryName,
            FieldKind::QueryValue => Place::QueryValue,
            FieldKind::BodyKey => Place::BodyKey,
            FieldKind::BodyValue => Place::BodyValue,
            FieldKind::BodyRaw => Place::BodyRaw,
            FieldKind::XmlDoctype => Place::XmlDoctype,
            FieldKind::Header => Place::Header,
            FieldKind::Cookie => Place::Cookie,
            FieldKind::Base64 => Place::Base64,
            FieldKind::Overflow => Place::Overflow,
        }
    }
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
            FieldKind::Overflow => "overflow",
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
    /// Most fields kept one per span; later ones are joined into trailing Overflow chunks.
    pub max_fields: usize,
    /// Deepest JSON/XML/multipart nesting followed.
    pub max_depth: usize,
    /// Total bytes stored in the arena; text past it is not scored and the verdict is
    /// marked partial (`arena-cap`).
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
    /// Set when the arena cap cut text off: the engine reports it as the `arena-cap` partial.
    pub arena_capped: bool,
}

/// Target size of one Overflow chunk: large enough that padding costs few spans, small
/// enough that per-field work (decoding, models) stays bounded.
pub const OVERFLOW_CHUNK_BYTES: usize = 4096;

/// Bytes repeated between consecutive chunks of one long overflowing value, so a payload
/// cut by a chunk edge is still whole in one of them.
pub const OVERFLOW_OVERLAP_BYTES: usize = 512;

impl Fields {
    pub fn with_limits(limits: FieldLimits) -> Self {
        Fields { arena: String::new(), spans: Vec::new(), limits, arena_capped: false }
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

    /// Adds a field; empty values are skipped (nothing to score). Past the count cap the
    /// field joins the trailing Overflow chunks; past the arena cap what fits is kept and
    /// `arena_capped` is set.
    pub fn push(&mut self, kind: FieldKind, name: &str, value: &str) {
        if value.is_empty() && name.is_empty() {
            return;
        }
        if self.spans.len() >= self.limits.max_fields {
            self.push_overflow(name, value);
            return;
        }
        let room = self.arena_room();
        if name.len() + value.len() > room {
            self.arena_capped = true;
            if name.len() >= room {
                return;
            }
            let value = prefix_within(value, room - name.len());
            self.push_span(kind, name, value);
            return;
        }
        self.push_span(kind, name, value);
    }

    fn arena_room(&self) -> usize {
        self.limits.max_arena_bytes.saturating_sub(self.arena.len())
    }

    fn push_span(&mut self, kind: FieldKind, name: &str, value: &str) {
        let name_start = self.arena.len() as u32;
        self.arena.push_str(name);
        let value_start = self.arena.len() as u32;
        self.arena.push_str(value);
        let end = self.arena.len() as u32;
        self.spans.push(FieldSpan { kind, name: name_start..value_start, value: value_start..end });
    }

    /// Appends `name=value` (or `value`) to the last Overflow chunk, opening new chunks as
    /// they fill; a value longer than a chunk is cut into overlapping pieces.
    fn push_overflow(&mut self, name: &str, value: &str) {
        let mut piece = String::with_capacity(name.len() + 1 + value.len());
        if !name.is_empty() {
            piece.push_str(name);
            piece.push('=');
        }
        piece.push_str(value);
        let mut rest = piece.as_str();
        let mut first = true;
        while !rest.is_empty() {
            let room = self.arena_room();
            if room == 0 {
                self.arena_capped = true;
                return;
            }
            let open = self.open_overflow_chunk_len();
            // Join the open chunk when the piece fits in it; otherwise start a new chunk.
            if first && open.is_some_and(|len| len + 1 + rest.len() <= OVERFLOW_CHUNK_BYTES) && rest.len() < room {
                self.arena.push('\n');
                self.arena.push_str(rest);
                if let Some(span) = self.spans.last_mut() {
                    span.value.end = self.arena.len() as u32;
                }
                return;
            }
            let take = prefix_within(rest, OVERFLOW_CHUNK_BYTES.min(room));
            if take.is_empty() {
                self.arena_capped = true;
                return;
            }
            self.push_span(FieldKind::Overflow, "", take);
            if take.len() == rest.len() {
                return;
            }
            if take.len() == room {
                self.arena_capped = true;
                return;
            }
            // Step back by the overlap so a payload across the edge is whole in the next piece.
            let mut next = take.len().saturating_sub(OVERFLOW_OVERLAP_BYTES).max(1);
            while !rest.is_char_boundary(next) {
                next += 1;
            }
            rest = &rest[next..];
            first = false;
        }
    }

    /// Length of the last span when it is an Overflow chunk that ends the arena.
    fn open_overflow_chunk_len(&self) -> Option<usize> {
        let span = self.spans.last()?;
        (span.kind == FieldKind::Overflow && span.value.end as usize == self.arena.len())
            .then(|| (span.value.end - span.value.start) as usize)
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

/// The longest prefix of `text` of at most `max` bytes that ends on a char boundary.
fn prefix_within(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field<'a> {
    pub kind: FieldKind,
    pub name: &'a str,
    pub value: &'a str,
}
