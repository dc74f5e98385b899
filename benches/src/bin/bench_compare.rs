//! Compares criterion's figures with the committed baseline (`benches/baseline.tsv`) and prints
//! one row per bench with the ratio; a ratio above the warning level gets a WARNING line. Timing
//! alone never fails: the exit status is non-zero only when no figures or no baseline can be read.
//!
//! `bench_compare --baseline benches/baseline.tsv DIR...` compares; `--write` rewrites the
//! baseline instead (with `--note TEXT` saying how it was measured). DIR is a criterion output
//! directory (`CRITERION_HOME`); with several (repeated runs), each bench's figure is the median
//! of its runs' medians: a lowest-of-N baseline would sit below what one run in make test
//! measures and warn on noise. scripts/bench-quick is the caller.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Figures (median ns per iteration) by criterion's full bench id.
type Figures = BTreeMap<String, f64>;

struct Options {
    baseline: PathBuf,
    dirs: Vec<PathBuf>,
    write: bool,
    note: String,
    warn_ratio: f64,
}

fn parse_args() -> Result<Options, String> {
    let mut opts = Options { baseline: PathBuf::new(), dirs: Vec::new(), write: false, note: String::new(), warn_ratio: 1.5 };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--baseline" => opts.baseline = PathBuf::from(value()?),
            "--write" => opts.write = true,
            "--note" => opts.note = value()?,
            "--warn-ratio" => opts.warn_ratio = value()?.parse().map_err(|e| format!("--warn-ratio: {e}"))?,
            _ if arg.starts_with("--") => return Err(format!("unknown option {arg}")),
            _ => opts.dirs.push(PathBuf::from(arg)),
        }
    }
    if opts.baseline.as_os_str().is_empty() || opts.dirs.is_empty() {
        return Err("usage: bench_compare --baseline FILE [--write [--note TEXT]] [--warn-ratio R] CRITERION_DIR...".into());
    }
    Ok(opts)
}

/// Every `new/benchmark.json` under `dir` (criterion's latest run of each bench) with the
/// median of its sibling `estimates.json`, added to that bench's runs.
fn read_criterion(dir: &Path, runs: &mut BTreeMap<String, Vec<f64>>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            read_criterion(&path, runs)?;
        } else if path.file_name().is_some_and(|n| n == "benchmark.json") && path.parent().is_some_and(|p| p.ends_with("new")) {
            let id = read_json(&path)?["full_id"].as_str().map(str::to_owned).ok_or(format!("{}: no full_id", path.display()))?;
            let estimates = path.with_file_name("estimates.json");
            let median =
                read_json(&estimates)?["median"]["point_estimate"].as_f64().ok_or(format!("{}: no median", estimates.display()))?;
            runs.entry(id).or_default().push(median);
        }
    }
    Ok(())
}

/// The middle value (the mean of the two middle ones for an even count).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    }
}

fn read_json(path: &Path) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// `name<TAB>ns` lines; `#` starts a comment.
fn read_baseline(path: &Path) -> Result<Figures, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut figures = Figures::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parsed = line.split_once('\t').and_then(|(name, ns)| Some((name.trim(), ns.trim().parse::<f64>().ok()?)));
        let (name, ns) = parsed.ok_or(format!("{}:{}: expected `name<TAB>ns`", path.display(), n + 1))?;
        figures.insert(name.to_owned(), ns);
    }
    Ok(figures)
}

fn write_baseline(path: &Path, note: &str, figures: &Figures) -> Result<(), String> {
    let mut text = String::from("# Quick-bench baseline: criterion median, ns per iteration. make test compares against it;\n");
    text.push_str("# refresh with `scripts/bench-quick --write-baseline` (make bench-baseline).\n");
    for line in note.lines() {
        text.push_str(&format!("# {line}\n"));
    }
    for (name, ns) in figures {
        text.push_str(&format!("{name}\t{ns:.1}\n"));
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The table and the warning lines.
fn compare(baseline: &Figures, now: &Figures, warn_ratio: f64) {
    let width = now.keys().chain(baseline.keys()).map(String::len).max().unwrap_or(10);
    println!("{:<width$} {:>12} {:>12} {:>7}", "bench (median ns)", "baseline", "now", "ratio");
    let mut warnings = Vec::new();
    for (name, ns) in now {
        match baseline.get(name) {
            Some(&base) => {
                let ratio = ns / base;
                println!("{name:<width$} {base:>12.1} {ns:>12.1} {ratio:>7.2}");
                if ratio > warn_ratio {
                    warnings.push(format!("WARNING: {name} is {ratio:.2}x its baseline ({base:.1} -> {ns:.1} ns)"));
                }
            }
            None => println!("{name:<width$} {:>12} {ns:>12.1} {:>7}", "-", "new"),
        }
    }
    for name in baseline.keys().filter(|name| !now.contains_key(*name)) {
        println!("{name:<width$} {:>12.1} {:>12} {:>7}", baseline[name], "-", "gone");
    }
    for warning in &warnings {
        println!("{warning}");
    }
    if warnings.is_empty() {
        println!("bench: no figure above {warn_ratio}x its baseline");
    } else {
        println!("bench: {} figure(s) above {warn_ratio}x (timing is noisy: not a failure; confirm with make bench)", warnings.len());
    }
}

fn run() -> Result<(), String> {
    let opts = parse_args()?;
    let mut runs = BTreeMap::new();
    for dir in &opts.dirs {
        read_criterion(dir, &mut runs)?;
    }
    let now: Figures = runs.into_iter().map(|(id, mut ns)| (id, median(&mut ns))).collect();
    if now.is_empty() {
        return Err("no criterion figures found".into());
    }
    if opts.write {
        write_baseline(&opts.baseline, &opts.note, &now)?;
        println!("wrote {} figures to {}", now.len(), opts.baseline.display());
        return Ok(());
    }
    compare(&read_baseline(&opts.baseline)?, &now, opts.warn_ratio);
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_compare: {e}");
            ExitCode::FAILURE
        }
    }
}
