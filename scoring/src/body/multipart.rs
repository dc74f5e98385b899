//! `multipart/*` bodies: each part's `name` and `filename` are `BodyKey` fields (plain names
//! skipped, filenames always kept, named `filename`), and each part body is a `BodyValue` named
//! by the part name, or is parsed recursively (bounded by `FieldLimits::max_depth`) when the
//! part has a structured Content-Type of its own (JSON, XML, form, nested multipart).
//!
//! A part's Content-Transfer-Encoding (quoted-printable, base64) and charset are undone first
//! (`part_encoding`): the value scored is the one the application reads.
//!
//! The boundary comes from the Content-Type's `boundary=` parameter or is sniffed from the
//! first line (`--boundary`). Delimiters only count at the start of a line; LF-only line
//! endings are accepted. A part without a header/body separator, a non-blank preamble or
//! epilogue are pushed as `BodyRaw` so nothing is lost.

use super::part_encoding::{decode_part, PartEncoding};
use super::{content_type_kind, is_plain_name, parse_body_at, raw};
use crate::fields::{FieldKind, Fields};
use crate::transport::charset::charset_param;

/// Longest boundary accepted (RFC 2046 says 70).
const MAX_BOUNDARY: usize = 200;

/// Parses a multipart body; returns false (nothing pushed) when no boundary or no delimiter
/// line is found.
pub fn parse_multipart(body: &str, content_type: Option<&str>, fields: &mut Fields) -> bool {
    parse_multipart_at(body, content_type, fields, 0)
}

/// The `boundary` parameter of a Content-Type value.
pub fn boundary_param(content_type: &str) -> Option<&str> {
    for param in content_type.split(';').skip(1) {
        let Some((name, value)) = param.split_once('=') else { continue };
        if name.trim().eq_ignore_ascii_case("boundary") {
            let value = value.trim();
            let value = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value);
            if valid_boundary(value) {
                return Some(value);
            }
        }
    }
    None
}

fn valid_boundary(b: &str) -> bool {
    !b.is_empty() && b.len() <= MAX_BOUNDARY && !b.bytes().any(|c| c < b' ' || c == 0x7f)
}

/// The boundary named by a body whose first non-empty line is `--boundary`.
pub fn sniff_boundary(body: &str) -> Option<&str> {
    let body = body.trim_start_matches(['\r', '\n']);
    let line = body.split('\n').next()?;
    let line = line.strip_suffix('\r').unwrap_or(line);
    let boundary = line.strip_prefix("--")?.trim_end();
    valid_boundary(boundary).then_some(boundary)
}

/// [`parse_multipart`] for a body nested `depth` levels deep.
pub(crate) fn parse_multipart_at(body: &str, content_type: Option<&str>, fields: &mut Fields, depth: usize) -> bool {
    let Some(boundary) = content_type.and_then(boundary_param).or_else(|| sniff_boundary(body)) else {
        return false;
    };
    let mut delim = String::with_capacity(boundary.len() + 2);
    delim.push_str("--");
    delim.push_str(boundary);
    let bytes = body.as_bytes();
    let finder = memchr::memmem::Finder::new(delim.as_bytes());
    // Delimiters at line starts, as (start, end-of-delimiter).
    let mut delims = finder.find_iter(bytes).filter(|&p| p == 0 || bytes[p - 1] == b'\n').map(|p| (p, p + delim.len())).peekable();
    let Some(&(first, _)) = delims.peek() else { return false };
    push_if_not_blank(body.get(..first).unwrap_or(""), fields);
    while let Some((_, after)) = delims.next() {
        let rest = body.get(after..).unwrap_or("");
        if rest.starts_with("--") {
            // Closing delimiter: whatever follows is the epilogue.
            push_if_not_blank(rest.get(2..).unwrap_or(""), fields);
            break;
        }
        // Skip transport padding up to the end of the delimiter line.
        let start = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(j) => after + j + 1,
            None => body.len(),
        };
        let end = match delims.peek() {
            Some(&(next, _)) => next,
            None => body.len(),
        };
        let part = body.get(start..end.max(start)).unwrap_or("");
        let part = part.strip_suffix('\n').map_or(part, |p| p.strip_suffix('\r').unwrap_or(p));
        parse_part(part, fields, depth);
    }
    true
}

fn push_if_not_blank(text: &str, fields: &mut Fields) {
    if !text.trim().is_empty() {
        raw::push_raw(text, fields);
    }
}

/// One part: headers, blank line, content.
fn parse_part(part: &str, fields: &mut Fields, depth: usize) {
    if part.is_empty() {
        return;
    }
    let (headers, content) = if let Some(content) = part.strip_prefix("\r\n") {
        ("", content)
    } else if let Some(content) = part.strip_prefix('\n') {
        ("", content)
    } else {
        let crlf = memchr::memmem::find(part.as_bytes(), b"\r\n\r\n").map(|i| (i, 4));
        let lf = memchr::memmem::find(part.as_bytes(), b"\n\n").map(|i| (i, 2));
        let sep = match (crlf, lf) {
            (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
            (a, b) => a.or(b),
        };
        match sep {
            Some((i, n)) => (part.get(..i).unwrap_or(""), part.get(i + n..).unwrap_or("")),
            None => {
                raw::push_raw(part, fields);
                return;
            }
        }
    };
    let mut name = "";
    let mut part_type = None;
    let mut transfer_encoding = None;
    for line in headers.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let Some((hname, value)) = line.split_once(':') else { continue };
        let hname = hname.trim();
        if hname.eq_ignore_ascii_case("content-disposition") {
            for (pname, pvalue) in disposition_params(value) {
                if pname.eq_ignore_ascii_case("name") {
                    name = pvalue;
                } else if pname.eq_ignore_ascii_case("filename") || pname.eq_ignore_ascii_case("filename*") {
                    fields.push(FieldKind::BodyKey, "filename", pvalue);
                }
            }
        } else if hname.eq_ignore_ascii_case("content-type") {
            part_type = Some(value.trim());
        } else if hname.eq_ignore_ascii_case("content-transfer-encoding") {
            transfer_encoding = Some(value);
        }
    }
    if !name.is_empty() && !is_plain_name(name) {
        fields.push(FieldKind::BodyKey, "", name);
    }
    if content.is_empty() {
        return;
    }
    let charset = part_type.and_then(charset_param);
    let decoded = decode_part(content, PartEncoding { transfer_encoding, charset: charset.as_deref() });
    let content = decoded.as_deref().unwrap_or(content);
    if part_type.and_then(content_type_kind).is_some() {
        parse_body_at(content, part_type, fields, depth + 1);
    } else {
        fields.push(FieldKind::BodyValue, name, content);
    }
}

/// `form-data; name="a"; filename="b;c.php"` → [("name", "a"), ("filename", "b;c.php")].
/// Quoted values may contain `;` and backslash-escaped quotes (kept as written).
fn disposition_params(value: &str) -> Vec<(&str, &str)> {
    let b = value.as_bytes();
    let mut params = Vec::new();
    let mut i = 0;
    while i < b.len() {
        // Skip to the next parameter.
        while i < b.len() && (b[i] == b';' || b[i].is_ascii_whitespace()) {
            i += 1;
        }
        let name_start = i;
        while i < b.len() && b[i] != b'=' && b[i] != b';' {
            i += 1;
        }
        let pname = value.get(name_start..i).unwrap_or("").trim();
        if i >= b.len() || b[i] == b';' {
            continue; // a bare token such as `form-data`
        }
        i += 1; // '='
        while i < b.len() && b[i] == b' ' {
            i += 1;
        }
        let pvalue = if b.get(i) == Some(&b'"') {
            let start = i + 1;
            i = start;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            let end = i.min(b.len());
            i = end + 1;
            value.get(start..end).unwrap_or("")
        } else {
            let start = i;
            while i < b.len() && b[i] != b';' {
                i += 1;
            }
            value.get(start..i).unwrap_or("").trim()
        };
        params.push((pname, pvalue));
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::{Field, FieldLimits};

    fn parse(body: &str, ct: Option<&str>) -> (bool, Vec<(FieldKind, String, String)>) {
        let mut fields = Fields::with_limits(FieldLimits::default());
        let ok = parse_multipart(body, ct, &mut fields);
        let v = fields.iter().map(|f: Field<'_>| (f.kind, f.name.to_string(), f.value.to_string())).collect();
        (ok, v)
    }

    fn field(kind: FieldKind, name: &str, value: &str) -> (FieldKind, String, String) {
        (kind, name.to_string(), value.to_string())
    }

    const BODY: &str = "--AaB03x\r\n\
        Content-Disposition: form-data; name=\"comment\"\r\n\r\n\
        <script>alert(1)</script>\r\n\
        --AaB03x\r\n\
        Content-Disposition: form-data; name=\"file\"; filename=\"../../shell;.php\"\r\n\
        Content-Type: application/octet-stream\r\n\r\n\
        <?php system($_GET['c']); ?>\r\n\
        --AaB03x\r\n\
        Content-Disposition: form-data; name=\"meta data\"\r\n\
        Content-Type: application/json\r\n\r\n\
        {\"q\":\"1' or '1'='1\"}\r\n\
        --AaB03x--\r\n";

    #[test]
    fn parts_names_filenames_and_nested_json() {
        let (ok, v) = parse(BODY, Some("multipart/form-data; boundary=AaB03x"));
        assert!(ok);
        assert!(v.contains(&field(FieldKind::BodyValue, "comment", "<script>alert(1)</script>")));
        assert!(v.contains(&field(FieldKind::BodyKey, "filename", "../../shell;.php")));
        assert!(v.contains(&field(FieldKind::BodyValue, "file", "<?php system($_GET['c']); ?>")));
        assert!(v.contains(&field(FieldKind::BodyKey, "", "meta data")));
        assert!(v.contains(&field(FieldKind::BodyValue, "q", "1' or '1'='1")));
        assert!(!v.iter().any(|f| f.0 == FieldKind::BodyRaw), "{v:?}");
    }

    #[test]
    fn sniffed_boundary_quoted_param_and_lf_endings() {
        let (ok, v) = parse(BODY, None);
        assert!(ok && v.contains(&field(FieldKind::BodyValue, "comment", "<script>alert(1)</script>")));
        let lf = "--b\nContent-Disposition: form-data; name=a\n\nx\n--b--";
        let (ok, v) = parse(lf, Some("multipart/form-data; boundary=\"b\""));
        assert!(ok);
        assert_eq!(v, [field(FieldKind::BodyValue, "a", "x")]);
    }

    #[test]
    fn malformed_parts_are_kept() {
        let body = "preamble text\r\n--b\r\nno header separator\r\n--b\r\n\r\nheaderless\r\n--b--\r\nepilogue";
        let (ok, v) = parse(body, Some("multipart/form-data; boundary=b"));
        assert!(ok);
        assert!(v.contains(&field(FieldKind::BodyRaw, "", "preamble text\r\n")));
        assert!(v.contains(&field(FieldKind::BodyRaw, "", "no header separator")));
        assert!(v.contains(&field(FieldKind::BodyValue, "", "headerless")));
        assert!(v.contains(&field(FieldKind::BodyRaw, "", "\r\nepilogue")));
        let (ok, v) = parse("--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nunterminated", None);
        assert!(ok && v.contains(&field(FieldKind::BodyValue, "x", "unterminated")));
        assert!(!parse("no delimiter", Some("multipart/form-data; boundary=zz")).0);
        assert!(!parse("--\r\n", None).0);
    }

    #[test]
    fn nesting_is_bounded() {
        let mut body = String::from("payload");
        for i in 0..50 {
            body = format!("--b{i}\r\nContent-Type: multipart/mixed; boundary=b{i}\r\n\r\n--b{i}\r\n\r\n{body}\r\n--b{i}--\r\n--b{i}--");
        }
        let mut fields = Fields::with_limits(FieldLimits::default());
        assert!(parse_multipart(&body, None, &mut fields));
        assert!(fields.iter().any(|f| f.value.contains("payload")));
    }

    #[test]
    fn encoded_parts_are_scored_decoded() {
        let body = "--b\r\nContent-Disposition: form-data; name=\"c\"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n\
            =3Cscript=3Ealert(1)=3C/scr=\r\nipt=3E\r\n\
            --b\r\nContent-Disposition: form-data; name=\"d\"\r\nContent-Type: application/json\r\nContent-Transfer-Encoding: BASE64\r\n\r\n\
            eyJxIjoiMScgb3IgJzEnPScxIn0=\r\n--b--\r\n";
        let (ok, v) = parse(body, Some("multipart/form-data; boundary=b"));
        assert!(ok);
        assert!(v.contains(&field(FieldKind::BodyValue, "c", "<script>alert(1)</script>")), "{v:?}");
        assert!(v.contains(&field(FieldKind::BodyValue, "q", "1' or '1'='1")), "{v:?}");
    }

    #[test]
    fn disposition_parsing() {
        assert_eq!(disposition_params(" form-data; name=\"a\\\"b\"; filename=c.txt"), [("name", "a\\\"b"), ("filename", "c.txt")]);
        assert_eq!(disposition_params("name=\"unterminated"), [("name", "unterminated")]);
        assert!(disposition_params("").is_empty());
    }
}
