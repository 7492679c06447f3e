"""DeBERTa-v2's relative positions built once per shape (sentaug.models.capturable): the same values, the same
outputs, and no host tensor copied in a later forward at that shape (what a CUDA graph capture refuses)."""
import pytest
import torch

from sentaug.models.capturable import make_capturable

deberta = pytest.importorskip("transformers.models.deberta_v2.modeling_deberta_v2")


@pytest.fixture
def patched(monkeypatch):
    """make_capturable's patch, undone after the test (monkeypatch restores the original function)."""
    monkeypatch.setattr(deberta, "build_relative_position", deberta.build_relative_position)
    assert make_capturable() == [deberta.__name__]
    return deberta.build_relative_position


def tiny_deberta():
    from transformers import DebertaV2Config, DebertaV2Model

    torch.manual_seed(0)
    config = DebertaV2Config(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                             intermediate_size=64, max_position_embeddings=64, relative_attention=True,
                             position_buckets=8, max_relative_positions=64, pos_att_type=["p2c", "c2p"],
                             norm_rel_ebd="layer_norm", share_att_key=True)
    return DebertaV2Model(config).eval()


def test_the_positions_are_the_functions_own_and_built_once_per_shape(patched):
    original = patched.unmemoized
    for q, k in [(5, 5), (12, 12), (7, 12)]:
        query, key = torch.zeros(1, q, 4), torch.zeros(1, k, 4)
        first = patched(query, key, bucket_size=8, max_position=64)
        assert torch.equal(first, original(query, key, bucket_size=8, max_position=64))
        assert patched(query, key, bucket_size=8, max_position=64) is first     # the capture reads this tensor
    # another bucket count is another key: its own positions
    query = torch.zeros(1, 12, 4)
    assert not torch.equal(patched(query, query, bucket_size=4, max_position=64),
                           patched(query, query, bucket_size=8, max_position=64))
    assert make_capturable() and deberta.build_relative_position is patched       # installed once


def test_outputs_are_unchanged_and_a_later_forward_builds_no_host_tensor(patched, monkeypatch):
    model = tiny_deberta()
    ids = torch.randint(5, 100, (3, 12))
    mask = torch.ones_like(ids)
    with torch.no_grad():
        monkeypatch.setattr(deberta, "build_relative_position", patched.unmemoized)
        expected = model(input_ids=ids, attention_mask=mask).last_hidden_state
        monkeypatch.setattr(deberta, "build_relative_position", patched)
        first = model(input_ids=ids, attention_mask=mask).last_hidden_state

        def refused(*a, **k):       # what a capture refuses: building the positions (a host tensor copied in)
            raise AssertionError("relative positions rebuilt")

        monkeypatch.setattr(deberta, "make_log_bucket_position", refused)
        again = model(input_ids=ids, attention_mask=mask).last_hidden_state
        with pytest.raises(AssertionError, match="rebuilt"):        # a new length builds its own, eagerly
            model(input_ids=ids[:, :9], attention_mask=mask[:, :9])
    assert torch.equal(first, expected) and torch.equal(again, expected)


def test_one_query_length_against_two_key_lengths_gets_the_positions_of_each(patched):
    """The key is both lengths: a query of 7 against keys of 7 and of 12 (as a decoder's or a cross-attention's
    shapes would repeat the query length) gets each pair's own positions, not the first pair's again."""
    original = patched.unmemoized
    query = torch.zeros(1, 7, 4)
    for k in (7, 12, 7):
        key = torch.zeros(1, k, 4)
        built = patched(query, key, bucket_size=8, max_position=64)
        assert built.shape == original(query, key, bucket_size=8, max_position=64).shape
        assert torch.equal(built, original(query, key, bucket_size=8, max_position=64)), k
