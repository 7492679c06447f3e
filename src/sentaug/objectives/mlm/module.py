"""Masked language modelling as an auxiliary objective (CLEAR; SimCSE "w/ MLM", AugCSE Table 5).

BERT's recipe: 15 % of the non-special tokens are selected; of those 80 % become the mask token, 10 % a
random token, 10 % stay as they are; the loss is cross-entropy on the selected positions only. The masked
copy is encoded by the same backbone the contrastive views use; the LM head is the one the checkpoint
ships (`AutoModelForMaskedLM`), randomly initialised where it has none: tied to the input embeddings as the
checkpoint ties it, or (the `mlm` part's `lm_head: copy`) a copy trained on its own, as SimCSE's and AugCSE's
code load it (`lm_head.load_state_dict(BertForPreTraining...cls.predictions.state_dict())` into a head that no
`tie_weights` reaches).

Masks are drawn on the host, where the ids are given (`draw`, before the step runs): which positions are
predicted is then known without waiting for the device, and only the masked ids, those positions and their
labels travel to it (`loss`).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


def mask_tokens(input_ids: torch.Tensor, special: torch.Tensor, mask_id: int, vocab_size: int,
                probability: float = 0.15, generator: torch.Generator | None = None):
    """(masked input ids, labels with -100 where nothing is predicted). `special`: bool [B, T], never selected
    (padding, [CLS], [SEP], ...). Draws come from `generator` (CPU), so masking is reproducible."""
    shape = input_ids.shape

    def draw(p: float) -> torch.Tensor:
        return torch.bernoulli(torch.full(shape, p), generator=generator).bool().to(input_ids.device)

    selected = draw(probability) & ~special
    labels = input_ids.masked_fill(~selected, -100)
    to_mask = draw(0.8) & selected
    to_random = draw(0.5) & selected & ~to_mask
    random_ids = torch.randint(vocab_size, shape, generator=generator).to(input_ids.device)
    masked = input_ids.masked_fill(to_mask, mask_id)
    masked = torch.where(to_random, random_ids, masked)
    return masked, labels


def mlm_capacity(batch_size: int, width: int, probability: float) -> int:
    """Room for the positions one MLM copy selects (`MaskedLM.draw`'s `positions`): the binomial mean plus 8
    standard deviations, rounded up to a multiple of 64 (a batch selecting more, about once in 1e15 steps, runs
    outside the graph)."""
    n = batch_size * width
    mean = n * probability
    return int(math.ceil((mean + 8 * math.sqrt(mean * (1 - probability)) + 1) / 64) * 64)


class MaskedLM(nn.Module):
    def __init__(self, lm_head: nn.Module, tokenizer, probability: float = 0.15, copies: int = 1):
        super().__init__()
        if tokenizer.mask_token_id is None:
            raise ValueError("the mlm objective needs a tokenizer with a mask token")
        self.lm_head = lm_head
        self.probability = probability
        self.copies = copies      # CLEAR's "Double MLM": the sum of the losses of two masks of each sentence
        self.mask_id, self.vocab_size = tokenizer.mask_token_id, len(tokenizer)
        self.special_ids = torch.tensor(sorted(set(tokenizer.all_special_ids)))

    def draw(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, generator: torch.Generator | None = None,
             positions: int | None = None) -> list[dict[str, torch.Tensor]]:
        """The `copies` masked copies, drawn on the host one after the other: each copy's masked ids, attention
        mask, selected positions (flat, over B x T) and their labels. With `positions`, a copy whose selection
        fits is padded to that many positions (position 0 with label -100, which the loss ignores): every step
        then has the same shapes (`sentaug.train.inputs.FixedShape`)."""
        input_ids, attention_mask = input_ids.cpu(), attention_mask.cpu()
        copies = []
        for _ in range(self.copies):
            special = torch.isin(input_ids, self.special_ids) | ~attention_mask.bool()
            masked, labels = mask_tokens(input_ids, special, self.mask_id, self.vocab_size, self.probability,
                                         generator)
            labels = labels.view(-1)
            selected = (labels != -100).nonzero().squeeze(1)
            targets = labels[selected]
            if positions is not None and 0 < len(selected) <= positions:
                room = positions - len(selected)
                selected = torch.cat([selected, selected.new_zeros(room)])
                targets = torch.cat([targets, targets.new_full((room,), -100)])
            copies.append({"input_ids": masked, "attention_mask": attention_mask, "positions": selected,
                           "targets": targets})
        return copies

    def loss(self, run_backbone, copies: list[dict[str, torch.Tensor]]) -> torch.Tensor:
        """The summed loss of drawn `copies` (on the backbone's device); `run_backbone(input_ids,
        attention_mask)` returns the backbone's outputs."""
        return sum(self._one_copy(run_backbone, **copy) for copy in copies)

    def forward(self, backbone: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                generator: torch.Generator | None = None) -> torch.Tensor:
        """The loss of `copies` independently masked copies, summed (masks drawn one copy after the other).
        `input_ids` and `attention_mask` are best given on the host (any device works)."""
        device = next(backbone.parameters()).device
        copies = [{k: v.to(device, non_blocking=True) for k, v in copy.items()}
                  for copy in self.draw(input_ids, attention_mask, generator)]
        return self.loss(lambda ids, mask: backbone(input_ids=ids, attention_mask=mask, return_dict=True), copies)

    def _one_copy(self, run_backbone, input_ids, attention_mask, positions, targets) -> torch.Tensor:
        # Only the selected positions (~15 %) go through the LM head: its vocabulary projection is most of an
        # MLM step on a small backbone, and the head acts on each position alone, so the loss is the same.
        hidden = run_backbone(input_ids, attention_mask).last_hidden_state
        logits = self.lm_head(hidden.reshape(-1, hidden.shape[-1]).index_select(0, positions))
        if len(targets) == 0:
            return logits.sum() * 0.0  # nothing selected in this batch (tiny batches): no signal, no NaN
        return F.cross_entropy(logits.float(), targets)
