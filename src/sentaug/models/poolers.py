"""Sentence poolers over a Hugging Face encoder's outputs, as in SimCSE's evaluation.py.

- `cls`: the model's pooler output (dense + tanh over [CLS]). For checkpoints written by this project
  (and SimCSE's released ones) that layer holds the contrastive MLP trained with the model.
- `cls_before_pooler`: the [CLS] vector of the last layer (what unsupervised SimCSE evaluates).
- `avg`: mean of the last layer over non-padding tokens.
- `avg_top2`: mean of the average of the last two layers.
- `avg_first_last`: mean of the average of the *first transformer layer* and the last layer
  (hidden_states[1] and hidden_states[-1]), as SimCSE's current code computes it.
- `avg_emb_last`: the same with the embedding layer (hidden_states[0]) instead of the first transformer
  layer. The "first-last avg." numbers in the SimCSE paper (and quoted by SDA Table 4) were produced by
  an earlier version of SimCSE's code that did this; use it to compare with those numbers.
"""
from __future__ import annotations

import torch

POOLERS = ("cls", "cls_before_pooler", "avg", "avg_top2", "avg_first_last", "avg_emb_last")
NEEDS_HIDDEN_STATES = {"avg_top2", "avg_first_last", "avg_emb_last"}


def masked_mean(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1)


def pool(name: str, outputs, attention_mask: torch.Tensor) -> torch.Tensor:
    """Pool one batch of encoder `outputs` (a transformers ModelOutput) into sentence vectors."""
    if name == "cls":
        if getattr(outputs, "pooler_output", None) is None:
            raise ValueError("pooler 'cls' needs a model with a pooler layer; use 'cls_before_pooler'")
        return outputs.pooler_output
    if name == "cls_before_pooler":
        return outputs.last_hidden_state[:, 0]
    if name == "avg":
        return masked_mean(outputs.last_hidden_state, attention_mask)
    hs = outputs.hidden_states
    if hs is None:
        raise ValueError(f"pooler '{name}' needs output_hidden_states=True")
    if name == "avg_top2":
        return masked_mean((hs[-1] + hs[-2]) / 2.0, attention_mask)
    if name == "avg_first_last":
        return masked_mean((hs[1] + hs[-1]) / 2.0, attention_mask)
    if name == "avg_emb_last":
        return masked_mean((hs[0] + hs[-1]) / 2.0, attention_mask)
    raise ValueError(f"unknown pooler '{name}'; choose from {', '.join(POOLERS)}")
