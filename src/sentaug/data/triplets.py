"""NLI sentence triplets (premise, entailed hypothesis, contradicted hypothesis) built from the NLI data sets
the workflow reads (`sentaug.data.nli`), for supervised SimCSE-style training and AugCSE's NLI analyses.

Named sets (`SETS`), each under a data root laid out like ../shared/data:
- `nli_for_simcse`: SimCSE's own SNLI + MNLI triplets (`nli/simcse/nli_for_simcse.csv`), as they are.
- `snli`: SNLI dev + test in SentEval's layout (`nli/snli_senteval`), grouped by premise (the offline stand-in
  for SNLI + MNLI below paper scale: SNLI's and MNLI's training sets are not offline).
- `anli_train`: ANLI R1-R3 train (`nli/anli/R<r>/train.jsonl`), grouped by premise: AugCSE's ANLI-SimCSE data
  (its data/download_anli.py).
- `anli_devtest`: ANLI R1-R3 dev + test, grouped the same way (the offline stand-in for `anli_train`).

Grouping follows AugCSE's data/download_anli.py: pairs are pivoted by premise; a premise with at least one
entailed and one contradicted hypothesis gives one triplet, its hypotheses drawn at random (seeded) among
that premise's entailments and contradictions; other premises are dropped. Triplets keep the order in which
their premises first appear.
"""
from __future__ import annotations

import csv
import os
import random
from pathlib import Path

from .nli import TRIPLET_HEADER, NLIPair, NLITriplet, read_anli, read_nli_pairs, read_nli_triplets

ANLI_ROUNDS = ("R1", "R2", "R3")

# set name -> (folder under the data root it reads, description)
SETS = {
    "nli_for_simcse": ("nli/simcse", "SimCSE's nli_for_simcse.csv (SNLI + MNLI triplets)"),
    "snli": ("nli/snli_senteval", "SNLI dev + test (SentEval layout), grouped by premise"),
    "anli_train": ("nli/anli", "ANLI R1-R3 train, grouped by premise"),
    "anli_devtest": ("nli/anli", "ANLI R1-R3 dev + test, grouped by premise"),
}


def set_folder(data_root: str | os.PathLike, name: str) -> Path:
    if name not in SETS:
        raise ValueError(f"unknown NLI triplet set {name!r}; choose from {', '.join(SETS)}")
    return Path(data_root) / SETS[name][0]


def anli_files(data_root: str | os.PathLike, splits: list[str] | tuple[str, ...]) -> list[Path]:
    """`R1/dev`-style split names (or bare `dev`: every round) -> the ANLI jsonl files."""
    folder = Path(data_root) / "nli" / "anli"
    files = []
    for split in splits:
        rounds, name = (split.split("/", 1) if "/" in split else ("*", split))
        for r in (ANLI_ROUNDS if rounds == "*" else (rounds,)):
            files.append(folder / r / f"{name}.jsonl")
    return files


def load_pairs(data_root: str | os.PathLike, name: str) -> list[NLIPair]:
    """The labelled pairs a grouped set is built from."""
    folder = set_folder(data_root, name)
    if name == "snli":
        return [p for split in ("dev", "test") for p in read_nli_pairs(folder, split)]
    splits = {"anli_train": ["train"], "anli_devtest": ["dev", "test"]}.get(name)
    if splits is None:
        raise ValueError(f"NLI set {name!r} is a triplet file, not labelled pairs")
    return [p for f in anli_files(data_root, splits) for p in read_anli(f)]


def by_premise(pairs: list[NLIPair]) -> dict[str, dict[str, list[str]]]:
    """premise -> label -> hypotheses (premises and hypotheses in order of first appearance)."""
    grouped: dict[str, dict[str, list[str]]] = {}
    for p in pairs:
        grouped.setdefault(p.premise, {}).setdefault(p.label, []).append(p.hypothesis)
    return grouped


def group_triplets(pairs: list[NLIPair], seed: int = 0) -> list[NLITriplet]:
    """One (premise, entailment, contradiction) per premise that has both, hypotheses drawn with `seed`."""
    rng = random.Random(seed)
    triplets = []
    for premise, labels in by_premise(pairs).items():
        if labels.get("entailment") and labels.get("contradiction"):
            triplets.append(NLITriplet(premise, rng.choice(labels["entailment"]), rng.choice(labels["contradiction"])))
    return triplets


def contrast_pairs(pairs: list[NLIPair], negative_labels=("contradiction",)) -> list[NLITriplet]:
    """Every (premise, entailed hypothesis, other hypothesis) combination of a premise, the other hypothesis's
    label in `negative_labels`: what AugCSE's ANLI score counts over (its testing_part/.../nli_dataset.py
    pairs each entailment with every non-entailment of the same premise)."""
    out = []
    for premise, labels in by_premise(pairs).items():
        others = [h for lab in negative_labels for h in labels.get(lab, [])]
        out += [NLITriplet(premise, e, o) for e in labels.get("entailment", []) for o in others]
    return out


def sample(triplets: list[NLITriplet], n: int, seed: int = 0) -> list[NLITriplet]:
    """`n` triplets drawn without replacement (kept in their order); all of them when there are fewer."""
    if n >= len(triplets):
        return list(triplets)
    keep = sorted(random.Random(f"sample:{seed}").sample(range(len(triplets)), n))
    return [triplets[i] for i in keep]


def build_triplets(data_root: str | os.PathLike, name: str, seed: int = 0) -> list[NLITriplet]:
    if name == "nli_for_simcse":
        return read_nli_triplets(set_folder(data_root, name) / "nli_for_simcse.csv")
    triplets = group_triplets(load_pairs(data_root, name), seed)
    if not triplets:
        raise ValueError(f"{set_folder(data_root, name)}: no premise has both an entailed and a contradicted "
                         f"hypothesis")
    return triplets


def write_triplets(path: str | os.PathLike, triplets: list[NLITriplet]) -> None:
    """nli_for_simcse.csv's layout (header sent0,sent1,hard_neg), written atomically."""
    from ..io import atomic_path

    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(TRIPLET_HEADER)
        writer.writerows(triplets)


def triplets_cli(name: str, data: str, out: str, seed: int = 0, sample_as: str | None = None) -> dict:
    """`sentaug nli-triplets`: build set `name` (sampled down to the size of set `sample_as`, e.g. AugCSE
    Table 14's "Supervised SimCSE (Sampled)") and write it with a stats JSON beside it."""
    from ..io import write_json

    triplets = build_triplets(data, name, seed)
    stats = {"set": name, "description": SETS[name][1], "seed": seed, "n_built": len(triplets)}
    if sample_as:
        target = len(build_triplets(data, sample_as, seed))
        triplets = sample(triplets, target, seed)
        stats.update({"sample_as": sample_as, "sample_size": target})
    stats["n"] = len(triplets)
    write_triplets(out, triplets)
    write_json(Path(out).with_suffix(".json"), stats)
    print(f"{name}{' as ' + sample_as if sample_as else ''}: {len(triplets)} triplets -> {out}")
    return stats
