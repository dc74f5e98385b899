//! The data pool: loading rows and turning a payload into a request.

use std::path::Path;

use serde::Deserialize;

use super::{Placement, Split};

#[derive(Debug, Deserialize)]
pub struct Row {
    pub text: String,
    pub label: String,
    pub source: String,
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
pub const HELDOUT_SOURCES: &[&str] = &[
    "httpparams",
    "modsec_learn_dataset",
    "jailbreakbench_artifacts",
    "benign_prompts_alpaca_eval",
    "csic2010_lines",
];

pub fn load_pool(dir: &Path, split: Split, only: &[String]) -> Result<Vec<Row>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read data folder {}: {e}", dir.display()))?;
    let mut paths: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(format!("no .jsonl files in {}", dir.display()));
    }
    let mut rows = Vec::new();
    for path in paths {
        let source = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
        if !only.is_empty() && !only.contains(&source) {
            continue;
        }
        if split == Split::Heldout && !HELDOUT_SOURCES.contains(&source.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let row: Row = serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?;
            rows.push(row);
        }
    }
    Ok(rows)
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
        Placement::Form => (
            format!("POST /eval\nq={}", percent_encode(text)),
            vec![("content-type".into(), "application/x-www-form-urlencoded".into())],
        ),
        Placement::Json => (
            format!("POST /eval\n{}", serde_json::json!({ "q": text })),
            vec![("content-type".into(), "application/json".into())],
        ),
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
}
