//! What `rampart policy check` and `rampart policy explain` print: the effective settings in
//! words an operator can compare with the file.

use std::fmt::Write as _;

use super::{PolicySet, Resolved};
use crate::decision::{FailMode, KillResponse, PartialPolicy};

/// `policy check`: the default settings, then every scope in resolution order.
pub fn describe(set: &PolicySet, defaults: &Resolved) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "policy: {}", set.source().map(|p| p.display().to_string()).unwrap_or_else(|| "(flags only)".into()));
    if let Some(mode) = set.defaults_mode() {
        let _ = writeln!(out, "process mode at load: {}", mode.as_str());
    }
    let _ = writeln!(out, "every request (flags, then [defaults]):");
    settings(&mut out, defaults);
    let _ = writeln!(out, "scopes, least to most specific (a later one overrides what it sets):");
    for scope in &set.scopes {
        let s = &scope.scope;
        let host = s.host.as_ref().map(|h| h.to_string()).unwrap_or_else(|| "any host".into());
        let path = s.path.as_ref().map(|p| p.to_string()).unwrap_or_else(|| "any path".into());
        let methods = s.methods.as_ref().map(|m| m.0.join(",")).unwrap_or_else(|| "any method".into());
        let _ = writeln!(out, "  - {}: {host}, {path}, {methods}", scope.name);
    }
    if set.scopes.is_empty() {
        let _ = writeln!(out, "  (none)");
    }
    let rules = set.custom_rules().rules();
    let _ = writeln!(out, "custom rules (one Hyperscan database, compiled):{}", if rules.is_empty() { " none" } else { "" });
    for rule in rules {
        let what = match (&rule.pattern, &rule.literal) {
            (Some(p), _) => format!("pattern {:?}", p.get_ref()),
            (None, Some(l)) => format!("literal {l:?}"),
            (None, None) => String::new(),
        };
        let host = rule.host.as_ref().map(|h| format!(", host {h}")).unwrap_or_default();
        let path = rule.path.as_ref().map(|p| format!(", path {p}")).unwrap_or_default();
        let _ = writeln!(out, "  - {}: {what} in {:?}, score {}{host}{path}", rule.id.0, rule.part, rule.score);
    }
    out
}

/// `policy explain`: which scopes apply to one request and the settings they add up to.
pub fn explain(resolved: &Resolved, method: &str, host: &str, path: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{method} {path} (host {host})");
    let _ = writeln!(out, "scopes applied, least specific first: {}", resolved.scopes.join(" -> "));
    let _ = writeln!(out, "deciding scope: {}", resolved.scope_name());
    settings(&mut out, resolved);
    out
}

fn settings(out: &mut String, r: &Resolved) {
    let mode = r.mode.map(|m| m.as_str().to_string()).unwrap_or_else(|| "the process mode (WAF_MODE, POST /api/mode)".into());
    let _ = writeln!(out, "  mode: {mode}");
    let _ = writeln!(out, "  threshold: {}", r.threshold);
    let sensitivity = r.sensitivity.map(|s| s.to_string()).unwrap_or_else(|| "the engine's (WAF_SENSITIVITY)".into());
    let _ = writeln!(out, "  sensitivity: {sensitivity}");
    let kill = match r.kill_response {
        Some(KillResponse::Reset) => "reset",
        Some(KillResponse::Forbidden) => "forbidden",
        None => "the door's (WAF_KILL_RESPONSE)",
    };
    let _ = writeln!(out, "  kill_response: {kill}");
    let _ = writeln!(out, "  on_scoring_error: {}", fail(r.fail.on_scoring_error));
    let _ = writeln!(out, "  on_model_missing: {}", fail(r.fail.on_model_missing));
    let partial = if r.fail.on_partial == PartialPolicy::Block { "block" } else { "pass" };
    let _ = writeln!(out, "  on_partial: {partial}");
    let limit =
        r.body.limit.map_or("the door's (WAF_BODY_LIMIT_BYTES; nginx's or Envoy's buffering)".to_string(), |b| format!("{b} bytes"));
    let _ = writeln!(out, "  body_limit: {limit}");
    let oversize = r.body.oversize.map_or("the door's (WAF_OVERSIZE_BODY; score-prefix for auth and ext_proc)", |o| o.as_str());
    let _ = writeln!(out, "  oversize_body: {oversize}");
    let off: Vec<&str> = r.detectors.iter().filter(|(_, on)| !**on).map(|(d, _)| d.0.as_str()).collect();
    let _ = writeln!(out, "  detectors off: {}", if off.is_empty() { "none".to_string() } else { off.join(", ") });
    let guards = &r.guards;
    let networks =
        |list: &Option<std::sync::Arc<super::IpList>>| list.as_ref().map_or("none".to_string(), |l| format!("{} networks", l.0.len()));
    let _ = writeln!(out, "  allow_ips: {}", networks(&guards.allow_ips));
    let _ = writeln!(out, "  deny_ips: {}", networks(&guards.deny_ips));
    let limit = guards.rate_limit.as_ref().map_or("none".to_string(), |(_, scope)| format!("the bucket of scope {scope}"));
    let _ = writeln!(out, "  rate_limit: {limit}");
    if r.exclusions.is_empty() {
        let _ = writeln!(out, "  exclusions: none");
    } else {
        let _ = writeln!(out, "  exclusions:");
        for e in &r.exclusions {
            let _ = writeln!(out, "    - {e}");
        }
    }
}

fn fail(mode: FailMode) -> &'static str {
    match mode {
        FailMode::Open => "open",
        FailMode::Closed => "closed",
    }
}
