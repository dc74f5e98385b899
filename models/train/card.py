"""Writes what a training run leaves in the model folder besides the network: metrics.json, the
parity texts that the Rust tests check against, and the model card."""

from __future__ import annotations

import json
import os
import random

from featurize import Featurizer
from onnx_export import ort_scores


SPLIT_TEXT = {
    "sqli": """Every text is first put through `runtime_view` (`models/train/normalize.py`), an approximation of what Rampart's
normaliser hands the detector for one field: repeated percent-decoding, HTML entities, `/* */` and
`<!-- -->` comments replaced by a space, whitespace collapsed, ASCII lower-cased. Query strings
(`modsec_learn_dataset`, `csic2010_lines`) are split into their parameter values first.

| role | sources |
|---|---|
| train, attack | `kaggle_sqli_modified` + `kaggle_sqli_sajid576` (sqli rows); the `sqli` rows of `payloadbox`, `payloadsallthethings`, `fuzzdb`. Attack rows that are a single bare token (`desc`, `0`, `s`, `3.10e+17`) or shorter than 3 characters are dropped (no injection signal in one field). Plus 1,500 generated payloads (`attack_variants`): three quarters boolean conditions (quote/bracket break-out, `and`/`or`/`having`/`xor`..., a comparison with random constants, `like`, `between`, sub-selects, `sleep`/`benchmark`, optional comment tail; the payload lists spell most conditions as `1=1`, real ones use any constants), one quarter stacked queries (`; drop table ...`, `; waitfor delay ...`, `; exec xp_cmdshell ...`). Hand-written textbook forms; **no sqlmap template was used** (sqlmap output is the attack test set, so expanding its templates into training would make the test meaningless). Case mixing, inline comments and %-encoding are not augmented: the runtime view undoes them. |
| train, benign | kaggle family benign rows (SQL statements and English); `websec_ext_cmdi` benign (English fragments); `bipia_train` benign (e-mails, markdown tables, code answers) split into lines/sentences; generated ordinary field values (`benign_values`: all integers 0..1000 and -1..-100, single letters, all two-letter strings, 300 locale-like codes, plus 6,000 random ids, numbers, number lists, dates, UUIDs, hashes, tokens, e-mails, URLs, paths, lone SQL keywords as search words, short punctuation; the enumerated short values get 5x weight); generated hard negatives from the even-numbered templates of `HN_TEMPLATES` (x3 weight); 8,000 generated hard benign values (`hard_benign`, x2 weight): small grammars for prose that uses SQL words and contractions, names with apostrophes, arithmetic/comparisons/code fragments, numbers joined by words, prices, percentages and measurements, non-ASCII words, HTML/markdown snippets. Any generated text that is an instance of a test or calibration template is dropped, so no held-out template instance is trained on. A text labelled both ways is kept as attack only. |
| calibration (held out, benign only) | `csic2010_lines` parameter values (CSIC 2010 shop traffic), **frequency-weighted** (every occurrence counts, so common values such as `1`, `on`, `entrar` weigh as they do in traffic; values that coincide with generated training values, mostly small numbers, are kept), + `benign_prompts_gsm8k`: FPR <= 0.1% there. Plus 1,000 hard negatives from a third template group (`HN_CALIB_TEMPLATES`, used nowhere else): FPR <= 1% there. The operating point is the stricter of the two. |
| test, attack | `httpparams` sqli (sqlmap-generated) + `modsec_learn_dataset` sqli (sqlmap), i.e. the whole sqlmap family. |
| test, benign | `httpparams` benign (CSIC 2010 values; **same origin as the calibration set**), `modsec_learn_dataset` benign field values, `kaggle_xss_syedsaqlain` benign (Wikipedia HTML fragments), benign prompts (alpaca_eval, self_instruct, awesome_chatgpt), and both generated hard-negative test sets: the odd-numbered (held-out) templates of `HN_TEMPLATES` and `HN_FRESH_TEMPLATES` (see the caveat under "Hard negatives"). **The benign FPR below includes the hard negatives.** |

Exact-duplicate texts shared with training were removed from every test set (counts below).
""",
}

# The criterion bench the SQLi card quotes (benches/benches/scoring.rs, group `sqli_model`): one field
# through the model's BatchQueue to the executor, as the engine calls it. `python card.py` reads the
# medians from target/criterion after `cargo bench -p rampart-benches --bench scoring -- sqli_model`.
BENCH_GROUP = "sqli_model"
BENCH_CMD = "cargo bench -p rampart-benches --bench scoring -- sqli_model"


def pct(x):
    if x is None:
        return "n/a"
    return f"{100 * x:.3f}%" if 0 < x < 0.001 else f"{100 * x:.2f}%"


def _targets(op) -> dict:
    # Older operating points carry one float target for the pooled calibration data.
    t = op["target_fpr"]
    return t if isinstance(t, dict) else {"pooled": t}


def _head(kind: str, spec: dict, m: dict) -> list[str]:
    op = spec["operating_point"]
    a = m.get("train_args", {"alpha": 1e-5, "epochs": 8, "seed": 0})
    hidden = spec["model"]["hidden"]
    n_params = spec["dim"] * hidden + hidden + hidden + 1
    targets = ", ".join(f"{pct(v)} on {'the pooled calibration data' if k == 'pooled' else k}"
                        for k, v in _targets(op).items())
    fams = ", ".join(f"{f['kind']} {f['n']}-grams (seed {f['seed']})" for f in spec["families"])
    sparse = spec.get("input") == "sparse"
    graph = ("Gather(W1, indices) -> MatMul(values, rows) (the weighted sum over the K non-zeros) -> Add/Relu/"
             "MatMul/Add/Sigmoid; inputs `indices` int64 [N, K] and `values` float32 [N, K] (each text's non-zero "
             "features, buckets ascending; K = the most non-zeros of any text in the batch, at least 1; shorter rows "
             "padded with index 0, value 0.0, which adds nothing); the same function as the dense [N, "
             f"{spec['dim']}] MatMul, reading only the non-zeros" if sparse else
             f"MatMul/Add/Relu/MatMul/Add/Sigmoid; input `features` float32 [N, {spec['dim']}]")
    return [
        f"# Model card: `{kind}` v{spec['version']}\n",
        "A small, fast hashed n-gram MLP. Generated by `models/train/train.py`; numbers are from `metrics.json` of the "
        "same run.\n",
        "## Use\n",
        "Input: one text field (see data below). Output: `score` in [0, 1]; **score > 0.5 = attack** at the calibrated "
        f"operating point (target FPR {targets}). Rust: `scoring::model::onnx::OnnxExecutor::load(models/{kind}, 1)`.\n",
        "## Architecture\n",
        f"- Featurizer (`featurizer.json`, shared by Python and Rust): first {spec['max_bytes']} bytes of the UTF-8 "
        f"text, ASCII lower-cased; {fams}; 32-bit FNV-1a with the family seed absorbed first; bucket = hash % "
        f"{spec['dim']}; value log1p(count); L2-normalised. Text beyond {spec['max_bytes']} bytes is not scored "
        "(a caller that needs more must window the text itself).",
        f"- Network: MLP {spec['dim']} -> {hidden} (ReLU) -> 1 (sigmoid), {n_params:,} float32 parameters, trained "
        f"with scikit-learn `MLPClassifier` (adam, batch 256, L2 alpha {a['alpha']}, {a['epochs']} epochs, seed "
        f"{a['seed']}).",
        f"- ONNX: opset 17, IR 8, {graph}; output `score` float32 [N, 1]; file size {m['onnx_bytes'] / 1e6:.2f} MB. "
        "Checked with `onnx.checker` (full check) and onnxruntime 1.22.1.\n",
    ]


def _calibration(spec: dict) -> list[str]:
    op = spec["operating_point"]
    L = ["## Calibration\n",
         "- Calibration sets: " + ", ".join(f"{k} ({v:,})" for k, v in op["calibration_sets"].items()) + "."]
    thr = op.get("group_thresholds_logit")
    if thr:
        for g, t in thr.items():
            L.append(f"- {g}: target FPR {pct(_targets(op)[g])}, threshold at logit {t:.4f}, FPR at the shipped "
                     f"0.5 (after float32 rounding) {pct(op['calibration_fpr_at_0.5'][g])}.")
        L.append(f"- Deciding (strictest) set: {op['deciding_group']}.")
    else:
        L.append(f"- FPR on the calibration data at 0.5 (after float32 rounding): {pct(op['calibration_fpr_at_0.5'])}.")
    L.append(f"- Chosen operating point: the raw model's score {op['pre_shift_threshold']:.4f} (logit "
             f"{-op['bias_shift_logit']:.4f}); the output bias was shifted by {op['bias_shift_logit']:+.4f} so that this "
             "point is exactly 0.5 in the shipped model. Threshold in Rampart: **0.5**.\n")
    return L


def _results(m: dict) -> list[str]:
    L = ["## Held-out results (onnxruntime on the exported model)\n",
         f"Attack test: {m['n_attack']:,} texts; benign test: {m['n_benign']:,} texts (all benign sets below, "
         "generated hard negatives included).\n",
         "| metric | value |\n|---|---|",
         f"| TPR at the calibrated threshold (0.5) | {pct(m['tpr_at_0.5'])} |",
         f"| FPR at the calibrated threshold (0.5) | {pct(m['fpr_at_0.5'])} ({round(m['fpr_at_0.5'] * m['n_benign'])} "
         f"of {m['n_benign']:,}) |"]
    for f_ in [0.0001, 0.001, 0.01]:
        L.append(f"| TPR at FPR {100 * f_:g}% (threshold set on the benign test set) | {pct(m[f'tpr_at_fpr_{f_}'])} "
                 f"(actual FPR {pct(m[f'actual_fpr_at_fpr_{f_}'])}) |")
    L.append(f"| ROC AUC | {m.get('auc', float('nan')):.5f} |\n")
    L.append(f"With {m['n_benign']:,} benign test texts, FPR targets below {pct(1 / max(m['n_benign'], 1))} cannot be "
             "resolved: the threshold is then simply the highest benign score.\n")
    L.append("Per set, share scored > 0.5 (removed = exact duplicates of training texts dropped first):\n")
    L.append("| set | n | flagged at 0.5 | removed |\n|---|---|---|---|")
    for k, v in m["per_set"].items():
        L.append(f"| {k} | {v['n']:,} | {pct(v['flagged_at_0.5'])} | {m['overlap_removed'].get(k, 0):,} |")
    L.append("")
    return L


def _hard_negatives(m: dict) -> list[str]:
    L = ["## Hard negatives\n"]
    for k in m["per_set"]:
        if k.startswith("hard"):
            L.append(f"- {k}: {pct(m['per_set'][k]['flagged_at_0.5'])} of {m['per_set'][k]['n']} flagged.")
    L.append(f"- Training hard negatives (even templates and generators, seen in training): "
             f"{pct(m.get('hard_negatives_train_flagged'))} flagged.")
    L.append("- Caveat: the training generators (`hard_benign`) were written after looking at both test sets' "
             "failures under the previous model (e.g. `let x = 51; y = 945`, `char 5`, `f(x) = x^2 + 26`, `x >= 85`), "
             "and they cover the same kinds of text (names, SQL words in prose, arithmetic and code, prices), so these "
             "sets measure generalisation to unseen *templates* of known kinds, not to unseen kinds. No instance of a "
             "test template is in training (dropped by regex in `augment.hard_benign`). The calibration templates "
             "were never inspected against a model before they set the operating point.")
    for k, flagged in m.get("hard_negatives_flagged", {}).items():
        if flagged:
            L.append(f"- Still flagged in {k} (highest first, up to 20):\n")
            L.extend(f"  - `{t}` ({sc:.3f})" for t, sc in flagged[:20])
    L.append("")
    return L


def _latency(kind: str, m: dict) -> list[str]:
    lat = m["latency"]
    L = ["## Latency\n",
         f"- onnxruntime-python, 1 intra-op thread, model only (no featurizer): batch 1: "
         f"{lat['ort_python_batch1_ms'] * 1e3:.0f} us; batch 32: {lat['ort_python_batch32_per_text_ms'] * 1e3:.0f} us "
         "per text (includes Python call overhead)."]
    bench = m.get("rust_bench")
    if bench:
        L.append(f"- Rust, one field through `BatchQueue` -> `OnnxExecutor` (featurize + ort, 1 intra-op thread), "
                 f"criterion `{BENCH_CMD}`, {bench['when']}, {bench['machine']}; **p50 per field**:\n")
        L.append("| bench (field) | p50 | mean |\n|---|---|---|")
        for name, v in bench["results"].items():
            L.append(f"| `{name}` | {v['median_us']:.1f} us | {v['mean_us']:.1f} us |")
        if bench.get("note"):
            L.append(f"\n{bench['note']}")
    else:
        L.append(f"- Rust: not measured yet; run `{BENCH_CMD}`, then `python models/train/card.py {kind} --dir "
                 f"models/{kind} --criterion target/criterion`.")
    L.append("")
    return L


def write_card(kind: str, out_dir: str, spec: dict, m: dict, n_parity: int):
    L = _head(kind, spec, m)
    L += ["## Data and split\n", SPLIT_TEXT[kind],
          f"Training rows: {m['train_counts']['attack']:,} attack, {m['train_counts']['benign']:,} benign "
          "(after de-duplication; weighted copies counted).\n"]
    L += _calibration(spec)
    L += _results(m)
    L += _hard_negatives(m)
    L.append("## Probe texts\n")
    L.append("Fixed probes. The first five are the named hard negatives of the task; they come from the "
             "*training* templates, so they are in-sample (the held-out templates are above).\n")
    L.append("| text | expected | score | verdict |\n|---|---|---|---|")
    for pr in m["probes"]:
        ok = (pr["score"] > 0.5) == (pr["expected"] == "attack")
        L.append(f"| `{pr['text'][:100]}` | {pr['expected']} | {pr['score']:.3f} | {'ok' if ok else '**wrong**'} |")
    L.append("")
    L.append("## Examples (lowest-scored attacks, highest-scored benign)\n")
    for k, v in m["examples"].items():
        L.append(f"- **{k}**: " + "; ".join(f"`{t[:90].replace('`', chr(39))}` ({s:.3f})" for t, s in v[:4]))
    L.append("")
    L += _latency(kind, m)
    L.append("## Parity\n")
    L.append(f"`parity.jsonl` holds {n_parity} texts (fixed probes, empty text, a text longer than the byte cap, "
             "non-ASCII, and samples of each test set) with onnxruntime-python scores; "
             "`cargo test -p rampart-scoring --test model_parity` checks |rust - python| < 1e-4.\n")
    L.append("## Known limits\n")
    L.extend(f"- {x}" for x in LIMITS[kind])
    L.append("")
    with open(os.path.join(out_dir, "CARD.md"), "w") as f:
        f.write("\n".join(L))


LIMITS = {
    "sqli": [
        "Bag of hashed byte/word n-grams: no SQL grammar. Arithmetic-only or numeric payloads "
        "(`(8266=8266)*9900`, `5739-5738`, `-3752`) look like ordinary numbers and are missed; some English with SQL "
        "words and comment/operator characters is flagged.",
        "The kaggle training family has label noise (plain SQL statements labelled benign, single keywords "
        "labelled sqli); token-only attack rows were dropped, the rest is used as the source has it.",
        "The traffic calibration set (csic2010 values) and the httpparams benign test set share the CSIC 2010 origin, "
        "so the test FPR on httpparams is optimistic for other traffic; the other benign test sets show the spread.",
        "The operating point is decided by the calibration hard negatives (1% FPR there), i.e. by about ten generated "
        "texts; a retrain can move it. Re-check the probe table and the per-set rates after every retraining; the Rust "
        "test `sqli_verdicts` checks `42` and the named hard negatives.",
        "`runtime_view` (training) and Rampart's normaliser differ in details: MySQL `/*!...*/` comments are dropped "
        "with their content in training but kept (markers removed) at runtime; HTML comments become a space in "
        "training, nothing at runtime.",
        "Only the first 4096 bytes of a field are scored.",
    ],
}


def parity_texts(kind, test_sets, attack_keys, benign_keys) -> list[str]:
    """Edge cases (empty, over the byte cap, non-ASCII), fixed probes and a seeded sample of each
    test set; at most 32."""
    rng = random.Random(5)
    fixed_common = ["", "a", "O'Brien", "ÄÖÜ straße naïve café 日本語", "x" * 9000]
    fixed = ["' or 1=1 --", "1' union select username, password from users--",
             "admin'/**/or/**/'1'='1", "select a size from the drop-down menu",
             "50% off -- today only!", "5 < 6 and 7 > 3",
             "1; waitfor delay '0:0:5'--", "john.smith@example.com"]
    out = fixed_common + fixed
    per_set = 2
    for k in attack_keys + benign_keys:
        v = test_sets[k]
        if v:
            out += rng.sample(v, min(per_set, len(v)))
    return out[:32]


def write_json(path: str, obj) -> None:
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def write_parity(out_dir: str, onnx_path: str, texts: list[str]) -> None:
    # Featurized from the written featurizer.json, the file the Rust side reads, so the parity
    # scores also cover the spec round trip.
    Xp = Featurizer.from_file(os.path.join(out_dir, "featurizer.json")).featurize_sparse(texts)
    sp = ort_scores(onnx_path, Xp)
    with open(os.path.join(out_dir, "parity.jsonl"), "w") as f:
        for t, s in zip(texts, sp):
            f.write(json.dumps({"text": t, "score": float(s)}) + "\n")


def bench_results(criterion_dir: str) -> dict:
    """Median and mean per bench of the criterion group BENCH_GROUP, in microseconds."""
    group = os.path.join(criterion_dir, BENCH_GROUP)
    out = {}
    for name in sorted(os.listdir(group)):
        est = os.path.join(group, name, "new", "estimates.json")
        if os.path.isfile(est):
            with open(est) as f:
                e = json.load(f)
            out[f"{BENCH_GROUP}/{name}"] = {"median_us": e["median"]["point_estimate"] / 1e3,
                                            "mean_us": e["mean"]["point_estimate"] / 1e3}
    return out


def main():
    """Re-writes CARD.md from a model folder's featurizer.json, metrics.json and parity.jsonl, optionally
    recording the criterion results of the Rust bench first (no retraining)."""
    import argparse
    import datetime

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("model", choices=["sqli"])
    ap.add_argument("--dir", required=True, help="model folder, e.g. models/sqli")
    ap.add_argument("--criterion", help=f"target/criterion after `{BENCH_CMD}`")
    ap.add_argument("--machine", default="", help="where the bench ran (for the card)")
    ap.add_argument("--note", default="", help="one line for the card under the bench table")
    a = ap.parse_args()
    with open(os.path.join(a.dir, "featurizer.json")) as f:
        spec = json.load(f)
    mpath = os.path.join(a.dir, "metrics.json")
    with open(mpath) as f:
        m = json.load(f)
    if a.criterion:
        m["rust_bench"] = {"results": bench_results(a.criterion), "machine": a.machine, "note": a.note,
                           "when": datetime.date.today().isoformat()}
        write_json(mpath, m)
    with open(os.path.join(a.dir, "parity.jsonl")) as f:
        n_parity = sum(1 for line in f if line.strip())
    write_card(a.model, a.dir, spec, m, n_parity)


if __name__ == "__main__":
    main()
