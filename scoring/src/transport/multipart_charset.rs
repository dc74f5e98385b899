//! Multipart parts written in a charset of their own (`Content-Type: text/plain;
//! charset=ibm037` on the part, 8-bit bytes, no transfer encoding). The body parser works on
//! text, and by then such bytes have become U+FFFD; so they are decoded here, on the raw bytes,
//! and the part's Content-Type is rewritten to say `charset=utf-8`. Parts with a
//! Content-Transfer-Encoding are left to the body parser, which undoes the transfer encoding
//! and then the charset.

use super::charset::{self, media_param, Charset};

/// The body with every such part decoded, or `None` when no part needed it. Unknown part
/// charsets are added to `partial` as `charset:<label>`.
pub fn decode_part_charsets(body: &[u8], content_type: &str, partial: &mut Vec<String>) -> Option<Vec<u8>> {
    let boundary = media_param(content_type, "boundary")?;
    let mut delim = b"--".to_vec();
    delim.extend_from_slice(boundary.as_bytes());
    let finder = memchr::memmem::Finder::new(&delim);
    let starts: Vec<usize> = finder.find_iter(body).filter(|&p| p == 0 || body[p - 1] == b'\n').collect();
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    for pair in starts.windows(2) {
        let (delim_at, next) = (pair[0], pair[1]);
        let Some(line_end) = memchr::memchr(b'\n', &body[delim_at..next]) else { continue };
        let part_start = delim_at + line_end + 1;
        let part = &body[part_start..next];
        let Some((headers_len, separator_len)) = header_end(part) else { continue };
        let headers = String::from_utf8_lossy(&part[..headers_len]);
        let Some(label) = part_charset(&headers) else { continue };
        let content_start = part_start + headers_len + separator_len;
        let content_end = trim_line_end(body, content_start, next);
        match charset::decode(&body[content_start..content_end], &label) {
            Charset::AsIs => {}
            Charset::Unknown => partial.push(super::unknown_charset_slug(&label)),
            Charset::Decoded(text) => {
                let out = out.get_or_insert_with(|| Vec::with_capacity(body.len() + body.len() / 2));
                out.extend_from_slice(&body[copied..part_start]);
                out.extend_from_slice(rewrite_headers(&headers).as_bytes());
                out.extend_from_slice(&part[headers_len..headers_len + separator_len]);
                out.extend_from_slice(text.as_bytes());
                copied = content_end;
            }
        }
    }
    let mut out = out?;
    out.extend_from_slice(&body[copied..]);
    Some(out)
}

/// Where a part's headers end: (header bytes, separator bytes).
fn header_end(part: &[u8]) -> Option<(usize, usize)> {
    let crlf = memchr::memmem::find(part, b"\r\n\r\n").map(|i| (i, 4));
    let lf = memchr::memmem::find(part, b"\n\n").map(|i| (i, 2));
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// The content ends before the line break that precedes the next delimiter.
fn trim_line_end(body: &[u8], start: usize, next: usize) -> usize {
    let mut end = next;
    if end > start && body[end - 1] == b'\n' {
        end -= 1;
        if end > start && body[end - 1] == b'\r' {
            end -= 1;
        }
    }
    end
}

/// The charset of a part without a transfer encoding (those the body parser decodes).
fn part_charset(headers: &str) -> Option<String> {
    let mut label = None;
    for line in headers.lines() {
        let Some((name, value)) = line.split_once(':') else { continue };
        let name = name.trim();
        if name.eq_ignore_ascii_case("content-transfer-encoding") {
            return None;
        }
        if name.eq_ignore_ascii_case("content-type") && !value.trim_start().to_ascii_lowercase().starts_with("multipart/") {
            label = charset::charset_param(value);
        }
    }
    label
}

/// The part's headers with its Content-Type saying what the content now is.
fn rewrite_headers(headers: &str) -> String {
    let lines: Vec<String> = headers
        .split('\n')
        .map(|line| match line.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-type") => {
                let media = value.split(';').next().unwrap_or("").trim();
                let cr = if line.ends_with('\r') { "\r" } else { "" };
                format!("{name}: {media}; charset=utf-8{cr}")
            }
            _ => line.to_string(),
        })
        .collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ebcdic_part_is_decoded_and_relabelled() {
        // "' OR 1=1--" in IBM-037.
        let ebcdic = [0x7D, 0x40, 0xD6, 0xD9, 0x40, 0xF1, 0x7E, 0xF1, 0x60, 0x60];
        let mut body = b"--b\r\nContent-Disposition: form-data; name=\"a\"\r\nContent-Type: text/plain; charset=IBM037\r\n\r\n".to_vec();
        body.extend_from_slice(&ebcdic);
        body.extend_from_slice(b"\r\n--b\r\nContent-Disposition: form-data; name=\"c\"\r\n\r\nkept\r\n--b--\r\n");
        let mut partial = Vec::new();
        let out = decode_part_charsets(&body, "multipart/form-data; boundary=b", &mut partial).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("Content-Type: text/plain; charset=utf-8\r\n\r\n' OR 1=1--\r\n--b\r\n"), "{text:?}");
        assert!(text.ends_with("kept\r\n--b--\r\n") && partial.is_empty());
    }

    #[test]
    fn untouched_and_unknown_parts() {
        let body = b"--b\r\nContent-Type: text/plain; charset=utf-7\r\n\r\n+ADw-\r\n--b\r\nContent-Type: text/plain; charset=ibm037\r\nContent-Transfer-Encoding: base64\r\n\r\nwcI=\r\n--b--";
        let mut partial = Vec::new();
        assert!(decode_part_charsets(body, "multipart/form-data; boundary=b", &mut partial).is_none());
        assert_eq!(partial, ["charset:utf-7"]);
        assert!(decode_part_charsets(body, "multipart/form-data", &mut partial).is_none());
    }
}
