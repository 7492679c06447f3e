"""What makes an interrupted run safe to resume: verified checkpoints, and a guard against a diverged loss.

Checkpoints live under ``<out>.partial/checkpoints/step<N>/``:

* ``state.pt``: the training state (model and heads, optimizer, scheduler, RNG, step, best dev score, loss
  window), saved as tensors and plain containers only, so that it loads with
  ``torch.load(weights_only=True)``: loading a checkpoint never runs pickled code from a shared disk.
* ``meta.json``: the step, the spec digest, the size and the sha256 of ``state.pt``.

A checkpoint is written in a ``.tmp`` folder (state fsynced, then meta) and renamed into place, so a
process killed while saving leaves at most a ``.tmp`` folder, which is removed. The `KEEP` newest are kept.
Loading takes the newest checkpoint whose meta parses, whose ``state.pt`` has the recorded size and
sha256, and which loads with ``weights_only=True``; a damaged one is reported, renamed ``.bad`` and never
loaded, and the next older one is tried. A checkpoint written for another spec is removed. When none is
usable the run starts from scratch, and says so.

The best model so far (``<out>.partial/best``) is part of the state: a checkpoint whose best dev score has
no matching ``best/`` folder (lost, e.g. because it was already moved to the output) cannot resume the
same run, so it is not used either.

`DivergenceGuard` stops a run whose loss is NaN or infinite, with a message naming the step, before
anything computed from the bad step is saved: checkpoints written before it stay the last good ones.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import sys
from pathlib import Path

import torch

from ..io import sha256_file

KEEP = 2
FORMAT = 1


def _say(message: str) -> None:
    print(f"[train] {message}", file=sys.stderr, flush=True)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Checkpoints:
    """Resumable training state under ``<partial>/checkpoints``."""

    def __init__(self, partial: Path):
        self.partial = Path(partial)
        self.root = self.partial / "checkpoints"

    def steps(self) -> list[Path]:
        """Complete checkpoint folders, newest first."""
        if not self.root.is_dir():
            return []
        found = [p for p in self.root.iterdir() if p.is_dir() and p.name.startswith("step") and p.name[4:].isdigit()]
        return sorted(found, key=lambda p: int(p.name[4:]), reverse=True)

    def save(self, method, optimizer, scheduler, step: int, best: float, digest: str, loss_window) -> Path:
        state = {"method": method.state_dict(), "optimizer": optimizer.state_dict(),
                 "scheduler": scheduler.state_dict(), "step": step, "best": best, "digest": digest,
                 "loss_window": list(loss_window),
                 "rng_cpu": torch.get_rng_state(),
                 "rng_cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None}
        self.root.mkdir(parents=True, exist_ok=True)
        final = self.root / f"step{step:08d}"
        tmp = self.root / f"step{step:08d}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        torch.save(state, tmp / "state.pt")
        _fsync(tmp / "state.pt")
        meta = {"format": FORMAT, "step": step, "digest": digest, "bytes": (tmp / "state.pt").stat().st_size,
                "sha256": sha256_file(tmp / "state.pt")}
        (tmp / "meta.json").write_text(json.dumps(meta) + "\n")
        _fsync(tmp / "meta.json")
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
        _fsync(self.root)
        for old in self.steps()[KEEP:]:
            shutil.rmtree(old, ignore_errors=True)
        return final

    def _verified_state(self, folder: Path, digest: str) -> dict | None:
        """The state in `folder` if it is intact and belongs to this spec; None (with the reason said) if not."""
        try:
            meta = json.loads((folder / "meta.json").read_text())
            recorded = (meta["step"], meta["digest"], meta["bytes"], meta["sha256"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            return self._reject(folder, f"its meta.json is missing or unreadable ({e})")
        step, written_for, size, sha = recorded
        if written_for != digest:   # the run's settings changed: it can never be resumed from
            _say(f"removing checkpoint {folder}: it was written for a different spec")
            shutil.rmtree(folder, ignore_errors=True)
            return None
        state_file = folder / "state.pt"
        actual = state_file.stat().st_size if state_file.exists() else None
        if actual != size:
            return self._reject(folder, f"state.pt has {actual} bytes, {size} were written (truncated)")
        if sha256_file(state_file) != sha:
            return self._reject(folder, "the sha256 of state.pt does not match its meta.json (corrupted)")
        try:
            state = torch.load(state_file, map_location="cpu", weights_only=True)
        except Exception as e:  # an unpickling error: the file holds more than tensors and plain data
            first = str(e).split(". ")[0].splitlines()[0] if str(e) else ""
            return self._reject(folder, f"it does not load as weights only ({type(e).__name__}: {first})")
        if state.get("step") != step or state.get("digest") != digest:
            return self._reject(folder, "its state does not match its meta.json")
        return state

    def _reject(self, folder: Path, why: str) -> None:
        bad = folder.with_name(folder.name + ".bad")
        shutil.rmtree(bad, ignore_errors=True)
        os.replace(folder, bad)
        _say(f"checkpoint {folder} is damaged and was not loaded: {why}; kept as {bad.name}")
        return None

    def _best_matches(self, best: float) -> bool:
        """Whether the best model on disk is the one the checkpoint recorded, or a later, better one."""
        if best == -math.inf:
            return True
        restore_interrupted_swap(self.partial / "best")
        try:
            saved = json.loads((self.partial / "best" / "best_step.json").read_text())["stsb_dev"]
        except (OSError, ValueError, KeyError):
            return False
        return saved >= best

    def load(self, method, optimizer, scheduler, digest: str):
        """Restore the newest usable checkpoint; returns (step, best, loss_window), or None to start afresh."""
        for tmp in self.root.glob("*.tmp") if self.root.is_dir() else []:
            shutil.rmtree(tmp, ignore_errors=True)   # a save that was interrupted
        candidates = self.steps()
        for folder in candidates:
            state = self._verified_state(folder, digest)
            if state is None:
                continue
            if not self._best_matches(state["best"]):
                _say(f"ignoring checkpoint {folder}: the best model it refers to (STS-B dev {state['best']:.2f}) "
                     f"is no longer in {self.partial / 'best'}")
                continue
            method.load_state_dict(state["method"])
            optimizer.load_state_dict(state["optimizer"])
            scheduler.load_state_dict(state["scheduler"])
            torch.set_rng_state(state["rng_cpu"])
            if state["rng_cuda"] is not None and torch.cuda.is_available():
                torch.cuda.set_rng_state_all(state["rng_cuda"])
            return state["step"], state["best"], tuple(state["loss_window"])
        if candidates:
            _say(f"no usable checkpoint in {self.root}: training starts from scratch")
        return None


def replace_dir(tmp: Path, target: Path) -> None:
    """Put the finished folder `tmp` at `target`. The old `target` is renamed aside first and removed last,
    so a kill at any point leaves either folder complete (`restore_interrupted_swap` puts it back)."""
    old = target.with_name(target.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        os.replace(target, old)
    os.replace(tmp, target)
    shutil.rmtree(old, ignore_errors=True)


def restore_interrupted_swap(target: Path) -> None:
    old = target.with_name(target.name + ".old")
    if not target.exists() and old.exists():
        os.replace(old, target)


class TrainingDiverged(ValueError):
    """The loss became NaN or infinite; the message names the step and what was kept."""


class DivergenceGuard:
    """Records the first step whose loss is not finite (`step`: a number, or a counter tensor on the loss's
    device), on the loss's own device (no host synchronisation per step); `check` (one synchronisation) raises
    `TrainingDiverged` if there was one. The trainer checks before it evaluates or saves anything, so nothing
    computed after a bad step is ever kept."""

    def __init__(self):
        self._first_bad = None   # step of the first non-finite loss, -1 while there is none
        self._value = None       # that loss

    def observe(self, loss: torch.Tensor, step: int) -> None:
        loss = loss.detach().float()
        if self._first_bad is None:
            self._first_bad = torch.full((), -1, dtype=torch.long, device=loss.device)
            self._value = torch.zeros((), device=loss.device)
        new = ~torch.isfinite(loss) & (self._first_bad < 0)
        # in place: a captured step (sentaug.train.step) updates the same tensors at every replay
        self._first_bad.copy_(torch.where(new, step, self._first_bad))
        self._value.copy_(torch.where(new, loss, self._value))

    def check(self, where: str) -> None:
        if self._first_bad is None or int(self._first_bad) < 0:
            return
        raise TrainingDiverged(f"the loss is {self._value.item()} at step {int(self._first_bad)}: training "
                               f"stopped. {where}")


class BestModel:
    """The best model so far, in ``<partial>/best``. On the CPU it is written at every improvement, as it always
    was; on a GPU (`on_device`) its weights are copied on the device at an improvement (a fraction of a
    millisecond, against half a second for writing BERT-base) and written at checkpoints and at the end
    (`write`), so that the folder always matches the best score a checkpoint records."""

    def __init__(self, partial: Path, encoder, tokenizer, eval_pooler: str, on_device: bool):
        self.partial, self.encoder, self.tokenizer = Path(partial), encoder, tokenizer
        self.eval_pooler, self.on_device = eval_pooler, on_device
        self.state: dict | None = None
        self.pending: dict | None = None        # {"step", "stsb_dev"} of a kept model not written yet

    def keep(self, step: int, score: float) -> None:
        if self.on_device:
            self.state = self.encoder.snapshot(into=self.state)
            self.pending = {"step": step, "stsb_dev": score}
        else:
            self._write({"step": step, "stsb_dev": score}, None)

    def write(self) -> None:
        """Write the model kept on the device, if a better one was kept since the last write."""
        if self.pending is not None:
            self._write(self.pending, self.state)
            self.pending = None

    def _write(self, info: dict, state: dict | None) -> None:
        tmp = self.partial / "best.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        self.encoder.save(tmp, self.tokenizer, eval_pooler=self.eval_pooler, state=state)
        (tmp / "best_step.json").write_text(json.dumps(info))
        replace_dir(tmp, self.partial / "best")
