"""GLUE's training pairs by length, as the bill prices GLUE fine-tuning (`sentaug.pricing.cost.glue_task_steps`):
each task's pairs encoded as `sentaug evaluate glue` encodes them (`glue_steps.encode_pairs`: one sequence per
pair, special tokens in, at most 128 tokens) with roberta-base's tokenizer, counted per multiple of 8 (a pair of
19 tokens counts at 24: the bucket widths a GPU pads to are chosen among these). Prints the `glue_lengths`
section of src/sentaug/resources/workload.yaml.

    python benchmarks/glue_lengths.py [--data ../shared/data] [--tokenizer ../shared/models/roberta-base-tokenizer]

From the mirror's training sets: CoLA, SST-2, MRPC, RTE, STS-B (measured). Not in the mirror, estimated and said
so: QNLI from its dev split (the same SQuAD-sentence pairs, split at random), scaled to its training size; MNLI
from SNLI's dev and test pairs (the mirror's nli/snli_senteval) with every length x1.5 (MNLI's premises come from
ten genres, spoken and written, and run longer than SNLI's image captions), scaled to its size; QQP from STS-B's
training pairs (two short sentences, as a question pair is), scaled to its size.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

MAX_LENGTH, ROUND = 128, 8
MEASURED = ("CoLA", "SST-2", "MRPC", "RTE", "STS-B")
# task: (how its stand-in is read, the length factor, the note the bill shows)
ESTIMATED = {
    "QNLI": ("QNLI dev", 1.0, "its dev split's lengths, scaled to its training size (not in the mirror)"),
    "MNLI": ("SNLI", 1.5, "SNLI's dev and test pairs, each length x1.5, scaled to its size (not in the mirror)"),
    "QQP": ("STS-B", 1.0, "STS-B's training pairs, scaled to its size (not in the mirror)"),
}


def lengths(tokenizer, a: list[str], b: list[str] | None) -> np.ndarray:
    from sentaug.evaluate.glue_steps import encode_pairs

    return encode_pairs(tokenizer, a, b, MAX_LENGTH).lengths


def histogram(values: np.ndarray, factor: float = 1.0) -> dict[int, int]:
    """Pairs per multiple of ROUND (rounded up, at most MAX_LENGTH) of their lengths x `factor`."""
    scaled = np.minimum(np.ceil(values * factor), MAX_LENGTH)
    widths = (np.ceil(scaled / ROUND) * ROUND).astype(int)
    return {int(w): int(n) for w, n in zip(*np.unique(widths, return_counts=True))}


def scaled_to(counts: dict[int, int], n: int) -> dict[int, int]:
    """`counts` scaled to `n` pairs in all (largest remainders rounded up)."""
    total = sum(counts.values())
    exact = {w: c * n / total for w, c in counts.items()}
    out = {w: int(v) for w, v in exact.items()}
    for w in sorted(exact, key=lambda w: (out[w] - exact[w], w))[:n - sum(out.values())]:
        out[w] += 1
    return {w: c for w, c in sorted(out.items()) if c}


def main() -> None:
    from transformers import AutoTokenizer

    from sentaug.evaluate.glue import read_glue
    from sentaug.pricing.cost import workload

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(ROOT.parent / "shared/data"))
    p.add_argument("--tokenizer", default=str(ROOT.parent / "shared/models/roberta-base-tokenizer"))
    a = p.parse_args()
    tok = AutoTokenizer.from_pretrained(a.tokenizer)
    sizes = {t: e["n"] for t, e in workload()["glue_train"].items()}
    read = {}
    for task in MEASURED:
        split = read_glue(a.data, task, "train")
        read[task] = lengths(tok, split.text_a, split.text_b)
    dev = read_glue(a.data, "QNLI", "dev")
    read["QNLI dev"] = lengths(tok, dev.text_a, dev.text_b)
    snli = Path(a.data) / "nli/snli_senteval"
    s1 = [line for s in ("dev", "test") for line in (snli / f"s1.{s}").read_text(encoding="utf-8").splitlines()]
    s2 = [line for s in ("dev", "test") for line in (snli / f"s2.{s}").read_text(encoding="utf-8").splitlines()]
    read["SNLI"] = lengths(tok, s1, s2)
    print("glue_lengths:")
    print("  tokenizer: roberta-base")
    for task in (*MEASURED, *ESTIMATED):
        if task in MEASURED:
            counts, head = histogram(read[task]), "basis: measured"
            assert sum(counts.values()) == sizes[task], task
        else:
            stand_in, factor, note = ESTIMATED[task]
            counts = scaled_to(histogram(read[stand_in], factor), sizes[task])
            head = f"basis: estimated, note: \"{note}\""
        body = ", ".join(f"{w}: {n}" for w, n in counts.items())
        print(f"  {task}: {{{head}, counts: {{{body}}}}}")


if __name__ == "__main__":
    main()
