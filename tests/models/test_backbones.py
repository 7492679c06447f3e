"""Backbones are materialised in HF layout: random ones deterministic, package ones the real weights."""
import pytest
import torch
from safetensors.torch import load_file
from transformers import AutoModel, AutoTokenizer

from sentaug import config as sc
from sentaug.models.backbones import build_backbone

from tests.conftest import ROOT

CFG = sc.load_yaml(ROOT / "config.yaml")


@pytest.mark.parametrize("name, arch, vocab", [("tiny-bert", "bert", 30522), ("tiny-roberta", "roberta", 1754)])
def test_random_backbones_are_deterministic_and_sized_from_config(tmp_path, name, arch, vocab):
    spec = CFG["backbones"][name]
    build_backbone(name, spec, tmp_path / "a")
    build_backbone(name, spec, tmp_path / "b")
    a, b = load_file(str(tmp_path / "a/model.safetensors")), load_file(str(tmp_path / "b/model.safetensors"))
    assert all(torch.equal(a[k], b[k]) for k in a)
    model = AutoModel.from_pretrained(tmp_path / "a")
    tok = AutoTokenizer.from_pretrained(tmp_path / "a")
    assert model.config.model_type == arch
    layers, hidden = spec["size"]["layers"], spec["size"]["hidden"]
    assert (model.config.num_hidden_layers, model.config.hidden_size) == (layers, hidden)
    assert model.config.vocab_size == len(tok) == vocab
    ids = tok("The river flows north.")["input_ids"]
    assert tok.unk_token_id not in ids and model(torch.tensor([ids])).last_hidden_state.shape[-1] == hidden


def test_package_backbone_is_the_shipped_minilm(tmp_path, minilm_path):
    build_backbone("minilm", CFG["backbones"]["minilm"], tmp_path / "m")
    ours = load_file(str(tmp_path / "m/model.safetensors"))
    shipped = AutoModel.from_pretrained(minilm_path).state_dict()
    assert ours.keys() <= shipped.keys() and all(torch.equal(ours[k], shipped[k]) for k in ours)



def test_a_backbone_records_its_origin_without_the_folder_it_was_installed_in(tmp_path):
    """backbone_source.json names packages and bundled tokenizers, not their install paths: the same backbone built
    in another environment (envs/train.yaml's venv) is the same files."""
    import json
    from importlib.metadata import version

    build_backbone("tiny-bert", CFG["backbones"]["tiny-bert"], tmp_path / "b")
    build_backbone("tiny-roberta", CFG["backbones"]["tiny-roberta"], tmp_path / "r")
    build_backbone("minilm", CFG["backbones"]["minilm"], tmp_path / "m")
    read = lambda d: json.loads((tmp_path / d / "backbone_source.json").read_text())
    package = CFG["backbones"]["tiny-bert"]["tokenizer"].split(":")[1]
    assert read("b")["tokenizer"] == {"ref": f"package:{package}", "package": package,
                                      "version": version(package.replace("_", "-"))}
    assert read("r")["tokenizer"] == {"ref": CFG["backbones"]["tiny-roberta"]["tokenizer"],
                                      "bundled": CFG["backbones"]["tiny-roberta"]["tokenizer"].split(":")[1]}
    assert "loaded_from" not in read("m") and read("m")["package"] == CFG["backbones"]["minilm"]["package"]

def test_hub_backbone_offline_fails_with_a_clear_message(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("SENTAUG_MODEL_MIRROR", raising=False)
    with pytest.raises(FileNotFoundError, match="put the model folder in the model mirror as bert-base-uncased/"):
        build_backbone("bert-base-uncased", CFG["backbones"]["bert-base-uncased"], tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_mirror_tokenizer_missing_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("SENTAUG_MODEL_MIRROR", raising=False)
    with pytest.raises(FileNotFoundError, match=r"SENTAUG_MODEL_MIRROR to a folder holding roberta-base-tokenizer/"):
        build_backbone("tiny-roberta-bpe", CFG["backbones"]["tiny-roberta-bpe"], tmp_path / "x")


def test_random_seq2seq_stand_in_is_deterministic_and_generates(tmp_path):
    """tiny-bart (AugCSE's seq2seq stand-in) keeps its LM head: it reloads as a generation model."""
    from transformers import AutoModelForSeq2SeqLM

    spec = CFG["backbones"]["tiny-bart"]
    build_backbone("tiny-bart", spec, tmp_path / "a")
    build_backbone("tiny-bart", spec, tmp_path / "b")
    a, b = load_file(str(tmp_path / "a/model.safetensors")), load_file(str(tmp_path / "b/model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    model = AutoModelForSeq2SeqLM.from_pretrained(tmp_path / "a").eval()
    tok = AutoTokenizer.from_pretrained(tmp_path / "a")
    assert model.config.model_type == "bart" and model.config.d_model == spec["size"]["hidden"]
    assert (model.config.encoder_layers, model.config.vocab_size) == (spec["size"]["layers"], len(tok))
    out = model.generate(**tok(["The river flows north."], return_tensors="pt"), max_new_tokens=5)
    assert out.shape[0] == 1 and 2 <= out.shape[1] <= 7      # decoder start + up to 5 new (+ forced eos)
