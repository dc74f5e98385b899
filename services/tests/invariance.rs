//! Placement invariance (issue 11): every attack payload is caught wherever it sits in a
//! request and however it is encoded, at every front door, or it is listed in
//! tests/invariance/known_gaps.txt with a reason. Benign controls must pass everywhere.
//! docs/INVARIANCE.md explains the matrix; `RAMPART_INVARIANCE_WRITE=1` regenerates the file.

mod common;
#[path = "invariance/doors.rs"]
mod doors;
#[path = "invariance/encodings.rs"]
mod encodings;
#[path = "invariance/gaps.rs"]
mod gaps;
#[path = "invariance/payloads.rs"]
mod payloads;
#[path = "invariance/placements.rs"]
mod placements;
#[path = "invariance/report.rs"]
mod report;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use doors::{Door, Outcome};
use encodings::Encoding;
use gaps::{CellKey, KnownGaps};
use payloads::{Payload, ATTACKS, CONTROLS};
use placements::{Placement, PLACEMENTS};

/// Requests in flight across all doors: enough to overlap scoring with I/O, few enough that
/// the model queues never shed load on two cores.
const CONCURRENCY: usize = 24;
/// Unscored answers (a scorer timeout under load) are retried one at a time this often.
const RETRIES: usize = 3;

struct Cell {
    placement: &'static Placement,
    encoding: Encoding,
    payload: &'static Payload,
    control: bool,
}

impl Cell {
    fn key(&self) -> CellKey {
        (self.placement.id.to_string(), self.encoding.name().to_string(), self.payload.id.to_string())
    }
}

/// Attacks in every meaningful (placement, encoding); controls in every placement, plain.
fn cells() -> Vec<Cell> {
    let mut cells = Vec::new();
    for placement in PLACEMENTS {
        for &encoding in placement.encodings {
            cells.extend(ATTACKS.iter().map(|payload| Cell { placement, encoding, payload, control: false }));
        }
        cells.extend(CONTROLS.iter().map(|payload| Cell { placement, encoding: Encoding::Plain, payload, control: true }));
    }
    cells
}

/// Every cell at every door, `CONCURRENCY` at a time; `[cell][door]`.
async fn run(doors: Arc<Vec<Door>>, cells: Arc<Vec<Cell>>) -> Vec<Vec<Outcome>> {
    let next_id = Arc::new(AtomicU64::new(1));
    let permits = Arc::new(tokio::sync::Semaphore::new(CONCURRENCY));
    let mut tasks = tokio::task::JoinSet::new();
    for c in 0..cells.len() {
        for d in 0..doors.len() {
            let (doors, cells, next_id, permits) = (doors.clone(), cells.clone(), next_id.clone(), permits.clone());
            tasks.spawn(async move {
                let _permit = permits.acquire().await.unwrap();
                let cell = &cells[c];
                let req = cell.placement.build(cell.encoding, cell.payload.text);
                let mut outcome = doors[d].send(next_id.fetch_add(1, Ordering::Relaxed), &req).await;
                drop(_permit);
                for _ in 0..RETRIES {
                    if !matches!(outcome, Outcome::Unscored { .. }) {
                        break;
                    }
                    let _alone = permits.acquire_many(CONCURRENCY as u32).await.unwrap();
                    outcome = doors[d].send(next_id.fetch_add(1, Ordering::Relaxed), &req).await;
                }
                (c, d, outcome)
            });
        }
    }
    let mut outcomes = vec![vec![Outcome::Passed; doors.len()]; cells.len()];
    while let Some(done) = tasks.join_next().await {
        let (c, d, outcome) = done.expect("a cell task");
        outcomes[c][d] = outcome;
    }
    outcomes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_attack_is_caught_in_every_placement_or_listed_as_a_known_gap() {
    let started = Instant::now();
    let doors = Arc::new(doors::start_all().await);
    let names: Vec<&'static str> = doors.iter().map(|d| d.name).collect();
    let cells = Arc::new(cells());
    let ready = started.elapsed();
    let outcomes = run(doors.clone(), cells.clone()).await;
    let requests = cells.len() * doors.len();
    println!(
        "placement invariance: {} cells × {} doors = {requests} requests in {:.1} s (doors ready after {:.1} s)",
        cells.len(),
        doors.len(),
        started.elapsed().as_secs_f64(),
        ready.as_secs_f64()
    );

    let known = KnownGaps::load();
    let mut failures = Vec::new();
    let mut rows = Vec::new();
    let mut observed_gaps: BTreeMap<CellKey, Vec<&'static str>> = BTreeMap::new();
    let mut padded_controls_refused = Vec::new();
    for (cell, at_doors) in cells.iter().zip(&outcomes) {
        let key = cell.key();
        let what = |door: &str| format!("{door} {} {} {}", key.0, key.1, key.2);
        for (door, outcome) in names.iter().zip(at_doors) {
            if let Outcome::Unscored { detail } = outcome {
                failures.push(format!("unscored after {RETRIES} retries: {} ({detail})", what(door)));
                continue;
            }
            let caught = matches!(outcome, Outcome::Caught { .. });
            if cell.control {
                match (caught, cell.placement.padded) {
                    (false, _) => {}
                    (true, true) => padded_controls_refused.push(what(door)),
                    (true, false) => failures.push(format!("benign control blocked: {} ({outcome:?})", what(door))),
                }
                continue;
            }
            rows.push(report::Row {
                door,
                placement: cell.placement.id,
                encoding: cell.encoding.name(),
                detector: cell.payload.detector,
                caught,
            });
            match (caught, known.reason(door, &key)) {
                (true, Some(_)) => failures.push(format!("listed gap now caught (delete its line): {}", what(door))),
                (false, None) => failures.push(format!("passed unblocked and not listed: {}", what(door))),
                _ => {}
            }
            if !caught {
                observed_gaps.entry(key.clone()).or_default().push(door);
            }
        }
    }
    let table: std::collections::BTreeSet<CellKey> = cells.iter().map(Cell::key).collect();
    for (door, key) in known.entries() {
        if !table.contains(key) || (door != "*" && !names.contains(&door)) {
            failures.push(format!("known_gaps.txt names a cell the suite does not have: {door} {key:?}"));
        }
    }

    report::print(&rows, &names);
    let gaps = rows.iter().filter(|r| !r.caught).count();
    println!("\nattack cells: {} caught, {gaps} known gaps ({} lines' worth of cells)", rows.len() - gaps, observed_gaps.len());
    println!("benign controls refused in padded placements (allowed): {}", padded_controls_refused.len());
    for line in &padded_controls_refused {
        println!("  {line}");
    }

    if std::env::var_os("RAMPART_INVARIANCE_WRITE").is_some() {
        std::fs::write(gaps::path(), known.render(&observed_gaps, &names)).unwrap();
        println!("wrote {} ({} gap cells); fill every `{}`", gaps::path().display(), observed_gaps.len(), gaps::TODO);
        return;
    }
    let todo = known.entries().filter(|(d, k)| known.reason(d, k) == Some(gaps::TODO)).count();
    assert_eq!(todo, 0, "{}: {todo} lines still say `{}`", gaps::path().display(), gaps::TODO);
    assert!(
        failures.is_empty(),
        "{} mismatches with {} (regenerate with RAMPART_INVARIANCE_WRITE=1, see docs/INVARIANCE.md):\n{}",
        failures.len(),
        gaps::path().display(),
        failures.iter().take(60).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn every_placement_and_encoding_builds_a_valid_request() {
    for cell in cells() {
        let req = cell.placement.build(cell.encoding, cell.payload.text);
        let uri: Result<hyper::Uri, _> = req.target.parse();
        assert!(uri.is_ok(), "{:?}: {}", cell.key(), req.target);
        for (name, value) in &req.headers {
            assert!(hyper::header::HeaderValue::from_str(value).is_ok(), "{:?}: {name}: {value}", cell.key());
        }
    }
    let text = "# comment\n*\tquery-value\tplain\tsqli-union\tfield cap\nproxy  cookie-name  plain  xss-script   not scored yet\n";
    let known = KnownGaps::parse(text).unwrap();
    let key = |p: &str, e: &str, a: &str| (p.to_string(), e.to_string(), a.to_string());
    assert_eq!(known.reason("nginx-auth", &key("query-value", "plain", "sqli-union")), Some("field cap"));
    assert_eq!(known.reason("proxy", &key("cookie-name", "plain", "xss-script")), Some("not scored yet"));
    assert_eq!(known.reason("nginx-auth", &key("cookie-name", "plain", "xss-script")), None);
    assert!(KnownGaps::parse("proxy query-value plain sqli-union\n").is_err(), "a line without a reason is refused");
}
