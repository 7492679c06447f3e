"""InfoNCE against a hand computation."""
import math

import torch

from sentaug.objectives.infonce.module import InfoNCE


def test_infonce_matches_hand_computation():
    z1 = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    z2 = torch.tensor([[2.0, 0.0], [1.0, 1.0]])  # norms differ: cosine, not dot product
    # cos matrix: [[1, 1/sqrt2], [0, 1/sqrt2]]; tau = 0.5 doubles it.
    r = math.sqrt(2)
    row0 = -math.log(math.exp(2) / (math.exp(2) + math.exp(r)))
    row1 = -math.log(math.exp(r) / (math.exp(0) + math.exp(r)))
    assert math.isclose(InfoNCE(0.5)(z1, z2).item(), (row0 + row1) / 2, rel_tol=1e-6)


def test_infonce_extra_negatives_add_a_column_block():
    z1 = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    z2 = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    neg = torch.tensor([[0.0, 3.0], [-1.0, 0.0]])
    # row 0 logits (tau=1): [1, 1/sqrt2 | 0, -1]; row 1: [0, 1/sqrt2 | 1, 0]
    r = 1 / math.sqrt(2)
    row0 = -math.log(math.e / (math.e + math.exp(r) + 1 + math.exp(-1)))
    row1 = -math.log(math.exp(r) / (1 + math.exp(r) + math.e + 1))
    assert math.isclose(InfoNCE(1.0)(z1, z2, neg).item(), (row0 + row1) / 2, rel_tol=1e-6)


def test_infonce_is_one_directional():
    """SimCSE's unsupervised loss uses rows (anchors) only: swapping the views changes the value."""
    z1 = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    z2 = torch.tensor([[1.0, 0.2], [0.3, 1.0], [0.0, 1.0]])
    loss = InfoNCE(0.05)
    assert not math.isclose(loss(z1, z2).item(), loss(z2, z1).item(), rel_tol=1e-3)
