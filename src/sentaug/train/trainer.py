"""One trainer for every method: a method (`sentaug.train.method`) composes positives, negatives and
objectives; this module runs the loop.

Recipe (unsupervised SimCSE, the default composition): anchors and positives are encoded in one forward
pass with dropout on; the [CLS] vector goes through an MLP used only in training; loss = cross-entropy over
cos/tau in one direction; AdamW with linear decay to zero (`schedule: constant` keeps it flat, as VaSCL;
`head_learning_rate` gives the head and other non-backbone modules their own rate), the gradients clipped to a
global norm of `max_grad_norm` first (1.0, the Hugging Face Trainer's, as SimCSE ran; null: none); STS-B dev Spearman
every `eval_steps` steps and at the end, best checkpoint kept. Deterministic on CPU for a given seed (data
order, dropout), resumable from the last checkpoint with the same result as an uninterrupted run, bf16
autocast on CUDA; data parallel under torchrun (`sentaug.train.distributed`).

On a GPU the host must run ahead of the device: the step loop never waits for it except where it writes a
log line (the running loss and its parts are summed on the device, in float64 as the host summed them
before, and read every `LOG_EVERY` steps). Each step's inputs are prepared ahead by worker processes
(`sentaug.train.inputs`: token ids, from token files where given, and every random draw), the whole step runs
as one CUDA graph (`sentaug.train.step`), AdamW is the fused CUDA kernel, and the best model is kept on the
device and written at checkpoints and at the end. On the CPU the step runs eagerly with the same optimiser as
ever, so CPU runs give the same numbers bit for bit. Benchmarks and measurements: benchmarks/gpu_notes.md.
`train_summary.json` records which path ran (`step_path`: graph or eager, and why).

Output folder (`out`): the best model in Hugging Face layout (loadable by AutoModel and
SentenceTransformer), `train_log.jsonl`, `train_summary.json` and `README.md`, its model card
(`sentaug.train.model_card`). While training, everything lives in
`<out>.partial/` and is renamed to `out` only when the run has finished.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import sys
import time
from pathlib import Path

import torch

from ..config import spec_digest
from ..io import write_json
from ..models.encoder import SentenceEncoder, pick_device
from ..models.hub import model_source
from ..models.tokens import TokenTable
from ..parts import needs_lm_head
from . import distributed
from .checkpoint import BestModel, Checkpoints, DivergenceGuard
from .inputs import StepPreparer, batch_order, prepared_steps  # noqa: F401 (batch_order)
from .method import Method
from .model_card import write_card
from .run_length import total_steps
from .sources import training_data
from .step import LossTally, RunnerPerShape, StepRunner, adamw

LOG_EVERY = 10
PREFETCH_WORKERS = 2       # processes preparing the next steps' inputs on a GPU (host time per step: 1-9 ms)
STEP_MODES = ("auto", "graph", "eager")
PACKING_MODES = ("auto", "rows", "off")


def lr_schedule(optimizer, total_steps: int, kind: str = "linear"):
    if kind == "constant":
        return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
    if kind != "linear":
        raise ValueError(f"unknown schedule '{kind}' (linear or constant)")
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: max(0.0, 1.0 - s / total_steps))


def load_backbone(path: str, spec: dict, device):
    """Backbone, tokenizer and (for methods with an MLM objective) the checkpoint's masked-LM head.

    `add_tokens` (CLEAR's [DEL]) are added to the tokenizer and the embeddings resized. With an MLM
    objective the backbone is the base model of `AutoModelForMaskedLM`, whose head shares its embeddings.
    `dropout` (SDA Figure 2b), when set, replaces the backbone's hidden and attention dropout rates."""
    from transformers import AutoConfig, AutoModel, AutoModelForMaskedLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    added = tokenizer.add_tokens(list(spec.get("add_tokens") or []))
    config = backbone_config(AutoConfig.from_pretrained(path), spec.get("dropout"), path)
    lm_head = None
    if needs_lm_head(spec):
        full = AutoModelForMaskedLM.from_pretrained(path, config=config)
        if added:
            full.resize_token_embeddings(len(tokenizer))
        model = full.base_model
        lm_head = next(child for child in full.children() if child is not model)
    else:
        model = AutoModel.from_pretrained(path, config=config)
        if added:
            model.resize_token_embeddings(len(tokenizer))
    return model.to(device), tokenizer, lm_head


# Dropout rates of a backbone's config, by architecture family: BERT/RoBERTa/MiniLM name them
# hidden_dropout_prob and attention_probs_dropout_prob; BART/DistilBERT-style configs dropout and
# attention_dropout.
DROPOUT_KEYS = (("hidden_dropout_prob", "attention_probs_dropout_prob"), ("dropout", "attention_dropout"))


def backbone_config(config, dropout: float | None, path: str = "backbone"):
    """The backbone's config with its hidden and attention dropout set to `dropout` (unchanged when None)."""
    if dropout is None:
        return config
    for keys in DROPOUT_KEYS:
        if all(hasattr(config, k) for k in keys):
            for k in keys:
                setattr(config, k, float(dropout))
            return config
    raise ValueError(f"{path}: train.dropout is set, but the backbone's config ({type(config).__name__}) has none "
                     f"of the dropout settings {', '.join(k for keys in DROPOUT_KEYS for k in keys)}")


def make_optimizer(method, spec: dict, device: torch.device, capturable: bool = False) -> torch.optim.AdamW:
    """AdamW over `parameter_groups` (`sentaug.train.step.adamw`: fused on a GPU, capturable for a graph)."""
    return adamw(parameter_groups(method, spec), device, capturable)


def learning_rates_on(optimizer, scheduler, device: torch.device) -> None:
    """Put a capturable optimizer's learning rates (and the scheduler's bases) back in device tensors after a
    checkpoint, which loads them on the CPU."""
    for group in optimizer.param_groups:
        for key in ("lr", "initial_lr"):
            if key in group:
                group[key] = torch.as_tensor(group[key], dtype=torch.float32).to(device)
    scheduler.base_lrs = [torch.as_tensor(v, dtype=torch.float32).to(device) for v in scheduler.base_lrs]


def step_path(mode: str, device: torch.device, compile_backbone) -> tuple[bool, str]:
    """(capture the step in a CUDA graph?, why not): `auto` captures on CUDA in a single process."""
    if mode not in STEP_MODES:
        raise ValueError(f"unknown step mode {mode!r}: choose from {', '.join(STEP_MODES)}")
    if device.type != "cuda":
        if mode == "graph":
            raise ValueError(f"step mode 'graph' needs a CUDA device (this run is on {device})")
        return False, f"CUDA graphs need a GPU (device {device})"
    if mode == "eager":
        return False, "eager steps asked for (--step eager)"
    if distributed.world()[0] > 1:
        return False, "data parallel under torchrun: the gradient all-reduce runs outside a graph"
    if compile_backbone == "reduce-overhead":
        return False, "torch.compile(mode='reduce-overhead') asked for: its own CUDA graphs, no whole-step capture"
    return True, ""


def packs(mode: str, graph: bool) -> bool:
    """Whether a run packs its texts into rows (`sentaug.models.packing`): `auto` on the graph path (a GPU, where
    the padding's work is time; the CPU keeps its results bit for bit), `rows` always, `off` never."""
    if mode not in PACKING_MODES:
        raise ValueError(f"unknown packing {mode!r}: choose from {', '.join(PACKING_MODES)}")
    return mode == "rows" or (mode == "auto" and graph)


def train(spec: dict, corpus: str, positives, backbone: str, dev_data: str, out: str,
          resume: bool = False, stop_after: int | None = None, device: str | None = None,
          index: str | None = None, tokens=(), compile_backbone: bool | str = False, step_mode: str = "auto",
          on_step=None, packing: str = "auto") -> dict | None:
    """Train one (method, backbone, seed) run. `positives`: the cache file(s) the method reads (None, a path
    or a list, in the order `TrainingData` expects); `index`: the retrieval index for retrieved negatives;
    `tokens`: token files (`sentaug tokenize`) of the corpus and caches, under this run's tokenizer;
    `compile_backbone`: run the backbone through `torch.compile` (True: fused kernels, inside the captured
    step on a GPU; or a mode such as "reduce-overhead", which brings its own graphs; benchmarks/gpu_notes.md);
    `step_mode`: auto (one CUDA graph per step on a GPU), graph or eager
    (`sentaug.train.step`); `packing`: auto (on the graph path), rows or off (`packs`); `on_step(step)`:
    called after each step is launched (progress, benchmarks).
    `stop_after` interrupts after that step (for tests)."""
    run = TrainingRun(spec, corpus, positives, backbone, dev_data, out, resume, device, index, tokens,
                      compile_backbone, step_mode, packing)
    with run:       # its log file and progress bar
        for inputs in run.steps:
            run.take_step(inputs)
            if on_step is not None:
                on_step(run.step)
            record = run.log_record()                   # every LOG_EVERY steps, at evaluations and at the end
            checkpoint = run.step % spec["save_steps"] == 0 or run.step == stop_after
            if record or checkpoint:
                run.guard_divergence()    # before anything from a diverged step is logged, scored or saved
            if run.step % spec["eval_steps"] == 0 or run.step == run.total:
                run.evaluate(record)
            run.write_log(record)
            if checkpoint:
                run.checkpoint()
            if run.step == stop_after:
                return None
    return run.finish()


class TrainingRun:
    """A run between the phases of `train`: built (data, model, method, optimizer) and resumed from its last
    checkpoint where asked, then stepped, logged, guarded, evaluated, checkpointed and finished."""

    def __init__(self, spec: dict, corpus: str, positives, backbone: str, dev_data: str, out: str, resume: bool,
                 device: str | None, index: str | None, tokens, compile_backbone: bool | str, step_mode: str,
                 packing: str = "auto"):
        caches = [positives] if isinstance(positives, (str, Path)) else list(positives or [])
        self.spec, self.out, self.backbone_dir = spec, Path(out), backbone
        self.partial = partial = Path(f"{out}.partial")
        self.digest = spec_digest(spec)
        self.dev = dev = distributed.setup(torch.device(device) if device else pick_device())
        self.lead = lead = distributed.world()[1] == 0     # under torchrun, rank 0 alone evaluates and writes
        if not resume and lead:
            shutil.rmtree(partial, ignore_errors=True)
        distributed.barrier()
        partial.mkdir(parents=True, exist_ok=True)

        torch.manual_seed(spec["seed"])
        torch.use_deterministic_algorithms(dev.type == "cpu", warn_only=True)
        self.data = data = training_data(spec, corpus, caches)
        if not len(data):
            raise ValueError(f"{corpus}: no training sentences")
        model, tokenizer, lm_head = load_backbone(backbone, spec, dev)
        self.model, self.tokenizer = model, tokenizer
        graph, why_eager = step_path(step_mode, dev, compile_backbone)
        self.eager_forward = model.forward
        if compile_backbone:    # training's forward only: evaluation batches come in every width (no recompiling)
            mode = compile_backbone if isinstance(compile_backbone, str) else None
            # fused kernels: in a captured step every shape is fixed; eager batches come in every width
            model.forward = torch.compile(model.forward, dynamic=not graph and mode is None, mode=mode)
        torch.manual_seed(spec["seed"])  # heads and discriminator are initialised from the seed only
        self.encoder = encoder = SentenceEncoder(model, pooler=spec["pooler"], head=spec.get("head"),
                                                 head_only_train=spec["mlp_only_train"])
        if encoder.head_name == "mlp":  # initialised like SimCSE's MLPLayer (the backbone's _init_weights)
            torch.nn.init.normal_(encoder.head.dense.weight, std=model.config.initializer_range)
            torch.nn.init.zeros_(encoder.head.dense.bias)
        # on a GPU, no host wait inside a forward (the CPU keeps the padding mask: its results stay bit for bit)
        encoder.use_ready_mask(dev.type == "cuda" and model.config._attn_implementation == "sdpa")
        self.method = method = Method(spec, encoder, tokenizer, data, lm_head, index,
                                      [TokenTable.load(t) for t in tokens]).to(dev)
        self.total = total_steps(spec, len(data))
        self.optimizer = make_optimizer(method, spec, dev, capturable=graph)
        self.scheduler = lr_schedule(self.optimizer, self.total, spec.get("schedule", "linear"))
        self.evaluator = dev_evaluator(spec, dev_data)
        self.ckpt = Checkpoints(partial)
        self.guard = DivergenceGuard()
        running = self._restore(resume, graph)
        self.tally = LossTally(dev, running)     # summed on the device: no wait per step
        self.best_model = BestModel(partial, encoder, tokenizer, spec["eval_pooler"], on_device=dev.type == "cuda")
        # on the graph path every step has the same shapes (one graph), or, packed, one of a few row counts
        pack = packs(packing, graph)
        shape = method.fixed_shape(spec["batch_size"], pack) if graph or pack else None
        self.packed_row = shape.row if shape is not None else None
        runner = RunnerPerShape if self.packed_row else StepRunner
        self.runner = runner(self._step_function(compile_backbone), self.optimizer, dev, graph, why_eager)
        workers = PREFETCH_WORKERS if dev.type == "cuda" and distributed.world()[0] == 1 else 0
        self.steps = prepared_steps(StepPreparer(method, data, spec["batch_size"], spec["seed"], shape),
                                    range(self.step, self.total), workers, pin=dev.type == "cuda")
        self.lookups = [0, 0]
        self.first_step, self.started = self.step, time.time()
        method.train()

    def _restore(self, resume: bool, graph: bool) -> float:
        """Step, best score and running loss from the last checkpoint (resume) or a fresh start; the log is
        trimmed to what that checkpoint had seen. Returns the running loss."""
        self.step, self.best, (running, self.since) = 0, -math.inf, (0.0, 0)
        restored = None
        if resume:   # the lead rank sets damaged checkpoints aside before the others look
            restored = self.ckpt.load(self.method, self.optimizer, self.scheduler, self.digest) if self.lead else None
            distributed.barrier()
            restored = restored if self.lead else self.ckpt.load(self.method, self.optimizer, self.scheduler,
                                                                 self.digest)
        self.log_path = log_path = self.partial / "train_log.jsonl"
        if restored:
            self.step, self.best, (running, self.since) = restored
            if graph:
                learning_rates_on(self.optimizer, self.scheduler, self.dev)
            print(f"[train] resumed at step {self.step} (best STS-B dev so far {self.best:.2f})", file=sys.stderr,
                  flush=True)
        if restored and self.lead:
            # records written after that checkpoint are replayed by the resumed run (a line cut short by a kill
            # is dropped with them)
            kept = [r for r in log_path.read_text().splitlines() if _log_step(r) <= self.step] \
                if log_path.exists() else []
            log_path.write_text("".join(r + "\n" for r in kept))
        elif self.lead:   # a fresh start: nothing of an earlier attempt (another spec's best model) may leak in
            log_path.unlink(missing_ok=True)
            shutil.rmtree(self.partial / "best", ignore_errors=True)
        return running

    def _step_function(self, compile_backbone):
        """One step on device tensors, the same code eager or captured (sentaug.train.step)."""
        method, optimizer, tally, guard = self.method, self.optimizer, self.tally, self.guard
        # (a captured step may not cache autocast's weight casts: the cache would outlive the capture)
        amp = torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False) if self.dev.type == "cuda" else \
            torch.autocast("cpu", enabled=False)
        counter = torch.tensor(self.step, device=self.dev)     # the step number on the device, for the guard
        clip = self.spec.get("max_grad_norm")
        trained = [p for group in optimizer.param_groups for p in group["params"]]

        def train_step(inputs) -> None:
            if compile_backbone == "reduce-overhead":     # torch.compile's own CUDA graphs: a new step begins
                torch.compiler.cudagraph_mark_step_begin()
            counter.add_(1)
            with amp:
                loss, parts = method.compute(inputs)
            loss.backward()
            distributed.reduce_gradients(method)
            if clip:    # the global norm over every trained parameter, as the HF Trainer's max_grad_norm (no host wait)
                torch.nn.utils.clip_grad_norm_(trained, clip)
            optimizer.step()
            tally.add(loss, parts)
            guard.observe(loss, counter)

        return train_step

    def __enter__(self) -> "TrainingRun":
        from tqdm.auto import tqdm

        spec = self.spec
        self.bar = tqdm(total=self.total, initial=self.step, desc=f"train {spec['method']} seed {spec['seed']}",
                        unit="step", disable=not self.lead)
        self.log = open(self.log_path if self.lead else os.devnull, "a", encoding="utf-8")
        return self

    def __exit__(self, *exc) -> None:
        self.log.close()
        self.bar.close()

    def take_step(self, inputs) -> None:
        """The step itself (a GPU running out of memory is named with the batch), then the scheduler's."""
        self.lookups[0], self.lookups[1] = self.lookups[0] + inputs.lookups[0], self.lookups[1] + inputs.lookups[1]
        try:
            self.runner(inputs)
        except torch.cuda.OutOfMemoryError as e:
            raise OutOfDeviceMemory(out_of_memory_message(e, self.spec, self.step + 1, inputs, self.dev,
                                                          self.kept_message())) from e
        self.scheduler.step()
        self.step += 1
        self.since += 1
        self.bar.update(1)

    def log_record(self) -> dict | None:
        """The log line of this step (the loss and its parts since the last one, read from the device), every
        LOG_EVERY steps, at each evaluation and at the end; None between."""
        step, spec = self.step, self.spec
        if not (step % LOG_EVERY == 0 or step % spec["eval_steps"] == 0 or step == self.total):
            return None
        loss, parts = self.tally.take(self.since)
        record = {"step": step, "loss": loss, "lr": float(self.scheduler.get_last_lr()[0]),
                  "elapsed_s": round(time.time() - self.started, 2)}
        if set(parts) != {"contrastive"}:      # the parts, unless plain contrastive
            record["parts"] = parts
        self.since = 0
        return record

    def guard_divergence(self) -> None:
        self.guard.check(self.kept_message())

    def evaluate(self, record: dict) -> None:
        """STS-B dev (the lead rank), the best model kept aside, the score and the best so far logged."""
        record["stsb_dev"] = self._evaluate_and_keep_best(self.step)
        record["best_stsb_dev"] = self.best
        self.bar.set_postfix(dev=f"{record['stsb_dev']:.2f}", best=f"{self.best:.2f}")

    def _evaluate_and_keep_best(self, at_step: int) -> float:
        if not self.lead:
            distributed.barrier()
            return math.nan
        model = self.model
        training_forward, model.forward = model.forward, self.eager_forward
        try:
            score = self.evaluator(self.encoder.backbone, self.tokenizer, pooler=self.spec["eval_pooler"])
        finally:
            model.forward = training_forward
        if score > self.best:
            self.best = score
            self.best_model.keep(at_step, score)
        distributed.barrier()
        return score

    def write_log(self, record: dict | None) -> None:
        if record:
            self.log.write(json.dumps(record) + "\n")
            self.log.flush()

    def checkpoint(self) -> None:
        """The best model and a resumable checkpoint (the lead rank)."""
        if self.lead:
            self.best_model.write()
            self.ckpt.save(self.method, self.optimizer, self.scheduler, self.step, self.best, self.digest,
                           (self.tally.loss.item(), self.since))

    def kept_message(self) -> str:
        saved = self.ckpt.steps()
        kept = f"the last good checkpoint ({saved[0].name}) is kept in {self.ckpt.root}" if saved else \
            "no checkpoint had been saved yet"
        return (f"Run {self.spec['method']} seed {self.spec['seed']}: {kept}; nothing was written to {self.out}. "
                f"A lower learning rate, or a look at the inputs of the steps before, is where to start.")

    def finish(self) -> dict | None:
        """The best model, its log and the run's summary in the run folder, made visible in one rename (the lead
        rank; the others return None)."""
        if not self.lead:
            return None
        spec, partial, out, total = self.spec, self.partial, self.out, self.total
        self.best_model.write()
        seconds = time.time() - self.started
        best_info = json.loads((partial / "best" / "best_step.json").read_text())
        summary = {"spec": spec, "steps": total, "best_step": best_info["step"],
                   "best_stsb_dev": best_info["stsb_dev"], "train_seconds": round(seconds, 2),
                   "steps_per_second": round((total - self.first_step) / seconds, 3), "n_train_pairs": len(self.data),
                   "device": str(self.dev), "processes": distributed.world()[0], "versions": _versions(),
                   "attn_implementation": self.model.config._attn_implementation,
                   "step_path": {**self.runner.describe(), "packed_rows_of": self.packed_row},
                   "token_lookups": {"from_files": self.lookups[0], "tokenized": self.lookups[1]},
                   "backbone_source": model_source(self.backbone_dir)}   # e.g. its hub id and commit
        final = partial / "best"
        shutil.copyfile(self.log_path, final / "train_log.jsonl")
        write_json(final / "train_summary.json", summary)
        write_card(final, summary)      # README.md: the model card, so that the folder uploads to a hub as it is
        if out.exists():
            shutil.rmtree(out)
        os.replace(final, out)   # the one step that makes the run visible, complete
        shutil.rmtree(partial, ignore_errors=True)
        return summary


class OutOfDeviceMemory(RuntimeError):
    """The GPU ran out of memory in a step; the message names the batch, what was asked for and what was free."""


def out_of_memory_message(error: Exception, spec: dict, step: int, inputs, device, kept: str) -> str:
    import re

    asked = re.search(r"[Tt]ried to allocate ([\d.]+ ?[KMGT]?i?B)", str(error))
    free = ""
    if device.type == "cuda":
        available, capacity = torch.cuda.mem_get_info(device)
        free = f"; {available / 2**30:.2f} GiB free of {capacity / 2**30:.2f} GiB on {device}"
    return (f"out of GPU memory at step {step} (batch {spec['batch_size']}: {inputs.describe()}); "
            f"{asked.group(1) if asked else 'an unknown amount'} asked for{free}. A smaller batch_size or "
            f"max_seq_length, or fewer runs per GPU, is where to start. {kept}")


def dev_evaluator(spec: dict, dev_data: str):
    """STS-B dev of the data root `dev_data`; CNSD dev for a Chinese run (spec `language: zh`, SDA Table 5)."""
    from .dev_score import DevEvaluator

    if spec.get("language", "en") == "zh":
        from ..data.cnsd import read_cnsd_split

        return DevEvaluator(pairs=read_cnsd_split(dev_data, "dev"))
    return DevEvaluator(dev_data)


def _log_step(record: str) -> float:
    try:
        return json.loads(record)["step"]
    except (ValueError, KeyError, TypeError):
        return math.inf


def parameter_groups(method, spec: dict) -> list[dict]:
    """Backbone at `learning_rate`, every other module (heads, discriminator) at `head_learning_rate`
    (default: the same); no weight decay on biases and LayerNorm weights, as SimCSE (HF Trainer)."""
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight")
    head = {id(p) for p in method.head_parameters()}
    head_lr = spec.get("head_learning_rate") or spec["learning_rate"]
    groups = []
    for is_head in (False, True):
        for decay in (True, False):
            params = [p for n, p in method.named_parameters()
                      if (id(p) in head) == is_head and n.endswith(no_decay) != decay]
            if params:
                groups.append({"params": params, "weight_decay": spec["weight_decay"] if decay else 0.0,
                               "lr": head_lr if is_head else spec["learning_rate"]})
    return groups


def _versions() -> dict:
    import transformers

    from .. import __version__

    return {"torch": torch.__version__, "transformers": transformers.__version__, "sentaug": __version__}
