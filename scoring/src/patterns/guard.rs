//! Byte guards: which bytes a rule cannot match without. Most rules need a punctuation byte
//! (`'`, `<`, `{`, `(`, …) that a benign value rarely holds; grouping such rules into their own
//! Hyperscan databases lets the stage skip a whole database when the view holds none of its
//! guard bytes. The guard is derived from the pattern itself, never declared by hand, so it
//! cannot drift from the rule: a pattern the analysis does not understand gets no guard and
//! stays in the database scanned on every request.

use regex_syntax::hir::{Class, Hir, HirKind};
use regex_syntax::ParserBuilder;
use syntax::ByteSet;

/// A set of bytes of which every match of the rule holds at least one; `None` when the
/// analysis finds none worth guarding on.
pub fn required_bytes(pattern: &str, case_sensitive: bool) -> Option<ByteSet> {
    // Bytes, not Unicode: Hyperscan scans bytes with ASCII-only case folding, which is what
    // regex-syntax does with Unicode mode off.
    let hir = ParserBuilder::new().unicode(false).utf8(false).case_insensitive(!case_sensitive).build().parse(pattern).ok()?;
    need(&hir).filter(|set| cost(set) <= GUARD_COST_LIMIT)
}

/// Splits rules into databases: one scanned on every view (rules without a rare-byte guard)
/// and at most `MAX_GUARDED` more, each with the union of its rules' guards. Returns the
/// groups' guards and rule indices; the unguarded group first, empty groups left out.
pub fn partition(guards: &[Option<ByteSet>]) -> Vec<(Option<ByteSet>, Vec<usize>)> {
    let mut always = Vec::new();
    let mut groups: Vec<(ByteSet, Vec<usize>)> = Vec::new();
    for (idx, guard) in guards.iter().enumerate() {
        match guard {
            Some(g) if cost(g) <= RARE_GUARD_COST => match groups.iter_mut().find(|(set, _)| set == g) {
                Some((_, members)) => members.push(idx),
                None => groups.push((*g, vec![idx])),
            },
            _ => always.push(idx),
        }
    }
    // Merge the two groups whose union is cheapest until few enough remain: every database
    // scanned costs a call, and a cheap union is one benign views seldom trigger.
    while groups.len() > MAX_GUARDED {
        let mut best = (u32::MAX, 0, 1);
        for i in 0..groups.len() {
            for j in i + 1..groups.len() {
                let merged = cost(&groups[i].0.union(&groups[j].0));
                if merged < best.0 {
                    best = (merged, i, j);
                }
            }
        }
        let (_, i, j) = best;
        let (set, members) = groups.swap_remove(j);
        groups[i].0 = groups[i].0.union(&set);
        groups[i].1.extend(members);
    }
    let mut out = Vec::with_capacity(groups.len() + 1);
    if !always.is_empty() {
        out.push((None, always));
    }
    out.extend(groups.into_iter().map(|(set, members)| (Some(set), members)));
    out
}

/// One database to build: the lowest sensitivity level its rules count at, its guard (None:
/// scanned on every view of that level) and its rules' indices.
#[derive(Clone, Debug, PartialEq)]
pub struct DbPlan {
    pub level: u8,
    pub guard: Option<ByteSet>,
    pub members: Vec<usize>,
}

/// Splits rules first by level, then each level's rules by guard (`partition`). A rule of a
/// higher level than the one in force cannot count, so a request at level 1 must not pay to
/// scan for it: a quarter of the rules (the `-in-text` twins, level 2) sit in databases that
/// only a level-2 scan opens.
pub fn plan(levels: &[u8], guards: &[Option<ByteSet>]) -> Vec<DbPlan> {
    let mut distinct: Vec<u8> = levels.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let mut plans = Vec::new();
    for level in distinct {
        let members: Vec<usize> = (0..levels.len()).filter(|&i| levels[i] == level).collect();
        let tier_guards: Vec<Option<ByteSet>> = members.iter().map(|&i| guards[i]).collect();
        for (guard, local) in partition(&tier_guards) {
            plans.push(DbPlan { level, guard, members: local.iter().map(|&k| members[k]).collect() });
        }
    }
    plans
}

/// Databases beyond the always-scanned one. Each scan call has a fixed cost, so a handful.
const MAX_GUARDED: usize = 5;

/// A guard made only of code punctuation (`<{(;$'…`); one holding URL or e-mail punctuation
/// would be scanned on most requests anyway, so its rules stay in the always-scanned database.
const RARE_GUARD_COST: u32 = 18;

/// A guard whose bytes cost more than this is useless: benign values hold them anyway.
const GUARD_COST_LIMIT: u32 = 40;

/// How often a byte appears in benign field values, roughly: letters, digits and spaces are
/// everywhere, URL and e-mail punctuation often, code punctuation seldom. Only used to choose
/// among the sets a pattern offers; a wrong weight costs speed, never a match.
fn byte_cost(b: u8) -> u32 {
    match b {
        b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b' ' | 0x80..=0xff => 100,
        b'.' | b'-' | b'_' | b':' | b'/' | b',' | b'@' | b'\n' | b'\r' | b'\t' => 20,
        b'\'' | b'"' | b'&' | b'=' | b'?' | b'+' | b'%' | b';' | b'!' | b'#' => 6,
        _ => 1,
    }
}

fn cost(set: &ByteSet) -> u32 {
    (0..=255u8).filter(|&b| set.contains(b)).map(byte_cost).sum()
}

/// The cheapest byte set some part of every match must hold.
fn need(hir: &Hir) -> Option<ByteSet> {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => None,
        // Every byte of a literal is required; the rarest one alone is the best guard.
        HirKind::Literal(lit) => lit.0.iter().min_by_key(|&&b| byte_cost(b)).map(|&b| ByteSet::from_bytes(&[b])),
        HirKind::Class(class) => class_bytes(class),
        HirKind::Repetition(rep) if rep.min >= 1 => need(&rep.sub),
        HirKind::Repetition(_) => None,
        HirKind::Capture(cap) => need(&cap.sub),
        HirKind::Concat(parts) => parts.iter().filter_map(need).min_by_key(cost),
        HirKind::Alternation(alts) => {
            let mut union = ByteSet::default();
            for alt in alts {
                union = union.union(&need(alt)?);
            }
            Some(union)
        }
    }
}

/// A class's bytes, unless it is so wide that it guards nothing.
fn class_bytes(class: &Class) -> Option<ByteSet> {
    let mut bytes = Vec::new();
    match class {
        Class::Bytes(c) => {
            for range in c.ranges() {
                if bytes.len() + usize::from(range.end() - range.start()) + 1 > 32 {
                    return None;
                }
                bytes.extend(range.start()..=range.end());
            }
        }
        // Unicode mode is off, so this only holds ASCII; kept for completeness.
        Class::Unicode(c) => {
            for range in c.ranges() {
                let (start, end) = (range.start() as u32, range.end() as u32);
                if end > 0x7f || bytes.len() + (end - start) as usize + 1 > 32 {
                    return None;
                }
                bytes.extend((start..=end).map(|c| c as u8));
            }
        }
    }
    Some(ByteSet::from_bytes(&bytes))
}

#[cfg(test)]
mod tests {
    use super::required_bytes;

    fn guard(p: &str) -> Option<String> {
        required_bytes(p, false).map(|s| (0..=255u8).filter(|&b| s.contains(b)).map(char::from).collect())
    }

    #[test]
    fn picks_the_rarest_required_byte() {
        assert_eq!(guard(r"<script\b").as_deref(), Some("<"));
        assert_eq!(guard(r"(?:\{\{|\$\{|@\()\s*\w").as_deref(), Some("$({"));
        assert_eq!(guard(r"'\s*(--|#|/\*)").as_deref(), Some("'"));
        assert_eq!(guard(r"\bunion\s+select\b"), None, "letters only: no useful guard");
        assert_eq!(guard(r"a|<b"), None, "one branch needs nothing rare");
        assert_eq!(guard(r"(?:<)?x"), None, "optional parts guard nothing");
        assert_eq!(guard(r"\h+x"), None, "Hyperscan-only syntax: no guard, scanned always");
    }

    /// The guard is sound: a sample of texts each rule matches (the evasion suite covers this
    /// on every rule) always holds a guard byte. Here: quick checks on shapes that matter.
    #[test]
    fn partition_keeps_every_rule_once() {
        use syntax::ByteSet;
        let guards: Vec<Option<ByteSet>> = ["<", "<", "'", "(", "{", "$", ";", "|", "/", ""]
            .iter()
            .map(|g| (!g.is_empty()).then(|| ByteSet::from_bytes(g.as_bytes())))
            .collect();
        let groups = super::partition(&guards);
        let mut seen: Vec<usize> = groups.iter().flat_map(|(_, m)| m.clone()).collect();
        seen.sort();
        assert_eq!(seen, (0..guards.len()).collect::<Vec<_>>());
        assert_eq!(groups[0], (None, vec![8, 9]), "`/` is too common to guard on; no guard at all");
        assert!(groups.len() <= 1 + super::MAX_GUARDED);
        for (guard, members) in &groups[1..] {
            for &m in members {
                assert!(guards[m].unwrap().union(guard.as_ref().unwrap()) == guard.unwrap(), "group guard covers its rules");
            }
        }
    }

    #[test]
    fn plan_keeps_levels_apart() {
        use syntax::ByteSet;
        let lt = Some(ByteSet::from_bytes(b"<"));
        let plans = super::plan(&[1, 2, 1, 2], &[lt, lt, None, None]);
        for plan in &plans {
            assert!(plan.members.iter().all(|&m| [1, 2, 1, 2][m] == plan.level), "{plan:?}");
        }
        let mut seen: Vec<usize> = plans.iter().flat_map(|p| p.members.clone()).collect();
        seen.sort();
        assert_eq!(seen, vec![0, 1, 2, 3]);
        assert_eq!(plans.len(), 4, "per level: one always-scanned and one `<` database");
    }

    #[test]
    fn case_folding_keeps_both_cases() {
        let set = required_bytes(r"<svg", false).unwrap();
        assert!(set.contains(b'<'));
        assert_eq!(required_bytes(r"[<>]{2}", true).map(|s| s.contains(b'>')), Some(true));
    }
}
