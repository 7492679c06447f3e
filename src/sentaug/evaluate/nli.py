"""NLI probes on frozen embeddings (AugCSE Table 1's ANLI column, Table 15's isomorphism distances).

- ANLI score (Table 1, section 3.1 case study 2): for every premise with both an entailed and a contradicted
  hypothesis, every (entailment, contradiction) pair of it counts as one trial, a success when
  sim(premise, entailment) > sim(premise, contradiction) (cosine, as the text says); reported as % of trials
  (`anli.accuracy`). The official code (testing_part/src/experimenters/sts_experimenter.py with
  test_datasets/nli_dataset.py) differs: the dot product instead of the cosine, and each entailment against
  every non-entailment (neutral too); recorded as `anli.accuracy_code`. Its split (ANLI R1 train) is not
  offline; the suite scores the splits it is given (default: dev and test of R1-R3).
- Isomorphism (Table 15, appendix A.13): the anchor (A), entailment (E) and contradiction (C) sentences of an NLI
  triplet set as three embedding samples, compared pairwise (A-E, A-C, E-C) with `sentaug.evaluate.analysis`'s
  COND-HM, SVG and Gromov-Hausdorff estimate (Dubossarsky et al.'s preprocessing). "MNLI + SNLI (sample)": the
  `nli` set sampled down to the `anli` set's size (`sentaug.data.triplets.sample`), as the paper samples it.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ..data.triplets import anli_files, build_triplets, contrast_pairs, sample

ISO_PAIRS = {"A-E": (0, 1), "A-C": (0, 2), "E-C": (1, 2)}


def _unit(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def discrimination(anchors, positives, negatives, similarity: str = "cosine") -> float:
    """% of rows i with sim(anchor_i, positive_i) > sim(anchor_i, negative_i) (a tie is a failure)."""
    a, p, n = (np.asarray(v, dtype=np.float64) for v in (anchors, positives, negatives))
    if not len(a) == len(p) == len(n) or len(a) == 0:
        raise ValueError(f"discrimination needs equally long, non-empty arrays, got {len(a)}, {len(p)}, {len(n)}")
    if similarity == "cosine":
        a, p, n = _unit(a), _unit(p), _unit(n)
    elif similarity != "dot":
        raise ValueError(f"similarity must be cosine or dot, got {similarity!r}")
    return float(100.0 * np.mean((a * p).sum(1) > (a * n).sum(1)))


def isomorphism(samples: list[np.ndarray], gh_sample: int = 500, seed: int = 0) -> dict:
    """COND-HM, SVG and the GH estimate for each of A-E, A-C, E-C over three row-aligned samples."""
    from .analysis import cond_hm, gromov_hausdorff, svg

    out = {}
    for name, (i, j) in ISO_PAIRS.items():
        x, y = samples[i], samples[j]
        out[name] = {"cond_hm": cond_hm(x, y), "svg": svg(x, y),
                     "gromov_hausdorff": gromov_hausdorff(x, y, sample=gh_sample, seed=seed)}
    return out


def anli_trials(data: str | Path, splits=("dev", "test")) -> dict:
    """The ANLI pairs a model is scored on: (premise, entailment, other) rows, text's and code's version."""
    from ..data.nli import read_anli

    pairs = [p for f in anli_files(data, splits) for p in read_anli(f)]
    return {"paper": contrast_pairs(pairs, ("contradiction",)),
            "code": contrast_pairs(pairs, ("neutral", "contradiction")),
            "splits": [str(f.relative_to(Path(data) / "nli" / "anli")) for f in anli_files(data, splits)]}


def isomorphism_samples(triplet_sets: dict, iso_sample: int | None = 5000, seed: int = 0) -> dict:
    """{name: (triplets used, record)}: the `nli` set sampled down to the `anli` set's size when both are given
    (Table 15's "MNLI + SNLI (sample)"), then any set to at most `iso_sample` triplets."""
    sizes = {name: len(t) for name, t in triplet_sets.items()}
    out = {}
    for name, triplets in triplet_sets.items():
        record = {"n_set": len(triplets)}
        if name == "nli" and "anli" in sizes:
            triplets = sample(triplets, sizes["anli"], seed)
            record["sampled_as"] = "anli"
        if iso_sample and len(triplets) > iso_sample:
            triplets = sample(triplets, iso_sample, seed)
        record["n"] = len(triplets)
        out[name] = (triplets, record)
    return out


def score_nli(vectors, trials: dict, samples: dict, gh_sample: int = 500, seed: int = 0) -> dict:
    """Scores of one embedding function `vectors(list[str]) -> array`: the ANLI score over `trials`
    (`anli_trials`) and the isomorphism of each of `samples` (`isomorphism_samples`)."""
    res = {}
    for key, sim in (("paper", "cosine"), ("code", "dot")):
        rows = trials[key]
        if not rows:
            raise ValueError(f"ANLI {', '.join(trials['splits'])}: no premise with an entailed and a "
                             f"{'contradicted' if key == 'paper' else 'non-entailed'} hypothesis")
        a, p, n = (vectors([r[i] for r in rows]) for i in range(3))
        res[key] = (discrimination(a, p, n, sim), len(rows))
    out = {"anli": {"accuracy": res["paper"][0], "trials": res["paper"][1], "accuracy_code": res["code"][0],
                    "trials_code": res["code"][1], "splits": trials["splits"]}}
    out["isomorphism"] = {
        name: {**record, **isomorphism([vectors([t[i] for t in triplets]) for i in range(3)], gh_sample, seed)}
        for name, (triplets, record) in samples.items()}
    return out


def evaluate_nli_cli(model, pooler, data, out, sets: dict | None = None, anli_splits=("dev", "test"),
                     iso_sample: int = 5000, gh_sample: int = 500, seed: int = 0, batch_size: int = 128,
                     device=None, scale=None, normalize=False) -> dict:
    """`sentaug evaluate nli`: read the data (fail fast), embed every distinct sentence once, write one JSON.
    `sets` names the triplet sets of the isomorphism part ({"nli": "snli", "anli": "anli_devtest"})."""
    from ..io import write_json
    from .embeddings import embed_lookup, load_model, run_metadata

    start = time.perf_counter()
    trials = anli_trials(data, anli_splits)
    samples = isomorphism_samples({name: build_triplets(data, set_name, seed)
                                   for name, set_name in (sets or {}).items()}, iso_sample, seed)
    sentences = [s for key in ("paper", "code") for row in trials[key] for s in row]
    sentences += [s for triplets, _ in samples.values() for row in triplets for s in row]
    net, tokenizer = load_model(model, device)
    vectors = embed_lookup(net, tokenizer, sentences, pooler, batch_size, progress=True, normalize=normalize)
    res = score_nli(vectors, trials, samples, gh_sample, seed)
    record = {**run_metadata(model, pooler, data, scale, start, normalize), "suite": "nli", "sets": dict(sets or {}),
              "iso_sample": iso_sample, "gh_sample": gh_sample, "seed": seed, **res}
    write_json(out, record)
    a = res["anli"]
    print(f"{model} [{pooler}] ANLI {a['accuracy']:.2f} ({a['trials']} trials; code's version "
          f"{a['accuracy_code']:.2f} over {a['trials_code']})")
    for name, r in res["isomorphism"].items():
        print(f"  {name} (n={r['n']}): " + ", ".join(f"{k} COND-HM {r[k]['cond_hm']:.2f} SVG {r[k]['svg']:.2f} "
                                                     f"GH {r[k]['gromov_hausdorff']:.3f}" for k in ISO_PAIRS))
    return record
