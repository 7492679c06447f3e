"""GLUE fine-tuning: readers for the official TSVs, the task metrics, and one small fine-tuning loop.

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
AdamW and a linear schedule with warm-up. Optionally R-drop (Liang et al. 2021), as CARDS Table 6 uses it:
each batch is encoded twice with different dropout masks, the task loss is averaged over both passes and
`alpha * 0.5 * (KL(p1||p2) + KL(p2||p1))` is added (MSE between the two outputs for regression, as R-drop
does for STS-B). With `switch_case > 0` the second pass sees a switch-cased copy of the input (CARDS: the
first letter of each word flips case with probability p), the first pass the original.

Data: `<data>/glue/<TASK>/{train,dev}.tsv` (MNLI: `dev_matched.tsv`, `dev_mismatched.tsv`), the layout of
GLUE's `download_glue_data.py`, read by `sentaug.data.glue`. `train_on_dev=True` fine-tunes on the dev split
itself when a task has no train.tsv, for smoke tests only (the output says so, and its numbers mean nothing).
"""
from __future__ import annotations

import math
import os
import random
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..data.glue import ALIASES, TASKS, GlueSplit, GlueTask, task_dir, task_spec  # noqa: F401  (re-exported)
from ..data.glue import read_glue as read_task_split
from .correlation import pearson, spearman  # noqa: F401  (re-exported)


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


# ----------------------------------------------------------------------------------------- augmentation

def switch_case(text: str, p: float, rng: random.Random) -> str:
    """CARDS' switch-case: the first letter of each whitespace-separated word flips case with probability
    `p` (words that do not start with a cased letter are left alone; the draw is made for every word, so a
    seed gives the same output whatever the text)."""
    words = text.split(" ")
    out = []
    for w in words:
        flip = rng.random() < p
        if flip and w and w[0].swapcase() != w[0]:
            w = w[0].swapcase() + w[1:]
        out.append(w)
    return " ".join(out)


def symmetric_kl(logits1, logits2):
    """0.5 * (KL(p1||p2) + KL(p2||p1)) with p = softmax(logits), summed over classes, averaged over rows."""
    import torch.nn.functional as F

    lp1, lp2 = F.log_softmax(logits1, dim=-1), F.log_softmax(logits2, dim=-1)
    kl12 = (lp1.exp() * (lp1 - lp2)).sum(-1)
    kl21 = (lp2.exp() * (lp2 - lp1)).sum(-1)
    return 0.5 * (kl12 + kl21).mean()


# -------------------------------------------------------------------------------------------- training

@dataclass
class FinetuneConfig:
    learning_rate: float = 2e-5
    batch_size: int = 32
    epochs: float = 3.0
    max_steps: int | None = None       # overrides epochs
    warmup_ratio: float = 0.06
    weight_decay: float = 0.01
    max_seq_length: int = 128
    rdrop: float = 0.0                  # alpha of the R-drop term; 0 = off
    switch_case: float = 0.0            # p of switch-case on the second R-drop pass
    seed: int = 42
    eval_batch_size: int = 128


def _build_head(backbone, num_outputs: int):
    import torch
    from torch import nn

    dropout = getattr(backbone.config, "hidden_dropout_prob", 0.1)
    return nn.Sequential(nn.Dropout(dropout), nn.Linear(backbone.config.hidden_size, num_outputs)).to(
        next(backbone.parameters()).device, dtype=torch.float32)


def _forward(backbone, head, pooler: str, enc):
    from ..models.poolers import NEEDS_HIDDEN_STATES, pool

    out = backbone(**enc, output_hidden_states=pooler in NEEDS_HIDDEN_STATES, return_dict=True)
    return head(pool(pooler, out, enc["attention_mask"]))


def _encode(tokenizer, a, b, max_len, device):
    return tokenizer(list(a), list(b) if b is not None else None, padding=True, truncation=True,
                     max_length=max_len, return_tensors="pt").to(device)


def predict(backbone, head, tokenizer, split: GlueSplit, pooler: str, regression: bool, batch_size: int = 128,
            max_seq_length: int = 128) -> np.ndarray:
    """Class ids (argmax) or regression outputs for every example of `split`, in order, in eval mode."""
    import torch

    device = next(backbone.parameters()).device
    backbone.eval(), head.eval()
    out = []
    with torch.inference_mode():
        for s in range(0, len(split.labels), batch_size):
            b = split.text_b[s:s + batch_size] if split.text_b is not None else None
            enc = _encode(tokenizer, split.text_a[s:s + batch_size], b, max_seq_length, device)
            logits = _forward(backbone, head, pooler, enc).float()
            out.append(logits[:, 0].cpu().numpy() if regression else logits.argmax(-1).cpu().numpy())
    return np.concatenate(out) if out else np.zeros(0)


def finetune_task(model_path: str, task: str, train: GlueSplit, evals: dict[str, GlueSplit], pooler: str,
                  cfg: FinetuneConfig, device=None, progress: bool = True) -> dict:
    """Fine-tune a fresh copy of the encoder on `train`, then score each split of `evals`."""
    import torch
    import torch.nn.functional as F
    from transformers import get_linear_schedule_with_warmup

    from ..models.encoder import load_pretrained

    spec = task_spec(task)
    regression = spec.labels is None
    torch.manual_seed(cfg.seed)
    backbone, tokenizer = load_pretrained(model_path, device)
    dev = next(backbone.parameters()).device
    if cfg.switch_case > 0 and tokenizer("Word")["input_ids"] == tokenizer("word")["input_ids"]:
        warnings.warn(f"{model_path}: the tokenizer ignores case, so switch-case changes nothing (as CARDS notes "
                      f"for uncased BERT)")
    torch.use_deterministic_algorithms(dev.type == "cpu", warn_only=True)
    torch.manual_seed(cfg.seed)  # the head's initialisation depends on the seed only
    head = _build_head(backbone, 1 if regression else len(spec.labels))
    n = len(train.labels)
    steps_per_epoch = math.ceil(n / cfg.batch_size)
    total = cfg.max_steps if cfg.max_steps else max(1, math.ceil(cfg.epochs * steps_per_epoch))
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight", "norm.weight")
    params = [*backbone.named_parameters(), *(("head." + k, p) for k, p in head.named_parameters())]
    groups = [{"params": [p for k, p in params if not k.endswith(no_decay)], "weight_decay": cfg.weight_decay},
              {"params": [p for k, p in params if k.endswith(no_decay)], "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=cfg.learning_rate)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(cfg.warmup_ratio * total), total)
    labels_t = torch.as_tensor(train.labels, dtype=torch.float32 if regression else torch.long)
    case_rng = random.Random(cfg.seed)

    def task_loss(out, y):
        return F.mse_loss(out[:, 0], y) if regression else F.cross_entropy(out, y)

    backbone.train(), head.train()
    losses = []
    bar = range(total)
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(bar, desc=f"glue {spec.folder}", unit="step")
    for step in bar:
        epoch, pos = divmod(step, steps_per_epoch)
        order = torch.randperm(n, generator=torch.Generator().manual_seed(cfg.seed * 1_000_003 + epoch))
        idx = order[pos * cfg.batch_size:(pos + 1) * cfg.batch_size].tolist()
        a = [train.text_a[i] for i in idx]
        b = [train.text_b[i] for i in idx] if train.text_b is not None else None
        y = labels_t[idx].to(dev)
        out1 = _forward(backbone, head, pooler, _encode(tokenizer, a, b, cfg.max_seq_length, dev)).float()
        loss = task_loss(out1, y)
        if cfg.rdrop > 0:
            if cfg.switch_case > 0:
                a = [switch_case(t, cfg.switch_case, case_rng) for t in a]
                b = [switch_case(t, cfg.switch_case, case_rng) for t in b] if b is not None else None
            out2 = _forward(backbone, head, pooler, _encode(tokenizer, a, b, cfg.max_seq_length, dev)).float()
            reg = F.mse_loss(out1[:, 0], out2[:, 0]) if regression else symmetric_kl(out1, out2)
            loss = 0.5 * (loss + task_loss(out2, y)) + cfg.rdrop * reg
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for _, p in params], 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(float(loss.detach()))
        if progress:
            bar.set_postfix(loss=f"{losses[-1]:.4f}", refresh=False)   # shown at the bar's next redraw
    per_split = {}
    for name, split in evals.items():
        preds = predict(backbone, head, tokenizer, split, pooler, regression, cfg.eval_batch_size,
                        cfg.max_seq_length)
        per_split[name] = glue_metric(task, preds, split.labels)
    result = combine_splits(task, per_split)
    result.update({"splits": per_split, "n_train": n, "n_eval": {k: len(v.labels) for k, v in evals.items()},
                   "steps": total, "first_loss": losses[0], "last_loss": losses[-1],
                   "mean_loss_last_10": float(np.mean(losses[-10:]))})
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


def evaluate_glue_cli(model, pooler, data, out, tasks=None, max_steps=None, rdrop=0.0, switch_case_p=0.0,
                      train_on_dev=False, seed=42, learning_rate=2e-5, batch_size=32, epochs=3.0,
                      max_seq_length=128, eval_batch_size=128, device=None, scale=None) -> dict:
    """`sentaug evaluate glue`: read every task's data first (fail fast), fine-tune each task, write one JSON."""
    import torch
    import transformers

    import sentaug

    from ..io import write_json

    names = [ALIASES.get(t, t) for t in (tasks or list(TASKS))]
    for t in names:
        task_spec(t)
    if switch_case_p and not rdrop:
        raise ValueError("--switch-case applies to the second R-drop pass: give --rdrop ALPHA > 0 as well")
    data_by_task = {t: load_task_data(data, t, train_on_dev) for t in names}
    cfg = FinetuneConfig(learning_rate=learning_rate, batch_size=batch_size, epochs=epochs, max_steps=max_steps,
                         max_seq_length=max_seq_length, rdrop=rdrop, switch_case=switch_case_p, seed=seed,
                         eval_batch_size=eval_batch_size)
    start = time.perf_counter()
    results = {}
    for t in names:
        train, evals, trained_on = data_by_task[t]
        if trained_on != "train":
            warnings.warn(f"GLUE {t}: fine-tuning on the {trained_on} split (--train-on-dev): smoke test only")
        t0 = time.perf_counter()
        res = finetune_task(model, t, train, evals, pooler, cfg, device=device)
        res.update({"train_split": trained_on, "seconds": round(time.perf_counter() - t0, 2)})
        results[t] = res
        print(f"{t}: {res['score']:.2f} (CLEAR convention), {res['score_cards']:.2f} (CARDS convention)")
    record = {"model": str(model), "pooler": pooler, "data": str(data), "scale": scale,
              "train_on_dev": bool(train_on_dev), "config": cfg.__dict__,
              **{t: {"score": r["score"], "score_cards": r["score_cards"]} for t, r in results.items()},
              "avg": float(np.mean([r["score"] for r in results.values()])),
              "avg_cards": float(np.mean([r["score_cards"] for r in results.values()])),
              "seconds": round(time.perf_counter() - start, 2),
              "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                           "sentaug": sentaug.__version__},
              "details": results}
    write_json(out, record)
    return record
