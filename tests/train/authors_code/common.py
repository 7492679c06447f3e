"""What the conformance tests and the script that computes their reference figures share (plain torch, no sentaug:
the script imports this file by path inside the authors' environment, old transformers and all).

- `TINY`: the tiny backbone's shape (2 layers, hidden 64), every dropout `DROPOUT` or 0.
- `canonical_tensor`: the value of every weight, from its canonical name alone (`load`: into a module whose
  parameter names `rename` maps to canonical ones; the same weights whatever the code around them).
- `fingerprint`: a gradient as its norm and `PROJECTIONS` projections on seeded Gaussian vectors (a projection
  has the gradient's norm as its standard deviation, so |difference| / norm estimates the relative difference of
  the whole tensor); `compare` gives the largest such relative difference over all parameters.
- `KeyedDropout`: dropout whose mask depends on (forward, dropout call within it, the row's key, position), not on
  where a row sits in the batch: two codes that lay out the same sentences differently draw the same masks for
  them, and a test can run with dropout on.
"""
from __future__ import annotations

import contextlib
import zlib

import torch

TINY = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
            max_position_embeddings=128)
DROPOUT = 0.1
PROJECTIONS = 4
SENTENCES = [
    "The story of the first book continues.",
    "A man is playing a guitar on the street.",
    "Two dogs run across a snowy field in New York.",
    "She said it would rain, but the sun came out.",
    "Prices rose by 4 percent last year.",
    "The committee approved the plan on Monday.",
    "He doesn't like green apples.",
    "Birds sing.",
]


def _seed(text: str) -> int:
    return zlib.crc32(text.encode())


def canonical_tensor(name: str, shape) -> torch.Tensor:
    """A weight from its canonical name: N(0, 0.1^2) (LayerNorm and BatchNorm scales 1 + N(0, 0.1^2); biases drawn
    too, so that each is tested). Five times BERT's initialiser: at 0.02 a random tiny BERT gives every sentence
    nearly the same vector, and fp32 rounding alone moves its contrastive gradients by 1e-3."""
    t = torch.randn(tuple(shape), generator=torch.Generator().manual_seed(_seed(name)), dtype=torch.float32)
    if name.endswith(("LayerNorm.weight", "layer_norm.weight", "norm.weight")):
        return 1 + 0.1 * t
    return 0.1 * t


@torch.no_grad()
def load(module: torch.nn.Module, rename) -> dict[str, str]:
    """Set every parameter of `module` to `canonical_tensor(rename(name))` (`rename` returns None for a parameter
    left as it is); returns {parameter name: canonical name}."""
    names = {}
    for name, p in module.named_parameters():
        canonical = rename(name)
        if canonical is not None:
            p.copy_(canonical_tensor(canonical, p.shape))
            names[name] = canonical
    return names


def fingerprint(grad: torch.Tensor | None, name: str) -> dict | None:
    if grad is None:
        return None
    g = grad.detach().double().reshape(-1)
    r = torch.randn((PROJECTIONS, g.numel()), generator=torch.Generator().manual_seed(_seed("proj:" + name)),
                    dtype=torch.float32)
    return {"shape": list(grad.shape), "norm": g.norm().item(), "proj": (r.double() @ g).tolist()}


def fingerprints(module: torch.nn.Module, names: dict[str, str]) -> dict[str, dict | None]:
    """{canonical name: fingerprint of its gradient (None: no gradient)} for the parameters `load` named."""
    params = dict(module.named_parameters())
    out = {}
    for name, canonical in names.items():
        grad = params[name].grad
        if grad is not None and not grad.abs().sum() > 0:
            grad = None        # a gradient of zeros is no gradient (an optimizer's zero_grad left it)
        if canonical in out and grad is not None and out[canonical] is not None:
            raise ValueError(f"{canonical}: two parameters with gradients share a canonical name")
        if canonical not in out or grad is not None:
            out[canonical] = fingerprint(grad, canonical)
    return out


EXACT_ZERO = ("attention.self.key.bias",)   # compared to the whole gradient's norm: their exact gradient is 0
# A parameter's difference is taken relative to its own gradient's norm, or to SMALL times the whole gradient's norm
# where its own is smaller: fp32 rounding (measured between two equivalent computations of ours, eager and SDPA
# attention) moves a gradient that small by more than 1e-5 of itself.
SMALL = 0.05


def relative_difference(ours: dict | None, ref: dict | None, floor: float = 0.0) -> float:
    """|ours - ref| over ref's norm (at least `floor`), largest of the norm and each projection (0 when neither has
    a gradient; inf when only one has)."""
    if ours is None or ref is None:
        return 0.0 if ours is None and ref is None else float("inf")
    if ours["shape"] != ref["shape"]:
        return float("inf")
    scale = max(ref["norm"], floor, 1e-30)
    diffs = [abs(ours["norm"] - ref["norm"])] + [abs(a - b) for a, b in zip(ours["proj"], ref["proj"])]
    return max(diffs) / scale


def compare(ours: dict[str, dict | None], ref: dict[str, dict | None], exact_zero=()) -> dict[str, float]:
    """Relative difference per canonical name over both sides' names (a name on one side only: inf unless it
    has no gradient there). A gradient whose exact value is 0 (`EXACT_ZERO`, the attention keys' bias: softmax
    ignores a shift common to a row; `exact_zero`: more such names) is rounding noise on both sides: its
    difference is taken relative to the norm of the whole gradient; any other, relative to its own norm or SMALL
    times the whole's, whichever is larger."""
    total = sum(g["norm"] ** 2 for g in ref.values() if g is not None) ** 0.5
    zero = EXACT_ZERO + tuple(exact_zero)
    return {n: relative_difference(ours.get(n), ref.get(n), total if n.endswith(zero) else SMALL * total)
            for n in sorted(set(ours) | set(ref))}


class KeyedDropout:
    """`torch.nn.functional.dropout` replaced (inside `active`) by masks keyed by the rows' keys.

    `watch(module, keys)`: before each forward of `module`, its rows' keys are taken from the front of `keys` (a
    list of lists, one per forward) and the dropout call counter restarts; a call's mask for a row is drawn from
    a generator seeded by (the module's tag, the call's number, the row's key), over the row's own shape."""

    def __init__(self, p: float = DROPOUT):
        self.p, self.rows, self.tag, self.calls, self.hooks = p, None, "", 0, []

    def watch(self, module: torch.nn.Module, tag: str, keys: list) -> None:
        queue = list(keys)

        def before(mod, args):
            if not queue:
                raise RuntimeError(f"keyed dropout: a forward of {tag} with no row keys left")
            self.rows, self.tag, self.calls = queue.pop(0), tag, 0

        self.hooks.append(module.register_forward_pre_hook(before))

    def dropout(self, input, p=0.5, training=True, inplace=False):
        if not training or p == 0:
            return input
        if self.rows is None or len(self.rows) != input.shape[0]:
            raise RuntimeError(f"keyed dropout: {input.shape[0]} rows, {len(self.rows or [])} keys ({self.tag})")
        call, self.calls = self.calls, self.calls + 1
        masks = []
        for key in self.rows:
            g = torch.Generator().manual_seed(_seed(f"{self.tag}:{call}:{key}"))
            masks.append(torch.rand(tuple(input.shape[1:]), generator=g) >= p)
        keep = torch.stack(masks).to(input.device)
        return input * keep.to(input.dtype) / (1 - p)

    @contextlib.contextmanager
    def active(self):
        import torch.nn.functional as F

        original = F.dropout
        F.dropout = self.dropout
        try:
            yield self
        finally:
            F.dropout = original
            for h in self.hooks:
                h.remove()
            self.hooks.clear()


# -- the cases' batches (texts; each side tokenizes them with the same tokenizer)
SUP_POSITIVES = ["A book's story goes on.", "Someone plays music outside.", "Animals are running in the snow.",
                 "The weather turned out sunny.", "Prices went up.", "The plan was accepted.",
                 "He dislikes some fruit.", "Birds are singing."]
SUP_NEGATIVES = ["The book ends here.", "Nobody is playing anything.", "The dogs are asleep indoors.",
                 "It rained all day.", "Prices fell sharply.", "The committee rejected the plan.",
                 "He loves green apples.", "The birds are silent."]
# CARDS: switch-cased positives (first letters flipped, as its collator does) and a corpus around the anchors
SWITCHED = ["The Story of the first book continues.", "A man is Playing a guitar on the street.",
            "two dogs run across a snowy field in New york.", "She said it would rain, but the Sun came out.",
            "prices rose by 4 percent last year.", "The committee Approved the plan on Monday.",
            "He doesn't like Green apples.", "birds sing."]
EXTRA_CORPUS = ["A dog barks.", "Snow fell.", "The book sold well.", "Music plays.", "Rain again.",
                "Apples are red.", "The plan failed.", "Prices rose."]
# AugCSE: each anchor's augmented view and the augmentation (position in the official 12-set) that made it;
# None: the augmentation left the line unchanged
AUGMENTED = [("The story of the first book continues.", None), ("A guitar is played by a man on the street.", 6),
             ("Two dogs ran across a snowy field in New York.", 4),
             ("She said it would rain. But the sun came out.", 5),
             ("Prices rose by four percent last year.", 0), ("On Monday the committee approved the plan.", 11),
             ("He does not like green apples.", 0), ("Birds sing.", None)]
SETTINGS = {"k1": 4, "seed": 3, "delta": 15.0, "neighbours": 3, "n_augmentations": 12}


def case_texts(case: str) -> dict[str, list[str]]:
    texts = {"anchors": list(SENTENCES)}
    if case.startswith("simcse_sup"):
        texts.update(positives=SUP_POSITIVES, negatives=SUP_NEGATIVES)
    if case.endswith("cards"):
        texts.update(positives=SWITCHED, corpus=SENTENCES + EXTRA_CORPUS)
    if case.startswith("augcse"):
        texts.update(augmented=[a for a, _ in AUGMENTED])
    return texts


def augcse_labels() -> tuple[list[int], list[int]]:
    """(AugCSE's labels: the augmentation's position, n for unchanged; ours: position + 1, 0 for unchanged)."""
    n = SETTINGS["n_augmentations"]
    return ([n if k is None else k for _, k in AUGMENTED], [0 if k is None else k + 1 for _, k in AUGMENTED])
