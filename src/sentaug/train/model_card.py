"""A trained run's model card: the README.md of its folder, so that the folder uploads to a model hub as it is (a
sentence-transformers model: weights, tokenizer, modules.json and this card). It says what the model is (method,
backbone, scale, seed), the method's parts and the paper(s) it comes from, the recipe it was trained with, its
scores, how to use it and how to cite; its YAML header holds the hub's metadata and the scores as a
`model-index` (the hub's format for results).

The trainer writes it when the run is complete, with the STS-B dev score the run was selected on. Each
`sentaug evaluate` of the run adds its scores (`add_scores`; the trainer's code digest leaves this module out,
so that a change of the card's words retrains nothing: a card is rewritten whole at the run's next evaluation).
The card is rewritten under a lock and keeps the
modification times of the file and the folder, so that Snakemake sees the run as it was built (nothing
downstream reruns because a card gained a line).
"""
from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

import yaml

CARD = "README.md"
# The papers, as the README cites them: a method's own paper by its name's prefix, and SimCSE, which all build on.
PAPERS = {
    "simcse": ("SimCSE", "Gao, Yao and Chen, EMNLP 2021", "https://aclanthology.org/2021.emnlp-main.552/"),
    "vascl": ("VaSCL", "Zhang et al., Findings of ACL 2022", "https://aclanthology.org/2022.findings-acl.70/"),
    "cards": ("CARDS", "Wang et al., SIGIR 2022", "https://doi.org/10.1145/3477495.3531823"),
    "clear": ("CLEAR", "Wu et al., 2020", "https://arxiv.org/abs/2012.15466"),
    "augcse": ("AugCSE", "Tang et al., AACL 2022", "https://arxiv.org/abs/2210.13749"),
    "sda": ("SDA", "Zhu, Mao et al., LREC-COLING 2024", "https://aclanthology.org/2024.lrec-main.1260/"),
}
SCALE_WORDS = {
    "demo": "**Demo scale: these numbers mean nothing about the paper.** A tiny random backbone trained for a few "
            "dozen steps on synthetic data, to show that every step runs.",
    "small": "**Small scale: directions, not the paper's values.** An offline stand-in backbone, a small slice of "
             "the corpus and a few hundred steps.",
    "gpu": "**GPU check scale: not the paper's values.** A random base-sized backbone, to time and check the GPU path.",
    "paper": "Paper scale: the paper's backbone, corpus and recipe.",
}
RECIPE = ("backbone", "paper_backbone", "corpus", "batch_size", "learning_rate", "max_seq_length", "max_steps",
          "epochs", "temperature", "pooler", "eval_pooler", "eval_steps", "weight_decay", "seed", "scale")


def method_papers(spec: dict) -> list[str]:
    """The papers a run's method comes from: its name's prefix, the papers named by its parts' descriptions
    (`CARDS: ...`), and SimCSE, on which every method builds; in the order of PAPERS."""
    from ..parts import KINDS, get
    from ..parts.registry import _entries

    named = {spec["method"].split("_")[0].lower()}
    for kind, _, entry in _entries(spec):
        try:
            description = get(kind, entry[KINDS[kind].field]).description
        except (KeyError, ValueError):
            continue
        named |= {key for key, (short, _, _) in PAPERS.items() if description.startswith((short, f"unsupervised {short}"))}
    return [key for key in PAPERS if key in named or key == "simcse"]


def _parts(spec: dict) -> list[str]:
    """The method's parts, one line each, as the spec records them."""
    from ..parts import KINDS, get
    from ..parts.registry import _entries

    lines = []
    for kind, key, entry in _entries(spec):
        field = KINDS[kind].field
        settings = ", ".join(f"{k}: {v}" for k, v in entry.items() if k not in (field, "settings"))
        try:
            description = get(kind, entry[field]).description
        except (KeyError, ValueError):
            description = ""
        lines.append(f"- {key}: `{entry[field]}`" + (f" ({settings})" if settings else "")
                     + (f": {description}" if description else ""))
    return lines


def selection_score(summary: dict) -> dict:
    """The score the run was selected on: STS-B dev Spearman at its best step."""
    return {"evaluation": "training", "task": "STSBenchmark", "split": "validation", "subset": "default",
            "metric": "cosine_spearman", "value": round(float(summary["best_stsb_dev"]), 2),
            "type": "STS", "mteb": None, "note": f"selection, step {summary['best_step']}"}


def _model_index(name: str, scores: list[dict]) -> list[dict]:
    results = []
    for s in scores:
        results.append({"task": {"type": s["type"], "name": s["evaluation"]},
                        "dataset": {"name": s["task"], "type": (f"mteb/{s['mteb']}" if s["mteb"] else
                                                                f"sentaug/{s['task']}"),
                                    "split": s["split"], "config": s["subset"]},
                        "metrics": [{"type": s["metric"], "value": s["value"]}],
                        "source": {"name": f"sentaug ({s['note']})"}})
    return [{"name": name, "results": results}]


def _scores_of(front: dict) -> list[dict]:
    """The score rows a card's model-index holds (`_model_index` read back)."""
    rows = []
    for entry in (front.get("model-index") or [{}])[0].get("results") or []:
        dataset, metric = entry["dataset"], entry["metrics"][0]
        mteb = dataset["type"].removeprefix("mteb/") if dataset["type"].startswith("mteb/") else None
        rows.append({"evaluation": entry["task"]["name"], "task": dataset["name"], "split": dataset["split"],
                     "subset": dataset.get("config", "default"), "metric": metric["type"], "value": metric["value"],
                     "type": entry["task"]["type"], "mteb": mteb,
                     "note": entry.get("source", {}).get("name", "sentaug ()")[len("sentaug ("):-1]})
    return rows


def render_card(summary: dict, identity: dict, scores: list[dict]) -> str:
    """The card's text (module docstring)."""
    from .. import __version__

    spec = summary["spec"]
    papers = method_papers(spec)
    own = [PAPERS[p] for p in papers if p != "simcse"] or [PAPERS["simcse"]]
    tags = ["sentence-transformers", "sentence-similarity", "feature-extraction", "sentaug",
            *[PAPERS[p][0].lower() for p in papers], f"scale-{spec['scale']}"]
    front = {"language": ["zh"] if "chinese" in str(spec.get("paper_backbone")) else ["en"],
             "library_name": "sentence-transformers", "pipeline_tag": "sentence-similarity",
             "tags": list(dict.fromkeys(tags))}
    if identity.get("base_model"):
        front["base_model"] = identity["base_model"]
    if identity.get("training_data"):
        front["datasets"] = identity["training_data"]
    front["model-index"] = _model_index(identity["name"], scores)
    source = summary.get("backbone_source") or {}
    from ..models.hub import describe

    lines = ["---", yaml.safe_dump(front, sort_keys=False, allow_unicode=True).rstrip(), "---", "",
             f"# {identity['name']}", "",
             f"A sentence-embedding model trained by sentaug {__version__} with the method "
             f"`{spec['method']}` of {', '.join(f'[{p[0]}]({p[2]}) ({p[1]})' for p in own)}, built on unsupervised "
             f"SimCSE, from the backbone {describe(source)} (standing in for {spec.get('paper_backbone')}), "
             f"on the corpus `{spec.get('corpus')}`, seed {spec['seed']}, at scale `{spec['scale']}`.", "",
             SCALE_WORDS.get(spec["scale"], ""), "",
             f"Revision `{identity['revision']}` (the digest of its weights and configuration); "
             f"{identity['embed_dim']}-dimensional embeddings"
             + (f", {identity['n_parameters']:,} parameters" if identity.get("n_parameters") else "") + ".", "",
             "## Method", "", *_parts(spec), "",
             "## Recipe", "", "| setting | value |", "|---|---|",
             *[f"| {k} | {spec[k]} |" for k in RECIPE if spec.get(k) is not None],
             f"| steps trained | {summary.get('steps')} (best at step {summary.get('best_step')}) |",
             f"| device | {summary.get('device')} |", "",
             "The whole resolved recipe is `train_summary.json`'s `spec` (with the time it took); the loss at every "
             "step is in `train_log.jsonl`.", "",
             "## Scores", "",
             "Spearman or accuracy x100, as sentaug's records give them; MTEB-format result files sit beside each "
             "evaluation's record (`<suite>.mteb/`).", "",
             "| evaluation | task | split | metric | score | note |", "|---|---|---|---|---|---|",
             *[f"| {s['evaluation']} | {s['task']}" + (f" ({s['subset']})" if s["subset"] != "default" else "")
               + f" | {s['split']} | {s['metric']} | {s['value']:.2f} | {s['note']} |" for s in scores], "",
             "## Use", "", "```python", "from sentence_transformers import SentenceTransformer", "",
             "model = SentenceTransformer(\"<this folder, or its hub id once uploaded>\")",
             "embeddings = model.encode([\"A sentence.\", \"Another one.\"])", "```", "",
             f"Its sentence-transformers modules (`modules.json`) pool as sentaug evaluated it "
             f"(`{spec.get('eval_pooler')}`). "
             "`sentaug evaluate sts --model <folder>` scores it as the papers do.", "",
             "## How to cite", "",
             "Cite sentaug (its CITATION.cff) and the papers of the method:", "",
             *[f"- {PAPERS[p][0]}: {PAPERS[p][1]}, {PAPERS[p][2]}" for p in papers], ""]
    return "\n".join(lines)


@contextlib.contextmanager
def _kept_times(folder: Path):
    """The folder's and its card's modification times as they were before the block."""
    card = folder / CARD
    before = {p: os.stat(p) for p in (folder, card) if p.exists()}
    if card not in before:          # a run trained before cards existed: its card dates from its summary
        before[card] = os.stat(folder / "train_summary.json")
    try:
        yield
    finally:
        for path in (card, folder):     # the folder last: setting the card's time does not touch it, but be sure
            if path.exists():
                os.utime(path, ns=(before[path].st_atime_ns, before[path].st_mtime_ns))


def write_card(folder: str | Path, summary: dict, scores: list[dict] | None = None) -> Path:
    """The run's card in `folder` (the trainer calls it before the run becomes visible)."""
    from ..models.identity import model_identity

    folder = Path(folder)
    text = render_card(summary, model_identity(folder), [selection_score(summary), *(scores or [])])
    (folder / CARD).write_text(text, encoding="utf-8")
    return folder / CARD


def add_scores(folder: str | Path, rows: list[dict]) -> Path | None:
    """Add an evaluation's score rows (`sentaug.evaluate.mteb_results.card_scores`) to a trained run's card,
    replacing that evaluation's earlier rows, under a lock, keeping the modification times (module docstring).
    None when `folder` is not a trained run or there is nothing to add."""
    import json

    from ..models.identity import model_identity

    folder = Path(folder)
    if not (folder / "train_summary.json").is_file() or not rows:
        return None
    summary = json.loads((folder / "train_summary.json").read_text(encoding="utf-8"))
    card = folder / CARD
    with _kept_times(folder):
        with open(card, "a+", encoding="utf-8") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            f.seek(0)
            text = f.read()
            front = yaml.safe_load(text.split("---", 2)[1]) if text.startswith("---") else {}
            evaluations = {r["evaluation"] for r in rows}
            kept = [s for s in _scores_of(front or {}) if s["evaluation"] not in evaluations
                    and s["evaluation"] != "training"]
            new = render_card(summary, model_identity(folder), [selection_score(summary), *kept, *rows])
            f.seek(0)
            f.truncate()
            f.write(new)
    return card
