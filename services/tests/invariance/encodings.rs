//! What an attacker does to a payload before placing it; the application (or a component in
//! front of it) undoes it. The placement then adds only the escaping its syntax demands.

use base64::Engine as _;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Encoding {
    Plain,
    /// Every byte that is not an ASCII letter or digit as %XX.
    Url,
    /// Url applied twice (%253C): the classic double-decode bypass.
    DoubleUrl,
    /// Standard base64 of the bytes.
    Base64,
    /// Every non-alphanumeric character as a JSON `\u00XX` escape (JSON placements only: the
    /// placement inserts it verbatim, the JSON parser decodes it).
    JsonU,
    /// Every non-alphanumeric character as an HTML/XML numeric entity `&#xXX;`.
    Html,
}

impl Encoding {
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Plain => "plain",
            Encoding::Url => "url",
            Encoding::DoubleUrl => "double-url",
            Encoding::Base64 => "base64",
            Encoding::JsonU => "json-u",
            Encoding::Html => "html",
        }
    }

    pub fn apply(self, text: &str) -> String {
        match self {
            Encoding::Plain => text.to_string(),
            Encoding::Url => percent_all(text),
            Encoding::DoubleUrl => percent_all(&percent_all(text)),
            Encoding::Base64 => base64::engine::general_purpose::STANDARD.encode(text),
            Encoding::JsonU => escape_chars(text, |c| format!("\\u{:04x}", c as u32)),
            Encoding::Html => escape_chars(text, |c| format!("&#x{:x};", c as u32)),
        }
    }
}

fn percent_all(text: &str) -> String {
    text.bytes().map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") }).collect()
}

/// Non-alphanumeric characters through `escape` (all payloads are ASCII, so `\u00XX` is exact).
fn escape_chars(text: &str, escape: impl Fn(char) -> String) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_string() } else { escape(c) }).collect()
}

/// Percent-encodes the bytes `keep` refuses (transport escaping, not an attacker's encoding).
pub fn percent_escape(text: &str, keep: impl Fn(u8) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if keep(b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What may stay literal in a query or form value, a path segment or a cookie: visible ASCII
/// minus the characters that would end the value or that HTTP/1 request lines refuse. `%`
/// stays, so an encoded payload reaches the application as the attacker wrote it.
pub fn uri_value_char(b: u8) -> bool {
    b.is_ascii_graphic() && !b"\"#&+<>\\^`{|}".contains(&b)
}

pub fn path_segment_char(b: u8) -> bool {
    uri_value_char(b) && b != b'/' && b != b'?'
}

pub fn cookie_value_char(b: u8) -> bool {
    uri_value_char(b) && b != b';' && b != b','
}

/// RFC 6265 cookie-name token characters.
pub fn cookie_name_char(b: u8) -> bool {
    b.is_ascii_graphic() && !b"()<>@,;:\\\"/[]?={}".contains(&b)
}

/// Header values: visible ASCII and spaces; control bytes would be refused on the wire.
pub fn header_char(b: u8) -> bool {
    b.is_ascii_graphic() || b == b' '
}

pub fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
