//! What each rule puts into the pattern databases: its expression made field-local, its
//! flags, and for a prefiltered rule (`prefilter.rs`) the cheap part scanned and the whole
//! pattern kept for confirming.

use hyperscan::prelude::*;

use super::rules::Rule;
use super::{field_local, prefilter, PatternError};

/// What one rule puts into the databases.
pub(super) struct Compiled {
    /// The expression the shared databases scan (for a prefiltered rule: only its cheap part).
    pub scanned: Pattern,
    /// The whole rule, for the confirming database (windowed rules only).
    pub confirm: Option<Pattern>,
    /// It matches NUL on purpose: its matches are checked to lie within one field.
    pub matches_nul: bool,
}

/// The rule's pattern made field-local; with `prefilters`, a rule with a prefilter (named in
/// its file, or what follows a line-start window) is split into that part (scanned) and
/// itself (confirming), see `prefilter.rs`.
pub(super) fn compile_pattern(id: usize, rule: &Rule, prefilters: bool) -> Compiled {
    let whole = compile_whole(id, rule);
    let part = rule.prefilter.as_deref().or_else(|| prefilter::window_rest(&rule.pattern));
    match part.filter(|_| prefilters) {
        // A NUL-matching rule's start-of-match check needs the whole match: kept whole.
        Some(part) if !whole.1 => {
            let (expression, _) = field_local::make_field_local(part);
            // Confirming needs one match (and SINGLEMATCH keeps a large window pattern within
            // Hyperscan's limits: `encoded-dotdot-chain` does not compile without it).
            let confirm = Pattern { flags: whole.0.flags | CompileFlags::SINGLEMATCH, ..whole.0.clone() };
            Compiled { scanned: Pattern { expression, ..whole.0 }, confirm: Some(confirm), matches_nul: false }
        }
        // The reference stage: one match per rule is all it is asked for (`from_rules_whole`).
        _ if !prefilters && !whole.1 => {
            Compiled { scanned: Pattern { flags: whole.0.flags | CompileFlags::SINGLEMATCH, ..whole.0 }, confirm: None, matches_nul: false }
        }
        _ => Compiled { scanned: whole.0, confirm: None, matches_nul: whole.1 },
    }
}

/// The rule's whole pattern made field-local; the flag says whether it needs start-of-match.
fn compile_whole(id: usize, rule: &Rule) -> (Pattern, bool) {
    let (expression, matches_nul) = field_local::make_field_local(&rule.pattern);
    // SOM is costly (and overflows when used on every pattern): only where a match could
    // otherwise include the separator. Such rules report every match, not just the first, so
    // a rejected cross-field match cannot hide a real one.
    let case = if rule.case_sensitive { CompileFlags::empty() } else { CompileFlags::CASELESS };
    // Every rule reports every match, never only its first (SINGLEMATCH): a match the stage
    // drops would hide the next one in a later field. Matches are dropped inside long prose
    // (a prose level), in a field the request's policy scope excludes the rule from, and a
    // gate selects each field it matches for the model; with SINGLEMATCH, a decoy in the
    // first field was a bypass of all three. Benign views rarely match, so it costs nothing
    // there (`rule_cost`).
    let flags = if matches_nul { case | CompileFlags::SOM_LEFTMOST } else { case };
    (Pattern { expression, flags, id: Some(id), ext: Default::default(), som: None }, matches_nul)
}

/// After a failed multi-pattern compile, compiles rules one by one to name the culprit.
pub(super) fn find_bad_rule(rules: &[Rule]) -> Option<PatternError> {
    rules.iter().enumerate().find_map(|(i, r)| {
        let one: Result<BlockDatabase, _> = compile_whole(i, r).0.build();
        one.err().map(|e| PatternError::BadPattern { reason: r.reason.clone(), file: String::new(), detail: e.to_string() })
    })
}
