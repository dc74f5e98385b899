//! Protobuf messages without a schema: the wire format is walked (varint, 64-bit,
//! length-delimited, 32-bit; groups are refused) and every text a length-delimited field may
//! hold becomes a leaf named by its field-number path (`/1/3`), for the gRPC body decoder.
//!
//! Without the `.proto` file two things are unknowable, and the walker errs towards scoring:
//! - field names: a leaf is named by field numbers only, so policy exclusions name `grpc:/1/3`;
//! - whether a length-delimited field is a nested message, a string or bytes: the same bytes
//!   can be all three. A value that parses completely as a message is walked into; a value that
//!   is also mostly printable UTF-8 is scored as a string as well, so text crafted to parse as
//!   a message cannot hide in it. Bytes that are neither yield their printable runs.
//!
//! Numbers (varint and fixed fields) carry no text and are skipped. Nesting is bounded by
//! [`WalkLimits::max_depth`] and the work by [`WalkLimits::max_fields`]; malformed input is an
//! error, never a panic.

use super::binary::looks_binary;

/// Bounds on one walk.
#[derive(Clone, Copy, Debug)]
pub struct WalkLimits {
    /// Deepest nested message walked into (the top level is depth 0).
    pub max_depth: usize,
    /// Most fields decoded, nested-message attempts included: bounds the work.
    pub max_fields: usize,
}

impl Default for WalkLimits {
    fn default() -> Self {
        WalkLimits { max_depth: 16, max_fields: 64 * 1024 }
    }
}

/// Why bytes are not a protobuf message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("the message ends inside a field")]
    Truncated,
    #[error("a varint is longer than 10 bytes")]
    LongVarint,
    #[error("field number 0 or above 2^29-1")]
    BadFieldNumber,
    #[error("wire type {0} (groups and unknown types are refused)")]
    BadWireType(u8),
}

/// One field as it is on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireValue<'a> {
    /// Varint, 64-bit or 32-bit: a number.
    Number,
    LengthDelimited(&'a [u8]),
}

/// A text found in a message: its field-number path and the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leaf {
    /// `/1/3`: field 3 of the message in field 1.
    pub path: String,
    pub text: String,
}

/// What a walk found, and whether a bound stopped it.
#[derive(Debug, Default)]
pub struct Walk {
    pub leaves: Vec<Leaf>,
    /// [`WalkLimits::max_fields`] was reached: later fields were not looked at.
    pub field_cap: bool,
}

/// Shortest printable run kept from bytes that are neither a message nor text.
const MIN_PRINTABLE_RUN: usize = 4;

/// Reads a varint at `*at`.
fn varint(bytes: &[u8], at: &mut usize) -> Result<u64, WireError> {
    let mut value = 0u64;
    for shift in 0..10 {
        let byte = *bytes.get(*at).ok_or(WireError::Truncated)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << (shift * 7);
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(WireError::LongVarint)
}

/// Every field of `bytes` as `(field number, value)`, or why `bytes` is not a message.
/// `budget` counts down one per field.
pub fn fields<'a>(bytes: &'a [u8], budget: &mut usize) -> Result<Vec<(u32, WireValue<'a>)>, WireError> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() && *budget > 0 {
        *budget -= 1;
        let key = varint(bytes, &mut at)?;
        let number = u32::try_from(key >> 3).ok().filter(|n| (1..(1 << 29)).contains(n)).ok_or(WireError::BadFieldNumber)?;
        let value = match (key & 7) as u8 {
            0 => varint(bytes, &mut at).map(|_| WireValue::Number)?,
            1 => skip(bytes, &mut at, 8).map(|_| WireValue::Number)?,
            5 => skip(bytes, &mut at, 4).map(|_| WireValue::Number)?,
            2 => {
                let len = usize::try_from(varint(bytes, &mut at)?).map_err(|_| WireError::Truncated)?;
                WireValue::LengthDelimited(skip(bytes, &mut at, len)?)
            }
            other => return Err(WireError::BadWireType(other)),
        };
        out.push((number, value));
    }
    Ok(out)
}

fn skip<'a>(bytes: &'a [u8], at: &mut usize, len: usize) -> Result<&'a [u8], WireError> {
    let end = at.checked_add(len).filter(|&end| end <= bytes.len()).ok_or(WireError::Truncated)?;
    let slice = &bytes[*at..end];
    *at = end;
    Ok(slice)
}

/// Walks a top-level message. A message that does not parse is an error: the caller scores its
/// bytes another way.
pub fn walk(message: &[u8], limits: WalkLimits) -> Result<Walk, WireError> {
    let mut budget = limits.max_fields;
    let top = fields(message, &mut budget)?;
    let mut walk = Walk::default();
    let mut path = String::new();
    walk_fields(&top, &mut path, 0, limits, &mut budget, &mut walk);
    walk.field_cap = budget == 0;
    Ok(walk)
}

fn walk_fields(
    fields_here: &[(u32, WireValue<'_>)],
    path: &mut String,
    depth: usize,
    limits: WalkLimits,
    budget: &mut usize,
    walk: &mut Walk,
) {
    for &(number, value) in fields_here {
        let WireValue::LengthDelimited(bytes) = value else { continue };
        if bytes.is_empty() {
            continue;
        }
        let parent = path.len();
        path.push('/');
        path.push_str(&number.to_string());
        length_delimited(bytes, path, depth, limits, budget, walk);
        path.truncate(parent);
    }
}

/// A length-delimited value: nested message, string, or bytes (see the module comment).
fn length_delimited(bytes: &[u8], path: &mut String, depth: usize, limits: WalkLimits, budget: &mut usize, walk: &mut Walk) {
    let nested = if depth < limits.max_depth {
        // A failed attempt costs what it decoded too: the bound is on work, not on results.
        let mut trial = *budget;
        let parsed = fields(bytes, &mut trial);
        *budget = trial;
        // A parse the budget cut short is not known to be a message.
        parsed.ok().filter(|_| trial > 0)
    } else {
        None
    };
    let text = std::str::from_utf8(bytes).ok();
    match (&nested, text) {
        (Some(_), Some(text)) if !looks_binary(text) => walk.leaves.push(Leaf { path: path.clone(), text: text.to_string() }),
        (Some(_), _) => {}
        (None, Some(text)) => walk.leaves.push(Leaf { path: path.clone(), text: text.to_string() }),
        (None, None) => {
            let runs = printable_runs(bytes);
            if !runs.is_empty() {
                walk.leaves.push(Leaf { path: path.clone(), text: runs });
            }
        }
    }
    if let Some(nested) = nested {
        walk_fields(&nested, path, depth + 1, limits, budget, walk);
    }
}

/// The runs of printable ASCII (tab, CR and LF included) of at least [`MIN_PRINTABLE_RUN`]
/// bytes, one per line.
pub fn printable_runs(bytes: &[u8]) -> String {
    let mut out = String::new();
    for run in bytes.split(|&b| !(b == b'\t' || b == b'\r' || b == b'\n' || (0x20..0x7f).contains(&b))) {
        if run.len() >= MIN_PRINTABLE_RUN {
            if !out.is_empty() {
                out.push('\n');
            }
            out.extend(run.iter().map(|&b| char::from(b)));
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Encodes a length-delimited field (test messages are built by hand: no schema here).
    pub(crate) fn field(number: u32, bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint(&mut out, u64::from(number) << 3 | 2);
        put_varint(&mut out, bytes.len() as u64);
        out.extend_from_slice(bytes);
        out
    }

    pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn leaves(message: &[u8]) -> Vec<(String, String)> {
        walk(message, WalkLimits::default()).unwrap().leaves.into_iter().map(|l| (l.path, l.text)).collect()
    }

    #[test]
    fn strings_nested_messages_and_numbers() {
        let inner = [field(1, b"' OR 1=1 --"), field(2, b"ok")].concat();
        let mut message = field(1, b"alice");
        put_varint(&mut message, 2 << 3);
        put_varint(&mut message, 300);
        message.extend([(3 << 3 | 5) as u8, 1, 2, 3, 4]);
        message.extend([(4 << 3 | 1) as u8, 1, 2, 3, 4, 5, 6, 7, 8]);
        message.extend(field(5, &inner));
        let found = leaves(&message);
        assert!(found.contains(&("/1".into(), "alice".into())), "{found:?}");
        assert!(found.contains(&("/5/1".into(), "' OR 1=1 --".into())), "{found:?}");
        assert!(found.contains(&("/5/2".into(), "ok".into())), "{found:?}");
        assert!(!found.iter().any(|(path, _)| path == "/5"), "a binary-looking nested message is not also a string: {found:?}");
    }

    #[test]
    fn text_that_also_parses_as_a_message_is_still_scored_as_text() {
        // "xx" is field 15 varint 120: a valid message, and printable text.
        let text = b"xxxxxxxx";
        assert!(fields(text, &mut 100).is_ok());
        assert_eq!(leaves(&field(1, text)), [("/1".to_string(), "xxxxxxxx".to_string())]);
    }

    #[test]
    fn bytes_yield_their_printable_runs() {
        let blob = [&[0xff, 0xfe, 0x00][..], b"<script>", &[0x80, 0x81], b"ab", &[0xc3]].concat();
        assert_eq!(leaves(&field(7, &blob)), [("/7".to_string(), "<script>".to_string())]);
    }

    #[test]
    fn malformed_input_is_an_error_never_a_panic() {
        assert_eq!(walk(&[0x0a, 0x05, b'a'], WalkLimits::default()).unwrap_err(), WireError::Truncated);
        assert_eq!(walk(&[0x0b], WalkLimits::default()).unwrap_err(), WireError::BadWireType(3), "groups are refused");
        assert_eq!(walk(&[0x02, 0x00], WalkLimits::default()).unwrap_err(), WireError::BadFieldNumber);
        assert_eq!(
            walk(&[0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], WalkLimits::default()).unwrap_err(),
            WireError::LongVarint
        );
        let huge_len = [0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(walk(&huge_len, WalkLimits::default()).unwrap_err(), WireError::Truncated);
        for len in 0..64u8 {
            let noise: Vec<u8> = (0..len).map(|i| i.wrapping_mul(97).wrapping_add(len)).collect();
            let _ = walk(&noise, WalkLimits::default());
        }
    }

    #[test]
    fn depth_and_field_bounds_hold() {
        let mut message = field(1, b"deep <script>");
        for _ in 0..40 {
            message = field(2, &message);
        }
        let walk = walk(&message, WalkLimits { max_depth: 8, max_fields: 1000 }).unwrap();
        assert!(walk.leaves.iter().all(|l| l.path.matches('/').count() <= 9), "{:?}", walk.leaves);
        assert!(!walk.leaves.is_empty(), "past the depth bound the value is scored as bytes/text");
        let many: Vec<u8> = (0..100).flat_map(|_| field(1, b"x")).collect();
        let capped = super::walk(&many, WalkLimits { max_depth: 8, max_fields: 10 }).unwrap();
        assert!(capped.field_cap && capped.leaves.len() <= 10);
    }
}
