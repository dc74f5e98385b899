//! The policy file as read: TOML, every table `deny_unknown_fields`, every value checked while
//! it is parsed (patterns, names, ranges), so any error carries the line and column of the
//! value at fault. deploy/policy/example.toml is the annotated example.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::guards::{IpList, RateLimit};
use super::matchers::{HostPattern, Methods, PathPattern};
use crate::decision::{FailMode, KillResponse, PartialPolicy};

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    /// Overrides the flags for every request; a scope overrides these. Takes no host, path,
    /// methods or name; its `mode` is the process's mode (shadow or active) at start-up and
    /// whenever the file changes it (`POST /api/mode` switches it in between).
    #[serde(default)]
    pub defaults: ScopeFile,
    #[serde(default, rename = "scope")]
    pub scopes: Vec<ScopeFile>,
    /// Custom rules (virtual patching), compiled into their own Hyperscan database.
    #[serde(default)]
    pub rules: Vec<super::custom_rules::RuleFile>,
}

/// One `[[scope]]` (or `[defaults]`): which requests it covers, then what it sets; every
/// setting optional, unset meaning "as the less specific scopes say".
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopeFile {
    /// Shown by `policy explain` and in logs; defaults to `scope #N` (file order, from 1).
    pub name: Option<String>,
    pub host: Option<HostPattern>,
    pub path: Option<PathPattern>,
    pub methods: Option<Methods>,
    pub mode: Option<ScopeMode>,
    #[serde(default, deserialize_with = "threshold")]
    pub threshold: Option<f32>,
    #[serde(default, deserialize_with = "sensitivity")]
    pub sensitivity: Option<u8>,
    pub kill_response: Option<KillName>,
    pub on_scoring_error: Option<FailName>,
    pub on_model_missing: Option<FailName>,
    pub on_partial: Option<PartialName>,
    /// Request body bytes buffered and scored (1 to 64 MiB); unset: the door's own.
    #[serde(default, deserialize_with = "super::body::body_limit")]
    pub body_limit: Option<u64>,
    /// A body longer than `body_limit`: `score-prefix`, `block` or `partial` (`on_partial` decides).
    pub oversize_body: Option<super::body::Oversize>,
    /// Detector slug -> on (true) or off (false).
    #[serde(default)]
    pub detectors: BTreeMap<DetectorSlug, bool>,
    #[serde(default)]
    pub exclusions: Vec<ExclusionFile>,
    /// Clients forwarded unscored (CIDRs on the resolved client IP).
    pub allow_ips: Option<IpList>,
    /// Clients killed unscored, as an attack would be (reason `ip-deny`).
    pub deny_ips: Option<IpList>,
    /// A token bucket per client IP; an empty bucket is killed as `rate-limit` (the proxy
    /// answers 429 with Retry-After).
    pub rate_limit: Option<RateLimit>,
}

/// A scope's mode: `off` forwards its requests unscored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScopeMode {
    Shadow,
    Active,
    Off,
}

impl ScopeMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ScopeMode::Shadow => "shadow",
            ScopeMode::Active => "active",
            ScopeMode::Off => "off",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KillName {
    Reset,
    Forbidden,
}

impl From<KillName> for KillResponse {
    fn from(k: KillName) -> Self {
        match k {
            KillName::Reset => KillResponse::Reset,
            KillName::Forbidden => KillResponse::Forbidden,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailName {
    Open,
    Closed,
}

impl From<FailName> for FailMode {
    fn from(f: FailName) -> Self {
        match f {
            FailName::Open => FailMode::Open,
            FailName::Closed => FailMode::Closed,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PartialName {
    Block,
    Pass,
}

impl From<PartialName> for PartialPolicy {
    fn from(p: PartialName) -> Self {
        match p {
            PartialName::Block => PartialPolicy::Block,
            PartialName::Pass => PartialPolicy::Pass,
        }
    }
}

/// A detector slug the engine knows (`sqli`, `xss`, ...).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(try_from = "String", into = "String")]
pub struct DetectorSlug(pub String);

impl TryFrom<String> for DetectorSlug {
    type Error = String;

    fn try_from(slug: String) -> Result<Self, String> {
        scoring::exclusion::detector_by_slug(&slug).map(|_| DetectorSlug(slug))
    }
}

impl From<DetectorSlug> for String {
    fn from(d: DetectorSlug) -> String {
        d.0
    }
}

impl DetectorSlug {
    pub fn id(&self) -> scoring::detectors::DetectorId {
        scoring::exclusion::detector_by_slug(&self.0).expect("checked when parsed")
    }
}

/// `{ rule = "xss-001", field = "query:q" }` or `{ detector = "sqli" }`: exactly one of rule
/// and detector; `field` optional (absent: the whole request).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, try_from = "ExclusionFields")]
pub struct ExclusionFile {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detector: Option<DetectorSlug>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<FieldSelector>,
    /// Why it exists (the API writes the event id it came from).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExclusionFields {
    rule: Option<String>,
    detector: Option<DetectorSlug>,
    field: Option<FieldSelector>,
    note: Option<String>,
}

impl TryFrom<ExclusionFields> for ExclusionFile {
    type Error = String;

    fn try_from(f: ExclusionFields) -> Result<Self, String> {
        match (&f.rule, &f.detector) {
            (Some(_), Some(_)) => Err("an exclusion names a `rule` or a `detector`, not both".into()),
            (None, None) => Err("an exclusion needs `rule = \"<id>\"` or `detector = \"<slug>\"`".into()),
            (Some(rule), None) if rule.trim().is_empty() || rule.contains(char::is_whitespace) => Err(format!("`{rule}` is not a rule id")),
            _ => Ok(ExclusionFile { rule: f.rule, detector: f.detector, field: f.field, note: f.note }),
        }
    }
}

impl ExclusionFile {
    pub fn scoring(&self) -> scoring::exclusion::Exclusion {
        use scoring::exclusion::Target;
        let target = match (&self.rule, &self.detector) {
            (Some(rule), _) => Target::Rule(rule.clone()),
            (None, Some(detector)) => Target::Detector(detector.id()),
            (None, None) => unreachable!("checked when parsed"),
        };
        scoring::exclusion::Exclusion { target, field: self.field.as_ref().map(|f| f.0.clone()) }
    }
}

impl fmt::Display for ExclusionFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.rule, &self.detector) {
            (Some(rule), _) => write!(f, "rule {rule}")?,
            (None, Some(detector)) => write!(f, "detector {}", detector.0)?,
            (None, None) => {}
        }
        match &self.field {
            Some(field) => write!(f, " in {field}"),
            None => f.write_str(" everywhere"),
        }
    }
}

/// `query:NAME`, `body:NAME`, `json:/a/b` (matched by its last key: the body parser keeps
/// each leaf's own key), `header:NAME`, `cookie:NAME`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(try_from = "String", into = "String")]
pub struct FieldSelector(pub scoring::exclusion::FieldRef);

impl TryFrom<String> for FieldSelector {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        use scoring::exclusion::{FieldPart, FieldRef};
        let bad = || format!("`{text}` is not a field: query:NAME, body:NAME, json:/POINTER, header:NAME or cookie:NAME");
        let (part, name) = text.split_once(':').ok_or_else(bad)?;
        let (part, name) = match part {
            "query" => (FieldPart::Query, name.to_string()),
            "body" => (FieldPart::Body, name.to_string()),
            "header" => (FieldPart::Header, name.to_ascii_lowercase()),
            "cookie" => (FieldPart::Cookie, name.to_string()),
            "json" => {
                let last = name.strip_prefix('/').and_then(|p| p.rsplit('/').next()).ok_or_else(bad)?;
                (FieldPart::Body, last.replace("~1", "/").replace("~0", "~"))
            }
            _ => return Err(bad()),
        };
        if name.is_empty() {
            return Err(bad());
        }
        Ok(FieldSelector(FieldRef { part, name }))
    }
}

impl From<FieldSelector> for String {
    fn from(f: FieldSelector) -> String {
        f.to_string()
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use scoring::exclusion::FieldPart;
        let part = match self.0.part {
            FieldPart::Query => "query",
            FieldPart::Body => "body",
            FieldPart::Header => "header",
            FieldPart::Cookie => "cookie",
        };
        write!(f, "{part}:{}", self.0.name)
    }
}

fn threshold<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f32>, D::Error> {
    let v = f64::deserialize(d)?;
    if !(0.0..=1.0).contains(&v) {
        return Err(serde::de::Error::custom(format!("threshold {v} is outside 0.0 to 1.0")));
    }
    Ok(Some(v as f32))
}

fn sensitivity<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u8>, D::Error> {
    match i64::deserialize(d)? {
        v @ 1..=4 => Ok(Some(v as u8)),
        v => Err(serde::de::Error::custom(format!("sensitivity {v} is not a level: 1, 2, 3 or 4"))),
    }
}
