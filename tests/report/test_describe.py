"""Tables that are configuration (AugCSE Tables 3, 10, 11, 13): parameter counts of the modules the trainer
builds, against BERT-base's and RoBERTa-base's published sizes and a count written out by hand; the table kinds
that read `sentaug describe` JSON."""
import json

import pytest
import yaml
from transformers import BertConfig, RobertaConfig

from sentaug import config as sc
from sentaug.report.describe import describe_spec_cli, model_sizes
from sentaug.report.tables import render_table
from tests.train.test_methods_train import CONFIG


def paper_spec(method: str, backbone: str = "bert-base-uncased") -> dict:
    return sc.train_spec(CONFIG, None, backbone, method, 42, scale="paper")


def test_bert_base_has_110m_parameters_and_augcse_adds_its_projector_and_discriminator(tmp_path):
    BertConfig().save_pretrained(tmp_path)          # transformers' defaults are bert-base-uncased's config
    sizes = model_sizes(paper_spec("augcse"), tmp_path)
    # embeddings (30522 + 512 + 2) x 768 + LayerNorm; 12 layers of 4 (768 x 768 + 768) attention, 2 LayerNorms,
    # 768 x 3072 + 3072 + 3072 x 768 + 768 feed-forward; the pooler 768 x 768 + 768
    layer = 4 * (768 * 768 + 768) + 2 * 2 * 768 + 768 * 3072 + 3072 + 3072 * 768 + 768
    bert = (30522 + 512 + 2) * 768 + 2 * 768 + 12 * layer + 768 * 768 + 768
    assert sizes["inference"] == sizes["parts"]["backbone"] == bert == 109_482_240      # "110M" (Table 13)
    # DiffCSE's projector: 768 -> 1536 (no bias), BatchNorm (affine), 1536 -> 768 (no bias), BatchNorm (no affine)
    projector = 768 * 1536 + 2 * 1536 + 1536 * 768
    # the discriminator over [z; z_aug]: 1536 -> 1536 -> 9 classes (8 augmentations + "unchanged")
    discriminator = 1536 * 1536 + 1536 + 1536 * 9 + 9
    assert sizes["parts"] == {"backbone": bert, "head": projector, "discriminator": discriminator}
    assert sizes["train"] == bert + projector + discriminator


def test_roberta_base_has_125m_parameters(tmp_path):
    # roberta-base's config.json: vocab 50265, 514 positions, one token type, otherwise BERT-base's shape
    RobertaConfig(vocab_size=50265, max_position_embeddings=514, type_vocab_size=1).save_pretrained(tmp_path)
    sizes = model_sizes(paper_spec("simcse", "roberta-base"), tmp_path)
    assert sizes["inference"] == 124_645_632                                            # "125M" (Table 13)
    assert sizes["parts"]["head"] == 768 * 768 + 768 and sizes["train"] == 124_645_632 + 768 * 768 + 768


def write_spec(root, scale, backbone, method, spec):
    path = root / "describe" / scale / "shared" / backbone / method / "spec.json"
    describe_spec_cli(spec, str(path))
    return str(path)


def test_configuration_tables_read_the_resolved_specs(tmp_path):
    """Tables 3 and 10 rendered from `sentaug describe spec` files of real config.yaml specs."""
    paper = yaml.safe_load((__import__("pathlib").Path(__file__).parents[2] / "papers/augcse.yaml").read_text())
    paper["tables"] = {k: paper["tables"][k] for k in ("table3", "table10")}
    (tmp_path / "augcse.yaml").write_text(yaml.safe_dump(paper))
    spec = {m: sc.train_spec(CONFIG, None, "bert-base-uncased", m, 1, scale="demo")
            for m in ("augcse_aug4", "augcse", "augcse_aug12", "augcse_aug16")}
    files = {m: write_spec(tmp_path, "demo", "tiny-bert", m, s) for m, s in spec.items()}
    rows = list(sc.iter_rows(paper["tables"]["table3"]))
    inputs = {"rows": {str(i): [files] for i in range(len(rows))}}
    render_table(str(tmp_path / "augcse.yaml"), "table3", json.dumps(inputs), str(tmp_path / "t3.tex"), "demo")
    import pandas as pd

    t3 = pd.read_csv(tmp_path / "t3.csv")
    got = t3.pivot_table(index="row", columns="column", values="reproduced")
    for m, s in spec.items():
        assert set(got.index[got[m] == 1]) == set(s["augmented_view"])
    # where the paper's markup decides, the config's sets agree with it
    decided = t3.dropna(subset=["paper"])
    assert (decided["reproduced"] == decided["paper"]).all()
    roberta = write_spec(tmp_path, "demo", "tiny-roberta", "augcse",
                         sc.train_spec(CONFIG, None, "roberta-base", "augcse", 1, scale="demo"))
    inputs = {"rows": {"0": [{"bert-base-uncased": files["augcse"], "roberta-base": roberta}]} | {
        "1": [{"bert-base-uncased": files["augcse"], "roberta-base": roberta}]}}
    render_table(str(tmp_path / "augcse.yaml"), "table10", json.dumps(inputs), str(tmp_path / "t10.tex"), "demo")
    t10 = pd.read_csv(tmp_path / "t10.csv").set_index(["row", "column"])
    assert t10.loc[("lambda", "roberta-base"), "reproduced"] == 0.005                  # below paper scale
    assert t10.loc[("learning rate", "bert-base-uncased"), "reproduced"] == CONFIG["scales"]["demo"]["train"][
        "learning_rate"]
    assert t10.loc[("lambda", "roberta-base"), "diff"] == pytest.approx(0.005 - 1e-4)
    tex = (tmp_path / "t10.tex").read_text()
    assert "Method & BERT-base & RoBERTa-base" in tex and r"\quad paper & 0.005 & 0.0001 \\" in tex


def test_model_size_table_reports_millions(tmp_path):
    """Table 13 from `describe model-size` JSON: parameters / 1e6, one decimal, beside the paper's 117M / 110M."""
    paper = yaml.safe_load((__import__("pathlib").Path(__file__).parents[2] / "papers/augcse.yaml").read_text())
    paper["tables"] = {"table13": paper["tables"]["table13"]}
    (tmp_path / "augcse.yaml").write_text(yaml.safe_dump(paper))
    files = []
    for name, (train, inference) in {"bert": (114_219_273, 109_482_240), "roberta": (129_382_665, 124_645_632)}.items():
        files.append(tmp_path / f"{name}.json")
        files[-1].write_text(json.dumps({"train": train, "inference": inference}))
    inputs = {"rows": {"0": [str(files[0])], "1": [str(files[1])]}}
    render_table(str(tmp_path / "augcse.yaml"), "table13", json.dumps(inputs), str(tmp_path / "t.tex"), "paper")
    import pandas as pd

    t13 = pd.read_csv(tmp_path / "t.csv").set_index(["row", "column"])
    assert t13.loc[("AugCSE-BERT", "train"), ["reproduced", "paper", "diff"]].tolist() == [114.2, 117, -2.8]
    assert t13.loc[("AugCSE-RoBERTa", "inference"), "reproduced"] == 124.6
    assert r"AugCSE-BERT (n=1) & 114.2 & 109.5 \\" in (tmp_path / "t.tex").read_text()
