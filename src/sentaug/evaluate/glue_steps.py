"""GLUE fine-tuning on the training step's machinery (`sentaug.train.step`): the host prepares every step's
tensors from token ids computed once, the device runs one step function, eagerly or as one CUDA graph per
batch shape.

Host part (`GlueBatches`): the training split is tokenized once (each pair encoded as one sequence, truncated
to `max_seq_length`). An epoch's batches come from the epoch's seeded permutation, as before. With switch-case
(CARDS Table 6: the second R-drop pass sees a switch-cased copy), the epoch's copies are drawn once per epoch,
walking the permutation batch by batch (first texts, then second texts) with one generator carried across
epochs: each example gets the copy the earlier per-batch loop drew for it; they are tokenized in one call.
On a GPU the next epoch is prepared by a thread while the current one trains.

Two ways to form an epoch's batches (`batching`):

* `order` (the CPU's default): batch k is the permutation's k-th slice, padded to its longest pair; with a
  CUDA graph, to `max_seq_length`. On the CPU this is the earlier loop, step for step and bit for bit.
* `buckets` (a GPU's default): a few bucket widths (`bucket_widths`: the four multiples of 8 that pad the
  split's pairs least, and `max_seq_length`); each example goes to the smallest bucket that holds it (and its
  switch-cased copy); each bucket's examples, in permutation order, fill whole batches padded to the bucket's
  width, and the whole batches of every bucket are shuffled (seeded by epoch). The buckets' remainders are
  pooled into the epoch's last batches (each padded to the bucket of its longest example; the last one may be
  short), so an epoch has as many steps as in `order`. Every example is in exactly one batch of an epoch; which
  examples share a batch changes, and with it the numbers (dropout and the batch mean see other batches).

Device part (`fine_tune`): forward (pooler over the pair, dropout + linear head), the task loss (cross-entropy,
or MSE for STS-B), R-drop's second pass and term, backward, gradient clipping (at `max_grad_norm`, 1.0 unless a
recipe says otherwise; `clip_grad_norm_`, foreach on a GPU: no host wait), AdamW (a recipe's betas and eps in its
parameter groups) and the loss written into a device buffer. On a GPU: bf16 autocast, the fused AdamW with its
learning rates in device tensors (the scheduler fills them between replays), a ready attention mask (no host check
per forward), and one CUDA graph per batch shape (`RunnerPerShape`). On the CPU: fp32, eager, the default AdamW,
results the same for a seed.
"""
from __future__ import annotations

import math
import random
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

BATCHINGS = ("auto", "order", "buckets")
BUCKETS = 4                  # bucket widths of a split (and max_seq_length beside them)
BUCKET_ROUND = 8
LOSS_SHOWN_EVERY = 50        # steps between two readings of the loss for the progress bar (one host wait each)


# ----------------------------------------------------------------------------------- the host's part

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


@dataclass
class Encoded:
    """Each pair's token ids as the tokenizer gives them alone (special tokens, truncation), and its token
    types where the model takes them."""
    input_ids: list
    token_type_ids: list | None

    @property
    def lengths(self) -> np.ndarray:
        return np.fromiter(map(len, self.input_ids), dtype=np.int64, count=len(self.input_ids))


def encode_pairs(tokenizer, text_a: list[str], text_b: list[str] | None, max_length: int,
                 chunk: int = 8192) -> Encoded:
    """Pairs (or single texts) encoded one sequence each. Padded to a batch's longest (`pad_batch`) they are
    exactly what the tokenizer called on the batch with padding=True returns."""
    ids, types = [], []
    for start in range(0, len(text_a), chunk):
        b = text_b[start:start + chunk] if text_b is not None else None
        enc = tokenizer(text_a[start:start + chunk], b, truncation=True, max_length=max_length)
        ids += enc["input_ids"]
        types += enc.get("token_type_ids") or []
    return Encoded(ids, types if "token_type_ids" in tokenizer.model_input_names else None)


def pad_batch(tokenizer, encoded: Encoded, idx, width: int | None = None) -> dict:
    """input_ids, attention_mask (and token_type_ids) of examples `idx`, padded to `width` (else the longest)."""
    from ..models.tokens import pad

    seqs = [encoded.input_ids[i] for i in idx]
    ids, mask = pad(seqs, tokenizer.pad_token_id, tokenizer.padding_side, width)
    out = {"input_ids": ids, "attention_mask": mask}
    if encoded.token_type_ids is not None:
        out["token_type_ids"] = pad([encoded.token_type_ids[i] for i in idx], tokenizer.pad_token_type_id,
                                    tokenizer.padding_side, ids.shape[1])[0]
    return out


def epoch_permutation(n: int, seed: int, epoch: int):
    """The epoch's order of the examples (the earlier loop's, whose steps took slices of it)."""
    import torch

    return torch.randperm(n, generator=torch.Generator().manual_seed(seed * 1_000_003 + epoch)).numpy()


def bucket_widths(lengths: np.ndarray, max_length: int, buckets: int = BUCKETS) -> tuple[int, ...]:
    """The bucket widths of a split: the `buckets` multiples of 8 (the last one holding the longest pair) that
    pad its pairs to the fewest tokens in all, and `max_length` itself (room for switch-cased copies that came
    out longer). Found exactly by dynamic programming over the multiples of 8 up to `max_length`."""
    if not len(lengths):
        return (max_length,)
    candidates = sorted({min(max_length, w) for w in range(BUCKET_ROUND, max_length + BUCKET_ROUND, BUCKET_ROUND)})
    counts = np.bincount(np.searchsorted(candidates, np.minimum(lengths, max_length)), minlength=len(candidates))
    last = int(np.flatnonzero(counts).max())           # the candidate holding the longest pair
    below = np.concatenate([[0], np.cumsum(counts)])    # pairs at candidates < i
    # best[k][j]: fewest padded tokens of the pairs up to candidate j with k widths, the widest at candidate j
    best = np.full((buckets + 1, last + 1), np.inf)
    choice = np.zeros((buckets + 1, last + 1), dtype=np.int64)
    for j in range(last + 1):
        best[1][j] = below[j + 1] * candidates[j]
    for k in range(2, buckets + 1):
        for j in range(last + 1):
            for i in range(j):
                cost = best[k - 1][i] + (below[j + 1] - below[i + 1]) * candidates[j]
                if cost < best[k][j]:
                    best[k][j], choice[k][j] = cost, i
    k = int(np.argmin(best[1:, last])) + 1              # fewer widths when more would not pad less
    widths, j = [], last
    while k >= 1:
        widths.append(candidates[j])
        j, k = choice[k][j], k - 1
    return tuple(sorted(set(widths) | {max_length}))


def bucketed(order: np.ndarray, lengths: np.ndarray, widths: tuple[int, ...], batch_size: int,
             seed: int, epoch: int) -> list[tuple[np.ndarray, int]]:
    """An epoch's batches by buckets (module docstring): (example indices, width) of each step, in order."""
    import torch

    which = np.searchsorted(np.asarray(widths), lengths[order])     # the smallest width holding each example
    whole, rest = [], []
    for k, width in enumerate(widths):
        members = order[which == k]
        cut = len(members) // batch_size * batch_size
        whole += [(members[s:s + batch_size], width) for s in range(0, cut, batch_size)]
        rest.append(members[cut:])
    shuffle = torch.randperm(len(whole), generator=torch.Generator().manual_seed(seed * 1_000_003 + epoch + 7919))
    batches = [whole[i] for i in shuffle.tolist()]
    pooled = np.concatenate(rest) if rest else np.zeros(0, np.int64)
    for s in range(0, len(pooled), batch_size):
        idx = pooled[s:s + batch_size]
        batches.append((idx, int(widths[int(which_width(lengths[idx], widths))])))
    return batches


def which_width(lengths: np.ndarray, widths: tuple[int, ...]) -> int:
    """The index of the smallest width holding every one of `lengths`."""
    return int(np.searchsorted(np.asarray(widths), lengths.max()))


@dataclass
class Epoch:
    """What an epoch's steps are made of: (indices, width or None) per step, and the switch-cased copies."""
    batches: list
    switched: Encoded | None


class GlueBatches:
    """`batches(step)`: the `StepInputs` of fine-tuning step `step` (0-based), steps asked for in order.

    `fixed`: pad every batch to a fixed width (the bucket's, or `max_seq_length` in `order`), as a CUDA graph
    needs; else to its longest pair. `ahead`: prepare the next epoch in a thread (on a GPU), up to the epoch
    of the last of `steps` steps."""

    def __init__(self, tokenizer, train, labels, batch_size: int, max_length: int, seed: int,
                 batching: str = "order", switch_p: float = 0.0, fixed: bool = False, ahead: bool = False,
                 steps: int | None = None):
        if batching not in ("order", "buckets"):
            raise ValueError(f"unknown batching {batching!r}: choose from order, buckets")
        self.tokenizer, self.train, self.labels = tokenizer, train, labels
        self.batch_size, self.max_length, self.seed = batch_size, max_length, seed
        self.batching, self.switch_p, self.fixed = batching, switch_p, fixed
        self.n = len(train.text_a)
        self.steps_per_epoch = math.ceil(self.n / batch_size)
        self.last_epoch = (steps - 1) // self.steps_per_epoch if steps else math.inf
        self.original = encode_pairs(tokenizer, train.text_a, train.text_b, max_length)
        self.widths = bucket_widths(self.original.lengths, max_length) if batching == "buckets" else ()
        self.case_rng = random.Random(seed)
        self.epochs: dict[int, Epoch] = {}
        self.pending = None
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="glue-epochs") if ahead else None

    def epoch(self, e: int) -> Epoch:
        """Epoch `e`'s batches and switch-cased copies (epochs are made in order: the switch-case generator
        runs on from one to the next)."""
        order = epoch_permutation(self.n, self.seed, e)
        switched = None
        if self.switch_p > 0:
            a, b = self.train.text_a[:], self.train.text_b[:] if self.train.text_b is not None else None
            for s in range(0, self.n, self.batch_size):
                idx = order[s:s + self.batch_size].tolist()
                for i in idx:
                    a[i] = switch_case(self.train.text_a[i], self.switch_p, self.case_rng)
                if b is not None:
                    for i in idx:
                        b[i] = switch_case(self.train.text_b[i], self.switch_p, self.case_rng)
            switched = encode_pairs(self.tokenizer, a, b, self.max_length)
        if self.batching == "order":
            width = self.max_length if self.fixed else None
            batches = [(order[s:s + self.batch_size], width) for s in range(0, self.n, self.batch_size)]
        else:
            lengths = self.original.lengths
            if switched is not None:
                lengths = np.maximum(lengths, switched.lengths)
            batches = bucketed(order, lengths, self.widths, self.batch_size, self.seed, e)
        return Epoch(batches, switched)

    def _epoch_ready(self, e: int) -> Epoch:
        if e not in self.epochs:
            if self.pending is not None and self.pending[0] == e:
                self.epochs[e] = self.pending[1].result()
            else:
                self.epochs[e] = self.epoch(e)
            self.epochs.pop(e - 1, None)
            if self.executor is not None and e + 1 <= self.last_epoch:      # the next epoch while this one trains
                self.pending = (e + 1, self.executor.submit(self.epoch, e + 1))
        return self.epochs[e]

    def __call__(self, step: int):
        import torch

        from ..train.inputs import StepInputs

        e, k = divmod(step, self.steps_per_epoch)
        epoch = self._epoch_ready(e)
        idx, width = epoch.batches[k]
        tensors = pad_batch(self.tokenizer, self.original, idx, width)
        if epoch.switched is not None:
            tensors.update({f"switched_{key}": v for key, v in
                            pad_batch(self.tokenizer, epoch.switched, idx, width or None).items()})
        tensors["labels"] = self.labels[torch.from_numpy(np.asarray(idx, dtype=np.int64))]
        return StepInputs(tensors, full=len(idx) == min(self.batch_size, self.n))

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)


# --------------------------------------------------------------------------------- the device's part

def symmetric_kl(logits1, logits2):
    """0.5 * (KL(p1||p2) + KL(p2||p1)) with p = softmax(logits), summed over classes, averaged over rows."""
    import torch.nn.functional as F

    lp1, lp2 = F.log_softmax(logits1, dim=-1), F.log_softmax(logits2, dim=-1)
    kl12 = (lp1.exp() * (lp1 - lp2)).sum(-1)
    kl21 = (lp2.exp() * (lp2 - lp1)).sum(-1)
    return 0.5 * (kl12 + kl21).mean()


def pair_logits(backbone, head, pooler: str, tensors: dict, prefix: str = "", ready_mask: bool = False):
    """The head's outputs (float32) for one padded batch: pooled sentence vector, dropout, linear.
    `ready_mask`: hand SDPA a [B, 1, 1, T] boolean mask (no host check per forward, as a CUDA graph needs)."""
    from ..models.poolers import NEEDS_HIDDEN_STATES, pool

    mask = tensors[f"{prefix}attention_mask"]
    kw = {"token_type_ids": tensors[f"{prefix}token_type_ids"]} if f"{prefix}token_type_ids" in tensors else {}
    out = backbone(input_ids=tensors[f"{prefix}input_ids"], attention_mask=mask[:, None, None, :].bool()
                   if ready_mask else mask, output_hidden_states=pooler in NEEDS_HIDDEN_STATES, return_dict=True, **kw)
    return head(pool(pooler, out, mask)).float()


def task_loss(logits, labels, regression: bool):
    """MSE of the first output for regression (STS-B), else cross-entropy."""
    import torch.nn.functional as F

    return F.mse_loss(logits[:, 0], labels) if regression else F.cross_entropy(logits, labels)


def rdrop_loss(loss1, logits1, logits2, labels, regression: bool, alpha: float):
    """R-drop: the mean of both passes' task losses (`loss1` the first's) plus `alpha` times their divergence
    (MSE between the outputs for regression, R-drop's choice for STS-B; else the symmetric KL)."""
    import torch.nn.functional as F

    reg = F.mse_loss(logits1[:, 0], logits2[:, 0]) if regression else symmetric_kl(logits1, logits2)
    return 0.5 * (loss1 + task_loss(logits2, labels, regression)) + alpha * reg


@dataclass
class Finetuned:
    """What a fine-tuning run reports: the loss of every step, how its steps ran, and its optimizer (whose
    state the tests check)."""
    losses: list
    steps: int
    step_path: dict
    batching: str
    widths: tuple
    optimizer: object = None
    trace: list = None            # (path, width) of each step: graph or eager, its batch's padded width


def fine_tune(backbone, head, tokenizer, train, regression: bool, pooler: str, cfg, device,
              progress: bool = True, desc: str = "glue", on_step=None) -> Finetuned:
    """Fine-tune `backbone` and `head` (on `device`, in place) on `train` with `cfg` (`FinetuneConfig`);
    `on_step(step)`: called after each step is launched (benchmarks)."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    from ..train.step import RunnerPerShape, adamw
    from ..train.trainer import step_path

    cuda = device.type == "cuda"
    graph, why = step_path(cfg.step, device, False)
    batching = cfg.batching if cfg.batching != "auto" else ("buckets" if cuda else "order")
    if batching not in BATCHINGS:
        raise ValueError(f"unknown batching {cfg.batching!r}: choose from {', '.join(BATCHINGS)}")
    labels = torch.as_tensor(train.labels, dtype=torch.float32 if regression else torch.long)
    switched = cfg.rdrop > 0 and cfg.switch_case > 0
    steps_per_epoch = math.ceil(len(train.text_a) / cfg.batch_size)
    total = cfg.max_steps if cfg.max_steps else max(1, math.ceil(cfg.epochs * steps_per_epoch))
    batches = GlueBatches(tokenizer, train, labels, cfg.batch_size, cfg.max_seq_length, cfg.seed, batching,
                          cfg.switch_case if switched else 0.0, fixed=graph, ahead=cuda, steps=total)
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight", "norm.weight")
    params = [*backbone.named_parameters(), *(("head." + k, p) for k, p in head.named_parameters())]
    adam = {**({"betas": tuple(cfg.adam_betas)} if cfg.adam_betas else {}),
            **({"eps": cfg.adam_eps} if cfg.adam_eps is not None else {})}
    groups = [{"params": [p for k, p in params if not k.endswith(no_decay)], "weight_decay": cfg.weight_decay,
               "lr": cfg.learning_rate, **adam},
              {"params": [p for k, p in params if k.endswith(no_decay)], "weight_decay": 0.0, "lr": cfg.learning_rate,
               **adam}]
    optimizer = adamw(groups, device, capturable=graph)
    warmup = cfg.warmup_steps if cfg.warmup_steps is not None else int(cfg.warmup_ratio * total)
    scheduler = get_linear_schedule_with_warmup(optimizer, warmup, total)
    weights = [p for _, p in params]
    ready_mask = cuda and getattr(backbone.config, "_attn_implementation", None) == "sdpa"
    # (a captured step may not cache autocast's weight casts: the cache would outlive the capture)
    amp = torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False) if cuda else \
        torch.autocast("cpu", enabled=False)
    losses = torch.zeros(total, dtype=torch.float64, device=device)
    counter = torch.zeros(1, dtype=torch.long, device=device)      # the step number, on the device

    def glue_step(inputs) -> None:
        t = inputs.tensors
        with amp:
            out1 = pair_logits(backbone, head, pooler, t, "", ready_mask)
            loss = task_loss(out1, t["labels"], regression)
            if cfg.rdrop > 0:
                out2 = pair_logits(backbone, head, pooler, t, "switched_" if switched else "", ready_mask)
                loss = rdrop_loss(loss, out1, out2, t["labels"], regression, cfg.rdrop)
        loss.backward()
        if cfg.max_grad_norm:
            torch.nn.utils.clip_grad_norm_(weights, cfg.max_grad_norm, foreach=True if cuda else None)
        optimizer.step()
        losses.index_copy_(0, counter, loss.detach().double().reshape(1))
        counter.add_(1)

    runner = RunnerPerShape(glue_step, optimizer, device, graph, why)
    backbone.train(), head.train()
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc=desc, unit="step")
    trace = []
    try:
        for step in range(total):
            inputs = batches(step)
            graphed = runner.graph_steps()
            runner(inputs)
            trace.append(("graph" if runner.graph_steps() > graphed else "eager", inputs.tensors["input_ids"].shape[1]))
            scheduler.step()
            if on_step is not None:
                on_step(step + 1)
            if bar is not None:
                bar.update(1)
                if (step + 1) % LOSS_SHOWN_EVERY == 0 or step + 1 == total:
                    bar.set_postfix(loss=f"{losses[step].item():.4f}", refresh=False)  # shown at the next redraw
    finally:
        batches.close()
        if bar is not None:
            bar.close()
    described = runner.describe()
    if graph and described["path"] != "graph":
        print(f"[glue] {described['why']}", file=sys.stderr, flush=True)
    return Finetuned(losses.tolist(), total, described, batching, batches.widths, optimizer, trace)


# ---------------------------------------------------------------------------------------- prediction

def predict(backbone, head, tokenizer, split, pooler: str, regression: bool, batch_size: int | None = None,
            max_seq_length: int = 128):
    """Class ids (argmax) or regression outputs for every example of `split`, in order, in eval mode. On the
    CPU in fp32, batches of `batch_size` (128) in the split's order; on a GPU under bf16 autocast, the
    examples sorted by length into batches of up to `GPU_BATCH_TOKENS` tokens, the outputs put back in order."""
    import torch

    from ..models.encoder import CPU_BATCH, autocast_to, batch_bounds, batching, embedding_dtype

    device = next(backbone.parameters()).device
    size, max_tokens = batching(device, batch_size)
    encoded = encode_pairs(tokenizer, split.text_a, split.text_b, max_seq_length)
    lengths = encoded.lengths
    order = np.argsort(-lengths, kind="stable") if max_tokens else np.arange(len(lengths))
    dtype = embedding_dtype(None, device)
    backbone.eval(), head.eval()
    out = []
    with torch.inference_mode(), autocast_to(dtype, device):
        for start, end in batch_bounds(lengths[order], size or CPU_BATCH, max_tokens):
            tensors = {k: v.to(device) for k, v in pad_batch(tokenizer, encoded, order[start:end]).items()}
            logits = pair_logits(backbone, head, pooler, tensors)
            out.append(logits[:, 0] if regression else logits.argmax(-1))
    if not out:
        return np.zeros(0)
    values = torch.cat(out).float().cpu().numpy() if regression else torch.cat(out).cpu().numpy()
    result = np.empty_like(values)
    result[order] = values
    return result
