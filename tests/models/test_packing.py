"""Texts packed into rows (sentaug.models.packing): the rows' layout against a hand-worked example, and the
encoder's outputs from packed rows against the padded batch's, for BERT and RoBERTa (whose positions start after
the padding index), every pooler, forward and backward."""
import pytest
import torch
from transformers import BertConfig, BertModel, RobertaConfig, RobertaModel

from sentaug.models.encoder import SentenceEncoder
from sentaug.models.packing import assign_rows, block_mask, first_position, pack, packable, row_quantum


def test_best_fit_decreasing_places_each_text_in_the_fullest_row_with_room():
    # rows of 10; by length: 6 (text 0) opens row 0 (room 4), 5 (text 2) opens row 1 (room 5), 4 (text 1) fits
    # row 0 exactly (the fullest with room), 3 (text 3) goes to row 1 (room 2 left), 2 (text 4) fills row 1
    assert assign_rows([6, 4, 5, 3, 2], row=10) == [(0, 0), (0, 6), (1, 0), (1, 5), (1, 8)]


def test_packed_rows_of_a_small_batch_written_out():
    pad = 0
    ids = torch.tensor([[11, 12, 13, pad], [21, 22, pad, pad], [31, 32, 33, 34]])
    mask = (ids != pad).long()
    # rows of 6: 4 tokens (text 2) open row 0, 3 (text 0) open row 1, 2 (text 1) fill row 0; RoBERTa-style first
    # position 2; one row more than needed would be kept only with a quantum of 3 (2 rows -> 3)
    p = pack(ids, mask, pad, first=2, row=6, quantum=1)
    assert p["pack_ids"].tolist() == [[31, 32, 33, 34, 21, 22], [11, 12, 13, pad, pad, pad]]
    assert p["pack_positions"].tolist() == [[2, 3, 4, 5, 2, 3], [2, 3, 4, 2, 2, 2]]
    assert p["pack_segments"].tolist() == [[2, 2, 2, 2, 1, 1], [0, 0, 0, -1, -1, -1]]
    # each text's tokens in the flattened rows; padding positions point at the text's first token
    assert p["pack_index"].tolist() == [[6, 7, 8, 6], [4, 5, 4, 4], [0, 1, 2, 3]]
    assert pack(ids, mask, pad, first=2, row=6, quantum=3)["pack_ids"].shape == (3, 6)
    m = block_mask(p["pack_segments"])
    assert m.shape == (2, 1, 6, 6)
    assert m[0, 0, 4].tolist() == [False, False, False, False, True, True]      # text 1 sees itself only
    assert m[1, 0, 3].tolist() == [False, False, False, True, True, True]       # padding sees the row's padding


def test_row_counts_are_rounded_to_about_four_percent_of_the_padded_rows():
    assert row_quantum(128, 32) == 2          # BERT b64: 128 texts of 32 would fill 32 rows of 128
    assert row_quantum(1024, 32) == 11        # RoBERTa b512: 256 rows
    assert row_quantum(16, 32) == 1


def tiny(arch: str):
    torch.manual_seed(0)
    common = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                  hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, pad_token_id=1)
    if arch == "roberta":
        return RobertaModel(RobertaConfig(max_position_embeddings=40, type_vocab_size=1, **common))
    return BertModel(BertConfig(max_position_embeddings=40, **common))


@pytest.mark.parametrize("arch", ["bert", "roberta"])
@pytest.mark.parametrize("pooler", ["cls", "avg", "avg_first_last"])
def test_packed_rows_encode_as_the_padded_batch_forward_and_backward(arch, pooler):
    backbone = tiny(arch)
    assert packable(backbone) and first_position(backbone) == (2 if arch == "roberta" else 0)
    encoder = SentenceEncoder(backbone, pooler=pooler).train()       # dropout 0: both deterministic
    g = torch.Generator().manual_seed(1)
    lengths = torch.randint(3, 17, (12,), generator=g)
    mask = (torch.arange(16)[None] < lengths[:, None]).long()
    ids = torch.randint(5, 99, (12, 16), generator=g) * mask + 1 * (1 - mask)
    packed = pack(ids, mask, 1, first_position(backbone), row=32)
    assert packed["pack_ids"].numel() < ids.numel()

    def run(**kw):
        encoder.zero_grad()
        z = encoder(ids if not kw else None, mask, **kw)
        (z.square().sum() + z[0] @ z[1]).backward()
        return z.detach(), {n: p.grad.clone() for n, p in encoder.named_parameters() if p.grad is not None}

    (z_pad, g_pad), (z_pack, g_pack) = run(), run(packed=packed)
    torch.testing.assert_close(z_pack, z_pad, rtol=1e-5, atol=1e-6)
    assert g_pack.keys() == g_pad.keys()
    for name, grad in g_pad.items():
        assert torch.linalg.vector_norm(g_pack[name] - grad) <= 1e-5 * torch.linalg.vector_norm(grad) + 1e-9, name
