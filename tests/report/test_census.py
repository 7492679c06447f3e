"""Augmentation census: cache stats with token lengths, cosine under a backbone, the table; CARDS Table 1."""
import json

import numpy as np
import pandas as pd
import pytest
import torch
from transformers import AutoModel, AutoTokenizer, BertConfig, BertModel

from sentaug.augment.cache import build_cache
from sentaug.report.census import embedding_stats, render_census
from sentaug.report.tables import table_rows


@pytest.fixture()
def backbone(tmp_path, minilm_path):
    tok = AutoTokenizer.from_pretrained(minilm_path)
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=64)).save_pretrained(tmp_path / "bb")
    tok.save_pretrained(tmp_path / "bb")
    return str(tmp_path / "bb")


def test_cache_stats_record_word_and_token_length_change(tmp_path, minilm_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat\nthe dog ran\n\n")
    stats = build_cache("word_deletion", corpus, tmp_path / "x.parquet", seed=1, params={"ratio": 0.5},
                        tokenizer=minilm_path)
    # line 1: 6 words -> 3 deleted; line 2: 3 words -> round(1.5) = 2 deleted; empty line: untouched
    assert stats["n"] == 3 and stats["n_changed"] == 2
    assert stats["mean_token_edit_distance"] == pytest.approx((3 + 2) / 3, abs=1e-6)
    assert stats["mean_length_change"] == pytest.approx(-(3 + 2) / 3, abs=1e-6)
    # every word here is one WordPiece token, so tokens change as words do
    assert stats["tokens"]["mean_length_change_tokens"] == pytest.approx(-(3 + 2) / 3, abs=1e-6)
    assert json.loads((tmp_path / "x.json").read_text())["tokens"] == stats["tokens"]


def test_embedding_stats_match_a_hand_computed_mean_pooled_cosine(tmp_path, backbone):
    orig = ["the cat sat on the mat", "a dog ran home", "rain fell", ""]
    aug = ["the cat sat on mat", "a dog ran home", "rain fell all night long", ""]
    pd.DataFrame({"original": orig, "augmented": aug, "changed": [o != a for o, a in zip(orig, aug)],
                  "flag": ["", "", "", "empty"]}).to_parquet(tmp_path / "c.parquet")
    res = embedding_stats(tmp_path / "c.parquet", backbone, tmp_path / "e.json", max_lines=None)

    tok, model = AutoTokenizer.from_pretrained(backbone), AutoModel.from_pretrained(backbone).eval()

    def mean_pooled(s):
        enc = tok(s, return_tensors="pt")
        with torch.no_grad():
            return model(**enc).last_hidden_state[0].mean(0)

    cos = [torch.nn.functional.cosine_similarity(mean_pooled(o), mean_pooled(a), dim=0).item()
           for o, a in zip(orig[:3], aug[:3])]
    assert res["n_cosine"] == 3 and res["n_cosine_changed"] == 2
    assert res["cosine"] == pytest.approx(np.mean(cos), abs=1e-5)
    assert res["cosine_changed"] == pytest.approx((cos[0] + cos[2]) / 2, abs=1e-5)
    assert cos[1] == pytest.approx(1.0, abs=1e-6)
    assert res["mean_length_change_tokens"] == pytest.approx((-1 + 0 + 3 + 0) / 4)


def test_token_level_caches_get_no_cosine(tmp_path, backbone):
    from sentaug.models.token_sequences import encode_tokens

    pd.DataFrame({"original": ["a b", "c d"], "augmented": [encode_tokens(["a", "b"]), "c d"],
                  "changed": [True, False], "flag": ["", ""]}).to_parquet(tmp_path / "t.parquet")
    res = embedding_stats(tmp_path / "t.parquet", backbone, tmp_path / "t.json")
    assert res["cosine"] is None and res["mean_length_change_tokens"] is None and res["token_level_lines"] == 1


def test_census_table_from_stats_files(tmp_path):
    rows = {}
    for name, share, cos in (("aug_a", 50.0, 0.9), ("aug_b", 12.5, None)):
        s, e = tmp_path / f"{name}.json", tmp_path / f"{name}.emb.json"
        s.write_text(json.dumps({"augmentation": "op", "family": "fam", "params": {"p": 1}, "seed": 1, "n": 8,
                                 "share_changed": share, "mean_token_edit_distance": 0.25,
                                 "mean_length_change": -0.5}))
        e.write_text(json.dumps({"mean_length_change_tokens": -0.75, "cosine": cos, "cosine_changed": cos,
                                 "n_cosine": 8}))
        rows[name] = {"stats": str(s), "embedding": str(e)}
    # conformance of "op" (the registry op both rows use): 7 of 8 cases against NL-Augmenter's tense cases
    conf = tmp_path / "conformance.json"
    conf.write_text(json.dumps({"augmentations": {"op": {
        "reference": "GEM-benchmark/NL-Augmenter:nlaugmenter/transformations/tense/test.json@b64a8efebd84",
        "n": 8, "agree": 7, "agreement": 87.5, "params": {}, "note": ""}}}))
    out = tmp_path / "t" / "augmentations.tex"
    render_census(json.dumps({"rows": rows, "conformance": str(conf),
                              "meta": {"corpus": "c", "seed": 1, "backbone": "bb"}}), out, "demo")
    csv = pd.read_csv(out.with_suffix(".csv"))
    assert csv["share_changed"].tolist() == [50.0, 12.5]
    assert csv["cosine"].iloc[0] == 0.9 and np.isnan(csv["cosine"].iloc[1])
    assert csv["agreement"].tolist() == [87.5, 87.5] and csv["reference"].tolist() == ["NL-Augmenter tense"] * 2
    tex = out.read_text()
    assert r"aug\_a & fam & 50.00 & 0.250 & -0.500 & -0.750 & 0.900 & 0.900 & 87.5 (7/8) & NL-Augmenter tense \\" in tex
    assert r"aug\_b & fam & 12.50 & 0.250 & -0.500 & -0.750 & -- & -- & 87.5 (7/8) & NL-Augmenter tense \\" in tex
    render_census(json.dumps({"rows": rows}), out, "demo")                      # without conformance: "--"
    assert r"-0.750 & 0.900 & 0.900 & -- & -- \\" in out.read_text()
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(ValueError, match="bad.json"):
        render_census(json.dumps({"rows": {"x": {"stats": str(bad), "embedding": str(bad)}}}), out, "demo")


def test_share_table_reads_one_augmentation_per_column(tmp_path):
    """SDA Table 3: "<row>/<column>" inputs give each column its own caches (means over two seeds by hand)."""
    files = {}
    for name, share in (("pa1", 60.0), ("pa2", 64.0), ("rc1", 90.0), ("rc2", 91.0)):
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(json.dumps({"share_changed": share}))
    paper = {"tables": {"table3": {"kind": "augmentation_share", "caption": "c", "columns": ["Paper", "Code"],
                                   "rows": [{"label": "PI", "augmentation": ["a", "b"], "paper": [62.61, 62.61]}]}}}
    recs = table_rows(paper, "table3", {"0/Paper": [str(files["pa1"]), str(files["pa2"])],
                                        "0/Code": [str(files["rc1"]), str(files["rc2"])]})
    assert [(r["column"], r["reproduced"], r["diff"]) for r in recs] == [("Paper", 62.0, -0.61), ("Code", 90.5, 27.89)]


def test_cards_table1_rows_read_the_effect_percentages(tmp_path):
    result = tmp_path / "effects.json"
    result.write_text(json.dumps({"percent": {"substitution/lower_to_upper": 70.5, "division/lower_to_upper": 5.0}}))
    paper = {"tables": {"table1": {"kind": "tokenization_effects", "caption": "c", "columns": ["Percentage"],
                                   "rows": [{"label": "S", "effect": "substitution/lower_to_upper", "paper": [69.9]},
                                            {"label": "D", "effect": "division/lower_to_upper", "paper": [6.2]}]}}}
    recs = table_rows(paper, "table1", {"0": [str(result)], "1": [str(result)]})
    assert [(r["reproduced"], r["diff"]) for r in recs] == [(70.5, 0.6), (5.0, -1.2)]
