//! Base64 segments: runs of at least [`MIN_SEGMENT`] characters of the standard or URL-safe
//! alphabet (padding optional) that decode to mostly printable ASCII text.
//!
//! Bounded: at most [`MAX_SEGMENTS`] texts and [`MAX_DECODED_BYTES`] decoded bytes per input;
//! every input byte takes part in at most two decode attempts (the `/`-separated pieces of a
//! run, then the whole run when no piece decoded to text).

/// Shortest run considered (9 decoded bytes): `' or 1=1--` is 14 characters unpadded.
pub const MIN_SEGMENT: usize = 12;
/// Most decoded texts pushed per input.
pub const MAX_SEGMENTS: usize = 16;
/// Most decoded bytes pushed per input, all segments together.
pub const MAX_DECODED_BYTES: usize = 64 * 1024;

/// Value of a base64 character in either alphabet.
fn b64_val(c: u8) -> Option<u8> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' | b'-' => 62,
        b'/' | b'_' => 63,
        _ => return None,
    })
}

/// Decodes a run of alphabet characters (no padding); trailing bits are ignored.
fn decode_run(run: &[u8], out: &mut Vec<u8>) {
    let mut acc: u32 = 0;
    let mut bits = 0;
    for &c in run {
        let Some(v) = b64_val(c) else { continue };
        acc = (acc << 6 | u32::from(v)) & 0xFFFF;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
}

/// At least 80% of bytes printable ASCII (space..`~`, tab, CR, LF).
fn mostly_printable(bytes: &[u8]) -> bool {
    let printable = bytes.iter().filter(|&&b| (0x20..0x7f).contains(&b) || matches!(b, b'\t' | b'\r' | b'\n')).count();
    !bytes.is_empty() && printable * 5 >= bytes.len() * 4
}

struct Budget {
    bytes_left: usize,
    scratch: Vec<u8>,
}

impl Budget {
    /// Tries one run; pushes its text and returns true when it decodes to printable text.
    fn try_run(&mut self, run: &[u8], out: &mut Vec<String>) -> bool {
        if run.len() < MIN_SEGMENT || out.len() >= MAX_SEGMENTS || self.bytes_left < 9 {
            return false;
        }
        // Decode no more than the budget allows (4 characters → 3 bytes).
        let max_chars = (self.bytes_left / 3) * 4;
        let run = &run[..run.len().min(max_chars)];
        self.scratch.clear();
        decode_run(run, &mut self.scratch);
        if !mostly_printable(&self.scratch) {
            return false;
        }
        self.bytes_left = self.bytes_left.saturating_sub(self.scratch.len());
        out.push(String::from_utf8_lossy(&self.scratch).into_owned());
        true
    }
}

fn is_b64(c: u8) -> bool {
    c.is_ascii_alphanumeric() | matches!(c, b'+' | b'/' | b'-' | b'_')
}

/// Whether `b` has a run of at least [`MIN_SEGMENT`] base64 characters containing both
/// cases (base64 of 12+ bytes of text practically always has both). Any such run covers a
/// position `k * MIN_SEGMENT - 1`, so only those positions are probed, and each probe that
/// lands in a run expands it once: sublinear on prose.
pub fn has_candidate_run(b: &[u8]) -> bool {
    const M: usize = MIN_SEGMENT;
    let mut probe = M - 1;
    while probe < b.len() {
        if !is_b64(b[probe]) {
            probe += M;
            continue;
        }
        let mut start = probe;
        while start > 0 && is_b64(b[start - 1]) {
            start -= 1;
        }
        let mut end = probe + 1;
        while end < b.len() && is_b64(b[end]) {
            end += 1;
        }
        if end - start >= M {
            let run = &b[start..end];
            if run.iter().any(u8::is_ascii_lowercase) && run.iter().any(u8::is_ascii_uppercase) {
                return true;
            }
        }
        // The next run starts after `end`: go to the first probe position at or past it.
        probe = end + (M - 1 - end % M);
    }
    false
}

/// Pushes the decoded text of every base64 segment of `input` to `out`. Returns at once
/// (after a sublinear probe) when [`has_candidate_run`] finds no candidate. Returns true when
/// a bound ([`MAX_SEGMENTS`], [`MAX_DECODED_BYTES`]) stopped it with candidates left unread:
/// the caller reports that as partial coverage.
pub fn base64_segments(input: &str, out: &mut Vec<String>) -> bool {
    let b = input.as_bytes();
    if !has_candidate_run(b) {
        return false;
    }
    let mut budget = Budget { bytes_left: MAX_DECODED_BYTES, scratch: Vec::new() };
    let mut i = 0;
    while i < b.len() && out.len() < MAX_SEGMENTS && budget.bytes_left >= 9 {
        if b64_val(b[i]).is_none() {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && b64_val(b[i]).is_some() {
            i += 1;
        }
        let run = &b[start..i];
        if run.len() < MIN_SEGMENT {
            continue;
        }
        let mut found = false;
        if memchr::memchr(b'/', run).is_some() {
            // `/api/v1/c2VsZWN0...`: the payload is one piece of a path. Real base64 with a
            // `/` rarely has pieces that decode to text on their own, so try those first.
            for piece in run.split(|&c| c == b'/') {
                found |= budget.try_run(piece, out);
            }
        }
        if !found {
            budget.try_run(run, out);
        }
    }
    i < b.len() && has_candidate_run(&b[i..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(s: &str) -> Vec<String> {
        let mut out = Vec::new();
        base64_segments(s, &mut out);
        out
    }

    #[test]
    fn finds_encoded_payloads() {
        assert_eq!(segs("PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=="), ["<script>alert(1)</script>"]);
        assert_eq!(segs("x=PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg&y=1"), ["<script>alert(1)</script>"]);
        // URL-safe alphabet, no padding.
        assert_eq!(segs("Pz4-Pz4-Pz4-Pz4-Pz4-Pz4-"), ["?>>?>>?>>?>>?>>?>>"]);
        assert_eq!(segs("/api/v1/c2VsZWN0ICogZnJvbSB1c2Vycw"), ["select * from users"]);
        // The `/`-separated pieces decode on their own, as the path case above.
        assert_eq!(segs("JyBvciAxPTEtLSA/Pz8gYW5kIG1vcmU="), ["' or 1=1-- ", "?? and more"]);
        // A short payload: ten bytes, fourteen characters without padding.
        assert_eq!(segs("JyBvciAxPTEtLQ=="), ["' or 1=1--"]);
    }

    #[test]
    fn ignores_short_runs_and_binary() {
        assert!(segs("PHNjcmlwdD4=").is_empty());
        assert!(segs("0123456789abcdef0123456789abcdef").is_empty());
        assert!(segs("/usr/local/share/applications").is_empty());
        assert!(segs("").is_empty());
        // One case only: not a candidate (hex digests, lower-case words, upper-case ids).
        assert!(segs("QUFBQUFBQUFBQUFBQUFB").is_empty());
        assert!(!has_candidate_run(b"internationalization-and-localization"));
        assert!(has_candidate_run(b"x PHNjcmlwdD5hbGVydCgx y"));
    }

    #[test]
    fn bounded() {
        let one = "PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg ";
        let many = one.repeat(100);
        assert_eq!(segs(&many).len(), MAX_SEGMENTS);
        let huge = "QWFh".repeat(100_000); // "Aaa" × 100 000
        let out = segs(&huge);
        let total = out.iter().map(String::len).sum::<usize>();
        assert!(total <= MAX_DECODED_BYTES && total > MAX_DECODED_BYTES - 12, "{total}");
        let huge = "QWFh ".repeat(100_000);
        assert!(segs(&huge).is_empty());
    }
}
