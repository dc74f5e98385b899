//! Operator policy: one TOML file (WAF_POLICY / --policy) that overrides the flags per host and
//! per route, resolved once per request inside the gate so every front door obeys it. The
//! flags are the baseline; `[defaults]` overrides them; every `[[scope]]` matching a request
//! is applied from the least to the most specific, each overriding what it sets (resolution
//! order in docs/POLICY.md). A process started without a file runs on the baseline alone,
//! exactly as before.

pub mod body;
pub mod custom_rules;
pub mod explain;
mod file;
pub mod from_event;
mod guards;
mod matchers;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use thiserror::Error;

pub use file::{ExclusionFile, FieldSelector, PolicyFile, ScopeFile, ScopeMode};
pub use guards::{IpList, Limiter, RateLimit};
pub use matchers::{HostPattern, Methods, PathPattern};

use crate::decision::{self, KillResponse, WafMode};
use file::DetectorSlug;
use scoring::exclusion::ScoringScope;

/// Why a policy file was not taken. Each message names the file and, for a parse or a value
/// error, its line and column (toml's report, with the offending line quoted).
#[derive(Debug, Error)]
pub enum PolicyError {
    #[error("cannot read the policy file {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("policy file {path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

/// What the flags say: the policy when no file is given, and what a file overrides.
#[derive(Clone, Copy, Debug)]
pub struct Baseline {
    pub threshold: f32,
    pub fail: decision::Policy,
}

/// The effective settings for one request.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The scopes applied, least specific first (`flags`, `defaults`, then `[[scope]]` names).
    pub scopes: Vec<String>,
    /// None: the process's mode (flags, `[defaults] mode`, `POST /api/mode`).
    pub mode: Option<ScopeMode>,
    pub threshold: f32,
    pub fail: decision::Policy,
    /// None: the door's own setting (WAF_KILL_RESPONSE).
    pub kill_response: Option<KillResponse>,
    /// None: the engine's level (WAF_SENSITIVITY).
    pub sensitivity: Option<u8>,
    pub detectors: BTreeMap<DetectorSlug, bool>,
    /// Accumulated over every applied scope.
    pub exclusions: Vec<ExclusionFile>,
    /// What the scorer must do differently; None when nothing (the scorer's plain path).
    pub scoring: Option<Arc<ScoringScope>>,
    pub guards: Guards,
    /// The body limit and oversize behaviour (the doors read it before the body).
    pub body: body::BodyRules,
}

/// A scope's client checks, built once per load (the buckets live as long as the policy).
#[derive(Clone, Debug, Default)]
pub struct Guards {
    pub allow_ips: Option<Arc<IpList>>,
    pub deny_ips: Option<Arc<IpList>>,
    /// The limiter of the most specific scope that sets `rate_limit`, and its name.
    pub rate_limit: Option<(Arc<Limiter>, String)>,
}

impl Guards {
    fn of(name: &str, scope: &ScopeFile) -> Self {
        Guards {
            allow_ips: scope.allow_ips.clone().map(Arc::new),
            deny_ips: scope.deny_ips.clone().map(Arc::new),
            rate_limit: scope.rate_limit.as_ref().map(|limit| (Arc::new(Limiter::new(limit)), name.to_string())),
        }
    }

    fn overridden_by(&mut self, other: &Guards) {
        if other.allow_ips.is_some() {
            self.allow_ips.clone_from(&other.allow_ips);
        }
        if other.deny_ips.is_some() {
            self.deny_ips.clone_from(&other.deny_ips);
        }
        if other.rate_limit.is_some() {
            self.rate_limit.clone_from(&other.rate_limit);
        }
    }
}

impl Resolved {
    fn baseline(baseline: Baseline) -> Self {
        Resolved {
            scopes: vec!["flags".into()],
            mode: None,
            threshold: baseline.threshold,
            fail: baseline.fail,
            kill_response: None,
            sensitivity: None,
            detectors: BTreeMap::new(),
            exclusions: Vec::new(),
            scoring: None,
            guards: Guards::default(),
            body: body::BodyRules::default(),
        }
    }

    fn apply(&mut self, name: &str, scope: &ScopeFile, guards: &Guards) {
        self.scopes.push(name.to_string());
        self.guards.overridden_by(guards);
        self.mode = scope.mode.or(self.mode);
        self.threshold = scope.threshold.unwrap_or(self.threshold);
        if let Some(v) = scope.on_scoring_error {
            self.fail.on_scoring_error = v.into();
        }
        if let Some(v) = scope.on_model_missing {
            self.fail.on_model_missing = v.into();
        }
        if let Some(v) = scope.on_partial {
            self.fail.on_partial = v.into();
        }
        self.kill_response = scope.kill_response.map(Into::into).or(self.kill_response);
        if let Some(limit) = scope.body_limit {
            self.body.limit = Some(limit as usize);
        }
        self.body.oversize = scope.oversize_body.or(self.body.oversize);
        self.sensitivity = scope.sensitivity.or(self.sensitivity);
        self.detectors.extend(scope.detectors.iter().map(|(k, v)| (k.clone(), *v)));
        self.exclusions.extend(scope.exclusions.iter().cloned());
    }

    /// Builds what the scorer needs from the merged settings.
    fn finish(mut self) -> Self {
        let mut exclusions: Vec<_> = self.exclusions.iter().map(ExclusionFile::scoring).collect();
        let off = self.detectors.iter().filter(|(_, on)| !**on);
        exclusions.extend(
            off.map(|(slug, _)| scoring::exclusion::Exclusion { target: scoring::exclusion::Target::Detector(slug.id()), field: None }),
        );
        let changes = self.sensitivity.is_some() || !exclusions.is_empty();
        // The threshold travels too: a pattern hit above the engine's own threshold but under
        // this scope's must not skip the models.
        self.scoring =
            changes.then(|| Arc::new(ScoringScope { sensitivity: self.sensitivity, threshold: Some(self.threshold), exclusions }));
        self
    }

    pub fn scope_name(&self) -> &str {
        self.scopes.last().map(String::as_str).unwrap_or("flags")
    }
}

#[derive(Debug)]
struct CompiledScope {
    name: String,
    scope: ScopeFile,
    guards: Guards,
}

impl CompiledScope {
    fn matches(&self, host: &str, method: &str, path: &str) -> bool {
        self.scope.host.as_ref().is_none_or(|h| h.matches(host))
            && self.scope.path.as_ref().is_none_or(|p| p.matches(path))
            && self.scope.methods.as_ref().is_none_or(|m| m.matches(method))
    }

    /// Path first (a route is a finer cut than a host), then host, then methods.
    fn rank(&self) -> ((usize, u8), (u8, usize), bool) {
        let path = self.scope.path.as_ref().map(|p| {
            let (len, prefix) = p.rank();
            (len + 1, prefix)
        });
        (path.unwrap_or((0, 0)), self.scope.host.as_ref().map_or((0, 0), HostPattern::rank), self.scope.methods.is_some())
    }
}

/// A loaded, checked policy: the baseline with `[defaults]`, and the scopes sorted from the
/// least to the most specific (equal ranks keep file order: the later one wins).
#[derive(Debug)]
pub struct PolicySet {
    source: Option<PathBuf>,
    defaults_mode: Option<WafMode>,
    base: Arc<Resolved>,
    scopes: Vec<CompiledScope>,
    /// `[[rules]]`, compiled with this generation and swapped in with it.
    custom: custom_rules::CustomRules,
}

impl PolicySet {
    /// The flags alone: no file.
    pub fn baseline(baseline: Baseline) -> Self {
        PolicySet {
            source: None,
            defaults_mode: None,
            base: Arc::new(Resolved::baseline(baseline).finish()),
            scopes: Vec::new(),
            custom: custom_rules::CustomRules::none(),
        }
    }

    pub fn load(path: &Path, baseline: Baseline) -> Result<Self, PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read { path: path.to_path_buf(), source })?;
        Self::parse(&text, baseline)
            .map(|mut set| {
                set.source = Some(path.to_path_buf());
                set
            })
            .map_err(|message| PolicyError::Invalid { path: path.to_path_buf(), message })
    }

    pub fn parse(text: &str, baseline: Baseline) -> Result<Self, String> {
        let file: PolicyFile = toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())?;
        let defaults = &file.defaults;
        if defaults.host.is_some() || defaults.path.is_some() || defaults.methods.is_some() || defaults.name.is_some() {
            return Err("[defaults] applies to every request: it takes no name, host, path or methods (use a [[scope]])".into());
        }
        let defaults_mode = match defaults.mode {
            None => None,
            Some(ScopeMode::Shadow) => Some(WafMode::Shadow),
            Some(ScopeMode::Active) => Some(WafMode::Active),
            Some(ScopeMode::Off) => return Err("[defaults] mode is shadow or active; `off` is for a [[scope]]".into()),
        };
        let mut base = Resolved::baseline(baseline);
        base.apply("defaults", &ScopeFile { mode: None, ..defaults.clone() }, &Guards::of("defaults", defaults));
        let custom = custom_rules::CustomRules::compile(file.rules, text)?;
        let mut scopes: Vec<CompiledScope> = Vec::new();
        for (i, scope) in file.scopes.into_iter().enumerate() {
            let name = scope.name.clone().unwrap_or_else(|| format!("scope #{}", i + 1));
            if scopes.iter().any(|s| s.name == name) {
                return Err(format!("two scopes are named `{name}`"));
            }
            let guards = Guards::of(&name, &scope);
            scopes.push(CompiledScope { name, scope, guards });
        }
        // A stable sort keeps file order among equals.
        scopes.sort_by_key(CompiledScope::rank);
        Ok(PolicySet { source: None, defaults_mode, base: Arc::new(base.finish()), scopes, custom })
    }

    /// What every request gets when no scope matches.
    pub fn defaults(&self) -> &Resolved {
        &self.base
    }

    /// This set as loaded from `path` (reloads and the API write there).
    pub fn with_source(mut self, path: PathBuf) -> Self {
        self.source = Some(path);
        self
    }

    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    /// `[defaults] mode`, when the file sets it.
    pub fn defaults_mode(&self) -> Option<WafMode> {
        self.defaults_mode
    }

    /// Some scope (or `[defaults]`) changes what the engine does.
    pub fn changes_scoring(&self) -> bool {
        self.base.scoring.is_some()
            || self.scopes.iter().any(|s| {
                let s = &s.scope;
                s.sensitivity.is_some() || !s.detectors.is_empty() || !s.exclusions.is_empty()
            })
    }

    pub fn custom_rules(&self) -> &custom_rules::CustomRules {
        &self.custom
    }

    pub fn scope_names(&self) -> impl Iterator<Item = &str> {
        self.scopes.iter().map(|s| s.name.as_str())
    }

    /// The settings for a request. `host` is lower-cased and its port dropped here.
    pub fn resolve(&self, host: &str, method: &str, path: &str) -> Arc<Resolved> {
        let host = normalize_host(host);
        let mut matching = self.scopes.iter().filter(|s| s.matches(&host, method, path)).peekable();
        if matching.peek().is_none() {
            return self.base.clone();
        }
        let mut resolved = (*self.base).clone();
        for scope in matching {
            resolved.apply(&scope.name, &scope.scope, &scope.guards);
        }
        Arc::new(resolved.finish())
    }
}

/// `Shop.Example.com:8443` -> `shop.example.com`; `[::1]:80` -> `[::1]`.
pub fn normalize_host(host: &str) -> String {
    let host = host.trim().trim_end_matches('.');
    let without_port = match host.rsplit_once(':') {
        Some((name, port))
            if !name.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) && (!name.contains(':') || name.ends_with(']')) =>
        {
            name
        }
        _ => host,
    };
    without_port.to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn baseline() -> Baseline {
        Baseline { threshold: 0.5, fail: decision::Policy::default() }
    }

    const FILE: &str = r#"
[defaults]
threshold = 0.6

[[scope]]
name = "wild"
host = "*.example.com"
mode = "shadow"
threshold = 0.7

[[scope]]
name = "shop"
host = "shop.example.com"
threshold = 0.8

[[scope]]
name = "login-anywhere"
path = "/login"
mode = "active"

[[scope]]
name = "shop-search-get"
host = "shop.example.com"
path = "/search"
methods = ["GET"]
exclusions = [{ rule = "xss-1", field = "query:q" }]
"#;

    #[test]
    fn most_specific_wins_field_by_field() {
        let set = PolicySet::parse(FILE, baseline()).unwrap();
        let r = set.resolve("other.org", "GET", "/");
        assert_eq!((r.threshold, r.mode, r.scope_name()), (0.6, None, "defaults"));
        let r = set.resolve("a.example.com", "GET", "/");
        assert_eq!((r.threshold, r.mode), (0.7, Some(ScopeMode::Shadow)));
        let r = set.resolve("Shop.Example.com:8080", "GET", "/");
        assert_eq!(
            (r.threshold, r.mode, r.scope_name()),
            (0.8, Some(ScopeMode::Shadow), "shop"),
            "exact host over wildcard; mode from the wildcard"
        );
        // A route beats a host: /login is active even on a shadow host.
        let r = set.resolve("a.example.com", "POST", "/login/x");
        assert_eq!((r.threshold, r.mode, r.scope_name()), (0.7, Some(ScopeMode::Active), "login-anywhere"));
        let r = set.resolve("shop.example.com", "GET", "/search");
        assert_eq!(r.scopes, ["flags", "defaults", "wild", "shop", "shop-search-get"]);
        assert_eq!(r.exclusions.len(), 1);
        assert!(r.scoring.is_some());
        let r = set.resolve("shop.example.com", "POST", "/search");
        assert!(r.exclusions.is_empty() && r.scoring.is_none(), "methods limit the scope");
    }

    #[test]
    fn errors_name_the_line() {
        let err = PolicySet::parse("[defaults]\nthreshold = 0.5\n\n[[scope]]\npath = \"/a\"\nthreshhold = 0.2\n", baseline()).unwrap_err();
        assert!(err.contains("line 6") && err.contains("threshhold"), "{err}");
        let err = PolicySet::parse("[[scope]]\nhost = \"http://x\"\n", baseline()).unwrap_err();
        assert!(err.contains("line 2") && err.contains("not a host"), "{err}");
        let err =
            PolicySet::parse("[[scope]]\npath = \"/a\"\nexclusions = [{ rule = \"x\", field = \"param:q\" }]\n", baseline()).unwrap_err();
        assert!(err.contains("line 3") && err.contains("not a field"), "{err}");
        let err = PolicySet::parse("[[scope]]\ndetectors = { sqlx = false }\n", baseline()).unwrap_err();
        assert!(err.contains("line 2") && err.contains("not a detector"), "{err}");
        let err = PolicySet::parse("[defaults]\nmode = \"off\"\n", baseline()).unwrap_err();
        assert!(err.contains("[defaults] mode"), "{err}");
    }

    #[test]
    fn the_annotated_example_parses() {
        let text = include_str!("../../../deploy/policy/example.toml");
        let set = PolicySet::parse(text, baseline()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(set.defaults_mode(), Some(WafMode::Active));
        let r = set.resolve("shop.example.com", "GET", "/search");
        assert_eq!((r.sensitivity, r.scope_name(), r.exclusions.len()), (Some(2), "shop-search", 1));
        let r = set.resolve("x.org", "PUT", "/api/pages/7/content");
        assert_eq!(r.fail.on_scoring_error, decision::FailMode::Closed);
        let r = set.resolve("x.org", "POST", "/upload/avatar");
        assert_eq!((r.body.limit, r.body.oversize), (Some(65536), Some(body::Oversize::Block)));
        let r = set.resolve("x.org", "GET", "/upload/avatar");
        assert_eq!(r.body, body::BodyRules::default(), "methods limit the scope");
    }

    #[test]
    fn no_file_is_the_baseline() {
        let set = PolicySet::baseline(baseline());
        let r = set.resolve("x", "GET", "/");
        assert_eq!((r.threshold, r.mode, r.kill_response, r.scoring.is_none()), (0.5, None, None, true));
        assert_eq!(r.fail, decision::Policy::default());
    }
}
