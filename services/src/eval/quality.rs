//! `rampart eval`, model section: each model-backed detector's own score on held-out texts (the
//! text the engine's model stage would send for that field; no pattern stage, no gate), with
//! TPR/FPR at the engine's threshold and the ROC-style table of [`super::roc`]. docs/EVAL.md.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use scoring::detectors::{DetectorId, DETECTORS, PROMPT_INJECTION, SQLI};
use scoring::fields::{FieldKind, FieldLimits};
use scoring::models::{ModelSet, ModelStatus};
use scoring::request::parse_request;
use scoring::views::Views;
use scoring::{EngineConfig, ScoreInput};

use super::data::{load_source, request_for, source_names, stable_frac, Row, HELDOUT_SOURCES};
use super::{roc, Placement};

/// Texts per `score_many` call, and calls in flight: batches stay full. 4 x 64 texts (more
/// pieces once the prompt-injection model windows them) is past one client's default lane, so
/// the section runs with the eval's offline queue bounds (`offline_config`).
pub(super) const CHUNK: usize = 64;
pub(super) const IN_FLIGHT: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Role {
    Attack,
    /// The benign set the ROC thresholds are chosen on.
    Benign,
    /// Benign rows measured apart (a column of their own); the name heads the column.
    Check(&'static str),
}

struct SetSpec {
    name: &'static str,
    source: &'static str,
    label: &'static str,
    role: Role,
    /// Only rows whose [`stable_frac`] is at least this (a row split inside one source).
    from_frac: f64,
}

const fn set(name: &'static str, source: &'static str, label: &'static str, role: Role) -> SetSpec {
    SetSpec { name, source, label, role, from_frac: 0.0 }
}

/// The held-out sets of each model, after the model cards' split by source family.
const MODELS: &[(DetectorId, &[SetSpec])] = &[
    (
        SQLI,
        &[
            set("httpparams sqli", "httpparams", "sqli", Role::Attack),
            set("modsec_learn sqli", "modsec_learn_dataset", "sqli", Role::Attack),
            set("httpparams benign", "httpparams", "benign", Role::Benign),
            set("modsec_learn benign", "modsec_learn_dataset", "benign", Role::Benign),
            set("csic2010 (calibration set)", "csic2010_lines", "benign", Role::Check("csic-calib")),
            set("kaggle_xss benign (wiki html)", "kaggle_xss_syedsaqlain", "benign", Role::Check("wiki-html")),
            set("alpaca_eval prompts", "benign_prompts_alpaca_eval", "benign", Role::Check("prompts")),
        ],
    ),
    (
        PROMPT_INJECTION,
        &[
            set("jailbreakbench_artifacts", "jailbreakbench_artifacts", "prompt-injection", Role::Attack),
            set("alpaca_eval", "benign_prompts_alpaca_eval", "benign", Role::Benign),
            SetSpec {
                name: "awesome_chatgpt act-as (test 25%)",
                source: "benign_prompts_awesome_chatgpt_prompts",
                label: "benign",
                role: Role::Check("act-as"),
                from_frac: 0.75,
            },
        ],
    ),
];

/// One set's model inputs and what was dropped on the way.
struct SetTexts {
    texts: Vec<String>,
    rows: usize,
    /// Non-empty query values of those rows (one per payload row; several per query string).
    values: usize,
    in_training_files: usize,
    duplicates: usize,
}

/// Runs the model section and prints it. Loads its own copy of the models (the engine keeps
/// its model set private), so the caller should drop its engine first.
pub async fn run(data_dir: &Path, config: &EngineConfig) -> Result<(), String> {
    let Some(models_dir) = config.models_dir.as_deref() else {
        println!("\n== Model quality: models disabled (--no-models), nothing to measure");
        return Ok(());
    };
    let names = source_names(data_dir)?;
    let mut sources: HashMap<&str, Vec<Row>> = HashMap::new();
    for (_, sets) in MODELS {
        for spec in sets.iter() {
            if !sources.contains_key(spec.source) {
                sources.insert(spec.source, load_source(data_dir, spec.source)?);
            }
        }
    }
    let seen = training_index(data_dir, &names)?;
    let models = ModelSet::start(Some(models_dir), config);
    wait_ready(&models).await?;
    println!(
        "\n== Model quality: each model's own score on held-out texts (one field value each, as the\n   \
         engine's model stage sends it; no pattern stage, no gate). Flagged = score > threshold."
    );
    for (detector, sets) in MODELS {
        let slug = DETECTORS[*detector].slug;
        let texts: Vec<SetTexts> =
            sets.iter().map(|spec| set_texts(spec, &sources[spec.source], &seen, &names, config.limits.clone())).collect();
        let all: Vec<String> = texts.iter().flat_map(|t| t.texts.iter().cloned()).collect();
        let started = Instant::now();
        // A failure here fails the eval: a section that silently prints nothing hid a queue
        // bound refusing the eval's own texts for several runs.
        let scores = score_all(&models, *detector, all).await.map_err(|err| format!("{slug}: scoring failed: {err}"))?;
        let elapsed = started.elapsed();
        print_model(*detector, &models, sets, &texts, &scores, elapsed, config.threshold);
    }
    Ok(())
}

pub(super) async fn wait_ready(models: &ModelSet) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        for id in [SQLI, PROMPT_INJECTION] {
            if let ModelStatus::Failed(detail) = models.status(id) {
                return Err(format!("model {} failed to load: {detail}", DETECTORS[id].slug));
            }
        }
        if models.all_ready() {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err("models still loading after 300 s".into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Lower-cased, whitespace-collapsed text: the key for "the same text" across sources.
fn overlap_key(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// Key → bit set of the sources (by index in `names`) outside the held-out families holding it.
fn training_index(dir: &Path, names: &[String]) -> Result<HashMap<String, u64>, String> {
    let mut index: HashMap<String, u64> = HashMap::new();
    for (i, name) in names.iter().enumerate().take(64) {
        if HELDOUT_SOURCES.contains(&name.as_str()) {
            continue;
        }
        for row in load_source(dir, name)? {
            *index.entry(overlap_key(&row.text)).or_default() |= 1 << i;
        }
    }
    Ok(index)
}

/// The model inputs of one set: each query value of the row's request (the whole text for
/// payload rows, each parameter for modsec-learn query strings and CSIC requests), as the
/// engine's model stage would see it. Drops texts found in a non-held-out source (other than
/// the set's own) and exact duplicates inside the set.
fn set_texts(spec: &SetSpec, rows: &[Row], seen: &HashMap<String, u64>, names: &[String], limits: FieldLimits) -> SetTexts {
    let own_bit = names.iter().position(|n| n == spec.source).filter(|&i| i < 64).map_or(0, |i| 1u64 << i);
    let mut out = SetTexts { texts: Vec::new(), rows: 0, values: 0, in_training_files: 0, duplicates: 0 };
    let mut unique = HashSet::new();
    for row in rows.iter().filter(|r| r.label == spec.label) {
        if spec.from_frac > 0.0 && stable_frac(&row.text) < spec.from_frac {
            continue;
        }
        out.rows += 1;
        for (plain, model_text) in field_texts(row, limits.clone()) {
            out.values += 1;
            if seen.get(&overlap_key(&plain)).is_some_and(|bits| bits & !own_bit != 0) {
                out.in_training_files += 1;
            } else if !unique.insert(model_text.clone()) {
                out.duplicates += 1;
            } else {
                out.texts.push(model_text);
            }
        }
    }
    out
}

/// (value as the application sees it, text the model stage sends) for each non-empty query value.
fn field_texts(row: &Row, limits: FieldLimits) -> Vec<(String, String)> {
    let (request_text, headers) = request_for(row, Placement::Query);
    let request = parse_request(&ScoreInput { request_text: &request_text, headers: &headers }, limits);
    let views = Views::build(&request.fields);
    request
        .fields
        .iter()
        .enumerate()
        .filter(|(_, f)| f.kind == FieldKind::QueryValue && !f.value.trim().is_empty())
        .map(|(i, f)| (f.value.to_string(), views.model_text(&request.fields, i).to_string()))
        .collect()
}

/// Scores through the model's batching queue, `CHUNK` texts per call, `IN_FLIGHT` calls at once.
pub(super) async fn score_all(models: &Arc<ModelSet>, detector: DetectorId, texts: Vec<String>) -> Result<Vec<f32>, String> {
    let chunks: Vec<Vec<String>> = texts.chunks(CHUNK).map(|c| c.to_vec()).collect();
    let n_chunks = chunks.len();
    let mut results: Vec<Option<Vec<f32>>> = vec![None; n_chunks];
    let mut tasks = tokio::task::JoinSet::new();
    for (i, chunk) in chunks.into_iter().enumerate() {
        if tasks.len() >= IN_FLIGHT {
            collect_one(&mut tasks, &mut results).await?;
        }
        let models = models.clone();
        tasks.spawn(async move { (i, models.score_many(detector, chunk).await) });
    }
    while !tasks.is_empty() {
        collect_one(&mut tasks, &mut results).await?;
    }
    Ok(results.into_iter().flatten().flatten().collect())
}

type ChunkResult = (usize, Result<Vec<f32>, scoring::model::ModelError>);

async fn collect_one(tasks: &mut tokio::task::JoinSet<ChunkResult>, results: &mut [Option<Vec<f32>>]) -> Result<(), String> {
    match tasks.join_next().await {
        Some(Ok((i, Ok(scores)))) => {
            results[i] = Some(scores);
            Ok(())
        }
        Some(Ok((_, Err(err)))) => Err(err.to_string()),
        Some(Err(err)) => Err(err.to_string()),
        None => Ok(()),
    }
}

fn print_model(
    detector: DetectorId,
    models: &ModelSet,
    sets: &[SetSpec],
    texts: &[SetTexts],
    scores: &[f32],
    elapsed: Duration,
    threshold: f32,
) {
    let slug = DETECTORS[detector].slug;
    let path = models.path(detector).map(|p| p.display().to_string()).unwrap_or_default();
    let secs = elapsed.as_secs_f64().max(1e-9);
    println!(
        "\n{slug} model ({path}): {} texts scored in {:.1} s = {:.0} rows/s (batching queue, {CHUNK} per call)",
        scores.len(),
        secs,
        scores.len() as f64 / secs
    );
    println!(
        "  {:<34} {:>6} {:>7} {:>7} {:>8} {:>7} {:>7} {:>20}",
        "set", "role", "rows", "values", "in-train", "dup", "scored", "flagged at threshold"
    );
    let (mut benign, mut attack, mut checks) = (Vec::new(), Vec::new(), Vec::<(&str, Vec<f32>)>::new());
    let mut offset = 0;
    for (spec, t) in sets.iter().zip(texts) {
        let s = &scores[offset..offset + t.texts.len()];
        offset += t.texts.len();
        let role = match spec.role {
            Role::Attack => {
                attack.extend_from_slice(s);
                "attack"
            }
            Role::Benign => {
                benign.extend_from_slice(s);
                "benign"
            }
            Role::Check(column) => {
                checks.push((column, s.to_vec()));
                "check"
            }
        };
        let flagged = roc::Rate::above(s, threshold);
        println!(
            "  {:<34} {:>6} {:>7} {:>7} {:>8} {:>7} {:>7} {:>20}",
            spec.name,
            role,
            t.rows,
            t.values,
            t.in_training_files,
            t.duplicates,
            t.texts.len(),
            format!("{} ({})", flagged.pct(), flagged.hits)
        );
    }
    println!(
        "  (values: the rows' query values; in-train: also in a source outside the held-out families \
         (case and whitespace folded), dropped; dup: repeats, dropped)"
    );
    let check_scores: Vec<&[f32]> = checks.iter().map(|(_, s)| s.as_slice()).collect();
    let check_names: Vec<&str> = checks.iter().map(|(n, _)| *n).collect();
    let quality = roc::quality(&benign, &attack, &check_scores, threshold);
    for line in roc::table(&quality, &check_names) {
        println!("{line}");
    }
}
