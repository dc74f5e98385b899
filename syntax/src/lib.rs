//! Code detectors: one small, linear-time tokenizer per attack family, each deciding whether a
//! field's text is *executable syntax* of that family in a data field (a JavaScript expression
//! that reaches a sink, a shell command after de-obfuscation, a PHP call, an OGNL expression),
//! rather than whether it contains a listed payload.
//!
//! The engine (`scoring`) runs every registered [`Check`] on each field's plain text and on its
//! decoded text. A check first rejects on [`ByteSet`] (which bytes occur at all), so a benign
//! field costs a few bit tests per check. Reasons have the pattern rules' format:
//! `<detector slug>:<id>`, for example `xss:js-expression`.

mod base64;
mod bytes;
mod cmd_deobf;
mod compat_fold;
mod crlf;
mod encoding_abuse;
pub mod framing;
pub mod graphql;
mod java;
mod jndi;
pub mod js_lex;
mod js_node;
mod js_string_layer;
mod mail;
mod path_lax;
mod php;
mod php_mention;
mod php_names;
mod prose;
mod proto_pollution;
mod protocol;
mod redirect;
mod registry;
mod restricted_file;
mod rfi;
mod scanner;
mod session_fixation;
mod shell_commands;
mod shell_deobf;
mod shell_expand;
mod shell_glob;
mod shell_percent;
pub mod shell_unix;
pub mod shell_windows;
mod shell_windows_args;
mod shell_windows_start;
mod smuggled_request;
mod ssi;
mod system_path;
mod trigger;
pub mod xss_html;
pub mod xss_js;

pub use bytes::ByteSet;
pub use jndi::has_log4j_lookup;
pub use registry::{checks, triggers as registry_triggers};
pub use trigger::Trigger;

/// Where a field came from in the request (mirrors the engine's field kinds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Path,
    QueryName,
    QueryValue,
    /// A JSON key, form name, multipart part name or filename, XML attribute name.
    BodyKey,
    /// A JSON string leaf, form value, multipart part body, XML text or attribute value.
    BodyValue,
    /// A body that is not structured: scanned whole.
    BodyRaw,
    XmlDoctype,
    /// A header value; [`Input::name`] is the lower-cased header name.
    Header,
    /// A cookie value; [`Input::name`] is the cookie name.
    Cookie,
    /// Text recovered from a base64 segment of another field.
    Base64,
    /// Fields past the count cap, joined one `name=value` per line.
    Overflow,
}

/// One field's text as a check sees it.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    pub text: &'a str,
    pub place: Place,
    /// Parameter, key, header (lower-case) or cookie name; may be empty.
    pub name: &'a str,
    /// The request's method as sent (`GET`, `POST`, ...).
    pub method: &'a str,
    /// The bytes that occur in `text`.
    pub bytes: ByteSet,
    /// `text` is the decoded view of the field (percent, entities, escapes undone; comments
    /// removed and whitespace collapsed), not the value as the application received it.
    pub decoded: bool,
    /// The sensitivity level in force (1..=4): a check reports only findings of a level at or
    /// below it.
    pub sensitivity: u8,
}

impl<'a> Input<'a> {
    /// An input for `text` with the byte set computed; the other fields take neutral values
    /// (a query value of a GET at sensitivity 1) and can be set by the caller.
    pub fn new(text: &'a str) -> Self {
        Input { text, place: Place::QueryValue, name: "", method: "GET", bytes: ByteSet::of(text), decoded: false, sensitivity: 1 }
    }
}

/// What a check found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Finding {
    /// `<detector slug>:<id>`, static so scoring never formats strings.
    pub reason: &'static str,
    /// 0.0..=1.0, compared with the kill threshold like a pattern rule's score.
    pub score: f32,
    /// Lowest sensitivity level at which this finding counts (1 = default).
    pub level: u8,
}

impl Finding {
    /// The detector slug: the reason up to its first `:`.
    pub fn detector(&self) -> &'static str {
        self.reason.split(':').next().unwrap_or(self.reason)
    }
}

/// One family's code detector. Implementations must be linear in the input's length (no
/// backtracking, bounded look-back) and must never panic on any input.
pub trait Check: Send + Sync {
    /// The detector slug this check scores for.
    fn detector(&self) -> &'static str;
    /// The strongest finding of a level at or below `input.sensitivity`, if any.
    fn inspect(&self, input: &Input<'_>) -> Option<Finding>;
    /// A precondition the caller tests before `inspect` (read once, at registration): an
    /// input it refuses must never produce a finding.
    fn trigger(&self) -> Trigger {
        Trigger::Always
    }
}

/// Runs every registered check whose trigger admits the input; the best finding per
/// detector slug is what the engine keeps, so this returns them all.
pub fn inspect_all(input: &Input<'_>) -> impl Iterator<Item = Finding> {
    let mut all = Vec::new();
    for_each_finding(input, |f| all.push(f));
    all.into_iter()
}

/// [`inspect_all`] without collecting: what the engine calls on every field.
pub fn for_each_finding(input: &Input<'_>, mut found: impl FnMut(Finding)) {
    let all = checks();
    // Registry order, as before: the admitted checks' bits from the lowest.
    let mut admitted = registry::trigger_table().admitted(input);
    while admitted != 0 {
        let k = admitted.trailing_zeros() as usize;
        admitted &= admitted - 1;
        let Some(check) = all.get(k) else { break };
        if let Some(finding) = check.inspect(input).filter(|f| f.level <= input.sensitivity) {
            found(finding);
        }
    }
}
