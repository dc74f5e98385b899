//! A multipart part's own encodings: `Content-Transfer-Encoding: quoted-printable | base64`
//! and a `charset` on the part's Content-Type. Servers (mail-style parsers, Java's multipart
//! readers) undo both before the application reads the value, so the parser scores the decoded
//! value: `=3Cscript=3E` must be seen as `<script>`.

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine as _;

use crate::transport::charset::{self, Charset};

/// Lenient about padding, as MIME decoders are.
const MIME_BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent).with_decode_allow_trailing_bits(true),
);

/// The part headers that say how its content is encoded.
#[derive(Clone, Copy, Debug, Default)]
pub struct PartEncoding<'a> {
    pub transfer_encoding: Option<&'a str>,
    pub charset: Option<&'a str>,
}

/// The content as the application reads it, or `None` when it is to be read as it stands
/// (no encoding, an identity one, or one that does not decode: then the raw text is scored).
pub fn decode_part(content: &str, encoding: PartEncoding<'_>) -> Option<String> {
    let transfer = encoding.transfer_encoding.map(|t| t.trim().to_ascii_lowercase());
    if !matches!(transfer.as_deref(), Some("quoted-printable" | "base64")) && encoding.charset.is_none() {
        return None;
    }
    let bytes = match transfer.as_deref() {
        Some("quoted-printable") => quoted_printable(content.as_bytes()),
        Some("base64") => {
            let packed: Vec<u8> = content.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
            MIME_BASE64.decode(packed).ok()?
        }
        _ => content.as_bytes().to_vec(),
    };
    let transcoded = match encoding.charset.map(|label| charset::decode(&bytes, label)) {
        Some(Charset::Decoded(text)) => return Some(text),
        Some(Charset::AsIs | Charset::Unknown) | None => bytes,
    };
    match transfer.as_deref() {
        Some("quoted-printable" | "base64") => Some(String::from_utf8_lossy(&transcoded).into_owned()),
        _ => None,
    }
}

/// RFC 2045 6.7: `=XX` is a byte, `=` at a line end is a soft break; a malformed `=` stays.
fn quoted_printable(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        if input[i] != b'=' {
            out.push(input[i]);
            i += 1;
            continue;
        }
        let rest = &input[i + 1..];
        let soft_break = rest.iter().position(|&b| b != b' ' && b != b'\t').map_or(rest.len(), |p| p);
        match (rest.get(soft_break), rest.get(soft_break + 1)) {
            (Some(b'\r'), Some(b'\n')) => i += soft_break + 3,
            (Some(b'\n'), _) => i += soft_break + 2,
            (None, _) => i = input.len(),
            _ => match (rest.first().and_then(hex), rest.get(1).and_then(hex)) {
                (Some(hi), Some(lo)) => {
                    out.push(hi << 4 | lo);
                    i += 3;
                }
                _ => {
                    out.push(b'=');
                    i += 1;
                }
            },
        }
    }
    out
}

fn hex(b: &u8) -> Option<u8> {
    (*b as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qp(text: &str) -> Option<String> {
        decode_part(text, PartEncoding { transfer_encoding: Some("Quoted-Printable"), charset: None })
    }

    #[test]
    fn quoted_printable_bytes_and_soft_breaks() {
        assert_eq!(qp("=3Cscript=3Ealert(1)=3C/script=3E").as_deref(), Some("<script>alert(1)</script>"));
        assert_eq!(qp("<scr=\r\nipt>").as_deref(), Some("<script>"));
        assert_eq!(qp("a=  \nb").as_deref(), Some("ab"));
        assert_eq!(qp("=zz = =4").as_deref(), Some("=zz = =4"));
        assert_eq!(qp("end=").as_deref(), Some("end"));
        assert_eq!(qp("caf=C3=A9").as_deref(), Some("café"));
    }

    #[test]
    fn base64_with_line_breaks_and_charsets() {
        let b64 = |t: &str| decode_part(t, PartEncoding { transfer_encoding: Some("base64"), charset: None });
        assert_eq!(b64("JyBPUiAx\r\nPTEtLQ==").as_deref(), Some("' OR 1=1--"));
        assert_eq!(b64("JyBPUiAxPTEtLQ").as_deref(), Some("' OR 1=1--"));
        assert_eq!(b64("not base64!"), None);
        let utf16 = "PABzAGMAcgBpAHAAdAA+AA=="; // "<script>" in UTF-16LE
        let part = PartEncoding { transfer_encoding: Some("base64"), charset: Some("utf-16le") };
        assert_eq!(decode_part(utf16, part).as_deref(), Some("<script>"));
        assert_eq!(decode_part("plain", PartEncoding { transfer_encoding: Some("8bit"), charset: Some("utf-8") }), None);
        assert_eq!(decode_part("plain", PartEncoding::default()), None);
    }
}
