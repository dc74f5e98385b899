//! The data pool: loading rows and turning a payload into a request.

use std::path::Path;

use serde::Deserialize;

use super::wire::{place_part, WireRequest};
use super::{Placement, Split};
use crate::scorer::ScoreQuery;

#[derive(Debug, Deserialize)]
pub struct Row {
    pub text: String,
    pub label: String,
    pub source: String,
    /// Where the text lives in real traffic (`url`, `query`, `cookie`, `user-agent`, ...):
    /// such rows are placed there (`wire::place_part`), not by `--placement`.
    #[serde(default)]
    pub part: Option<String>,
    /// The dataset's own note on a row (fwaf: `looks like a scanner probe`).
    #[serde(default)]
    pub caveat: Option<String>,
}

impl Row {
    pub fn is_attack(&self) -> bool {
        self.label != "benign"
    }

    /// fuzzdb's `rfi` rows are vulnerable endpoint paths ending in a placeholder, with no payload
    /// at all; they are reported apart from the class TPR.
    pub fn has_no_payload(&self) -> bool {
        self.text.contains("XXpathXX")
    }
}

/// Families held out from model training (docs/EVAL.md; the model cards use the same split).
pub const HELDOUT_SOURCES: &[&str] =
    &["httpparams", "modsec_learn_dataset", "jailbreakbench_artifacts", "benign_prompts_alpaca_eval", "csic2010_lines"];

/// The pool's source names (file stems of the `.jsonl` files), sorted.
pub fn source_names(dir: &Path) -> Result<Vec<String>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read data folder {}: {e}", dir.display()))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(str::to_string))
        .collect();
    names.sort();
    if names.is_empty() {
        return Err(format!("no .jsonl files in {}", dir.display()));
    }
    Ok(names)
}

/// Every row of one source file.
pub fn load_source(dir: &Path, source: &str) -> Result<Vec<Row>, String> {
    let path = dir.join(format!("{source}.jsonl"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut rows = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        rows.push(serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?);
    }
    Ok(rows)
}

pub fn load_pool(dir: &Path, split: Split, only: &[String]) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for source in source_names(dir)? {
        if !only.is_empty() && !only.contains(&source) {
            continue;
        }
        if split == Split::Heldout && !HELDOUT_SOURCES.contains(&source.as_str()) {
            continue;
        }
        rows.extend(load_source(dir, &source)?);
    }
    Ok(rows)
}

/// Position of a text in [0, 1) by hash, as `stable_frac` of models/train/data.py computes it
/// (first 32 bits of the SHA-1 of the text with whitespace runs collapsed and trimmed): row
/// splits inside one source, such as the awesome_chatgpt parts of the prompt-injection card.
pub fn stable_frac(text: &str) -> f64 {
    // Python's `\s` and `str.strip()` also count the separators U+001C..U+001F as whitespace.
    let ws = |c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c);
    let prepped = text.split(ws).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ");
    sha1_prefix(prepped.as_bytes()) as f64 / 4_294_967_296.0
}

/// The first 32 bits of the SHA-1 digest (FIPS 180-4); only used to reproduce a data split.
pub(super) fn sha1_prefix(data: &[u8]) -> u32 {
    let mut h: [u32; 5] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64).wrapping_mul(8)).to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 80];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i / 20 {
                0 => ((b & c) | (!b & d), 0x5A82_7999),
                1 => (b ^ c ^ d, 0x6ED9_EBA1),
                2 => ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC),
                _ => (b ^ c ^ d, 0xCA62_C1D6),
            };
            let t = a.rotate_left(5).wrapping_add(f).wrapping_add(e).wrapping_add(k).wrapping_add(*wi);
            (e, d, c, b, a) = (d, c, b.rotate_left(30), a, t);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    h[0]
}

/// Percent-encodes everything but unreserved characters, as a browser or client library would.
pub fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The scored request for a row, built as the proxy builds it: a row with a `part` goes where
/// that part lives; CSIC rows are whole requests; ShareGPT messages are chat-completion bodies;
/// anything else follows `placement`.
pub fn query_for(row: &Row, placement: Placement) -> ScoreQuery {
    if let Some(request) = row.part.as_deref().and_then(|part| place_part(part, &row.text)) {
        return request.score_query();
    }
    if row.source == "csic2010_lines" {
        return csic_wire(&row.text).score_query();
    }
    if row.source == "sharegpt_user_messages" {
        if let Some(request) = place_part("chat", &row.text) {
            return request.score_query();
        }
    }
    let (request_text, headers) = request_for(row, placement);
    ScoreQuery { request_text, headers, ..Default::default() }
}

/// A CSIC line as the request it was: a GET with its query, or a POST whose parameters were
/// the form body (the dataset writes both as `method url?params`).
fn csic_wire(text: &str) -> WireRequest {
    let request = csic_request(text);
    let (method, target) = request.split_once(' ').unwrap_or(("GET", "/"));
    if method == "POST" {
        let (path, params) = target.split_once('?').unwrap_or((target, ""));
        WireRequest::new("POST", path).header("content-type", "application/x-www-form-urlencoded").body(params)
    } else {
        WireRequest::new(method, target)
    }
}

/// The spec's request_text and headers for a row.
pub fn request_for(row: &Row, placement: Placement) -> (String, Vec<(String, String)>) {
    if row.source == "csic2010_lines" {
        return (csic_request(&row.text), Vec::new());
    }
    // modsec-learn rows are whole query strings (`p=<value>`, benign ones from real traffic).
    if row.source == "modsec_learn_dataset" {
        return (format!("GET /eval?{}", row.text), Vec::new());
    }
    let text = &row.text;
    match placement {
        Placement::Query => (format!("GET /eval?q={}", percent_encode(text)), Vec::new()),
        Placement::Form => {
            (format!("POST /eval\nq={}", percent_encode(text)), vec![("content-type".into(), "application/x-www-form-urlencoded".into())])
        }
        Placement::Json => {
            (format!("POST /eval\n{}", serde_json::json!({ "q": text })), vec![("content-type".into(), "application/json".into())])
        }
        Placement::Raw => (format!("POST /eval\n{text}"), vec![("content-type".into(), "text/plain".into())]),
    }
}

/// `get http://localhost:8080/path?x=1` → `GET /path?x=1` (CSIC rows are whole requests).
fn csic_request(text: &str) -> String {
    let (method, rest) = text.split_once(' ').unwrap_or(("get", text));
    let rest = rest.trim();
    let path = match rest.find("://") {
        Some(i) => {
            let after = &rest[i + 3..];
            after.find('/').map(|j| &after[j..]).unwrap_or("/")
        }
        None => rest,
    };
    format!("{} {}", method.to_ascii_uppercase(), path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csic_rows_become_requests() {
        assert_eq!(csic_request("get http://localhost:8080/tienda1/index.jsp?a=1"), "GET /tienda1/index.jsp?a=1");
        assert_eq!(percent_encode("a b/<"), "a%20b%2F%3C");
    }

    #[test]
    fn stable_frac_matches_the_training_split() {
        // SHA-1("abc") = a9993e36...; SHA-1("") = da39a3ee...; a 56-byte message needs two blocks.
        assert_eq!(sha1_prefix(b"abc"), 0xa999_3e36);
        assert_eq!(sha1_prefix(b""), 0xda39_a3ee);
        assert_eq!(sha1_prefix(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"), 0x8498_3e44);
        assert_eq!(stable_frac("  a\tb\n\n c "), stable_frac("a b c"));
        assert_eq!(stable_frac("abc"), 0xa999_3e36u32 as f64 / 4_294_967_296.0);
    }
}
