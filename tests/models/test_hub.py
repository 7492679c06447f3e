"""Hub models pinned like the data: config.yaml's `revision:` of each hub backbone (validated as a 40-hex commit,
with the public file it was read from), passed as from_pretrained's `revision=` by one helper (`sentaug.models.hub`)
to hub ids only, recorded in the backbone folder, a run's train_summary.json and the results that score a model;
the workflow names each hub model a scale loads unpinned. Offline: the hub is faked."""
import json
import subprocess
import sys

import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from sentaug import config as sc
from sentaug.models import hub
from sentaug.models.backbones import MIRROR_HUB_IDS, build_backbone, load_tokenizer
from tests.conftest import ROOT
from tests.train.test_train import setup  # noqa: F401 (the fixture of a tiny training run)

PIN = "86b5e0934494bd15c9632b12f734a8a67f723594"
# The four hub models no public pin was found for (docs/data.md, Pinned models): what the check names.
UNPINNED_AT_PAPER = {"microsoft/deberta-v2-xxlarge", "facebook/wmt19-en-de", "facebook/wmt19-de-en",
                     "prithivida/informal_to_formal_styletransfer"}


class Recorded:
    """A stand-in for a transformers class: records each from_pretrained call, returns `value`."""

    def __init__(self, value=None):
        self.calls, self.value = [], value

    def from_pretrained(self, ref, **kwargs):
        self.calls.append((str(ref), kwargs))
        return self.value


@pytest.mark.parametrize("revision", ["main", "86b5e09", PIN.upper(), PIN + "0", 42])
def test_the_schema_refuses_a_revision_that_is_not_a_40_hex_commit(cfg, revision):
    cfg["backbones"]["bert-base-uncased"]["revision"] = revision
    with pytest.raises(sc.ConfigError, match=r"config key 'backbones\.bert-base-uncased\.revision'"):
        sc.validate(cfg)


def test_a_revision_pins_hub_models_only(cfg):
    cfg["backbones"]["tiny-bert"]["revision"] = PIN
    with pytest.raises(sc.ConfigError, match="'backbones.tiny-bert.revision': a revision pins a hub model"):
        sc.validate(cfg)


def test_every_hub_model_at_paper_scale_is_pinned_with_its_source_or_named_by_the_check(shipped_config):
    models = sc.hub_models(shipped_config, "paper")
    # the backbones, the augmentations' and analyses' models (translation, style, masked LM, SBERT, GPT-2)
    assert {"bert-base-uncased", "roberta-base", "roberta-large", "deberta-v2-xxlarge", "chinese-roberta-wwm-ext",
            "wmt19-en-de", "wmt19-de-en", "styleformer-casual2formal", "all-mpnet-base-v2", "gpt2"} <= set(models)
    assert shipped_config["scales"]["paper"]["masked_lm"] in models
    lines = sc.unpinned_lines(shipped_config, "paper")
    for name, entry in models.items():
        if entry.get("revision"):
            assert hub.REVISION.match(entry["revision"])
            assert entry["revision_source"].startswith("https://github.com/"), name
        else:
            assert "revision" in entry, f"{name}: unpinned without saying so (revision: null)"
            assert [line for line in lines if f" {entry['id']} " in line], name
    assert {hub_id for _, hub_id in sc.unpinned(shipped_config, "paper")} == UNPINNED_AT_PAPER
    assert len(lines) == len(UNPINNED_AT_PAPER)
    # below paper scale every hub model but the perplexity LM (pinned) has a stand-in: nothing to name
    assert all(sc.unpinned_lines(shipped_config, s) == [] for s in ("demo", "small", "gpu"))


def test_the_mirror_tokenizers_hub_fallback_is_pinned_as_config_pins_its_repository(shipped_config):
    pins = {b["id"]: b.get("revision") for b in shipped_config["backbones"].values() if b["source"] == "hub"}
    for ref in MIRROR_HUB_IDS.values():
        hub_id, revision = hub.split_ref(ref)
        assert revision == pins.get(hub_id)


def test_the_helper_passes_the_revision_to_hub_ids_only(tmp_path):
    cls = Recorded()
    hub.from_pretrained(cls, "bert-base-uncased", PIN)
    hub.from_pretrained(cls, f"bert-base-uncased@{PIN}")                  # the pin carried by the reference
    hub.from_pretrained(cls, "sentence-transformers/all-mpnet-base-v2", None)   # unpinned: the hub's default
    hub.from_pretrained(cls, str(tmp_path), PIN)                          # a local folder takes no revision
    (tmp_path / "bert-base-uncased").mkdir()
    hub.from_pretrained(cls, str(tmp_path / "bert-base-uncased"), PIN)    # nor a mirror's folder of that name
    assert cls.calls == [("bert-base-uncased", {"revision": PIN}), ("bert-base-uncased", {"revision": PIN}),
                         ("sentence-transformers/all-mpnet-base-v2", {}), (str(tmp_path), {}),
                         (str(tmp_path / "bert-base-uncased"), {})]
    with pytest.raises(ValueError, match="pinned to"):
        hub.from_pretrained(cls, f"bert-base-uncased@{PIN}", "0" * 40)
    with pytest.raises(ValueError, match="not a 40-hex commit"):
        hub.from_pretrained(cls, "bert-base-uncased", "main")


@pytest.fixture()
def fake_hub(monkeypatch, minilm_path):
    """AutoTokenizer/AutoModel.from_pretrained recording their calls; a hub id gets a small random BERT with
    MiniLM's tokenizer (no network), a folder loads as it is."""
    real_tok, real_model = AutoTokenizer.from_pretrained, AutoModel.from_pretrained
    calls = []

    def tokenizer(ref, **kw):
        calls.append(("tokenizer", str(ref), kw))
        return real_tok(minilm_path if hub.is_hub_id(ref) else ref)

    def model(ref, **kw):
        calls.append(("model", str(ref), kw))
        if not hub.is_hub_id(ref):
            return real_model(ref)
        from transformers import BertConfig, BertModel

        torch.manual_seed(0)
        return BertModel(BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                    intermediate_size=64))

    monkeypatch.setattr(AutoTokenizer, "from_pretrained", tokenizer)
    monkeypatch.setattr(AutoModel, "from_pretrained", model)
    monkeypatch.delenv("SENTAUG_MODEL_MIRROR", raising=False)
    return calls


def test_a_hub_backbone_loads_at_its_pin_and_its_folder_records_it(tmp_path, shipped_config, fake_hub):
    spec = shipped_config["backbones"]["bert-base-uncased"]
    build_backbone("bert-base-uncased", spec, tmp_path / "bb")
    assert fake_hub == [("tokenizer", "bert-base-uncased", {"revision": spec["revision"]}),
                        ("model", "bert-base-uncased", {"revision": spec["revision"]})]
    source = json.loads((tmp_path / "bb" / hub.SOURCE_FILE).read_text())
    assert source == {"name": "bert-base-uncased", "source": "hub", "id": "bert-base-uncased",
                      "revision": spec["revision"], "pinned_revision": spec["revision"], "loaded_from": "hub"}
    assert hub.model_source(tmp_path / "bb") == source


def test_a_mirror_folder_loads_as_it_is_without_a_revision(tmp_path, shipped_config, fake_hub):
    mirror = tmp_path / "mirror"
    build_backbone("x", {"source": "hub", "id": "bert-base-uncased", "revision": PIN}, mirror / "bert-base-uncased")
    fake_hub.clear()
    build_backbone("bert-base-uncased", shipped_config["backbones"]["bert-base-uncased"], tmp_path / "bb",
                   model_mirror=str(mirror))
    assert [kw for _, _, kw in fake_hub] == [{}, {}]
    source = json.loads((tmp_path / "bb" / hub.SOURCE_FILE).read_text())
    assert source["loaded_from"] == str((mirror / "bert-base-uncased").resolve()) and source["revision"] is None
    assert source["pinned_revision"] == PIN


def test_a_mirror_tokenizer_from_the_hub_is_pinned(monkeypatch, fake_hub):
    monkeypatch.delenv("HF_HUB_OFFLINE")
    load_tokenizer("mirror:bert-base-uncased-tokenizer")
    assert fake_hub == [("tokenizer", "bert-base-uncased", {"revision": PIN})]


def test_evaluate_model_fetches_a_hub_id_at_its_pin_and_its_results_record_it(tmp_path, monkeypatch):
    import huggingface_hub

    from sentaug.evaluate.embeddings import run_metadata
    from sentaug.models.model_folder import resolve_model

    snapshot = tmp_path / "hub" / "models--owner--model" / "snapshots" / PIN
    snapshot.mkdir(parents=True)
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        (snapshot / name).write_text("{}")
    asked = []

    def download(repo, **kw):
        asked.append((repo, kw.get("revision")))
        return str(snapshot)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", download)
    folder = resolve_model(f"owner/model@{PIN}")
    assert asked == [("owner/model", PIN)] and folder.revision == PIN and folder.name == "owner__model"
    expected = {"source": "hub", "id": "owner/model", "revision": PIN, "loaded_from": "hub"}
    assert run_metadata(folder.path, "avg", tmp_path, None, 0.0)["model_source"] == expected


@pytest.mark.parametrize("lm", ["gpt2", f"gpt2@{'6' * 40}"])
def test_the_perplexity_lm_loads_at_its_pin(monkeypatch, lm):
    from transformers import AutoModelForCausalLM

    from sentaug.evaluate.analysis import load_causal_lm

    calls = []
    monkeypatch.setattr(AutoTokenizer, "from_pretrained", lambda ref, **kw: calls.append((ref, kw)))
    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained",
                        lambda ref, **kw: calls.append((ref, kw)) or torch.nn.Linear(1, 1))
    load_causal_lm(lm, "cpu")
    assert calls == [("gpt2", {"revision": lm.partition("@")[2]} if "@" in lm else {})] * 2


def test_the_workflow_passes_gpt2_pinned(shipped_config):
    text = (ROOT / "rules" / "common.smk").read_text()
    assert "--lm {_LM['id']}" in text and shipped_config["backbones"]["gpt2"]["revision"]


def test_a_run_records_the_backbone_it_started_from(setup, minilm_path):
    from sentaug.evaluate.embeddings import run_metadata
    from sentaug.train.trainer import train
    from tests.train.test_train import spec, write_backbone

    root, corpus, cache = setup
    backbone = write_backbone(root / "bb", minilm_path, dropout=0.0)
    source = {"name": "bert-base-uncased", "source": "hub", "id": "bert-base-uncased", "revision": PIN,
              "pinned_revision": PIN, "loaded_from": "hub"}
    (root / "bb" / hub.SOURCE_FILE).write_text(json.dumps(source))
    train(spec(), corpus, cache, backbone, str(root / "data"), str(root / "run"))
    summary = json.loads((root / "run" / "train_summary.json").read_text())
    assert summary["backbone_source"] == source
    assert run_metadata(root / "run", "avg", root, None, 0.0)["model_source"] == {"trained_from": source}


def test_a_paper_scale_dry_run_names_each_unpinned_model_once():
    """The Snakefile's check, at the start of the workflow (below paper scale it names none: see above)."""
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "results/backbones/bert-base-uncased",
                           "--config", "scale=paper"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    named = [line for line in proc.stderr.splitlines() if line.startswith("sentaug: unpinned hub model ")]
    assert sorted(line.split()[4] for line in named) == sorted(UNPINNED_AT_PAPER)


def test_the_outputs_provenance_names_the_models_commits(tmp_path):
    from sentaug.report.provenance import collect

    pinned = {"source": "hub", "id": "bert-base-uncased", "revision": PIN, "loaded_from": "hub"}
    run = tmp_path / "run"
    run.mkdir()
    (run / "train_summary.json").write_text(json.dumps({"spec": {}, "backbone_source": pinned}))
    scored = tmp_path / "sts.json"
    scored.write_text(json.dumps({"model": str(run), "model_source": {"trained_from": pinned},
                                  "versions": {"torch": "x"}}))
    unpinned = tmp_path / "glue.json"
    unpinned.write_text(json.dumps({"model": "m", "model_source": {**pinned, "id": "microsoft/deberta-v2-xxlarge",
                                                                    "revision": None}}))
    info = collect([str(scored), str(unpinned)])
    assert info["models"] == {f"bert-base-uncased@{PIN}": 2, "microsoft/deberta-v2-xxlarge (unpinned)": 1}
    assert hub.describe({"id": "x/y", "revision": None, "loaded_from": "/m/x/y"}) == "x/y (from /m/x/y)"
