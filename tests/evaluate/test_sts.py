"""STS evaluator: aggregation checked against hand-derived Spearman values, poolers against per-sentence
unpadded forward passes, readers against bad input, the real-data numbers against an independent
sentence-transformers + scipy computation, and the CLI contract."""
import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from sentaug.data import senteval
from sentaug.evaluate import sts

FIX = Path(__file__).parent / "fixtures" / "sts_hand"


def fake_embed(model, tokenizer, sentences, poolers=("cls_before_pooler",), batch_size=128, max_length=None,
               progress=False, batches=None, normalize=False):
    """Sentence "cos C ..." -> [C, sqrt(1 - C^2)], anything else -> [1, 0]: every fixture pair (anchor, "cos C")
    then has cosine exactly C, so the expected correlations can be worked out by hand."""
    seen.extend(sentences)
    vecs = []
    for s in sentences:
        c = float(s.split()[1]) if s.startswith("cos ") else 1.0
        vecs.append([c, math.sqrt(1.0 - c * c)])
    return {p: np.asarray(vecs, dtype=np.float32) for p in poolers}


seen: list[str] = []


@pytest.fixture
def hand(monkeypatch):
    seen.clear()
    monkeypatch.setattr(sts, "embed", fake_embed)
    return sts.evaluate_sts(None, None, FIX, poolers=("avg",))["avg"]


def test_all_mean_wmean_by_hand(hand):
    # STS12 alpha (the empty gold line drops "cos 0.99"): cos .1 .3 .2 .4 vs gold 1 2 3 4
    #   ranks 1 3 2 4 vs 1 2 3 4, sum d^2 = 2 -> rho = 1 - 6*2/(4*15) = 0.8
    # STS12 beta: cos .9 .5 .6 vs gold 5 0 2.5 -> ranks 3 1 2 vs 3 1 2 -> rho = 1
    # all (7 pairs): cos ranks 1 3 2 4 7 5 6, gold (1 2 3 4 5 0 2.5) ranks 2 3 5 6 7 1 4
    #   d = -1 0 -3 -2 0 4 2, sum d^2 = 34 -> rho = 1 - 6*34/(7*48) = 11/28
    d12 = hand["details"]["STS12"]
    assert d12["topics"]["alpha"]["n"] == 4 and d12["topics"]["beta"]["n"] == 3
    assert d12["topics"]["alpha"]["spearman"] == pytest.approx(80.0)
    assert d12["topics"]["beta"]["spearman"] == pytest.approx(100.0)
    assert hand["STS12"] == pytest.approx(100 * 11 / 28) == d12["all"]["spearman"]
    assert d12["mean"]["spearman"] == pytest.approx((80 + 100) / 2)
    assert d12["wmean"]["spearman"] == pytest.approx((4 * 80 + 3 * 100) / 7)
    # STS13 gamma, tie in gold: cos .2 .4 .3 vs gold 1 1 3 -> ranks 1 3 2 vs 1.5 1.5 3;
    #   centred: (-1, 1, 0) . (-.5, -.5, 1) = 0 -> rho = 0
    # STS13 delta (empty gold line dropped): cos .8 .7 vs gold 2 4 -> rho = -1, and Pearson = -1
    # all: cos .2 .4 .3 .8 .7 -> ranks 1 3 2 5 4; gold 1 1 3 2 4 -> ranks 1.5 1.5 4 3 5
    #   centred (-2 0 -1 2 1).(-1.5 -1.5 1 0 2) = 4; norms^2 10 and 9.5 -> rho = 4 / sqrt(95)
    d13 = hand["details"]["STS13"]
    assert d13["topics"]["gamma"]["spearman"] == pytest.approx(0.0, abs=1e-9)
    assert d13["topics"]["delta"] == {"spearman": pytest.approx(-100.0), "pearson": pytest.approx(-100.0), "n": 2}
    assert hand["STS13"] == pytest.approx(100 * 4 / math.sqrt(95))
    assert d13["mean"]["spearman"] == pytest.approx(-50.0)
    assert d13["wmean"]["spearman"] == pytest.approx((3 * 0 - 2 * 100) / 5)
    # STS14 cos .1 .2 .3 vs 1 2 3 -> 1; STS15 reversed -> -1; STS16 ranks 2 1 3 vs 1 2 3 -> 1 - 6*2/24 = 0.5
    assert (hand["STS14"], hand["STS15"], hand["STS16"]) == pytest.approx((100, -100, 50))
    # STS-B test: cos .1 .5 .3 vs .5 3 4.5 -> 0.5; dev: cos falling, gold rising -> -1
    # SICK test: cos .2 .9 .6 .1 vs 1 4.6 3.2 2 -> ranks 2 4 3 1 vs 1 4 3 2 -> 1 - 6*2/60 = 0.8; trial -> 1
    assert hand["STSBenchmark"] == pytest.approx(50) and hand["STSBenchmark_dev"] == pytest.approx(-100)
    assert hand["SICKRelatedness"] == pytest.approx(80) and hand["SICKRelatedness_dev"] == pytest.approx(100)
    assert hand["avg"] == pytest.approx((100 * 11 / 28 + 400 / math.sqrt(95) + 100 - 100 + 50 + 50 + 80) / 7)


def test_one_encoding_call_without_train_or_unscored(hand):
    assert len(seen) == len(set(seen)), "sentences are de-duplicated across tasks"
    assert not any("train only" in s or "unscored" in s for s in seen)
    assert "a man plays a guitar ." in seen and "cos 0.30 alpha two" in seen  # whitespace normalised


def test_dev_evaluator_by_hand(monkeypatch):
    from sentaug.train import dev_score

    monkeypatch.setattr(dev_score, "embed", fake_embed)
    monkeypatch.setattr(dev_score, "tokenized_batches", lambda *a, **k: iter(()))   # fake_embed needs no ids
    assert dev_score.DevEvaluator(FIX)(None, None) == pytest.approx(-100.0)
    assert dev_score.DevEvaluator(FIX, "SICKRelatedness", "test")(None, None) == pytest.approx(80.0)
    assert dev_score.DevEvaluator(FIX, "STS12")(None, None) == pytest.approx(100 * 11 / 28)


def test_cosine_is_nan_safe():
    a = np.array([[1, 0], [0, 0], [np.nan, 1]], dtype=np.float32)
    b = np.array([[1, 1], [1, 0], [0, 2]], dtype=np.float32)
    np.testing.assert_allclose(sts.cosine(a, b), [1 / math.sqrt(2), 0.0, 1.0])


# ---------------------------------------------------------------- poolers vs unpadded single-sentence passes
@pytest.fixture(scope="module")
def tiny(minilm_path):
    from transformers import AutoTokenizer, BertConfig, BertModel

    tok = AutoTokenizer.from_pretrained(minilm_path)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64)
    return BertModel(cfg).eval(), tok


def test_poolers_match_unpadded_single_sentences(tiny):
    from sentaug.models.encoder import embed
    from sentaug.models.poolers import POOLERS

    model, tok = tiny
    sents = ["a", "the quick brown fox jumps over the lazy dog again and again", "hello world", "a", "",
             "hello   world", "A much longer sentence, with punctuation; and (more) words than the others!"]
    expected = {p: [] for p in POOLERS}
    with torch.no_grad():
        for s in sents:
            out = model(**tok(s, return_tensors="pt"), output_hidden_states=True)
            hs = [h[0] for h in out.hidden_states]  # (tokens, dim), no padding anywhere
            expected["cls"].append(out.pooler_output[0])
            expected["cls_before_pooler"].append(hs[-1][0])
            expected["avg"].append(hs[-1].mean(0))
            expected["avg_top2"].append(((hs[-1] + hs[-2]) / 2).mean(0))
            expected["avg_first_last"].append(((hs[1] + hs[-1]) / 2).mean(0))
            expected["avg_emb_last"].append(((hs[0] + hs[-1]) / 2).mean(0))
    model.train()  # embed must evaluate in eval mode and give the training state back
    got = embed(model, tok, sents, poolers=POOLERS, batch_size=3)
    assert model.training
    model.eval()
    for p in POOLERS:
        assert got[p].dtype == np.float32 and got[p].shape == (len(sents), 32)
        np.testing.assert_allclose(got[p], torch.stack(expected[p]).numpy(), atol=1e-5, err_msg=p)
    assert embed(model, tok, [], poolers=("avg",))["avg"].shape[0] == 0  # used to raise IndexError


# ---------------------------------------------------------------- readers
def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_readers_on_fixture():
    alpha = senteval.read_sts_topic(FIX / "sts" / "STS12-en-test", "alpha")
    assert alpha.s2 == ["cos 0.10 alpha one", "cos 0.30 alpha two", "cos 0.20 alpha three", "cos 0.40 alpha four"]
    assert alpha.gold.tolist() == [1, 2, 3, 4]
    assert senteval.read_sts_topic(FIX / "sts" / "STS12-en-test", "beta").s1[1] == "a woman sings ."
    assert senteval.sts_topics(FIX / "sts" / "STS13-en-test") == ["delta", "gamma"]
    sick = senteval.read_split(FIX, "SICKRelatedness", "test")  # CRLF file
    assert sick.s2[0] == "cos 0.20 sick test one" and sick.gold.tolist() == [1.0, 4.6, 3.2, 2.0]
    train = senteval.read_split(FIX, "STSBenchmark", "train")
    assert train.s2 == ["train only sentence one", "train only sentence two"]


def test_reader_errors_name_the_file(tmp_path):
    year = tmp_path / "STS12-en-test"
    with pytest.raises(FileNotFoundError, match="STS12-en-test"):
        senteval.read_sts_year(year)
    _write(year / "STS.input.t.txt", "a\tb\nno tab here\n")
    _write(year / "STS.gs.t.txt", "1\n2\n")
    with pytest.raises(ValueError, match=r"STS\.input\.t\.txt:2: line has no tab"):
        senteval.read_sts_year(year)
    _write(year / "STS.input.t.txt", "a\tb\nc\td\n")
    _write(year / "STS.gs.t.txt", "1\n")
    with pytest.raises(ValueError, match=r"STS\.input\.t\.txt has 2 lines but .*STS\.gs\.t\.txt has 1"):
        senteval.read_sts_year(year)
    _write(year / "STS.gs.t.txt", "1\nfive\n")
    with pytest.raises(ValueError, match=r"STS\.gs\.t\.txt:2: gold score 'five' is not a number"):
        senteval.read_sts_year(year)
    (year / "STS.gs.t.txt").unlink()
    with pytest.raises(FileNotFoundError, match=r"STS\.gs\.t\.txt"):
        senteval.read_sts_year(year)
    _write(tmp_path / "sts" / "STSBenchmark" / "sts-dev.csv", "g\tf\ty\t1\tx\ta\tb\n")
    with pytest.raises(ValueError, match=r"sts-dev\.csv:1: gold score 'x'"):
        senteval.read_split(tmp_path, "STSBenchmark", "dev")
    _write(tmp_path / "sick" / "SICK_trial.txt", "header\n1\tonly two\n")
    with pytest.raises(ValueError, match=r"SICK_trial\.txt:2: line has 2 tab-separated fields"):
        senteval.read_split(tmp_path, "SICKRelatedness", "dev")
    with pytest.raises(FileNotFoundError, match="sts/STS12-en-test: STS12 folder not found"):
        sts.load_suite(tmp_path)


# ---------------------------------------------------------------- CLI contract
def test_cli_writes_contract_json(tiny, tmp_path, capsys):
    from sentaug.cli import main

    model, tok = tiny
    model.save_pretrained(tmp_path / "tiny")
    tok.save_pretrained(tmp_path / "tiny")
    out = tmp_path / "res" / "sts.json"
    args = ["evaluate", "sts", "--model", str(tmp_path / "tiny"), "--pooler", "avg", "--out", str(out),
            "--batch-size", "4", "--scale", "smoke"]
    assert main([*args, "--data", str(FIX)]) == 0
    res = json.loads(out.read_text())
    for key in (*sts.TASKS, "avg", "STSBenchmark_dev", "SICKRelatedness_dev", "model", "pooler", "data", "scale",
                "n_pairs", "seconds", "versions", "details"):
        assert key in res, key
    assert res["pooler"] == "avg" and res["scale"] == "smoke" and set(res["versions"]) == {"torch", "transformers",
                                                                                           "sentaug"}
    assert res["n_pairs"] == {"STS12": 7, "STS13": 5, "STS14": 3, "STS15": 3, "STS16": 3, "STSBenchmark": 3,
                              "STSBenchmark_dev": 4, "SICKRelatedness": 4, "SICKRelatedness_dev": 2}
    assert all(-100 <= res[t] <= 100 for t in sts.TASKS)
    assert res["avg"] == pytest.approx(np.mean([res[t] for t in sts.TASKS]))
    assert "STS-B" in capsys.readouterr().out

    missing = tmp_path / "res" / "missing.json"
    assert main([*args[:-6], "--out", str(missing), "--data", str(tmp_path / "nope")]) == 2
    assert not missing.exists()
    assert "nope" in capsys.readouterr().err


# ---------------------------------------------------------------- real data vs an independent computation
def _independent_pairs(root: Path) -> dict[str, tuple[list, list, list]]:
    """The 7 test sets read with plain Python/csv (SentEval's whitespace normalisation, empty gold dropped)."""
    norm = " ".join
    out = {}
    for year in sts.STS_YEARS:
        s1, s2, gold = [], [], []
        for inp in sorted((root / "sts" / f"{year}-en-test").glob("STS.input.*.txt")):
            gs = inp.with_name(inp.name.replace("STS.input.", "STS.gs."))
            lines, golds = (f.read_text(encoding="utf-8").splitlines() for f in (inp, gs))
            for line, g in zip(lines, golds):
                if g != "":
                    a, b = line.split("\t")
                    s1.append(norm(a.split())), s2.append(norm(b.split())), gold.append(float(g))
        out[year] = (s1, s2, gold)
    with open(root / "sts" / "STSBenchmark" / "sts-test.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    out["STSBenchmark"] = ([norm(r[5].split()) for r in rows], [norm(r[6].split()) for r in rows],
                           [float(r[4]) for r in rows])
    with open(root / "sick" / "SICK_test_annotated.txt", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    out["SICKRelatedness"] = ([norm(r["sentence_A"].split()) for r in rows],
                              [norm(r["sentence_B"].split()) for r in rows],
                              [float(r["relatedness_score"]) for r in rows])
    return out


@pytest.fixture(scope="module")
def minilm_both(mirror, minilm_path, tmp_path_factory):
    """(ours on the whole sets, ours and sentence-transformers' on 128 pairs of each file): the published figures
    need the whole sets; the independent computation, SentEval's reading and averaging on every file of them."""
    from scipy.stats import spearmanr
    from sentence_transformers import SentenceTransformer

    from sentaug.data.slices import slice_folder
    from sentaug.models.encoder import load_pretrained

    sliced = tmp_path_factory.mktemp("sts_slices")
    for folder in ("sts", "sick"):
        slice_folder(mirror, sliced, folder, 128)
    model, tok = load_pretrained(minilm_path, "cpu")
    whole = sts.evaluate_sts(model, tok, mirror, poolers=("avg",))["avg"]
    ours = sts.evaluate_sts(model, tok, sliced, poolers=("avg",))["avg"]
    del model
    pairs = _independent_pairs(sliced)
    st = SentenceTransformer(minilm_path, device="cpu")
    st.max_seq_length = 512  # the protocol does not truncate (its own default is 256)
    uniq = sorted({s for s1, s2, _ in pairs.values() for s in s1 + s2})
    vec = dict(zip(uniq, st.encode(uniq, batch_size=128, convert_to_numpy=True)))  # mean pooling + L2 norm
    theirs = {}
    for task, (s1, s2, gold) in pairs.items():
        cos = [float(np.dot(vec[a], vec[b]) / (np.linalg.norm(vec[a]) * np.linalg.norm(vec[b])))
               for a, b in zip(s1, s2)]
        theirs[task] = 100 * spearmanr(cos, gold)[0]
    return whole, ours, theirs


@pytest.mark.mirror
def test_minilm_matches_independent_computation(minilm_both):
    _, ours, theirs = minilm_both
    for task in sts.TASKS:
        assert ours[task] == pytest.approx(theirs[task], abs=0.01), task
    assert ours["avg"] == pytest.approx(np.mean([theirs[t] for t in sts.TASKS]), abs=0.01)


@pytest.mark.mirror
def test_minilm_stsb_matches_mteb(minilm_both):
    ours = minilm_both[0]
    assert ours["STSBenchmark"] == pytest.approx(82.03, abs=0.01)  # MTEB's all-MiniLM-L6-v2 STSBenchmark
    assert ours["avg"] == pytest.approx(78.87, abs=0.005)   # the mean-pooled figure of the small-scale leaderboard
    assert ours["details"]["STS13"]["topics"].keys() == {"FNWN", "headlines", "OnWN"}
    assert sum(t["n"] for t in ours["details"]["STS16"]["topics"].values()) == 1186


def test_rank_correlations_equal_scipy():
    """Our Spearman / Pearson (numpy, no scipy.stats import at start-up) against scipy's on the same inputs:
    ties of every size (gold scores in 0.2 steps, cosines rounded), reversed order, a constant side."""
    from scipy.stats import pearsonr, rankdata, spearmanr

    rng = np.random.default_rng(0)
    gold = rng.integers(0, 26, 500) / 5.0                   # 26 values over 500 pairs: many ties
    cos = np.round(0.3 * gold + rng.normal(0, 1, 500), 1)   # ties on this side too
    assert np.array_equal(sts.average_ranks(gold), rankdata(gold))
    assert sts.spearman(cos, gold) == pytest.approx(spearmanr(cos, gold)[0], abs=1e-12)
    assert sts.pearson(cos, gold) == pytest.approx(pearsonr(cos, gold)[0], abs=1e-12)
    assert sts.spearman(-gold, gold) == pytest.approx(-1.0)
    assert np.isnan(sts.spearman(np.ones(5), np.arange(5.0))) and np.isnan(sts.pearson(np.arange(5.0), np.ones(5)))
    # by hand: ranks of (3, 1, 3, 2) are (3.5, 1, 3.5, 2)
    assert sts.average_ranks(np.array([3, 1, 3, 2])).tolist() == [3.5, 1.0, 3.5, 2.0]
