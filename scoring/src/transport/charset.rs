//! Charsets: a body declared in a charset other than UTF-8 is decoded to the text the server
//! decodes before it is scored. Otherwise `charset=ibm037` turns `' OR 1=1` into bytes no
//! pattern matches, while the application reads the attack back.
//!
//! Known: every WHATWG label (encoding_rs: ISO-8859-x, windows-125x, KOI8, Shift_JIS, GBK,
//! Big5, EUC-*, UTF-16LE/BE), UTF-32 (LE/BE, by hand: encoding_rs has none) and the EBCDIC
//! pages in [`super::ebcdic`]. Anything else is reported as unknown so that policy can refuse
//! it rather than score bytes the application may read differently.

use encoding_rs::Encoding;

use super::ebcdic;

/// What became of a body's bytes under its declared charset.
#[derive(Debug, PartialEq, Eq)]
pub enum Charset {
    /// UTF-8, ASCII or no charset: the bytes are scored as they are.
    AsIs,
    /// The body decoded to this text.
    Decoded(String),
    /// A label we cannot decode (the caller flags `charset:<label>`).
    Unknown,
}

/// The `charset` parameter of a Content-Type value, unquoted and lower-cased.
pub fn charset_param(content_type: &str) -> Option<String> {
    media_param(content_type, "charset").map(|v| v.to_ascii_lowercase())
}

/// A parameter of a Content-Type value (`name` matched without case), unquoted; `None` when
/// absent or empty.
pub fn media_param<'a>(content_type: &'a str, name: &str) -> Option<&'a str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (param_name, value) = param.split_once('=')?;
        if !param_name.trim().eq_ignore_ascii_case(name) {
            return None;
        }
        let value = value.trim();
        let value = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value);
        (!value.is_empty()).then_some(value)
    })
}

/// Decodes `bytes` declared as `label`.
pub fn decode(bytes: &[u8], label: &str) -> Charset {
    let label = label.trim().to_ascii_lowercase();
    match label.as_str() {
        "utf-8" | "utf8" | "us-ascii" | "ascii" => return Charset::AsIs,
        "utf-16" | "utf16" | "ucs-2" => return Charset::Decoded(decode_utf16_sniffed(bytes)),
        "utf-32" | "utf32" | "ucs-4" => return Charset::Decoded(decode_utf32(bytes, sniff_utf32_big_endian(bytes))),
        "utf-32le" | "utf32le" => return Charset::Decoded(decode_utf32(bytes, false)),
        "utf-32be" | "utf32be" => return Charset::Decoded(decode_utf32(bytes, true)),
        _ => {}
    }
    if let Some(page) = ebcdic::code_page(&label) {
        return Charset::Decoded(page.decode(bytes));
    }
    match Encoding::for_label(label.as_bytes()) {
        // "replacement" is WHATWG's name for labels it refuses to decode (ISO-2022-KR, HZ...).
        Some(encoding) if encoding == encoding_rs::REPLACEMENT => Charset::Unknown,
        Some(encoding) if encoding == encoding_rs::UTF_8 => Charset::AsIs,
        Some(encoding) => Charset::Decoded(encoding.decode_with_bom_removal(bytes).0.into_owned()),
        None => Charset::Unknown,
    }
}

/// `utf-16` without an order: a BOM decides, else the byte order whose high bytes are mostly
/// zero (ASCII-range text, which is what an attack is written in).
fn decode_utf16_sniffed(bytes: &[u8]) -> String {
    let big_endian = match bytes {
        [0xFE, 0xFF, ..] => true,
        [0xFF, 0xFE, ..] => false,
        _ => {
            let zeros_at = |parity: usize| bytes.iter().skip(parity).step_by(2).filter(|&&b| b == 0).count();
            zeros_at(0) > zeros_at(1)
        }
    };
    let encoding = if big_endian { encoding_rs::UTF_16BE } else { encoding_rs::UTF_16LE };
    encoding.decode_with_bom_removal(bytes).0.into_owned()
}

fn sniff_utf32_big_endian(bytes: &[u8]) -> bool {
    match bytes {
        [0, 0, 0xFE, 0xFF, ..] => true,
        [0xFF, 0xFE, 0, 0, ..] => false,
        [0, 0, 0, _, ..] => true,
        _ => false,
    }
}

/// UTF-32: invalid code points and a trailing partial unit become U+FFFD; a BOM is dropped.
fn decode_utf32(bytes: &[u8], big_endian: bool) -> String {
    let mut text = String::with_capacity(bytes.len() / 4);
    for unit in bytes.chunks(4) {
        let Ok(unit) = <[u8; 4]>::try_from(unit) else {
            text.push(char::REPLACEMENT_CHARACTER);
            break;
        };
        let code = if big_endian { u32::from_be_bytes(unit) } else { u32::from_le_bytes(unit) };
        if code == 0xFEFF && text.is_empty() {
            continue;
        }
        text.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16(text: &str, big_endian: bool) -> Vec<u8> {
        text.encode_utf16().flat_map(|u| if big_endian { u.to_be_bytes() } else { u.to_le_bytes() }).collect()
    }

    #[test]
    fn charset_parameter() {
        assert_eq!(charset_param("application/x-www-form-urlencoded; charset=IBM037").as_deref(), Some("ibm037"));
        assert_eq!(charset_param("text/plain;Charset=\"utf-16\"").as_deref(), Some("utf-16"));
        assert_eq!(charset_param("application/json"), None);
        assert_eq!(charset_param("text/plain; charset="), None);
    }

    #[test]
    fn utf16_both_orders_with_and_without_bom() {
        let attack = "{\"q\":\"<script>alert(1)</script>\"}";
        assert_eq!(decode(&utf16(attack, false), "utf-16le"), Charset::Decoded(attack.into()));
        assert_eq!(decode(&utf16(attack, true), "UTF-16BE"), Charset::Decoded(attack.into()));
        assert_eq!(decode(&utf16(attack, true), "utf-16"), Charset::Decoded(attack.into()));
        assert_eq!(decode(&utf16(attack, false), "utf-16"), Charset::Decoded(attack.into()));
        let mut bom = vec![0xFE, 0xFF];
        bom.extend(utf16(attack, true));
        assert_eq!(decode(&bom, "utf-16"), Charset::Decoded(attack.into()));
    }

    #[test]
    fn utf32_and_single_byte_pages() {
        let be: Vec<u8> = "a<b".chars().flat_map(|c| (c as u32).to_be_bytes()).collect();
        assert_eq!(decode(&be, "utf-32"), Charset::Decoded("a<b".into()));
        assert_eq!(decode(&be, "utf-32be"), Charset::Decoded("a<b".into()));
        let le: Vec<u8> = "a<b".chars().flat_map(|c| (c as u32).to_le_bytes()).collect();
        assert_eq!(decode(&le, "utf-32"), Charset::Decoded("a<b".into()));
        assert_eq!(decode(&[0xE9, 0x3C], "iso-8859-1"), Charset::Decoded("é<".into()));
        assert_eq!(decode(&[0x80], "windows-1252"), Charset::Decoded("€".into()));
        assert_eq!(decode(&[0xC1, 0xC2], "ibm037"), Charset::Decoded("AB".into()));
        assert_eq!(decode(b"x", "utf-8"), Charset::AsIs);
        assert_eq!(decode(b"x", "utf-7"), Charset::Unknown);
        assert_eq!(decode(b"x", "iso-2022-kr"), Charset::Unknown);
        assert_eq!(decode(b"x", "no-such-charset"), Charset::Unknown);
        assert_eq!(decode(&[1, 2, 3], "utf-32le"), Charset::Decoded("\u{fffd}".into()));
    }
}
