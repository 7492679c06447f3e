"""Tables that are configuration (AugCSE Tables 3, 10, 11, 13): what a run is, written as JSON from the very
spec the trainer receives, so that such a table cannot drift from what runs.

- `sentaug describe spec`: the resolved training spec of a run (`sentaug.config.train_spec`: hyper-parameters,
  objective weights, augmentation sets), as the train rule passes it, and (given the run's paper component) where
  docs/fidelity.md compares its recipe with the authors' code and text.
- `sentaug describe model-size`: parameters at training (backbone + projection head + objective modules:
  discriminator, the MLM head's own weights) and at inference (the backbone the run saves and is evaluated
  with), counted from the modules the trainer builds (`sentaug.train.method.Method`) on the backbone's config.
  The weights are not read: the backbone is built on the meta device from its config.json.
"""
from __future__ import annotations

import copy
from pathlib import Path


def count(module) -> int:
    """Parameters of `module`, each tensor once (tied weights, e.g. an MLM decoder and the embeddings)."""
    return sum(p.numel() for p in module.parameters())


def model_sizes(spec: dict, backbone: str | Path) -> dict:
    """{"train": n, "inference": n, "parts": {...}} for the run `spec` on the backbone folder `backbone`."""
    import torch
    from transformers import AutoConfig, AutoModel, AutoModelForMaskedLM

    from ..models.encoder import SentenceEncoder
    from ..parts import needs_lm_head
    from ..train.method import Method

    spec = copy.deepcopy(spec)
    spec["negatives"] = {"source": "in_batch"}       # negative sources add no parameters (and need no index)
    config = AutoConfig.from_pretrained(str(backbone))
    tokenizer = None
    if spec.get("add_tokens") or needs_lm_head(spec):
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(backbone))
    with torch.device("meta"):
        if needs_lm_head(spec):
            full = AutoModelForMaskedLM.from_config(config)
            model = full.base_model
            lm_head = next(child for child in full.children() if child is not model)
        else:
            model, lm_head = AutoModel.from_config(config), None
        if spec.get("add_tokens"):
            if tokenizer.add_tokens(list(spec["add_tokens"])):
                (full if lm_head is not None else model).resize_token_embeddings(len(tokenizer))
        encoder = SentenceEncoder(model, pooler=spec["pooler"], head=spec.get("head"),
                                  head_only_train=spec["mlp_only_train"])
        method = Method(spec, encoder, tokenizer, None, lm_head)   # no data: no part reads it at build
    parts = {"backbone": count(model), "head": count(encoder.head) if encoder.head is not None else 0}
    for name, module in method.objectives.items():
        own = {id(p) for p in model.parameters()}
        parts[name] = sum(p.numel() for p in module.parameters() if id(p) not in own)
    inference = parts["backbone"]
    if encoder.head is not None and not spec["mlp_only_train"] and encoder.head_name != "mlp":
        inference += parts["head"]          # a head kept at inference (SimCSE's MLP lives in the pooler layer)
    return {"train": count(method), "inference": inference, "parts": parts}


def fidelity_rows(spec: dict, paper: str | None) -> str:
    """Where docs/fidelity.md compares a run's settings with the authors' (the section of its paper component and
    paper backbone); the page covers paper scale's runs, so below it (`shared`) the page itself."""
    from .fidelity import PAGE, anchor

    if not paper or paper == "shared":
        return PAGE
    return f"{PAGE}#{anchor(paper, spec.get('paper_backbone', spec['backbone']))}"


def describe_spec_cli(spec: dict, out: str, paper: str | None = None) -> dict:
    from ..io import write_json

    record = {"method": spec["method"], "backbone": spec["backbone"], "scale": spec["scale"], "spec": spec,
              "fidelity": fidelity_rows(spec, paper)}
    write_json(out, record)
    return record


def describe_model_size_cli(spec: dict, backbone: str, out: str) -> dict:
    from ..io import write_json

    sizes = model_sizes(spec, backbone)
    record = {"method": spec["method"], "backbone": spec["backbone"], "scale": spec["scale"], **sizes,
              "train_millions": round(sizes["train"] / 1e6, 1),
              "inference_millions": round(sizes["inference"] / 1e6, 1)}
    write_json(out, record)
    print(f"{spec['method']} on {spec['backbone']}: {sizes['train']:,} parameters in training, "
          f"{sizes['inference']:,} at inference ({sizes['parts']})")
    return record
