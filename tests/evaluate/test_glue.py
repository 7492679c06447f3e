"""GLUE suite: metrics against scikit-learn/scipy, R-drop's KL against a hand computation, the readers on
GLUE's layouts, and a tiny fine-tuning run that must learn a trivially separable task."""
import json
import math
import os
import random
import subprocess
import sys
import time

import numpy as np
import pytest
import torch
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef
from transformers import AutoTokenizer, BertConfig, BertModel

from sentaug.evaluate import glue


@pytest.fixture(scope="module")
def fixed():
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 2, 200)
    preds = np.where(rng.random(200) < 0.75, labels, 1 - labels)  # 75 % agreement
    return preds, labels


pytestmark = pytest.mark.usefixtures("one_thread")      # tiny models: one torch thread (tests/conftest.py)


def test_binary_metrics_match_sklearn(fixed):
    preds, labels = fixed
    assert glue.matthews(preds, labels) == pytest.approx(matthews_corrcoef(labels, preds), abs=1e-12)
    assert glue.binary_f1(preds, labels) == pytest.approx(f1_score(labels, preds), abs=1e-12)
    assert glue.accuracy(preds, labels) == pytest.approx(accuracy_score(labels, preds), abs=1e-12)
    # degenerate marginals: scikit-learn's conventions (MCC 0, F1 0)
    zeros = np.zeros_like(labels)
    assert glue.matthews(zeros, labels) == matthews_corrcoef(labels, zeros) == 0.0
    assert glue.binary_f1(zeros, labels) == f1_score(labels, zeros, zero_division=0) == 0.0


def test_task_conventions(fixed):
    preds, labels = fixed
    acc, f1 = 100 * accuracy_score(labels, preds), 100 * f1_score(labels, preds)
    mcc = 100 * matthews_corrcoef(labels, preds)
    mrpc = glue.glue_metric("MRPC", preds, labels)
    assert mrpc["score"] == pytest.approx((acc + f1) / 2) and mrpc["score_cards"] == pytest.approx(acc)
    assert glue.glue_metric("QQP", preds, labels)["score"] == pytest.approx((acc + f1) / 2)
    cola = glue.glue_metric("CoLA", preds, labels)
    assert cola["score"] == pytest.approx(mcc) and cola["score_cards"] == pytest.approx(mcc)
    assert glue.glue_metric("RTE", preds, labels)["score"] == pytest.approx(acc)
    # STS-B: regression outputs with ties (rounded), mean of Pearson and Spearman (CLEAR), Spearman (CARDS)
    rng = np.random.default_rng(3)
    gold = np.round(rng.uniform(0, 5, 150), 1)
    out = np.round(gold + rng.normal(0, 1.0, 150), 0)
    sts = glue.glue_metric("STS-B", out, gold)
    p, s = 100 * pearsonr(out, gold)[0], 100 * spearmanr(out, gold)[0]
    assert sts["pearson"] == pytest.approx(p, abs=1e-9) and sts["spearman"] == pytest.approx(s, abs=1e-9)
    assert sts["score"] == pytest.approx((p + s) / 2) and sts["score_cards"] == pytest.approx(s)
    # MNLI: matched / mismatched averaged (CLEAR), matched alone (CARDS)
    both = glue.combine_splits("MNLI", {"dev_matched": {"accuracy": 80.0}, "dev_mismatched": {"accuracy": 90.0}})
    assert both["score"] == 85.0 and both["score_cards"] == 80.0


def test_symmetric_kl_by_hand():
    # p1 = (1/4, 3/4), p2 = (1/2, 1/2)
    l1 = torch.tensor([[0.0, math.log(3.0)], [0.0, 0.0]])
    l2 = torch.tensor([[0.0, 0.0], [0.0, 0.0]])
    kl12 = 0.25 * math.log(0.25 / 0.5) + 0.75 * math.log(0.75 / 0.5)
    kl21 = 0.5 * math.log(0.5 / 0.25) + 0.5 * math.log(0.5 / 0.75)
    expected = 0.5 * (0.5 * (kl12 + kl21) + 0.0)  # second row identical: 0; mean over the 2 rows
    assert float(glue.symmetric_kl(l1, l2)) == pytest.approx(expected, rel=1e-6)
    assert float(glue.symmetric_kl(l1, l2)) == pytest.approx(float(glue.symmetric_kl(l2, l1)), rel=1e-6)


def test_switch_case():
    assert glue.switch_case("Hello world 123 iPhone", 1.0, random.Random(0)) == "hello World 123 IPhone"
    assert glue.switch_case("Hello world", 0.0, random.Random(0)) == "Hello world"
    text = " ".join(["word"] * 2000)
    flipped = glue.switch_case(text, 0.1, random.Random(1)).split().count("Word")
    assert 150 < flipped < 250  # Binomial(2000, 0.1): mean 200, sd 13.4


def write_glue(root, task, split, header, rows):
    folder = root / "glue" / task
    folder.mkdir(parents=True, exist_ok=True)
    lines = ([header] if header else []) + ["\t".join(r) for r in rows]
    (folder / f"{split}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_readers_on_glue_layouts(tmp_path):
    write_glue(tmp_path, "CoLA", "dev", None, [("gj04", "1", "", "The sailors rode."), ("gj04", "0", "*", "Rode.")])
    cola = glue.read_glue(tmp_path, "CoLA", "dev")
    assert cola.text_a == ["The sailors rode.", "Rode."] and cola.labels.tolist() == [1, 0] and cola.text_b is None
    mrpc_dir = tmp_path / "glue" / "MRPC"
    mrpc_dir.mkdir(parents=True)
    (mrpc_dir / "dev.tsv").write_text("\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
                                      '1\t1\t2\t" A quote .\tB\n0\t3\t4\tC\tD\n', encoding="utf-8")
    mrpc = glue.read_glue(tmp_path, "MRPC", "dev")
    assert mrpc.text_a == ['" A quote .', "C"] and mrpc.text_b == ["B", "D"] and mrpc.labels.tolist() == [1, 0]
    write_glue(tmp_path, "RTE", "dev", "index\tsentence1\tsentence2\tlabel",
               [("0", "a", "b", "not_entailment"), ("1", "c", "d", "entailment")])
    assert glue.read_glue(tmp_path, "RTE", "dev").labels.tolist() == [1, 0]
    write_glue(tmp_path, "RTE", "train", "index\tsentence1\tsentence2\tlabel", [("0", "a", "b", "maybe")])
    with pytest.raises(ValueError, match=r"train.tsv:2: label 'maybe'"):
        glue.read_glue(tmp_path, "RTE", "train")
    with pytest.raises(FileNotFoundError, match=r"SST-2/train.tsv: GLUE SST-2 training split not found"):
        write_glue(tmp_path, "SST-2", "dev", "sentence\tlabel", [("x", "0")])
        glue.load_task_data(tmp_path, "SST-2")


@pytest.mark.mirror
def test_real_dev_sets(mirror):
    sizes = {"CoLA": 1043, "MRPC": 408, "RTE": 277, "SST-2": 872}
    for task, n in sizes.items():
        split = glue.read_glue(mirror, task, "dev")
        assert len(split.labels) == n
    mrpc = glue.read_glue(mirror, "MRPC", "dev")
    assert mrpc.labels.mean() == pytest.approx(279 / 408)  # MRPC dev: 68.4 % paraphrases (GLUE's majority baseline)


POS = ["a good movie", "good good good", "so good", "really good film", "good", "the acting is good",
       "good story", "very good"]
NEG = ["a bad movie", "bad bad bad", "so bad", "really bad film", "bad", "the acting is bad",
       "bad story", "very bad"]


def tiny_backbone(path, minilm_path):
    tok = AutoTokenizer.from_pretrained(minilm_path)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
    BertModel(cfg).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def test_tiny_finetuning_learns_separable_task(tmp_path, minilm_path):
    model = tiny_backbone(tmp_path / "tiny", minilm_path)
    write_glue(tmp_path, "SST-2", "dev", "sentence\tlabel", [(s, "1") for s in POS] + [(s, "0") for s in NEG])
    out = tmp_path / "glue.json"
    args = dict(model=model, pooler="avg", data=tmp_path, out=out, tasks=["SST-2"], max_steps=40,
                train_on_dev=True, learning_rate=3e-3, batch_size=8, seed=1)
    with pytest.warns(UserWarning, match="smoke test only"):
        glue.evaluate_glue_cli(**args)
    rec = json.loads(out.read_text())
    res = rec["details"]["SST-2"]
    assert rec["SST-2"]["score"] == 100.0 and res["train_split"] == "dev"
    assert res["mean_loss_last_10"] < 0.1 < res["first_loss"]
    # R-drop with switch-case on one side: still learns, and is deterministic for a seed
    cfg = glue.FinetuneConfig(learning_rate=3e-3, batch_size=8, max_steps=20, rdrop=1.0, switch_case=0.5, seed=2)
    data = glue.read_glue(tmp_path, "SST-2", "dev")
    with pytest.warns(UserWarning, match="ignores case"):  # MiniLM's vocabulary is uncased
        r1 = glue.finetune_task(model, "SST-2", data, {"dev": data}, "avg", cfg, progress=False)
    with pytest.warns(UserWarning, match="ignores case"):
        r2 = glue.finetune_task(model, "SST-2", data, {"dev": data}, "avg", cfg, progress=False)
    assert r1["last_loss"] == r2["last_loss"] and r1["score"] == 100.0


def test_a_glue_log_holds_a_redraw_every_30_s_not_one_per_step(tmp_path, minilm_path):
    """In a job's log file (stderr not a terminal) the bar is redrawn every 30 s (sentaug.cli); the loss shown
    beside it must not force a redraw at every step, as it did (one frame per step: 40 here)."""
    model = tiny_backbone(tmp_path / "tiny", minilm_path)
    write_glue(tmp_path, "SST-2", "dev", "sentence\tlabel", [(s, "1") for s in POS] + [(s, "0") for s in NEG])
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TQDM_")} | {"OMP_NUM_THREADS": "1"}
    start = time.monotonic()
    with open(tmp_path / "job.log", "w") as log:
        subprocess.run([sys.executable, "-m", "sentaug.cli", "evaluate", "glue", "--model", model, "--pooler", "avg",
                        "--data", str(tmp_path), "--tasks", "SST-2", "--max-steps", "40", "--train-on-dev",
                        "--lr", "3e-3", "--train-batch-size", "8", "--out", str(tmp_path / "glue.json")],
                       stdout=subprocess.DEVNULL, stderr=log, env=environ, check=True)
    frames = (tmp_path / "job.log").read_text().replace("\r", "\n").count("glue SST-2:")
    # the first and the last frame, and one per 30 s in between however slow this machine is today
    assert 2 <= frames <= 2 + (time.monotonic() - start) // 30


def test_zip_download_path(tmp_path, monkeypatch):
    """The official route for GLUE: one zip per task, members <Task>/<file>, each file checked against its pin."""
    monkeypatch.delenv("SENTAUG_MIRROR", raising=False)
    import hashlib
    import zipfile

    from sentaug.data.download import DownloadError, fetch

    content = b"gj04\t1\t\tThe sailors rode the breeze clear of the rocks.\n"
    archive = tmp_path / "CoLA.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("CoLA/dev.tsv", content)
        z.writestr("CoLA/train.tsv", b"ignored")
    src = {"downloads": {"CoLA.zip": {"url": archive.as_uri()}}, "archive": "CoLA.zip",
           "members": {"glue/CoLA/": "CoLA/"}, "outputs": ["glue/CoLA"],
           "files": {"glue/CoLA/dev.tsv": hashlib.sha256(content).hexdigest()}}
    fetch("glue/CoLA", tmp_path / "out", sources={"official": {"glue/CoLA": src}})
    assert (tmp_path / "out/glue/CoLA/dev.tsv").read_bytes() == content
    assert not (tmp_path / "out/glue/CoLA/train.tsv").exists()
    src["files"]["glue/CoLA/dev.tsv"] = "0" * 64
    with pytest.raises(DownloadError, match="glue/CoLA/dev.tsv"):
        fetch("glue/CoLA", tmp_path / "out2", sources={"official": {"glue/CoLA": src}})
    assert not (tmp_path / "out2/glue").exists()


@pytest.mark.mirror
def test_glue_pins_match_mirror(tmp_path, mirror):
    from sentaug.data.download import fetch

    fetch("glue/RTE", tmp_path, mirror=str(mirror))
    assert len(glue.read_glue(tmp_path, "RTE", "dev").labels) == 277


def test_a_recipe_sets_each_tasks_settings_and_the_steps_follow_them(tmp_path, minilm_path):
    """A paper's recipe (config.yaml glue.recipes, `--recipe`): its `all` settings for every task, a task's own over
    them, the cheap scales' step cap kept; the fine-tuning takes its warm-up steps, Adam betas and eps, the clipping
    it asks for (none) and the head's dropout."""
    cfg = glue.FinetuneConfig(max_steps=7)
    recipe = {"all": {"epochs": 10, "adam_betas": [0.9, 0.98], "adam_eps": 1e-6, "max_grad_norm": None,
                      "head_dropout": 0.3},
              "tasks": {"RTE": {"learning_rate": 2e-5, "batch_size": 16, "warmup_steps": 3}}}
    rte, sst = glue.task_config(cfg, "RTE", recipe), glue.task_config(cfg, "SST-2", recipe)
    assert (rte.learning_rate, rte.batch_size, rte.epochs, rte.warmup_steps, rte.max_steps) == (2e-5, 16, 10, 3, 7)
    assert (sst.learning_rate, sst.batch_size, sst.adam_betas, sst.max_grad_norm) == (2e-5, 32, (0.9, 0.98), None)
    assert glue.task_config(cfg, "RTE", None) is cfg
    with pytest.raises(ValueError, match="unknown setting 'warmup'"):
        glue.task_config(cfg, "RTE", {"all": {"warmup": 3}})

    model = tiny_backbone(tmp_path / "tiny", minilm_path)
    write_glue(tmp_path, "SST-2", "dev", "sentence\tlabel", [(s, "1") for s in POS] + [(s, "0") for s in NEG])
    data = glue.read_glue(tmp_path, "SST-2", "dev")
    run = glue.finetune_task(model, "SST-2", data, {"dev": data}, "avg",
                             glue.FinetuneConfig(learning_rate=1e-3, batch_size=8, max_steps=6, warmup_steps=4,
                                                 adam_betas=(0.8, 0.9), adam_eps=1e-6, max_grad_norm=None,
                                                 head_dropout=0.0), progress=False)
    assert run["steps"] == 6
    from sentaug.evaluate.glue_steps import fine_tune   # the optimizer the steps ran: its groups' betas and eps
    from sentaug.models.encoder import load_pretrained

    backbone, tokenizer = load_pretrained(model, None, shared=False)
    head = glue._build_head(backbone, 2, 0.0)
    assert head[0].p == 0.0
    done = fine_tune(backbone, head, tokenizer, data, False, "avg",
                     glue.FinetuneConfig(learning_rate=1e-3, batch_size=8, max_steps=2, warmup_steps=4,
                                         adam_betas=(0.8, 0.9), adam_eps=1e-6, max_grad_norm=None),
                     torch.device("cpu"), progress=False)
    group = done.optimizer.param_groups[0]
    assert (group["betas"], group["eps"]) == ((0.8, 0.9), 1e-6)
    assert group["lr"] == pytest.approx(1e-3 * 2 / 4)      # linear warm-up over 4 steps: 2 taken
