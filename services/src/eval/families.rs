//! `rampart eval --evasion [N]`: recall on the generated attack families of the `evasion`
//! crate. Each family gives N variants from a fixed seed; a `Value` variant is placed
//! round-robin over `Placement::ALL` (query, form, JSON, header, cookie, XML, multipart), a
//! `Header`/`Request` variant as it is carried. Every request goes through the proxy's
//! `ScoreQuery::from_http` and is scored with the full engine (models included) and with the
//! pattern/code detectors at each level (`levels`). The pool's held-out attack rows follow, so
//! the family table has rows no grammar was written from. Target: recall ≥ 95 % per family.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use evasion::{Carrier, Placement as Spot, Variant};
use scoring::Engine;

use super::data::{load_source, percent_encode, query_for, Row};
use super::levels::{pct, score_many, LevelOutcome, LEVELS};
use super::wire::WireRequest;
use super::Placement;
use crate::scorer::ScoreQuery;

pub const TARGET_PCT: f64 = 95.0;

/// Pool sources no family grammar was written from: recall per source and label.
pub const HELDOUT_ATTACK_SOURCES: &[&str] = &["awesomexss", "awesome_waf_bypasses", "log4j_jndi_bypass_words"];

/// Pool sources of open-redirect rows, replayed in a redirect parameter.
pub const REDIRECT_SOURCES: &[&str] = &["payloadbox", "payloadsallthethings", "fuzzdb"];

/// Where a variant went, for the per-placement table.
fn placed(variant: &Variant, i: usize) -> (evasion::Request, String) {
    match &variant.carrier {
        Carrier::Value => {
            let spot = Spot::ALL[i % Spot::ALL.len()];
            (evasion::place::to_request(variant, spot), spot.name().to_string())
        }
        Carrier::Header(name) => (evasion::place::to_request(variant, Spot::Query), format!("header:{name}")),
        Carrier::Request(_) => (evasion::place::to_request(variant, Spot::Query), "request".to_string()),
    }
}

/// The evasion crate's request as the proxy would score it.
pub fn wire_of(request: &evasion::Request) -> WireRequest {
    let mut wire = WireRequest::new(&request.method, &request.path);
    for (name, value) in &request.headers {
        wire = wire.header(name, value);
    }
    wire.body(request.body.as_bytes().to_vec())
}

#[derive(Default)]
struct Tally {
    rows: usize,
    /// Per level.
    flagged: [usize; 4],
    full: usize,
    own: usize,
}

impl Tally {
    fn add(&mut self, o: &LevelOutcome, own_slug: &str) {
        self.rows += 1;
        for (li, f) in o.flagged.iter().enumerate() {
            self.flagged[li] += *f as usize;
        }
        self.full += o.flagged_at_config() as usize;
        self.own += (o.flagged_at_config() && o.detector == own_slug) as usize;
    }

    fn cells(&self) -> String {
        let levels: Vec<String> = self.flagged.iter().map(|f| format!("{:>7.2}", pct(*f, self.rows))).collect();
        format!("{:>6} {:>8.2} {:>7.2}  {}", self.rows, pct(self.full, self.rows), pct(self.own, self.rows), levels.join(" "))
    }
}

fn header_row(first: &str) -> String {
    let levels: Vec<String> = LEVELS.iter().map(|l| format!("{:>7}", format!("L{l} %"))).collect();
    format!("  {:<34} {:>6} {:>8} {:>7}  {}", first, "rows", "full %", "own %", levels.join(" "))
}

pub async fn run(engine: &Arc<Engine>, data: &Path, n: usize, seed: u64, concurrency: usize, show_fn: usize) -> Result<(), String> {
    let families = evasion::families();
    println!(
        "\n== Evasion families: {} registered, {n} variants each, seed {seed}. Value variants placed\n   \
         round-robin over {} ; header/request variants as carried. full % = the whole engine\n   \
         (models) at the configured level {}; own % = won by the family's own detector; L1..L4 % =\n   \
         patterns and code detectors at that level plus the full pass's model verdict. `!` = under {TARGET_PCT} %.",
        families.len(),
        Spot::ALL.iter().map(|s| s.name()).collect::<Vec<_>>().join(", "),
        engine.sensitivity()
    );
    let started = Instant::now();
    let mut misses: Vec<String> = Vec::new();
    let mut model_errors = 0;
    let mut by_placement: BTreeMap<String, Tally> = BTreeMap::new();
    let mut summary: Vec<(String, Tally)> = Vec::new();
    let mut by_mutation: Vec<(String, BTreeMap<String, Tally>)> = Vec::new();
    for family in families {
        let variants = evasion::sample(*family, seed, n);
        let placed: Vec<(evasion::Request, String)> = variants.iter().enumerate().map(|(i, v)| placed(v, i)).collect();
        let queries: Vec<ScoreQuery> = placed.iter().map(|(r, _)| wire_of(r).score_query()).collect();
        let outcomes = score_many(engine, queries, concurrency).await;
        let mut tally = Tally::default();
        let mut mutations: BTreeMap<String, Tally> = BTreeMap::new();
        model_errors += outcomes.iter().filter(|o| o.model_error).count();
        for ((v, (_, spot)), o) in variants.iter().zip(&placed).zip(&outcomes) {
            tally.add(o, family.detector());
            by_placement.entry(format!("{} / {spot}", family.name())).or_default().add(o, family.detector());
            for m in v.mutation.split('+') {
                mutations.entry(m.to_string()).or_default().add(o, family.detector());
            }
            if !o.flagged_at_config() && misses.len() < show_fn {
                let text: String = v.payload.chars().take(160).collect();
                misses.push(format!("  [{}] [{}] [{spot}] {:.3} | {}", family.name(), v.mutation, o.score, text.replace('\n', "\\n")));
            }
        }
        summary.push((format!("{} ({})", family.name(), family.detector()), tally));
        by_mutation.push((family.name().to_string(), mutations));
    }
    println!("  ({:.1} s; {} requests without a model verdict: model missing or failed)", started.elapsed().as_secs_f64(), model_errors);
    println!("\nRecall per family\n{}", header_row("family (own detector)"));
    for (name, t) in &summary {
        let mark = if pct(t.flagged[0], t.rows) < TARGET_PCT { "!" } else { " " };
        println!("  {name:<34} {} {mark}", t.cells());
    }
    println!("\nRecall per mutation (a variant counts for each mutation it carries)\n{}", header_row("family / mutation"));
    for (family, mutations) in &by_mutation {
        for (m, t) in mutations {
            println!("  {:<34} {}", format!("{family} / {m}"), t.cells());
        }
    }
    println!("\nRecall per placement\n{}", header_row("family / placement"));
    for (p, t) in &by_placement {
        println!("  {p:<34} {}", t.cells());
    }
    heldout(engine, data, concurrency).await?;
    let redirect_misses = redirect_rows(engine, data, concurrency, show_fn).await?;
    if show_fn > 0 {
        println!("\nMisses at the configured level (first {show_fn})");
        misses.iter().for_each(|m| println!("{m}"));
        println!("\nPool open-redirect rows missed in a redirect parameter (first {show_fn})");
        redirect_misses.iter().for_each(|m| println!("{m}"));
    }
    Ok(())
}

/// The pool's held-out attack rows, placed as query values (the pool's default placement).
async fn heldout(engine: &Arc<Engine>, data: &Path, concurrency: usize) -> Result<(), String> {
    let mut rows: Vec<Row> = Vec::new();
    for source in HELDOUT_ATTACK_SOURCES {
        rows.extend(load_source(data, source)?.into_iter().filter(Row::is_attack));
    }
    let queries = rows.iter().map(|r| query_for(r, Placement::Query)).collect();
    let outcomes = score_many(engine, queries, concurrency).await;
    let mut by: BTreeMap<String, Tally> = BTreeMap::new();
    for (r, o) in rows.iter().zip(&outcomes) {
        by.entry(format!("{} [{}]", r.source, r.label)).or_default().add(o, &r.label);
    }
    println!("\nHeld-out pool rows (query value, `GET /eval?q=`)\n{}", header_row("source [label]"));
    for (k, t) in &by {
        let mark = if pct(t.flagged[0], t.rows) < TARGET_PCT { "!" } else { " " };
        println!("  {k:<34} {} {mark}", t.cells());
    }
    Ok(())
}

/// The host put in place of fuzzdb's `{target}` placeholder.
const TEMPLATE_HOST: &str = "attacker.net";

/// The redirect parameter names the open-redirect rows are replayed in, round-robin.
const REDIRECT_PARAMS: &[&str] = &["next", "redirect_uri", "returnTo", "url", "continue", "dest", "goto", "r"];

/// The pool's open-redirect rows in a redirect parameter (`GET /login?<param>=<payload>`,
/// percent-encoded like the pool's query placement): an open redirect needs one.
async fn redirect_rows(engine: &Arc<Engine>, data: &Path, concurrency: usize, show_fn: usize) -> Result<Vec<String>, String> {
    let mut rows: Vec<Row> = Vec::new();
    for source in REDIRECT_SOURCES {
        rows.extend(load_source(data, source)?.into_iter().filter(|r| r.label == "open-redirect"));
    }
    let queries = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let param = REDIRECT_PARAMS[i % REDIRECT_PARAMS.len()];
            // fuzzdb's rows are templates: `{target}` is where the tester's host goes.
            let payload = r.text.replace("{target}", TEMPLATE_HOST);
            WireRequest::new("GET", &format!("/login?{param}={}", percent_encode(&payload))).score_query()
        })
        .collect();
    let outcomes = score_many(engine, queries, concurrency).await;
    let mut by: BTreeMap<String, Tally> = BTreeMap::new();
    for (r, o) in rows.iter().zip(&outcomes) {
        by.entry(r.source.clone()).or_default().add(o, "open-redirect");
        by.entry("all".into()).or_default().add(o, "open-redirect");
    }
    println!(
        "\nPool open-redirect rows in a redirect parameter (`GET /login?<{}>=<payload>`)\n{}",
        REDIRECT_PARAMS.join("|"),
        header_row("source")
    );
    for (k, t) in &by {
        println!("  {k:<34} {}", t.cells());
    }
    Ok(rows
        .iter()
        .zip(&outcomes)
        .filter(|(_, o)| !o.flagged_at_config())
        .take(show_fn)
        .map(|(r, o)| {
            format!("  [{}] {:.3} L2:{} | {}", r.source, o.score, o.reasons[1].join(","), r.text.chars().take(160).collect::<String>())
        })
        .collect())
}
