//! Single-pass URL decoding as an application would do it (the "plain" view).

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn decode_into(input: &str, out: &mut String, plus_is_space: bool) {
    out.clear();
    let bytes = input.as_bytes();
    if !bytes.iter().any(|&b| b == b'%' || (plus_is_space && b == b'+')) {
        out.push_str(input);
        return;
    }
    // Decode into the output's own buffer: no allocation once it has grown.
    let mut buf = std::mem::take(out).into_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex_val(bytes[i + 1]), hex_val(bytes[i + 2])) {
                buf.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        buf.push(if plus_is_space && b == b'+' { b' ' } else { b });
        i += 1;
    }
    *out = match String::from_utf8(buf) {
        Ok(text) => text,
        // Old decoders (IIS, early Java) read overlong `%c0%bc` as `<`: map it as they do,
        // or `%c0%bcscript%c0%be` would reach the detectors as replacement characters.
        Err(err) => {
            let mut text = String::with_capacity(err.as_bytes().len());
            super::utf8::bytes_into(err.as_bytes(), &mut text);
            text
        }
    };
}

/// `application/x-www-form-urlencoded` decoding: `+` is a space, `%XX` decoded once.
pub fn form_decode_into(input: &str, out: &mut String) {
    decode_into(input, out, true);
}

/// Path decoding: `%XX` decoded once, `+` kept.
pub fn path_decode_into(input: &str, out: &mut String) {
    decode_into(input, out, false);
}

/// Decodes one round of percent-encoding into bytes: `%XX` and IIS `%uXXXX` (UTF-8 encoded,
/// surrogate pairs combined, fullwidth ASCII folded to ASCII as IIS best-fit mapping does). A
/// `+` is kept: the caller reads the input's own `+` as spaces once, before any round
/// (`normalize::decode_deep`), so a `+` that decoding produced (`%2B`) stays a plus. Invalid
/// `%` sequences are kept literally. Appends to `out`; returns whether anything was decoded.
pub fn percent_decode_bytes(input: &[u8], out: &mut Vec<u8>) -> bool {
    let bytes = input;
    let mut changed = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b != b'%' {
            // Copy the run up to the next interesting byte in one go.
            let end = memchr::memchr(b'%', &bytes[i..]).map_or(bytes.len(), |j| i + j);
            out.extend_from_slice(&bytes[i..end]);
            i = end;
            continue;
        }
        if i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex_val(bytes[i + 1]), hex_val(bytes[i + 2])) {
                out.push(h << 4 | l);
                changed = true;
                i += 3;
                continue;
            }
        }
        if let Some(cp) = u_escape(bytes, i) {
            let mut cp = cp;
            let mut len = 6;
            if (0xD800..0xDC00).contains(&cp) {
                match u_escape(bytes, i + 6) {
                    Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        len = 12;
                    }
                    _ => {}
                }
            }
            push_code_point(fold_fullwidth(cp), out);
            changed = true;
            i += len;
            continue;
        }
        out.push(b'%');
        i += 1;
    }
    changed
}

/// `%uXXXX` at `i`, as a code point.
fn u_escape(bytes: &[u8], i: usize) -> Option<u32> {
    if i + 5 < bytes.len() && bytes[i] == b'%' && (bytes[i + 1] | 0x20) == b'u' {
        let mut v = 0u32;
        for &b in &bytes[i + 2..i + 6] {
            v = v << 4 | u32::from(hex_val(b)?);
        }
        return Some(v);
    }
    None
}

/// IIS best-fit: fullwidth ASCII (`U+FF01..=U+FF5E`) means the ASCII character.
fn fold_fullwidth(cp: u32) -> u32 {
    if (0xFF01..=0xFF5E).contains(&cp) {
        cp - 0xFF01 + 0x21
    } else {
        cp
    }
}

/// Appends `cp` UTF-8 encoded; lone surrogates and out-of-range values become U+FFFD.
pub(crate) fn push_code_point(cp: u32, out: &mut Vec<u8>) {
    let c = char::from_u32(cp).unwrap_or('\u{FFFD}');
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

/// Repeated percent-decoding (up to [`super::MAX_ROUNDS`] rounds, stopping as soon as a round
/// changes nothing), with `%uXXXX` and overlong UTF-8 / NUL handling from
/// [`super::utf8::bytes_into`]; `+` is kept (see [`percent_decode_bytes`]). Appends to `out`;
/// returns whether it changed anything.
pub fn deep_decode_into(input: &str, out: &mut String) -> bool {
    if memchr::memchr(b'%', input.as_bytes()).is_none() {
        out.push_str(input);
        return false;
    }
    let mut cur: Vec<u8> = input.as_bytes().to_vec();
    let mut next: Vec<u8> = Vec::with_capacity(cur.len());
    let mut changed = false;
    for _ in 0..super::MAX_ROUNDS {
        next.clear();
        if !percent_decode_bytes(&cur, &mut next) {
            break;
        }
        changed = true;
        std::mem::swap(&mut cur, &mut next);
        if memchr::memchr(b'%', &cur).is_none() {
            break;
        }
    }
    if !changed {
        out.push_str(input);
        return false;
    }
    super::utf8::bytes_into(&cur, out);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_once() {
        let mut out = String::new();
        form_decode_into("a+b%2520%3C%zz%", &mut out);
        assert_eq!(out, "a b%20<%zz%");
        path_decode_into("a+b%41", &mut out);
        assert_eq!(out, "a+bA");
    }

    #[test]
    fn overlong_utf8_decodes_to_the_character_old_decoders_saw() {
        let mut out = String::new();
        form_decode_into("%c0%bcscript%c0%be%e0%80%afx%ff", &mut out);
        assert_eq!(out, "<script>/x\u{FFFD}");
    }

    fn deep(s: &str) -> (String, bool) {
        crate::normalize::apply(deep_decode_into, s)
    }

    #[test]
    fn deep_decodes_repeatedly() {
        assert_eq!(deep("%253Cscript%253E").0, "<script>");
        assert_eq!(deep("%25253Cx%25253E").0, "<x>");
        // A plus is the input's business (`decode_deep` reads the input's own as spaces);
        // one that decoding produced stays a plus.
        assert_eq!(deep("a+b%252B").0, "a+b+");
        assert_eq!(deep("plain"), ("plain".to_string(), false));
    }

    #[test]
    fn deep_decodes_iis_unicode() {
        assert_eq!(deep("%u003cscript%u003e").0, "<script>");
        assert_eq!(deep("%U003C").0, "<");
        assert_eq!(deep("%uff1cscript%uFF1E").0, "<script>");
        assert_eq!(deep("%uD83D%uDE00").0, "\u{1F600}");
        assert_eq!(deep("%uD83Dx").0, "\u{FFFD}x");
    }

    #[test]
    fn deep_keeps_invalid_sequences() {
        assert_eq!(deep("%zz%4%u12g%").0, "%zz%4%u12g%");
        assert_eq!(deep("100%").0, "100%");
        assert_eq!(deep("%ff%41").0, "\u{FFFD}A");
        assert_eq!(deep("%c0%ae%c0%ae%c0%af").0, "../");
        assert_eq!(deep("a%00b").0, "ab");
    }
}
