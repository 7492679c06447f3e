"""GLUE fine-tuning: readers for the official TSVs, the task metrics, and the fine-tuning of one task.

Metrics follow the papers' tables (all x100):
- CLEAR Table 1 (GLUE's own convention): Matthews correlation for CoLA; mean of Pearson and Spearman for
  STS-B; mean of accuracy and F1 for MRPC and QQP; mean of matched and mismatched accuracy for MNLI;
  accuracy for SST-2, QNLI and RTE. This is `score`.
- CARDS Table 6: Matthews for CoLA, Spearman for STS-B, matched accuracy for MNLI, accuracy for the rest
  (MRPC and QQP included). This is `score_cards`.
Every component (accuracy, F1, Pearson, Spearman, per MNLI split) is recorded too. The metrics are written
out from their definitions (no scikit-learn), so the tests can check them against scikit-learn and scipy.

The model is the encoder (AutoModel), a sentence pooler (`models.poolers`) over the pair encoded as one
sequence, dropout and a linear head (one output for STS-B regression, else one per class), trained with
AdamW and a linear schedule with warm-up, the gradient norm clipped. A recipe (config.yaml `glue.recipes`, the
settings a paper fine-tuned with: `recipe={"all": {...}, "tasks": {TASK: {...}}}`) sets any `FinetuneConfig`
field for every task or for one. Optionally R-drop (Liang et al. 2021), as CARDS Table 6 uses it:
each batch is encoded twice with different dropout masks, the task loss is averaged over both passes and
`alpha * 0.5 * (KL(p1||p2) + KL(p2||p1))` is added (MSE between the two outputs for regression, as R-drop
does for STS-B). With `switch_case > 0` the second pass sees a switch-cased copy of the input (CARDS: the
first letter of each word flips case with probability p), the first pass the original. The steps run on the
training step's machinery (`sentaug.evaluate.glue_steps`: inputs tokenized once, on a GPU bf16, length buckets
and one CUDA graph per bucket; on the CPU fp32 and the same numbers as the earlier per-batch loop).

Data: `<data>/glue/<TASK>/{train,dev}.tsv` (MNLI: `dev_matched.tsv`, `dev_mismatched.tsv`), the layout of
GLUE's `download_glue_data.py`, read by `sentaug.data.glue`. `train_on_dev=True` fine-tunes on the dev split
itself when a task has no train.tsv, for smoke tests only (the output says so, and its numbers mean nothing).
"""
from __future__ import annotations

import math
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..correlation import pearson, spearman  # noqa: F401  (re-exported)
from ..data.glue import ALIASES, TASKS, GlueSplit, GlueTask, task_dir, task_spec  # noqa: F401  (re-exported)
from ..data.glue import read_glue as read_task_split
from .glue_steps import fine_tune, predict, switch_case, symmetric_kl  # noqa: F401  (re-exported)


def split_path(data_dir: str | os.PathLike, task: str, split: str) -> Path:
    return task_dir(data_dir, task) / f"{split}.tsv"


def read_glue(data_dir: str | os.PathLike, task: str, split: str) -> GlueSplit:
    """One split of one task under a data root (`<data>/glue/<TASK>/<split>.tsv`): sentaug.data.glue's reader."""
    return read_task_split(task_dir(data_dir, task), split, task=task)


# ----------------------------------------------------------------------------------------------- metrics

def accuracy(preds, labels) -> float:
    preds, labels = np.asarray(preds), np.asarray(labels)
    return float(np.mean(preds == labels))


def binary_f1(preds, labels) -> float:
    """F1 of the positive class (label 1), 0 when there are no true positives (scikit-learn's convention)."""
    preds, labels = np.asarray(preds), np.asarray(labels)
    tp = float(np.sum((preds == 1) & (labels == 1)))
    fp = float(np.sum((preds == 1) & (labels != 1)))
    fn = float(np.sum((preds != 1) & (labels == 1)))
    return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)


def matthews(preds, labels) -> float:
    """Matthews correlation of two binary labelings; 0 when a marginal is constant (as scikit-learn)."""
    preds, labels = np.asarray(preds), np.asarray(labels)
    tp = float(np.sum((preds == 1) & (labels == 1)))
    tn = float(np.sum((preds != 1) & (labels != 1)))
    fp = float(np.sum((preds == 1) & (labels != 1)))
    fn = float(np.sum((preds != 1) & (labels == 1)))
    denom = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return 0.0 if denom == 0 else (tp * tn - fp * fn) / denom


def glue_metric(task: str, preds, labels) -> dict[str, float]:
    """Metrics of one evaluation split (x100). `score` is CLEAR Table 1's number for the split, `score_cards`
    CARDS Table 6's. For MNLI this is one split's accuracy; `combine_splits` averages matched/mismatched."""
    spec = task_spec(task)
    name = ALIASES.get(task, task)
    preds, labels = np.asarray(preds), np.asarray(labels)
    if preds.shape != labels.shape:
        raise ValueError(f"{name}: {preds.shape[0] if preds.ndim else 0} predictions for {len(labels)} labels")
    if spec.labels is None:
        p, s = 100 * pearson(preds, labels), 100 * spearman(preds, labels)
        return {"pearson": p, "spearman": s, "score": (p + s) / 2, "score_cards": s}
    acc = 100 * accuracy(preds, labels)
    if name == "CoLA":
        mcc = 100 * matthews(preds, labels)
        return {"matthews": mcc, "accuracy": acc, "score": mcc, "score_cards": mcc}
    if name in ("MRPC", "QQP"):
        f1 = 100 * binary_f1(preds, labels)
        return {"accuracy": acc, "f1": f1, "score": (acc + f1) / 2, "score_cards": acc}
    return {"accuracy": acc, "score": acc, "score_cards": acc}


def combine_splits(task: str, per_split: dict[str, dict]) -> dict:
    """A task's reported numbers from its evaluation splits (only MNLI has two: CLEAR averages them,
    CARDS reports matched)."""
    spec = task_spec(task)
    if len(spec.eval_splits) == 1:
        return dict(per_split[spec.eval_splits[0]])
    m, mm = (per_split[s]["accuracy"] for s in spec.eval_splits)
    return {"accuracy_matched": m, "accuracy_mismatched": mm, "score": (m + mm) / 2, "score_cards": m}


# -------------------------------------------------------------------------------------------- training

@dataclass
class FinetuneConfig:
    learning_rate: float = 2e-5
    batch_size: int = 32
    epochs: float = 3.0
    max_steps: int | None = None       # overrides epochs
    warmup_ratio: float = 0.06
    warmup_steps: int | None = None     # overrides warmup_ratio (DeBERTa's scripts give steps)
    weight_decay: float = 0.01
    max_seq_length: int = 128
    head_dropout: float | None = None   # dropout before the linear head (None: the backbone's hidden dropout)
    adam_betas: tuple | None = None     # None: torch's AdamW defaults (0.9, 0.999)
    adam_eps: float | None = None       # None: torch's 1e-8
    max_grad_norm: float | None = 1.0   # None: no clipping
    rdrop: float = 0.0                  # alpha of the R-drop term; 0 = off
    switch_case: float = 0.0            # p of switch-case on the second R-drop pass
    seed: int = 42
    eval_batch_size: int | None = None  # None: 128 on the CPU, length-sorted batches by tokens on a GPU
    batching: str = "auto"              # order, buckets (glue_steps); auto: buckets on a GPU, order on the CPU
    step: str = "auto"                  # auto (a CUDA graph per batch shape on a GPU), graph or eager


def _build_head(backbone, num_outputs: int, dropout: float | None = None):
    import torch
    from torch import nn

    dropout = getattr(backbone.config, "hidden_dropout_prob", 0.1) if dropout is None else dropout
    return nn.Sequential(nn.Dropout(dropout), nn.Linear(backbone.config.hidden_size, num_outputs)).to(
        next(backbone.parameters()).device, dtype=torch.float32)


def finetune_task(model_path: str, task: str, train: GlueSplit, evals: dict[str, GlueSplit], pooler: str,
                  cfg: FinetuneConfig, device=None, progress: bool = True, on_step=None) -> dict:
    """Fine-tune a fresh copy of the encoder on `train` (`sentaug.evaluate.glue_steps.fine_tune`), then score
    each split of `evals`. `on_step(step)`: called after each step is launched (benchmarks)."""
    import torch

    from ..models.encoder import load_pretrained

    spec = task_spec(task)
    regression = spec.labels is None
    torch.manual_seed(cfg.seed)
    backbone, tokenizer = load_pretrained(model_path, device, shared=False)
    dev = next(backbone.parameters()).device
    if cfg.switch_case > 0 and tokenizer("Word")["input_ids"] == tokenizer("word")["input_ids"]:
        warnings.warn(f"{model_path}: the tokenizer ignores case, so switch-case changes nothing (as CARDS notes "
                      f"for uncased BERT)")
    torch.use_deterministic_algorithms(dev.type == "cpu", warn_only=True)
    torch.manual_seed(cfg.seed)  # the head's initialisation depends on the seed only
    head = _build_head(backbone, 1 if regression else len(spec.labels), cfg.head_dropout)
    run = fine_tune(backbone, head, tokenizer, train, regression, pooler, cfg, dev, progress,
                    desc=f"glue {spec.folder}", on_step=on_step)
    per_split = {}
    for name, split in evals.items():
        preds = predict(backbone, head, tokenizer, split, pooler, regression, cfg.eval_batch_size,
                        cfg.max_seq_length)
        per_split[name] = glue_metric(task, preds, split.labels)
    result = combine_splits(task, per_split)
    losses = run.losses
    result.update({"splits": per_split, "n_train": len(train.labels),
                   "n_eval": {k: len(v.labels) for k, v in evals.items()}, "steps": run.steps,
                   "first_loss": losses[0], "last_loss": losses[-1], "mean_loss_last_10": float(np.mean(losses[-10:])),
                   "batching": run.batching, **({"bucket_widths": list(run.widths)} if run.widths else {}),
                   "step_path": run.step_path})
    return result


def load_task_data(data_dir, task: str, train_on_dev: bool = False) -> tuple[GlueSplit, dict[str, GlueSplit], str]:
    """(train, {eval split: data}, name of the split trained on). Fails before any model loads."""
    spec = task_spec(task)
    evals = {s: read_glue(data_dir, task, s) for s in spec.eval_splits}
    train_file = split_path(data_dir, task, "train")
    if train_file.is_file():
        return read_glue(data_dir, task, "train"), evals, "train"
    if not train_on_dev:
        raise FileNotFoundError(f"{train_file}: GLUE {task} training split not found (`sentaug download "
                                f"glue/{spec.folder}` installs it; or pass --train-on-dev for a smoke test)")
    first = spec.eval_splits[0]
    return evals[first], evals, first


def task_config(cfg: FinetuneConfig, task: str, recipe: dict | None) -> FinetuneConfig:
    """`cfg` with a recipe's settings for every task (`all`) and for `task` (`tasks`) over it. `max_steps` (the
    cheap scales' cap) stays `cfg`'s."""
    import dataclasses

    if not recipe:
        return cfg
    settings = {**(recipe.get("all") or {}), **((recipe.get("tasks") or {}).get(ALIASES.get(task, task)) or {})}
    unknown = sorted(set(settings) - {f.name for f in dataclasses.fields(FinetuneConfig)})
    if unknown:
        raise ValueError(f"GLUE recipe: unknown setting '{unknown[0]}'")
    if settings.get("adam_betas") is not None:
        settings["adam_betas"] = tuple(settings["adam_betas"])
    return dataclasses.replace(cfg, **settings, max_steps=cfg.max_steps)


def evaluate_glue_cli(model, pooler, data, out, tasks=None, max_steps=None, rdrop=0.0, switch_case_p=0.0,
                      train_on_dev=False, seed=42, learning_rate=2e-5, batch_size=32, epochs=3.0,
                      max_seq_length=128, eval_batch_size=None, device=None, scale=None, batching="auto",
                      step="auto", recipe: dict | None = None) -> dict:
    """`sentaug evaluate glue`: read every task's data first (fail fast), fine-tune each task, write one JSON.
    `recipe`: per-task settings over the others (`task_config`)."""
    import torch
    import transformers

    import sentaug

    from ..io import write_json

    names = [ALIASES.get(t, t) for t in (tasks or list(TASKS))]
    for t in names:
        task_spec(t)
    if switch_case_p and not rdrop:
        raise ValueError("--switch-case applies to the second R-drop pass: give --rdrop ALPHA > 0 as well")
    configs = {t: task_config(FinetuneConfig(), t, recipe) for t in names}      # a wrong recipe fails first
    data_by_task = {t: load_task_data(data, t, train_on_dev) for t in names}
    cfg = FinetuneConfig(learning_rate=learning_rate, batch_size=batch_size, epochs=epochs, max_steps=max_steps,
                         max_seq_length=max_seq_length, rdrop=rdrop, switch_case=switch_case_p, seed=seed,
                         eval_batch_size=eval_batch_size, batching=batching, step=step)
    start = time.perf_counter()
    results = {}
    for t in names:
        train, evals, trained_on = data_by_task[t]
        if trained_on != "train":
            warnings.warn(f"GLUE {t}: fine-tuning on the {trained_on} split (--train-on-dev): smoke test only")
        t0 = time.perf_counter()
        configs[t] = task_config(cfg, t, recipe)
        res = finetune_task(model, t, train, evals, pooler, configs[t], device=device)
        res.update({"train_split": trained_on, "seconds": round(time.perf_counter() - t0, 2),
                    **({"config": configs[t].__dict__} if recipe else {})})
        results[t] = res
        print(f"{t}: {res['score']:.2f} (CLEAR convention), {res['score_cards']:.2f} (CARDS convention)")
    from ..models.hub import model_source

    record = {"model": str(model), "model_source": model_source(model), "pooler": pooler, "data": str(data),
              "scale": scale, "train_on_dev": bool(train_on_dev), "config": cfg.__dict__,
              **({"recipe": recipe} if recipe else {}),
              **{t: {"score": r["score"], "score_cards": r["score_cards"]} for t, r in results.items()},
              "avg": float(np.mean([r["score"] for r in results.values()])),
              "avg_cards": float(np.mean([r["score_cards"] for r in results.values()])),
              "seconds": round(time.perf_counter() - start, 2),
              "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                           "sentaug": sentaug.__version__},
              "details": results}
    write_json(out, record)
    return record
