"""`sentaug evaluate suites`: several suites of one model in one process write, byte for byte, the files their
own commands write (on the CPU; the clock frozen so that the recorded seconds agree too), loading the model
once; a suite string that names the model or no suite is refused before anything runs. Also the embeddings'
batching: length-sorted batches by a token budget give each sentence's vector in the sentences' order."""
import json
import time

import numpy as np
import pytest
import torch
import yaml
from transformers import AutoModel

from sentaug.cli import main
from sentaug.models import encoder
from tests.test_job_server import ROOT

SUITES = [["sts"], ["transfer", "--mode", "fast"], ["clustering", "--seeds", "2"], ["intent", "--iterations", "200"],
          ["cola"]]


@pytest.fixture(scope="module")
def tiny_and_demo(tmp_path_factory):
    """A random tiny BERT (config.yaml's tiny-bert) and the bundled demo data of the suites."""
    root = tmp_path_factory.mktemp("suites")
    spec = json.dumps(yaml.safe_load((ROOT / "config.yaml").read_text())["backbones"]["tiny-bert"])
    assert main(["backbone", "tiny-bert", "--spec", spec, "--out", str(root / "tiny-bert")]) == 0
    for group in ("senteval", "transfer", "clustering", "intent", "glue/CoLA"):
        assert main(["download", group, "--origin", "demo", "--out", str(root / "data")]) == 0
    return root / "tiny-bert", root / "data"


def test_several_suites_in_one_process_write_what_their_own_commands_write(tiny_and_demo, tmp_path, monkeypatch):
    model, data = tiny_and_demo
    torch.set_num_threads(1)
    monkeypatch.setattr(time, "perf_counter", lambda: 1000.0)       # every record's seconds: 0.0
    shared = ["--model", str(model), "--pooler", "avg", "--data", str(data), "--scale", "demo"]
    for suite in SUITES:
        assert main(["evaluate", suite[0], *shared, *suite[1:], "--out", str(tmp_path / "own" / f"{suite[0]}.json")]) == 0
    loads = []
    load = AutoModel.from_pretrained

    def counted(path, *a, **k):
        loads.append(str(path))
        return load(path, *a, **k)

    monkeypatch.setattr(AutoModel, "from_pretrained", counted)
    runs = [" ".join([*suite, "--out", str(tmp_path / "one" / f"{suite[0]}.json")]) for suite in SUITES]
    assert main(["evaluate", "suites", *shared, *(w for run in runs for w in ("--suite", run))]) == 0
    for suite in SUITES:
        own, one = (tmp_path / where / f"{suite[0]}.json" for where in ("own", "one"))
        assert one.read_bytes() == own.read_bytes(), suite[0]
    assert json.loads((tmp_path / "one" / "transfer.json").read_text())["suite"] == "transfer"
    assert loads == [str(model)]                   # one model load for the five suites


def test_a_suite_string_naming_the_model_or_no_suite_is_refused_before_anything_runs(tiny_and_demo, tmp_path,
                                                                                      capsys):
    model, data = tiny_and_demo
    shared = ["--model", str(model), "--pooler", "avg", "--data", str(data)]
    out = tmp_path / "sts.json"
    assert main(["evaluate", "suites", *shared, "--suite", f"sts --out {out}",
                 "--suite", f"transfer --model {model} --out {tmp_path / 't.json'}"]) == 2
    assert "--model is given once, for every suite" in capsys.readouterr().err and not out.exists()
    assert main(["evaluate", "suites", *shared, "--suite", f"sts --out {out}", "--suite", "senteval --out x"]) == 2
    err = capsys.readouterr().err
    assert "'senteval --out x': starts with no suite (choose from sts, cnsd, transfer" in err and not out.exists()


def test_token_budget_batches_by_hand():
    # lengths sorted longest first, 64 tokens a batch, each padded to its first: 3 x 20, 3 x 20 (20 10 10), then
    # 6 x 10 (10 10 10 10 4 4)
    assert encoder.batch_bounds([20, 20, 20, 20, 10, 10, 10, 10, 10, 10, 4, 4], max_tokens=64) == \
        [(0, 3), (3, 6), (6, 12)]
    assert encoder.batch_bounds([100, 5], max_tokens=64) == [(0, 1), (1, 2)]       # one too long: alone
    assert encoder.batch_bounds([5] * 7, batch_size=3) == [(0, 3), (3, 6), (6, 7)]
    assert encoder.batching(torch.device("cpu")) == (128, None)
    assert encoder.batching(torch.device("cuda")) == (None, encoder.GPU_BATCH_TOKENS)
    assert encoder.batching(torch.device("cuda"), 64) == (64, None)


def test_token_budget_batches_give_each_sentence_its_own_vector(tiny_and_demo):
    from sentaug.data.senteval import read_split

    model, data = tiny_and_demo
    net, tok = encoder.load_pretrained(model, "cpu")
    pairs = read_split(data, "STSBenchmark", "dev")
    sentences = list(dict.fromkeys([*pairs.s1, *pairs.s2]))[:60]
    alone = np.concatenate([encoder.embed(net, tok, [s], poolers=("avg",))["avg"] for s in sentences])
    batches = list(encoder.tokenized_batches(tok, sentences, None, max_tokens=200))
    assert len(batches) > 3 and all(ids["input_ids"].numel() <= 200 or len(rows) == 1 for rows, ids in batches)
    budget = encoder.embed_batches(net, batches, len(sentences), ("avg",))["avg"]
    np.testing.assert_allclose(budget, alone, rtol=0, atol=1e-5)


def test_bf16_embeddings_are_near_fp32_and_an_unknown_precision_is_an_error(tiny_and_demo):
    model, data = tiny_and_demo
    net, tok = encoder.load_pretrained(model, "cpu")
    sentences = ["a man is playing a guitar .", "the cat sat on the mat .", "stocks fell sharply on monday ."]
    fp32 = encoder.embed(net, tok, sentences, poolers=("avg",))["avg"]
    with encoder.embedding_precision("bf16"):
        bf16 = encoder.embed(net, tok, sentences, poolers=("avg",))["avg"]
    assert bf16.dtype == np.float32 and not np.array_equal(bf16, fp32)
    cos = (bf16 * fp32).sum(1) / np.linalg.norm(bf16, axis=1) / np.linalg.norm(fp32, axis=1)
    assert cos.min() > 0.999                        # bf16 keeps 8 bits of mantissa: the direction, not the bits
    assert np.array_equal(encoder.embed(net, tok, sentences, poolers=("avg",))["avg"], fp32)   # the context ended
    with pytest.raises(ValueError, match="unknown precision 'fp16': choose from auto, fp32, bf16"):
        with encoder.embedding_precision("fp16"):
            pass
