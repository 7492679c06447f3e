"""One trainer for every method: positives from a source, in-batch negatives, InfoNCE (+ extra objectives).

Recipe (unsupervised SimCSE): anchors and positives are encoded in one forward pass with dropout on; the
[CLS] vector goes through an MLP used only in training; loss = cross-entropy over cos/tau in one direction;
AdamW with linear decay to zero; STS-B dev Spearman every `eval_steps` steps and at the end, best
checkpoint kept. Deterministic on CPU for a given seed (data order, dropout), resumable from the last
checkpoint with the same result as an uninterrupted run, bf16 autocast on CUDA.

Output folder (`out`): the best model in Hugging Face layout (loadable by AutoModel and
SentenceTransformer), `train_log.jsonl` and `train_summary.json`. While training, everything lives in
`<out>.partial/` and is renamed to `out` only when the run has finished.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import time
from pathlib import Path

import torch

from ..io import write_json
from ..models.encoder import SentenceEncoder, load_pretrained, pick_device
from ..objectives import InfoNCE
from .pairs import load_pairs

LOG_EVERY = 10


def spec_digest(spec: dict) -> str:
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def batch_order(n: int, batch_size: int, seed: int, step: int) -> list[int]:
    """Indices of the examples in batch `step` (0-based): one seeded permutation per epoch."""
    per_epoch = math.ceil(n / batch_size)
    epoch, k = divmod(step, per_epoch)
    g = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
    perm = torch.randperm(n, generator=g)
    return perm[k * batch_size:(k + 1) * batch_size].tolist()


def linear_schedule(optimizer, total_steps: int):
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: max(0.0, 1.0 - s / total_steps))


class _Checkpoint:
    """Resumable training state under <out>.partial/last (model, MLP, optimizer, scheduler, RNG, step)."""

    def __init__(self, root: Path):
        self.path = root / "last" / "state.pt"

    def save(self, encoder, optimizer, scheduler, step: int, best: float, digest: str, loss_window) -> None:
        state = {"encoder": encoder.state_dict(), "optimizer": optimizer.state_dict(),
                 "scheduler": scheduler.state_dict(), "step": step, "best": best, "digest": digest,
                 "loss_window": loss_window,
                 "rng_cpu": torch.get_rng_state(),
                 "rng_cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        torch.save(state, tmp)
        os.replace(tmp, self.path)

    def load(self, encoder, optimizer, scheduler, digest: str):
        if not self.path.exists():
            return None
        state = torch.load(self.path, map_location="cpu", weights_only=False)
        if state["digest"] != digest:
            print(f"[train] ignoring checkpoint {self.path}: it was written for a different spec")
            return None
        encoder.load_state_dict(state["encoder"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["rng_cpu"])
        if state["rng_cuda"] is not None and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["rng_cuda"])
        return state["step"], state["best"], state["loss_window"]


def train(spec: dict, corpus: str, positives: str | None, backbone: str, dev_data: str, out: str,
          resume: bool = False, stop_after: int | None = None, device: str | None = None) -> dict | None:
    """Train one (method, backbone, seed) run. `stop_after` interrupts after that step (for tests)."""
    from tqdm.auto import tqdm

    from ..evaluate.sts import DevEvaluator

    if spec["negatives"] != "in_batch" or spec.get("objectives"):
        raise ValueError(f"method '{spec['method']}': negatives '{spec['negatives']}' / objectives "
                         f"{spec.get('objectives')} are not available yet (only in-batch InfoNCE)")
    out = Path(out)
    partial = Path(f"{out}.partial")
    digest = spec_digest(spec)
    if not resume:
        shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True, exist_ok=True)

    dev = torch.device(device) if device else pick_device()
    torch.manual_seed(spec["seed"])
    torch.use_deterministic_algorithms(dev.type == "cpu", warn_only=True)
    anchors, pos = load_pairs(spec["positive"], corpus, positives)
    if not anchors:
        raise ValueError(f"{corpus}: no training sentences")
    model, tokenizer = load_pretrained(backbone, dev)
    encoder = SentenceEncoder(model, pooler=spec["pooler"], mlp_only_train=spec["mlp_only_train"]).to(dev)
    torch.manual_seed(spec["seed"])  # the MLP's initialisation depends on the seed only
    if encoder.mlp is not None:  # initialised like SimCSE's MLPLayer (the backbone's _init_weights)
        torch.nn.init.normal_(encoder.mlp.dense.weight, std=model.config.initializer_range)
        torch.nn.init.zeros_(encoder.mlp.dense.bias)
    loss_fn = InfoNCE(spec["temperature"])
    total = spec["max_steps"] or spec["epochs"] * math.ceil(len(anchors) / spec["batch_size"])
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight")
    groups = [{"params": [p for n, p in encoder.named_parameters() if not n.endswith(no_decay)],
               "weight_decay": spec["weight_decay"]},
              {"params": [p for n, p in encoder.named_parameters() if n.endswith(no_decay)], "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=spec["learning_rate"])
    scheduler = linear_schedule(optimizer, total)
    evaluator = DevEvaluator(dev_data)
    ckpt = _Checkpoint(partial)

    step, best, (running, since) = 0, -math.inf, (0.0, 0)
    restored = ckpt.load(encoder, optimizer, scheduler, digest) if resume else None
    log_path = partial / "train_log.jsonl"
    if restored:
        step, best, (running, since) = restored
        print(f"[train] resumed at step {step} (best STS-B dev so far {best:.2f})")
        # records written after that checkpoint are replayed by the resumed run
        kept = [r for r in log_path.read_text().splitlines() if json.loads(r)["step"] <= step] \
            if log_path.exists() else []
        log_path.write_text("".join(r + "\n" for r in kept))
    else:
        log_path.unlink(missing_ok=True)
    amp = torch.autocast("cuda", dtype=torch.bfloat16) if dev.type == "cuda" else torch.autocast("cpu", enabled=False)

    def evaluate_and_keep_best(at_step: int) -> float:
        nonlocal best
        score = evaluator(encoder.backbone, tokenizer, pooler=spec["eval_pooler"])
        if score > best:
            best = score
            tmp = partial / "best.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            encoder.save(tmp, tokenizer, eval_pooler=spec["eval_pooler"])
            (tmp / "best_step.json").write_text(json.dumps({"step": at_step, "stsb_dev": score}))
            shutil.rmtree(partial / "best", ignore_errors=True)
            os.replace(tmp, partial / "best")
        return score

    first_step, started = step, time.time()
    encoder.train()
    bar = tqdm(total=total, initial=step, desc=f"train {spec['method']} seed {spec['seed']}", unit="step")
    with open(log_path, "a", encoding="utf-8") as log:
        while step < total:
            idx = batch_order(len(anchors), spec["batch_size"], spec["seed"], step)
            texts = [anchors[i] for i in idx] + [pos[i] for i in idx]
            enc = tokenizer(texts, padding=True, truncation=True, max_length=spec["max_seq_length"],
                            return_tensors="pt").to(dev)
            with amp:
                z = encoder(enc["input_ids"], enc["attention_mask"])
            loss = loss_fn(z[:len(idx)], z[len(idx):])
            loss.backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            running, since = running + loss.item(), since + 1
            bar.update(1)
            record = None
            if step % LOG_EVERY == 0 or step % spec["eval_steps"] == 0 or step == total:
                record = {"step": step, "loss": running / since, "lr": scheduler.get_last_lr()[0],
                          "elapsed_s": round(time.time() - started, 2)}
                running, since = 0.0, 0
            if step % spec["eval_steps"] == 0 or step == total:
                record["stsb_dev"] = evaluate_and_keep_best(step)
                record["best_stsb_dev"] = best
                bar.set_postfix(dev=f"{record['stsb_dev']:.2f}", best=f"{best:.2f}")
            if record:
                log.write(json.dumps(record) + "\n")
                log.flush()
            if step % spec["save_steps"] == 0 or step == stop_after:
                ckpt.save(encoder, optimizer, scheduler, step, best, digest, (running, since))
            if step == stop_after:
                bar.close()
                return None
    bar.close()
    seconds = time.time() - started
    best_info = json.loads((partial / "best" / "best_step.json").read_text())
    summary = {"spec": spec, "steps": total, "best_step": best_info["step"], "best_stsb_dev": best_info["stsb_dev"],
               "train_seconds": round(seconds, 2), "steps_per_second": round((total - first_step) / seconds, 3),
               "n_train_pairs": len(anchors), "device": str(dev), "versions": _versions()}
    final = partial / "best"
    shutil.move(str(log_path), final / "train_log.jsonl")
    write_json(final / "train_summary.json", summary)
    if out.exists():
        shutil.rmtree(out)
    os.replace(final, out)
    shutil.rmtree(partial, ignore_errors=True)
    return summary


def _versions() -> dict:
    import transformers

    from .. import __version__

    return {"torch": torch.__version__, "transformers": transformers.__version__, "sentaug": __version__}
