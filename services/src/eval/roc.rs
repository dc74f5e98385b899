//! A model's quality from its scores on held-out rows: TPR/FPR at the engine's threshold and a
//! ROC-style table (TPR at a few target FPRs, thresholds chosen on the benign scores). Pure
//! functions over score lists; `quality` gathers the scores. See docs/EVAL.md.

/// The FPR targets of the ROC-style table: 0.01 %, 0.1 %, 1 %.
pub const TARGET_FPRS: [f64; 3] = [1e-4, 1e-3, 1e-2];

/// `hits` of `rows` (flagged attack rows for a TPR, flagged benign rows for an FPR).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    pub hits: usize,
    pub rows: usize,
}

impl Rate {
    /// Rows scoring strictly above `threshold`: the engine's rule (a score above it is an attack).
    pub fn above(scores: &[f32], threshold: f32) -> Rate {
        Rate { hits: scores.iter().filter(|&&s| s > threshold).count(), rows: scores.len() }
    }

    /// Percentage, or "n/a" without rows; more decimals for small rates.
    pub fn pct(&self) -> String {
        if self.rows == 0 {
            return "n/a".into();
        }
        let p = 100.0 * self.hits as f64 / self.rows as f64;
        if p != 0.0 && p < 1.0 {
            format!("{p:.3}%")
        } else {
            format!("{p:.2}%")
        }
    }
}

/// One threshold and what it gives.
#[derive(Clone, Debug, PartialEq)]
pub struct OperatingPoint {
    /// None for the engine's own threshold.
    pub target_fpr: Option<f64>,
    /// A row is flagged when its score is strictly above this.
    pub threshold: f32,
    pub tpr: Rate,
    pub fpr: Rate,
    /// FPR on each check set (benign rows measured apart, e.g. role-play prompts).
    pub checks: Vec<Rate>,
    /// False when the benign set has fewer than 1/target rows: no threshold can give a non-zero
    /// FPR at or below the target, so the threshold is the highest benign score (FPR 0).
    pub resolved: bool,
}

/// All figures of one model.
#[derive(Clone, Debug, PartialEq)]
pub struct Quality {
    pub at_default: OperatingPoint,
    /// One point per [`TARGET_FPRS`] entry; empty without benign rows.
    pub roc: Vec<OperatingPoint>,
    /// Area under the ROC curve (ties count half); None when either side is empty.
    pub auc: Option<f64>,
}

/// The lowest threshold (a benign score) whose FPR (`score > threshold`) is at most `target`,
/// and whether the benign set resolves `target`. `benign_desc` is sorted high to low.
///
/// With k = floor(target × n) false positives allowed, the threshold is the (k+1)-th highest
/// benign score: at most k benign scores lie strictly above it, and any lower threshold lets
/// k+1 through. Ties at the threshold all pass, so the actual FPR may be below the target.
pub fn threshold_for_fpr(benign_desc: &[f32], target: f64) -> Option<(f32, bool)> {
    let n = benign_desc.len();
    if n == 0 {
        return None;
    }
    // A hair of slack so that e.g. 0.01 × 300 is 3, not 2.9999999999999996.
    let allowed = (target * n as f64 + 1e-9).floor() as usize;
    Some((benign_desc[allowed.min(n - 1)], allowed >= 1))
}

/// Scores sorted high to low (NaN, which never happens with a sigmoid, sorts first).
pub fn sorted_desc(scores: &[f32]) -> Vec<f32> {
    let mut v = scores.to_vec();
    v.sort_by(|a, b| b.total_cmp(a));
    v
}

/// ROC AUC as the Mann-Whitney statistic: P(attack score > benign score) + ½ P(equal).
pub fn auc(benign: &[f32], attack: &[f32]) -> Option<f64> {
    if benign.is_empty() || attack.is_empty() {
        return None;
    }
    let mut all: Vec<(f32, bool)> = benign.iter().map(|&s| (s, false)).chain(attack.iter().map(|&s| (s, true))).collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Sum of the attack rows' ranks (1-based, tied groups get their mean rank).
    let mut rank_sum = 0.0;
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j < all.len() && all[j].0.total_cmp(&all[i].0).is_eq() {
            j += 1;
        }
        let mean_rank = (i + 1 + j) as f64 / 2.0;
        rank_sum += mean_rank * all[i..j].iter().filter(|(_, a)| *a).count() as f64;
        i = j;
    }
    let (na, nb) = (attack.len() as f64, benign.len() as f64);
    Some((rank_sum - na * (na + 1.0) / 2.0) / (na * nb))
}

/// Every figure of one model: at `default_threshold` and at each of [`TARGET_FPRS`].
pub fn quality(benign: &[f32], attack: &[f32], checks: &[&[f32]], default_threshold: f32) -> Quality {
    let point = |target_fpr: Option<f64>, threshold: f32, resolved: bool| OperatingPoint {
        target_fpr,
        threshold,
        tpr: Rate::above(attack, threshold),
        fpr: Rate::above(benign, threshold),
        checks: checks.iter().map(|c| Rate::above(c, threshold)).collect(),
        resolved,
    };
    let desc = sorted_desc(benign);
    let roc =
        TARGET_FPRS.iter().filter_map(|&t| threshold_for_fpr(&desc, t).map(|(thr, resolved)| point(Some(t), thr, resolved))).collect();
    Quality { at_default: point(None, default_threshold, true), roc, auc: auc(benign, attack) }
}

/// A threshold with enough digits to tell 0.9999 from 0.99999994.
pub fn fmt_threshold(t: f32) -> String {
    let short = format!("{t:.4}");
    if short.parse::<f32>() == Ok(t) || (t > 0.0001 && t < 0.9999) {
        short
    } else {
        format!("{t}")
    }
}

fn fmt_target(t: f64) -> String {
    let s = format!("{:.2}", t * 100.0);
    format!("{}%", s.trim_end_matches('0').trim_end_matches('.'))
}

/// The printed table: one line at the engine's threshold, one per target FPR, then notes on
/// the targets the benign set cannot resolve. `check_names` label the check columns.
pub fn table(q: &Quality, check_names: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut head = format!("  {:<22} {:>11} {:>20} {:>20}", "operating point", "threshold", "TPR", "FPR");
    for name in check_names {
        head.push_str(&format!(" {:>20}", format!("FPR {name}")));
    }
    out.push(head);
    let row = |label: String, p: &OperatingPoint| {
        let rate = |r: &Rate| format!("{} ({}/{})", r.pct(), r.hits, r.rows);
        let mut line = format!("  {:<22} {:>11} {:>20} {:>20}", label, fmt_threshold(p.threshold), rate(&p.tpr), rate(&p.fpr));
        for c in &p.checks {
            line.push_str(&format!(" {:>20}", rate(c)));
        }
        line
    };
    out.push(row("engine threshold".into(), &q.at_default));
    for p in &q.roc {
        let target = p.target_fpr.map(fmt_target).unwrap_or_default();
        let mark = if p.resolved { "" } else { " *" };
        out.push(row(format!("FPR <= {target}{mark}"), p));
    }
    for p in q.roc.iter().filter(|p| !p.resolved) {
        let target = p.target_fpr.unwrap_or(1.0);
        out.push(format!(
            "  * {} benign rows cannot resolve FPR {} (needs >= {:.0}): threshold = highest benign score",
            p.fpr.rows,
            fmt_target(target),
            (1.0 / target).ceil()
        ));
    }
    if let Some(auc) = q.auc {
        out.push(format!("  ROC AUC {auc:.5}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_allows_floor_target_times_n_false_positives() {
        // 1000 benign scores 0.000, 0.001, ..., 0.999: FPR 1% allows 10 above the threshold.
        let benign: Vec<f32> = (0..1000).map(|i| i as f32 / 1000.0).collect();
        let desc = sorted_desc(&benign);
        let (t, resolved) = threshold_for_fpr(&desc, 0.01).unwrap();
        assert!(resolved);
        assert_eq!(t, 0.989);
        assert_eq!(Rate::above(&benign, t), Rate { hits: 10, rows: 1000 });
        // FPR 0.1%: one allowed.
        let (t, resolved) = threshold_for_fpr(&desc, 0.001).unwrap();
        assert!(resolved);
        assert_eq!(Rate::above(&benign, t).hits, 1);
        // 0.01% of 1000 rows is 0.1 row: unresolved, threshold = highest benign score.
        let (t, resolved) = threshold_for_fpr(&desc, 0.0001).unwrap();
        assert!(!resolved);
        assert_eq!(t, 0.999);
        assert_eq!(Rate::above(&benign, t).hits, 0);
        assert_eq!(threshold_for_fpr(&[], 0.01), None);
    }

    #[test]
    fn exactly_one_over_target_rows_resolves() {
        let benign: Vec<f32> = (0..100).map(|i| i as f32 / 100.0).collect();
        let (t, resolved) = threshold_for_fpr(&sorted_desc(&benign), 0.01).unwrap();
        assert!(resolved);
        assert_eq!(Rate::above(&benign, t).hits, 1);
        let (_, resolved) = threshold_for_fpr(&sorted_desc(&benign[..99]), 0.01).unwrap();
        assert!(!resolved, "99 rows cannot resolve 1%");
    }

    #[test]
    fn ties_at_the_threshold_all_pass() {
        // 200 benign: 190 at 0.1, 10 at 0.9 (tied). FPR 1% allows 2, but the tied block of 10
        // cannot be split: the threshold is 0.9 and the actual FPR 0, below the target.
        let mut benign = vec![0.1f32; 190];
        benign.extend([0.9f32; 10]);
        let attack = [0.95f32, 0.9, 0.9, 0.5];
        let q = quality(&benign, &attack, &[], 0.5);
        let p = &q.roc[2];
        assert_eq!(p.target_fpr, Some(0.01));
        assert_eq!(p.threshold, 0.9);
        assert!(p.resolved);
        assert_eq!(p.fpr, Rate { hits: 0, rows: 200 });
        // Attack rows tied with the threshold are not flagged (strictly above only).
        assert_eq!(p.tpr, Rate { hits: 1, rows: 4 });
        // At the engine's threshold 0.5: the attack at exactly 0.5 passes.
        assert_eq!(q.at_default.threshold, 0.5);
        assert_eq!(q.at_default.tpr, Rate { hits: 3, rows: 4 });
        assert_eq!(q.at_default.fpr, Rate { hits: 10, rows: 200 });
    }

    #[test]
    fn too_few_benign_rows_is_said_in_the_table() {
        let benign = [0.2f32, 0.4, 0.3];
        let attack = [0.9f32, 0.35, 0.1];
        let roleplay = [0.45f32, 0.1];
        let q = quality(&benign, &attack, &[&roleplay], 0.5);
        assert_eq!(q.roc.len(), 3);
        for p in &q.roc {
            assert!(!p.resolved);
            assert_eq!(p.threshold, 0.4);
            assert_eq!(p.tpr, Rate { hits: 1, rows: 3 });
            assert_eq!(p.checks, vec![Rate { hits: 1, rows: 2 }]);
        }
        let lines = table(&q, &["roleplay"]);
        assert!(lines[0].contains("FPR roleplay"));
        assert!(lines[1].contains("engine threshold") && lines[1].contains("33.33% (1/3)"));
        assert!(lines[2].contains("FPR <= 0.01% *"));
        assert!(lines[4].contains("FPR <= 1% *"));
        assert!(lines.iter().any(|l| l.contains("3 benign rows cannot resolve FPR 0.01% (needs >= 10000)")));
        assert!(lines.iter().any(|l| l.contains("cannot resolve FPR 1% (needs >= 100)")));
        assert!(lines.last().unwrap().starts_with("  ROC AUC"));
    }

    #[test]
    fn auc_counts_ties_half() {
        assert_eq!(auc(&[0.1, 0.2], &[0.3, 0.4]), Some(1.0));
        assert_eq!(auc(&[0.3, 0.4], &[0.1, 0.2]), Some(0.0));
        assert_eq!(auc(&[0.5], &[0.5]), Some(0.5));
        // pairs: (0.2 vs 0.1) win, (0.2 vs 0.2) tie, (0.3 vs 0.1) win, (0.3 vs 0.2) win → 3.5/4
        assert_eq!(auc(&[0.1, 0.2], &[0.2, 0.3]), Some(0.875));
        assert_eq!(auc(&[], &[0.3]), None);
    }

    #[test]
    fn empty_sets_print_na() {
        let q = quality(&[], &[], &[], 0.5);
        assert!(q.roc.is_empty());
        assert_eq!(q.at_default.tpr.pct(), "n/a");
        assert_eq!(q.auc, None);
        assert_eq!(table(&q, &[]).len(), 2);
    }

    #[test]
    fn formats() {
        assert_eq!(fmt_threshold(0.5), "0.5000");
        assert_eq!(fmt_threshold(0.99999994), "0.99999994");
        assert_eq!(fmt_target(1e-4), "0.01%");
        assert_eq!(fmt_target(1e-2), "1%");
        assert_eq!(Rate { hits: 1, rows: 3000 }.pct(), "0.033%");
        assert_eq!(Rate { hits: 0, rows: 30 }.pct(), "0.00%");
    }
}
