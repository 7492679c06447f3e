"""AugCSE's two language-model-based augmentations (NL-Augmenter DiverseParaphrase, Casual2Formal): sequence-to-
sequence models given by path; without one that loads offline they raise ValueError saying what to pass."""
from __future__ import annotations

from functools import lru_cache

from ...params import Param
from ..registry import register
from .common import FAMILY


@lru_cache(maxsize=4)
def _seq2seq(model: str, what: str):
    if not model:
        raise ValueError(f"{what} needs a sequence-to-sequence model: pass --param model=PATH to a local "
                         f"Hugging Face folder (no such model is available offline here)")
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from ...models import hub

    try:   # a folder, or a hub id pinned as <id>@<commit> (sentaug.models.hub)
        return (hub.from_pretrained(AutoTokenizer, model),
                hub.from_pretrained(AutoModelForSeq2SeqLM, model).eval())
    except (OSError, ValueError) as e:
        raise ValueError(f"{what}: cannot load model {model!r} offline ({str(e).splitlines()[0]}); "
                         f"pass --param model=PATH to a local sequence-to-sequence model folder") from None


_GENERATE_BATCH = 32   # lines per generate() call (beam search over batch x beams sequences)


def _beam_candidates(texts: list[str], model: str, what: str, prefix: str, beams: int | None,
                     max_new_tokens: int) -> list[list[str]]:
    """Each text's `beams` best beam-search outputs (stripped, best first), batched over lines. With
    ``beams=None`` the model's own generation settings decide, and its one output is returned."""
    import torch

    tok, net = _seq2seq(model, what)
    out = []
    for i in range(0, len(texts), _GENERATE_BATCH):
        part = [prefix + t for t in texts[i:i + _GENERATE_BATCH]]
        enc = tok(part, return_tensors="pt", padding=True, truncation=True, max_length=256)
        enc = {k: v for k, v in enc.items() if k in ("input_ids", "attention_mask")}   # no token_type_ids
        search = {} if beams is None else {"num_beams": beams, "num_return_sequences": beams}
        with torch.no_grad():
            ids = net.generate(**enc, **search, max_new_tokens=max_new_tokens)
        decoded = [c.strip() for c in tok.batch_decode(ids, skip_special_tokens=True)]
        k = beams or 1
        out += [decoded[j * k:(j + 1) * k] for j in range(len(part))]
    return out


def _draw(texts: list[str], candidates: list[list[str]], rng) -> list[str]:
    """One candidate per line, drawn uniformly among those that are non-empty and differ from the line."""
    out = []
    for text, cands in zip(texts, candidates):
        cands = [c for c in cands if c and c != text]
        out.append(rng.choice(cands) if cands else text)
    return out


@register("DiverseParaphrase", family=FAMILY, needs_parse=False, batched=True,
          description="AugCSE A.2 (NL-Augmenter DiverseParaphrase): back-translation, English -> German "
                      "(the model's own generation settings) -> English (beam search, 5n candidates), n of "
                      "them drawn uniformly (its 'random' selection)",
          model=Param("", "local English->German seq2seq folder (paper: facebook/wmt19-en-de; required)"),
          back_model=Param("", "local German->English seq2seq folder (paper: facebook/wmt19-de-en; "
                               "default: the same as model)"),
          n=Param(1, "outputs per line; 5n beam candidates are decoded, as in NL-Augmenter"),
          max_new_tokens=Param(64, "longest output, in tokens"))
def diverse_paraphrase(texts, rng, model="", back_model="", n=1, max_new_tokens=64) -> list[str]:
    german = [c[0] for c in _beam_candidates(texts, model, "DiverseParaphrase", "", None, max_new_tokens)]
    back = _beam_candidates(german, back_model or model, "DiverseParaphrase", "", 5 * n, max_new_tokens)
    # NL-Augmenter samples n of the 5n candidates; a cache holds one augmented line, so one is drawn
    return _draw(texts, [rng.sample(c, n) for c in back], rng)


@register("Casual2Formal", family=FAMILY, needs_parse=False, batched=True,
          description="AugCSE A.2 (NL-Augmenter Casual2Formal, Styleformer): casual -> formal style transfer "
                      "with a seq2seq model, the best beam kept",
          model=Param("", "local casual-to-formal seq2seq folder (paper: prithivida/informal_to_formal_"
                          "styletransfer; required)"),
          prefix=Param("transfer Casual to Formal: ", "Styleformer's task prefix"),
          n=Param(5, "beams (NL-Augmenter: 5)"),
          max_new_tokens=Param(32, "longest output, in tokens (NL-Augmenter: max_length 32)"))
def casual2formal(texts, rng, model="", prefix="transfer Casual to Formal: ", n=5, max_new_tokens=32) -> list[str]:
    # NL-Augmenter ranks the beams with an NLI adequacy model (prithivida/parrot_adequacy_on_BART) and keeps
    # the best above 0.95; without that third model the beam search's own best is kept.
    best = _beam_candidates(texts, model, "Casual2Formal", prefix, n, max_new_tokens)
    return _draw(texts, [c[:1] for c in best], rng)
