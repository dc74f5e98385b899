//! Rule files: data, one file per detector (`scoring/rules/<slug>.toml`), compiled into the
//! binary and overridable at run time with a rules directory.

use std::path::Path;

use serde::Deserialize;

use super::PatternError;
use crate::detectors::{detector_id, Backing, DetectorId, DETECTORS};

/// Rule files shipped in the binary. Model gates mark fields worth a model call; they never
/// score by themselves.
const BUILTIN: &[(&str, &str)] = &[
    ("xss.toml", include_str!("../../rules/xss.toml")),
    ("nosqli.toml", include_str!("../../rules/nosqli.toml")),
    ("command-injection.toml", include_str!("../../rules/command-injection.toml")),
    ("ssti.toml", include_str!("../../rules/ssti.toml")),
    ("path-traversal.toml", include_str!("../../rules/path-traversal.toml")),
    ("ldap-injection.toml", include_str!("../../rules/ldap-injection.toml")),
    ("xpath-injection.toml", include_str!("../../rules/xpath-injection.toml")),
    ("ssrf.toml", include_str!("../../rules/ssrf.toml")),
    ("xxe.toml", include_str!("../../rules/xxe.toml")),
    ("deserialization.toml", include_str!("../../rules/deserialization.toml")),
    ("open-redirect.toml", include_str!("../../rules/open-redirect.toml")),
    ("crlf.toml", include_str!("../../rules/crlf.toml")),
    ("php-injection.toml", include_str!("../../rules/php-injection.toml")),
    ("java-injection.toml", include_str!("../../rules/java-injection.toml")),
    ("ssi.toml", include_str!("../../rules/ssi.toml")),
    ("graphql.toml", include_str!("../../rules/graphql.toml")),
    ("mail-injection.toml", include_str!("../../rules/mail-injection.toml")),
    ("scanner.toml", include_str!("../../rules/scanner.toml")),
    ("protocol.toml", include_str!("../../rules/protocol.toml")),
    ("sqli.gate.toml", include_str!("../../rules/sqli.gate.toml")),
    ("sqli.fallback.toml", include_str!("../../rules/sqli.fallback.toml")),
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    detector: String,
    #[serde(default)]
    description: String,
    /// `gate` files select fields for a model-backed detector.
    #[serde(default)]
    kind: Option<String>,
    #[serde(rename = "rule", default)]
    rules: Vec<RuleSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    id: String,
    pattern: String,
    #[serde(default = "default_score")]
    score: f32,
    #[serde(default)]
    description: String,
    #[serde(default)]
    views: ViewScope,
    /// Match case as written (serialization magic, base64 prefixes): a caseless match of
    /// `gASV` hits one random base64 blob in a few.
    #[serde(default)]
    case_sensitive: bool,
    /// Lowest sensitivity level (WAF_SENSITIVITY, 1..=4) at which the rule scores: 1 runs
    /// always; higher levels trade false positives for recall, like CRS paranoia levels.
    #[serde(default = "default_level")]
    level: u8,
    /// In a long natural-language field (a chat message, a comment: `prose::is_long_prose`)
    /// the rule counts only from this level. For rules whose match is ordinary in discussed
    /// code (`../../components`, `http://127.0.0.1:8000`) and harmless inside prose, because
    /// the attack needs the whole value to be the path, URL or filter.
    #[serde(default)]
    prose_level: Option<u8>,
    /// A cheap run of the pattern's top-level factors that the shared scan looks for instead
    /// of the whole pattern; each field it matches in is confirmed by the whole pattern
    /// (`prefilter.rs`). For patterns whose cost `rule_cost` shows; never changes what matches.
    #[serde(default)]
    prefilter: Option<String>,
    /// A gate rule that also selects a short piece cut out of a longer value for the model:
    /// a string break-out window (`sql_breakouts.rs`) or a header value's gated core
    /// (`header_tails.rs`). False for a rule that ordinary prose or a browser header also
    /// matches (`"cats" and …`, `";v="124"`, `NT 5.1; U`): such a piece is no evidence of
    /// an injection, and the model reads short fragments less well than whole values.
    #[serde(default = "default_selects_pieces")]
    selects_pieces: bool,
}

fn default_selects_pieces() -> bool {
    true
}

fn default_level() -> u8 {
    1
}

/// Sensitivity levels a rule may name.
pub const LEVELS: std::ops::RangeInclusive<u8> = 1..=4;

fn default_score() -> f32 {
    0.9
}

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ViewScope {
    #[default]
    All,
    Decoded,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleRole {
    /// A match scores for the detector.
    Detect,
    /// A match marks the field as a candidate for the detector's model.
    Gate,
    /// A match scores for a model-backed detector only when its model gave no opinion.
    Fallback,
}

/// One rule ready for the pattern database.
#[derive(Clone, Debug)]
pub struct Rule {
    pub detector: DetectorId,
    pub id: String,
    pub pattern: String,
    pub score: f32,
    pub description: String,
    pub views: ViewScope,
    pub role: RuleRole,
    /// Compiled without CASELESS.
    pub case_sensitive: bool,
    /// Lowest sensitivity level at which a match counts.
    pub level: u8,
    /// Lowest level at which a match inside a long prose field counts (None: as `level`).
    pub prose_level: Option<u8>,
    /// What the shared scan looks for instead of the whole pattern (a run of its top-level
    /// factors, checked at load); None: the whole pattern, or its part after a line-start
    /// window (`prefilter.rs`).
    pub prefilter: Option<String>,
    /// `"<slug>:<id>"`, built once so scoring never formats strings.
    pub reason: String,
    /// A gate rule whose match in a break-out window or header core gets it read (`RuleSpec`).
    pub selects_pieces: bool,
}

/// Loads the built-in rules, or every `*.toml` of `dir` when given.
pub fn load_rules(dir: Option<&Path>) -> Result<Vec<Rule>, PatternError> {
    load_rules_from(dir).map(|(rules, _)| rules)
}

/// Each rule file's name and the reasons (`<slug>:<id>`) of the rules it held.
pub type RuleFiles = Vec<(String, Vec<String>)>;

/// [`load_rules`], with each file's name and the reasons of the rules it held, so a rule
/// Hyperscan refuses later can be traced to its file.
pub fn load_rules_from(dir: Option<&Path>) -> Result<(Vec<Rule>, RuleFiles), PatternError> {
    let mut rules = Vec::new();
    let mut files = Vec::new();
    let mut note =
        |name: &str, rules: &[Rule], from: usize| files.push((name.to_string(), rules[from..].iter().map(|r| r.reason.clone()).collect()));
    match dir {
        None => {
            for (name, text) in BUILTIN {
                let from = rules.len();
                parse_rule_file(name, text, &mut rules)?;
                note(name, &rules, from);
            }
        }
        Some(dir) => {
            let entries =
                std::fs::read_dir(dir).map_err(|e| PatternError::Io { path: dir.display().to_string(), detail: e.to_string() })?;
            let mut paths: Vec<_> =
                entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect();
            paths.sort();
            for path in paths {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| PatternError::Io { path: path.display().to_string(), detail: e.to_string() })?;
                let from = rules.len();
                parse_rule_file(&path.display().to_string(), &text, &mut rules)?;
                note(&path.display().to_string(), &rules, from);
            }
        }
    }
    Ok((rules, files))
}

fn parse_rule_file(name: &str, text: &str, out: &mut Vec<Rule>) -> Result<(), PatternError> {
    let file: RuleFile = toml::from_str(text).map_err(|e| PatternError::BadFile { file: name.to_string(), detail: e.to_string() })?;
    let detector = detector_id(&file.detector)
        .ok_or_else(|| PatternError::BadFile { file: name.to_string(), detail: format!("unknown detector `{}`", file.detector) })?;
    let role = match file.kind.as_deref() {
        None | Some("detect") => RuleRole::Detect,
        Some("gate") => RuleRole::Gate,
        Some("fallback") => RuleRole::Fallback,
        Some(other) => {
            return Err(PatternError::BadFile {
                file: name.to_string(),
                detail: format!("unknown kind `{other}` (accepted: detect, gate, fallback)"),
            })
        }
    };
    let backing = DETECTORS[detector].backing;
    if (role == RuleRole::Detect) != (backing == Backing::Regex) {
        return Err(PatternError::BadFile {
            file: name.to_string(),
            detail: format!(
                "detector `{}` is {:?}-backed: its file must be a {} file",
                file.detector,
                backing,
                if backing == Backing::Regex { "detect" } else { "gate or fallback" }
            ),
        });
    }
    let _ = file.description;
    for spec in file.rules {
        if !(0.0..=1.0).contains(&spec.score) {
            return Err(PatternError::BadFile {
                file: name.to_string(),
                detail: format!("rule `{}`: score {} is outside 0.0..=1.0", spec.id, spec.score),
            });
        }
        if !LEVELS.contains(&spec.level) || spec.prose_level.is_some_and(|l| !LEVELS.contains(&l) || l < spec.level) {
            return Err(PatternError::BadFile {
                file: name.to_string(),
                detail: format!("rule `{}`: level and prose_level must lie within 1..=4, prose_level at or above level", spec.id),
            });
        }
        if out.iter().any(|r| r.detector == detector && r.id == spec.id && r.role == role) {
            return Err(PatternError::BadFile { file: name.to_string(), detail: format!("duplicate rule id `{}`", spec.id) });
        }
        out.push(Rule {
            detector,
            reason: format!("{}:{}", file.detector, spec.id),
            id: spec.id,
            pattern: spec.pattern,
            score: spec.score,
            description: spec.description,
            views: spec.views,
            role,
            case_sensitive: spec.case_sensitive,
            level: spec.level,
            prose_level: spec.prose_level,
            prefilter: spec.prefilter,
            selects_pieces: spec.selects_pieces,
        });
    }
    Ok(())
}
