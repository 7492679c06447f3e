"""The augmentation census: one row per declared augmentation on the training corpus.

Columns: share of lines changed, mean word-level edit distance and mean length change (whitespace words),
mean length change in the backbone's tokens, and the cosine similarity between each original line and its
augmentation under the backbone with mean pooling (AugCSE Figure 6 and VaSCL Figure 3b read this).

Two steps, so that each cache is embedded once and the table is cheap to rebuild:

1. `embedding_stats` (``sentaug augment-cosine``): per cache, a JSON with the cosine similarities (mean over
   a fixed sample of lines, and over the changed lines of that sample) and the token length change under
   the backbone's tokenizer (over all lines). The sample is the first ``max_lines`` unflagged lines after a
   seeded shuffle (seed 0): the same lines for every augmentation of a corpus. Caches holding token-level
   entries (CARDS re-tokenization, BPE-dropout: token sequences of their own tokenizer) get no cosine and no
   token length change (None, shown as "--"): their text is the original, so neither is defined here.
2. `render_census` (``sentaug report census``): the LaTeX table and CSV from the cache stats JSONs (written by
   ``sentaug augment``) and the JSONs of step 1, with, per augmentation, the reference implementation its
   operation was checked against and the agreement measured there (``sentaug conformance``'s JSON,
   `sentaug.augment.conformance`; "--" where no reference cases exist).

An anchored augmentation (SDA's released code: the anchor is the spaCy-tokenised line) is compared with its
cached anchor rather than the line as written.
"""
from __future__ import annotations

import json
import math
import os

import numpy as np

from ..intermediates import read_cache, read_result
from ..io import write_json

COLUMNS = [("share_changed", "Changed \\%"), ("mean_token_edit_distance", "Edit dist."),
           ("mean_length_change", "$\\Delta$ words"), ("mean_length_change_tokens", "$\\Delta$ tokens"),
           ("cosine", "Cosine"), ("cosine_changed", "Cosine (changed)")]


def cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of two aligned matrices (a zero vector gives 0)."""
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    den = na * nb
    return np.divide((a * b).sum(axis=1), den, out=np.zeros(len(a), dtype=np.float64), where=den > 0)


def sample_rows(n_lines: int, ok: np.ndarray, max_lines: int | None, seed: int = 0) -> np.ndarray:
    """Indices of the cosine sample: unflagged rows, shuffled with `seed`, the first `max_lines`, sorted."""
    idx = np.flatnonzero(ok)
    if max_lines is not None and len(idx) > max_lines:
        idx = np.sort(np.random.default_rng(seed).permutation(idx)[:max_lines])
    return idx


def embedding_stats(cache: str | os.PathLike, model_dir: str | os.PathLike, out: str | os.PathLike,
                    max_lines: int | None = 2000, batch_size: int = 128, device: str | None = None) -> dict:
    """Step 1 (module docstring): cosine original/augmented and token length change for one cache."""
    from ..augment.cache import token_lengths
    from ..models.token_sequences import TOKENS_PREFIX
    from ..models.encoder import embed, load_pretrained

    table = read_cache(cache)
    missing = {"original", "augmented", "changed", "flag"} - set(table.columns)
    if missing:
        raise ValueError(f"{cache}: not an augmentation cache (no column {sorted(missing)[0]!r})")
    original = table["anchor" if "anchor" in table.columns else "original"].tolist()
    augmented = table["augmented"].tolist()
    changed = table["changed"].to_numpy(bool)
    text_level = np.array([not a.startswith(TOKENS_PREFIX) for a in augmented])
    model, tokenizer = load_pretrained(model_dir, device)
    token_level = not text_level.all()
    rows = sample_rows(len(table), table["flag"].to_numpy() == "", max_lines) if not token_level else np.zeros(0, int)
    cos = np.zeros(0)
    if len(rows):
        e = embed(model, tokenizer, [original[i] for i in rows] + [augmented[i] for i in rows], poolers=("avg",),
                  batch_size=batch_size, max_length=512, progress=True)["avg"]
        cos = cosine_rows(e[:len(rows)].astype(np.float64), e[len(rows):].astype(np.float64))
    ch = changed[rows] if len(rows) else np.zeros(0, bool)
    idx = np.flatnonzero(changed)
    lo = token_lengths([original[i] for i in idx], tokenizer)
    la = token_lengths([augmented[i] for i in idx], tokenizer)
    n = len(table)
    result = {"cache": str(cache), "model": str(model_dir), "pooler": "avg", "n": n,
              "n_cosine": int(len(rows)), "n_cosine_changed": int(ch.sum()), "sample_seed": 0,
              "max_lines": max_lines,
              "cosine": round(float(cos.mean()), 6) if len(cos) else None,
              "cosine_changed": round(float(cos[ch].mean()), 6) if ch.any() else None,
              "mean_length_change_tokens": (round(sum(b - a for a, b in zip(lo, la)) / n, 6) if n else 0.0)
              if not token_level else None,
              "token_level_lines": int((~text_level).sum())}
    write_json(out, result)
    return result


def reference_label(entry: dict | None) -> str:
    """ "GEM-benchmark/NL-Augmenter:nlaugmenter/transformations/tense/test.json@b64a8efebd84" -> its short
    form "NL-Augmenter tense"; "--" without reference cases."""
    if not entry:
        return "--"
    repo, _, rest = entry["reference"].partition(":")
    path = rest.rsplit("@", 1)[0]
    short = {"GEM-benchmark/NL-Augmenter": "NL-Augmenter", "Zhudongsheng75/SDA": "SDA code",
             "alibaba/SimCSE-with-CARDS": "CARDS collator"}.get(repo, repo)
    if short == "NL-Augmenter":
        short += " " + path.split("/")[-2]
    return short


def census_records(inputs: dict, conformance: dict | None = None) -> list[dict]:
    """One record per augmentation; `inputs` maps a name to {"stats": cache stats JSON, "embedding": step-1
    JSON}; `conformance` is ``sentaug conformance``'s result by registry op. Missing keys in a file raise
    ValueError naming the file."""
    records = []
    for name, files in inputs.items():
        stats, emb = read_result(files["stats"]), read_result(files["embedding"])
        try:
            rec = {"augmentation": name, "op": stats["augmentation"], "family": stats["family"],
                   "params": json.dumps(stats["params"], sort_keys=True), "seed": stats["seed"], "n": stats["n"],
                   "share_changed": stats["share_changed"],
                   "mean_token_edit_distance": stats["mean_token_edit_distance"],
                   "mean_length_change": stats["mean_length_change"]}
        except KeyError as e:
            raise ValueError(f"{files['stats']}: cache stats without key {e.args[0]!r}") from None
        try:
            rec.update({k: emb[k] for k in ("mean_length_change_tokens", "cosine", "cosine_changed", "n_cosine")})
        except KeyError as e:
            raise ValueError(f"{files['embedding']}: embedding stats without key {e.args[0]!r}") from None
        entry = (conformance or {}).get(rec["op"])
        rec.update({"reference": reference_label(entry),
                    "agreement": entry["agreement"] if entry else None,
                    "reference_cases": entry["n"] if entry else 0,
                    "reference_agree": entry["agree"] if entry else 0,
                    "reference_params": json.dumps(entry["params"], sort_keys=True) if entry else "",
                    "reference_note": entry["note"] if entry else ""})
        records.append(rec)
    return records


def _tex(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#")):
        text = text.replace(a, b)
    return text


def _cell(v) -> str:
    return "--" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.2f}" if abs(v) >= 10 else f"{v:.3f}"


def render_tex(records: list[dict], scale: str, meta: dict) -> str:
    header = ["Augmentation", "Family"] + [c for _, c in COLUMNS] + ["Agree \\%", "Reference"]
    lines = [r"\begin{table}[t]", r"\centering", r"\small", r"\begin{tabular}{ll" + "r" * (len(COLUMNS) + 1) + "l}",
             r"\toprule", " & ".join(header) + r" \\", r"\midrule"]
    for r in records:
        agree = r.get("agreement")
        agree = "--" if agree is None else f"{agree:.1f} ({r['reference_agree']}/{r['reference_cases']})"
        lines.append(" & ".join([_tex(r["augmentation"]), _tex(r["family"])] + [_cell(r[k]) for k, _ in COLUMNS]
                                + [agree, _tex(r.get("reference", "--"))]) + r" \\")
    caption = (f"Augmentation census on {_tex(str(meta.get('corpus', '?')))} (seed {meta.get('seed', '?')}): share "
               "of lines changed, mean word edit distance and length change (whitespace words, over all lines), "
               f"length change in tokens and cosine similarity between original and augmented line under "
               f"{_tex(str(meta.get('backbone', '?')))} with mean pooling (over a sample of "
               f"{meta.get('n_cosine', '?')} lines; 'changed': over the changed lines of it). Agree: the share "
               "of the reference implementation's cases our operation reproduces (exactly, or for random draws the "
               "same decision to change from the same pool; cases in parentheses; \\texttt{sentaug conformance}).")
    if not meta.get("compares_with_papers"):
        caption += f" Built at scale \\texttt{{{scale}}}, below paper scale."
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{caption}}}", r"\label{tab:augmentation-census}",
              r"\end{table}"]
    return "\n".join(lines) + "\n"


def render_census(inputs: str, out: str | os.PathLike, scale: str) -> list[dict]:
    """CLI entry: `inputs` is JSON {"rows": {name: {"stats": f, "embedding": f}}, "meta": {...}}."""
    from .tables import write_table

    spec = json.loads(inputs)
    conformance = read_result(spec["conformance"])["augmentations"] if spec.get("conformance") else None
    records = census_records(spec["rows"], conformance)
    meta = dict(spec.get("meta", {}))
    meta.setdefault("n_cosine", max((r["n_cosine"] for r in records), default=0))
    frame = write_table(out, records, scale, render_tex(records, scale, meta))
    print(frame[["augmentation", "share_changed", "mean_token_edit_distance", "cosine", "agreement"]]
          .to_string(index=False))
    return records
