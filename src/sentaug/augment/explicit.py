"""VaSCL's explicit augmentations (Section 4.4, Figures 3-4), through nlpaug as VaSCL used them.

* ``vascl_wdel``: WDel, random word deletion (``naw.RandomWordAug(action="delete")``);
* ``vascl_wnet``: WNet, WordNet synonym substitution (``naw.SynonymAug(aug_src="wordnet")``), served offline
  by `sentaug.augment.wordnet` (local WordNet 3.0; spaCy's Penn tags instead of ``nltk.pos_tag``);
* ``vascl_ctxt``: CTxt, contextual substitution with a masked LM (``naw.ContextualWordEmbsAug``). ``model``
  is a folder holding a masked-LM checkpoint (``*ForMaskedLM`` weights + tokenizer): the paper uses the
  backbone; at demo/small scale no raw MLM is available offline, so a small one must be given explicitly.
  A missing folder fails at once with the path in the message.

Strength ``p`` is nlpaug's ``aug_p`` (share of words changed; VaSCL: 5 %, 10 %, 20 %), with ``aug_min=1``
and no upper cap (nlpaug's default cap of 10 words would silently lower 20 % on long lines).

Determinism: nlpaug draws from Python's global ``random`` and numpy's global state (CTxt also from torch).
Each call seeds all three from the line's ``rng`` first, so a line's output depends only on (seed, line
index), whatever the process or order (CTxt is batched: on (seed, chunk)). This changes the global
generators of the calling process: call these from cache building, not from code that relies on its own
global random state.
"""
from __future__ import annotations

import functools
import json
import random
from pathlib import Path

from ..params import Param
from .registry import register


def seed_globals(rng: random.Random, torch_too: bool = False) -> None:
    """Seed Python's, numpy's (and torch's) global generators from the line's rng (see module docstring)."""
    import numpy as np

    s = rng.getrandbits(32)
    random.seed(s)
    np.random.seed(s)
    if torch_too:
        import torch

        torch.manual_seed(s)


@functools.lru_cache(maxsize=16)
def _wdel(p: float):
    import nlpaug.augmenter.word as naw

    return naw.RandomWordAug(action="delete", aug_p=p, aug_min=1, aug_max=None)


@functools.lru_cache(maxsize=16)
def _wnet(p: float):
    from .wordnet import nlpaug_synonym_aug

    return nlpaug_synonym_aug(aug_p=p, aug_min=1, aug_max=None)


@functools.lru_cache(maxsize=4)
def _ctxt(p: float, model: str, top_k: int):
    import nlpaug.augmenter.word as naw

    if not model:
        raise ValueError("vascl_ctxt needs --param model=<folder of a masked LM (weights + tokenizer)>")
    if not (Path(model) / "config.json").is_file():
        raise FileNotFoundError(f"vascl_ctxt: masked LM folder {model} not found (no config.json)")
    import torch

    # One forward pass per line on a short input: extra intra-op threads only contend (4x slower on a loaded
    # 2-core machine); parallelism comes from `sentaug augment --workers` processes instead.
    torch.set_num_threads(1)
    model_type = json.loads((Path(model) / "config.json").read_text()).get("model_type", "")
    if model_type not in ("bert", "roberta", "distilbert"):
        raise ValueError(f"vascl_ctxt: {model} is a {model_type!r} model; nlpaug supports bert, roberta, distilbert")
    # A checkpoint without an MLM head (the random stand-ins below paper scale are saved as AutoModel) gets a new
    # one: drawn from a fixed seed, the same in every process (torch seeds its own generator at random).
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        aug = naw.ContextualWordEmbsAug(model_path=model, model_type=model_type, action="substitute", aug_p=p,
                                        aug_min=1, aug_max=None, top_k=top_k, device="cpu",
                                        use_custom_api=False)    # nlpaug's own BERT wrapper needs transformers 4
    aug.model.model = _InProcess(aug.model.model)
    return aug


class _InProcess:
    """nlpaug calls its fill-mask pipeline with ``num_workers=1``: a DataLoader worker process per call,
    which is slower on short inputs and impossible inside `sentaug augment --workers` pool processes
    (daemonic processes cannot have children). This runs the pipeline in the calling process, and drops
    special-token candidates from what it returns (`_words_only`)."""

    def __init__(self, pipe):
        self._pipe = pipe
        self._special = set(pipe.tokenizer.all_special_ids)

    def __call__(self, inputs, **kwargs):
        kwargs["num_workers"] = 0
        return _words_only(self._pipe(inputs, **kwargs), self._special)

    def __getattr__(self, name):
        return getattr(self._pipe, name)


def _words_only(predictions: list, special_ids: set) -> list:
    """A fill-mask result (a list of candidates, or one such list per input) without special tokens. Put
    into a line, [CLS] or [UNK] is no word, and a [MASK] makes nlpaug's next pass on that line find two masks
    and fail. A pre-trained masked LM all but never ranks them among its top 100; a random stand-in does."""
    if predictions and isinstance(predictions[0], list):
        return [_words_only(p, special_ids) for p in predictions]
    return [p for p in predictions if p["token"] not in special_ids]


def _run(aug, text: str) -> str:
    if not text.strip():
        return text
    out = aug.augment(text)
    out = out[0] if isinstance(out, list) else out
    return text if out.split() == text.split() else out


def vascl_wdel(text: str, rng: random.Random, p: float = 0.1) -> str:
    aug = _wdel(p)              # built before seeding: building an augmenter may draw from the globals
    seed_globals(rng)
    return _run(aug, text)


def vascl_wnet(text: str, rng: random.Random, p: float = 0.1) -> str:
    aug = _wnet(p)
    seed_globals(rng)
    return _run(aug, text)


def vascl_ctxt(texts: list[str], rng: random.Random, p: float = 0.1, model: str = "", top_k: int = 100) -> list[str]:
    """Batched: nlpaug masks the i-th chosen word of every line in one forward pass (3x faster than line
    by line on 2 cores); the global generators are seeded once per call (per chunk, see cache.py)."""
    aug = _ctxt(p, model, top_k)
    seed_globals(rng, torch_too=True)
    out = list(texts)
    todo = sorted((i for i, t in enumerate(texts) if t.strip()), key=lambda i: len(texts[i]))  # less padding
    if todo:
        res = aug.augment([texts[i] for i in todo])
        for i, a in zip(todo, res):
            out[i] = texts[i] if a.split() == texts[i].split() else a
    return out


_P = Param(0.1, "share of words changed (nlpaug aug_p; VaSCL: 0.05, 0.1, 0.2)")
register("vascl_wdel", family="vascl", needs_parse=False,
         description="VaSCL WDel: nlpaug random word deletion", p=_P)(vascl_wdel)
register("vascl_wnet", family="vascl", needs_parse=False,
         description="VaSCL WNet: nlpaug WordNet synonym substitution (offline WordNet, spaCy POS)",
         p=_P)(vascl_wnet)
register("vascl_ctxt", family="vascl", needs_parse=False, batched=True,
         description="VaSCL CTxt: nlpaug contextual substitution with a masked LM",
         p=_P, model=Param("", "folder of a masked LM (ForMaskedLM weights + tokenizer)"),
         top_k=Param(100, "candidates per masked word (nlpaug default)"))(vascl_ctxt)
