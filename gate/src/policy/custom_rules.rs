//! Custom rules (virtual patching): `[[rules]]` in the policy file, a pattern or a literal on
//! one part of the request (the path, a named query or body parameter, a header, a cookie,
//! the body, or anything) with a score and an id, optionally limited to a host, path and
//! methods. All of one policy generation's rules compile into one small Hyperscan database
//! when the file is loaded (off the hot path) and are swapped in with the policy; the built-in
//! rules keep their own databases (scoring/src/patterns), which a reload does not rebuild.
//!
//! A request is parsed by the engine's own parser (`scoring::request`), so a rule sees the
//! same decoded fields the detectors see, and only the fields some rule in force wants are
//! scanned. A request no rule applies to costs one check per rule's host/path/methods.

use std::sync::Mutex;

use hyperscan::prelude::*;
use serde::Deserialize;

use super::matchers::{HostPattern, Methods, PathPattern};
use scoring::fields::{Field, FieldKind, FieldLimits};
use scoring::verdict::{field_location, Evidence};

/// One `[[rules]]` table as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleFile {
    pub id: RuleId,
    /// A Hyperscan-compatible regular expression (PCRE syntax without back-references or
    /// look-around); `(?i)` makes it caseless.
    pub pattern: Option<toml::Spanned<String>>,
    /// Matched as written, byte for byte (with `caseless`, ASCII case ignored).
    pub literal: Option<String>,
    #[serde(default)]
    pub caseless: bool,
    /// Where it looks; default `any`.
    #[serde(default)]
    pub part: RulePart,
    #[serde(deserialize_with = "score")]
    pub score: f32,
    pub host: Option<HostPattern>,
    pub path: Option<PathPattern>,
    pub methods: Option<Methods>,
    pub note: Option<String>,
}

/// `[a-z0-9._-]+`, unique in the file: events name it (`custom:<id>`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct RuleId(pub String);

impl TryFrom<String> for RuleId {
    type Error = String;

    fn try_from(id: String) -> Result<Self, String> {
        let ok = !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        ok.then_some(RuleId(id.clone())).ok_or_else(|| format!("`{id}` is not a rule id: 1 to 64 of a-z A-Z 0-9 . _ -"))
    }
}

/// `path`, `body`, `any`, `query:NAME`, `body:NAME` (form, multipart or JSON key),
/// `header:NAME`, `cookie:NAME`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub enum RulePart {
    Path,
    Body,
    #[default]
    Any,
    Query(String),
    BodyField(String),
    Header(String),
    Cookie(String),
}

impl TryFrom<String> for RulePart {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        let bad = || format!("`{text}` is not a part: path, body, any, query:NAME, body:NAME, header:NAME or cookie:NAME");
        Ok(match text.split_once(':') {
            None => match text.as_str() {
                "path" => RulePart::Path,
                "body" => RulePart::Body,
                "any" => RulePart::Any,
                _ => return Err(bad()),
            },
            Some((_, "")) => return Err(bad()),
            Some(("query", name)) => RulePart::Query(name.into()),
            Some(("body", name)) => RulePart::BodyField(name.into()),
            Some(("header", name)) => RulePart::Header(name.to_ascii_lowercase()),
            Some(("cookie", name)) => RulePart::Cookie(name.into()),
            Some(_) => return Err(bad()),
        })
    }
}

impl RulePart {
    fn covers(&self, field: Field<'_>) -> bool {
        use FieldKind as K;
        match self {
            RulePart::Any => true,
            RulePart::Path => field.kind == K::Path,
            RulePart::Body => matches!(field.kind, K::BodyKey | K::BodyValue | K::BodyRaw | K::XmlDoctype),
            RulePart::Query(name) => field.kind == K::QueryValue && field.name == name,
            RulePart::BodyField(name) => field.kind == K::BodyValue && field.name == name,
            RulePart::Header(name) => field.kind == K::Header && field.name.eq_ignore_ascii_case(name),
            RulePart::Cookie(name) => field.kind == K::Cookie && field.name == name,
        }
    }
}

fn score<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f32, D::Error> {
    let v = f64::deserialize(d)?;
    if !(0.0..=1.0).contains(&v) {
        return Err(serde::de::Error::custom(format!("score {v} is outside 0.0 to 1.0")));
    }
    Ok(v as f32)
}

/// One policy generation's custom rules, compiled.
pub struct CustomRules {
    rules: Vec<RuleFile>,
    /// None when the file has no rules.
    db: Option<BlockDatabase>,
    /// Hyperscan scratch, one per concurrent scan.
    scratch: Mutex<Vec<Scratch>>,
}

impl std::fmt::Debug for CustomRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CustomRules").field("rules", &self.rules.len()).finish()
    }
}

/// What a custom rule found in a request.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomHit {
    pub id: String,
    pub score: f32,
    /// Where it matched, as a field selector (`query:q`, `path`).
    pub field: String,
}

impl CustomHit {
    /// The verdict's reason and detector for this hit.
    pub fn reason(&self) -> String {
        format!("{DETECTOR}:{}", self.id)
    }
}

/// The detector slug custom rules report under.
pub const DETECTOR: &str = "custom";

impl CustomRules {
    pub fn none() -> Self {
        CustomRules { rules: Vec::new(), db: None, scratch: Mutex::new(Vec::new()) }
    }

    /// Checks and compiles `rules`; an error names the rule and, for a pattern, the line and
    /// column in `text` (the policy file) where the pattern starts.
    pub fn compile(rules: Vec<RuleFile>, text: &str) -> Result<Self, String> {
        if rules.is_empty() {
            return Ok(Self::none());
        }
        let mut patterns = Vec::with_capacity(rules.len());
        for (i, rule) in rules.iter().enumerate() {
            if rules[..i].iter().any(|r| r.id == rule.id) {
                return Err(format!("two [[rules]] have the id `{}`", rule.id.0));
            }
            let pattern = Self::pattern(i, rule)?;
            // One by one first: a bad expression is named with its rule and position.
            let one: Result<BlockDatabase, _> = pattern.build();
            if let Err(err) = one {
                let at = rule.pattern.as_ref().map(|p| line_column(text, p.span().start)).unwrap_or_default();
                return Err(format!("rule `{}`{at}: the pattern does not compile in Hyperscan: {err}", rule.id.0));
            }
            patterns.push(pattern);
        }
        let db: BlockDatabase = Patterns(patterns).build().map_err(|e| format!("custom rules do not compile together: {e}"))?;
        let scratch = db.alloc_scratch().map_err(|e| format!("custom rules: no Hyperscan scratch: {e}"))?;
        Ok(CustomRules { rules, db: Some(db), scratch: Mutex::new(vec![scratch]) })
    }

    fn pattern(i: usize, rule: &RuleFile) -> Result<Pattern, String> {
        let expression = match (&rule.pattern, &rule.literal) {
            (Some(p), None) if !p.get_ref().is_empty() => p.get_ref().clone(),
            (None, Some(l)) if !l.is_empty() => l.bytes().map(|b| format!("\\x{b:02x}")).collect(),
            _ => return Err(format!("rule `{}` needs exactly one of `pattern` and `literal` (not empty)", rule.id.0)),
        };
        let case = if rule.caseless { CompileFlags::CASELESS } else { CompileFlags::empty() };
        Ok(Pattern {
            expression,
            flags: case | CompileFlags::DOTALL | CompileFlags::SINGLEMATCH,
            id: Some(i),
            ext: Default::default(),
            som: None,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    pub fn rules(&self) -> &[RuleFile] {
        &self.rules
    }

    /// The ids of the rules that apply to a request (host lower-cased, port dropped).
    pub fn applying<'a>(&'a self, host: &'a str, method: &'a str, path: &'a str) -> impl Iterator<Item = &'a RuleFile> + 'a {
        self.rules.iter().filter(move |r| {
            r.host.as_ref().is_none_or(|h| h.matches(host))
                && r.path.as_ref().is_none_or(|p| p.matches(path))
                && r.methods.as_ref().is_none_or(|m| m.matches(method))
        })
    }

    /// The best-scoring custom rule that matches the request, if any, leaving out the rules
    /// the request's scope excludes (by id, everywhere or in one field), as built-in rules are.
    pub fn check(&self, request: RuleRequest<'_>, input: &scoring::ScoreInput<'_>) -> Option<CustomHit> {
        let db = self.db.as_ref()?;
        let RuleRequest { host, method, path, exclusions } = request;
        let wanted: Vec<bool> = {
            let applying: Vec<&RuleFile> =
                self.applying(host, method, path).filter(|r| !exclusions.iter().any(|e| e.turns_off(&r.id.0, None))).collect();
            if applying.is_empty() {
                return None;
            }
            self.rules.iter().map(|r| applying.iter().any(|a| std::ptr::eq(*a, r))).collect()
        };
        let request = scoring::request::parse_request(input, FieldLimits::default());
        let scratch = self.scratch.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let scratch = match scratch {
            Some(s) => s,
            None => db.alloc_scratch().ok()?,
        };
        let mut best: Option<(usize, Field<'_>)> = None;
        for field in request.fields.iter() {
            if !self.rules.iter().zip(&wanted).any(|(r, w)| *w && r.part.covers(field)) {
                continue;
            }
            let _ = db.scan(field.value.as_bytes(), &scratch, |id: u32, _from: u64, _to: u64, _flags: u32| {
                let i = id as usize;
                if wanted.get(i) == Some(&true)
                    && self.rules[i].part.covers(field)
                    && !exclusions.iter().any(|e| e.turns_off(&self.rules[i].id.0, Some(field)))
                    && best.is_none_or(|(b, _)| self.rules[i].score > self.rules[b].score)
                {
                    best = Some((i, field));
                }
                Matching::Continue
            });
        }
        self.scratch.lock().unwrap_or_else(|p| p.into_inner()).push(scratch);
        best.map(|(i, field)| CustomHit { id: self.rules[i].id.0.clone(), score: self.rules[i].score, field: field_location(field) })
    }
}

/// What the rules are checked against besides the request's fields: where it goes and the
/// exclusions its scope resolved to.
#[derive(Clone, Copy)]
pub struct RuleRequest<'a> {
    /// Lower-cased, port dropped.
    pub host: &'a str,
    pub method: &'a str,
    pub path: &'a str,
    pub exclusions: &'a [super::ExclusionFile],
}

impl super::ExclusionFile {
    /// This exclusion turns custom rule `id` off in `field` (None: the rule as a whole, which
    /// only an exclusion without a field does).
    fn turns_off(&self, id: &str, field: Option<Field<'_>>) -> bool {
        self.rule.as_deref() == Some(id)
            && match (&self.field, field) {
                (None, _) => true,
                (Some(selector), Some(field)) => selects(&selector.0, field),
                (Some(_), None) => false,
            }
    }
}

/// A policy field selector against one parsed field: the same parts and names the engine's
/// own exclusions match (scoring::exclusion), header names case-insensitively.
fn selects(selector: &scoring::exclusion::FieldRef, field: Field<'_>) -> bool {
    use scoring::exclusion::FieldPart as P;
    use FieldKind as K;
    let part = match field.kind {
        K::QueryName | K::QueryValue => P::Query,
        K::BodyKey | K::BodyValue => P::Body,
        K::Header => P::Header,
        K::Cookie => P::Cookie,
        _ => return false,
    };
    part == selector.part && if part == P::Header { field.name.eq_ignore_ascii_case(&selector.name) } else { field.name == selector.name }
}

/// ` (line L, column C)` of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> String {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!(" (line {line}, column {column})")
}

/// Puts a custom rule's hit into a verdict: it decides when it scores above the verdict, and
/// it is listed among the top detectors either way.
pub fn apply(hit: CustomHit, verdict: &mut crate::scorer::Verdict) {
    let evidence = Evidence { detector: DETECTOR.into(), score: hit.score, reason: hit.reason(), field: Some(hit.field.clone()) };
    if hit.score > verdict.score {
        verdict.score = hit.score;
        verdict.reason = hit.reason();
        verdict.detector = DETECTOR.into();
    }
    let at = verdict.evidence.iter().position(|e| e.score < hit.score).unwrap_or(verdict.evidence.len());
    verdict.evidence.insert(at, evidence);
    verdict.evidence.truncate(scoring::verdict::TOP_EVIDENCE);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> Result<CustomRules, String> {
        #[derive(Deserialize)]
        struct File {
            rules: Vec<RuleFile>,
        }
        let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
        CustomRules::compile(file.rules, text)
    }

    #[test]
    fn parts_scopes_and_errors() {
        let set = rules(
            r#"
[[rules]]
id = "cve-1"
pattern = "(?i)evil\\d+"
part = "query:q"
score = 0.9
path = "/api"

[[rules]]
id = "lit"
literal = "a.b"
part = "header:X-Thing"
score = 0.7
"#,
        )
        .unwrap();
        let input = |text: &'static str, headers: &'static [(String, String)]| scoring::ScoreInput { request_text: text, headers };
        let at = |path| RuleRequest { host: "h", method: "GET", path, exclusions: &[] };
        let hit = set.check(at("/api/x"), &input("GET /api/x?q=EVIL42\n", &[])).unwrap();
        assert_eq!((hit.id.as_str(), hit.field.as_str()), ("cve-1", "query:q"));
        assert!(set.check(at("/other"), &input("GET /other?q=EVIL42\n", &[])).is_none(), "outside its path");
        assert!(set.check(at("/api/x"), &input("GET /api/x?name=EVIL42\n", &[])).is_none(), "another parameter");
        let headers: &'static [(String, String)] = Box::leak(Box::new([("x-thing".to_string(), "1a.b2".to_string())]));
        assert_eq!(set.check(at("/"), &input("GET /\n", headers)).unwrap().id, "lit");
        let headers: &'static [(String, String)] = Box::leak(Box::new([("x-thing".to_string(), "1axb2".to_string())]));
        assert!(set.check(at("/"), &input("GET /\n", headers)).is_none(), "a literal's dot is a dot");

        // Exclusions by a custom rule's id, as for built-in rules: in one field, or everywhere.
        let exclusion = |field: Option<&str>| super::super::ExclusionFile {
            rule: Some("cve-1".into()),
            detector: None,
            field: field.map(|f| super::super::FieldSelector::try_from(f.to_string()).unwrap()),
            note: None,
        };
        let evil = input("GET /api/x?q=EVIL42&name=EVIL7\n", &[]);
        let both = rules("[[rules]]\nid = \"cve-1\"\npattern = \"EVIL\\\\d\"\nscore = 0.9\n").unwrap();
        let with = |exclusions: &[super::super::ExclusionFile]| {
            both.check(RuleRequest { host: "h", method: "GET", path: "/api/x", exclusions }, &evil).map(|h| h.field)
        };
        assert_eq!(with(&[]).as_deref(), Some("query:q"));
        assert_eq!(with(&[exclusion(Some("query:q"))]).as_deref(), Some("query:name"), "still matched in the other parameter");
        assert_eq!(with(&[exclusion(Some("query:q")), exclusion(Some("query:name"))]), None);
        assert_eq!(with(&[exclusion(None)]), None, "excluded everywhere");
        assert_eq!(with(&[exclusion(Some("header:q"))]).as_deref(), Some("query:q"), "a header selector is not a query field");

        let err = rules("[[rules]]\nid = \"bad\"\npattern = \"a(b\"\nscore = 0.5\n").err().unwrap();
        assert!(err.contains("rule `bad` (line 3, column 11)"), "{err}");
        let err = rules("[[rules]]\nid = \"x\"\npattern = \"a\"\nliteral = \"b\"\nscore = 0.5\n").err().unwrap();
        assert!(err.contains("exactly one"), "{err}");
        let err = rules("[[rules]]\nid = \"x\"\npattern = \"a\"\npart = \"query\"\nscore = 0.5\n").err().unwrap();
        assert!(err.contains("not a part"), "{err}");
    }
}
