"""Evaluation variants the new tables read: STS with every sentence lower-cased (CARDS Table 4) and Chinese
STS-B (CNSD, SDA Table 5), each checked against a hand computation or against the plain evaluation of data
that is lower-cased beforehand."""
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from sentaug.data.senteval import Pairs
from sentaug.evaluate import cnsd, sts

FIX = Path(__file__).parent / "fixtures" / "sts_hand"


def case_sensitive_embed(model, tokenizer, sentences, poolers=("avg",), batch_size=128, max_length=None,
                         progress=False, normalize=False):
    """'cos C ...' -> [C, sqrt(1 - C^2)] as tests/evaluate/test_sts.py's fake, but a sentence with an upper-case letter
    has its two coordinates swapped (cosine sqrt(1 - C^2) with a lower-case anchor: the ranks reverse), so an
    evaluation that sees upper case scores differently."""
    vecs = []
    for s in sentences:
        c = float(s.split()[1]) if s.lower().startswith("cos ") else 1.0
        v = [c, math.sqrt(1.0 - c * c)]
        vecs.append([v[1], v[0]] if s != s.lower() else v)
    return {p: np.asarray(vecs, dtype=np.float64) for p in poolers}


def test_lowercase_evaluation_equals_evaluating_lower_cased_files(tmp_path, monkeypatch):
    monkeypatch.setattr(sts, "embed", case_sensitive_embed)
    monkeypatch.setattr("sentaug.models.encoder.load_pretrained", lambda model, device=None: (None, None))
    cased = tmp_path / "cased"
    shutil.copytree(FIX, cased)
    sick = cased / "sick" / "SICK_test_annotated.txt"
    lines = sick.read_text().splitlines()
    sick.write_text("\n".join([lines[0]] + [ln.replace("cos", "Cos") for ln in lines[1:]])
                    + "\n")
    plain = sts.evaluate_sts_cli("m", "avg", str(FIX), str(tmp_path / "plain.json"))
    upper = sts.evaluate_sts_cli("m", "avg", str(cased), str(tmp_path / "upper.json"))
    lowered = sts.evaluate_sts_cli("m", "avg", str(cased), str(tmp_path / "lower.json"), lowercase=True)
    assert upper["SICKRelatedness"] != pytest.approx(plain["SICKRelatedness"])   # the fake sees the case
    for key in (*sts.TASKS, "avg"):
        assert lowered[key] == pytest.approx(plain[key]), key
    assert json.loads((tmp_path / "lower.json").read_text())["lowercase"] is True
    assert json.loads((tmp_path / "plain.json").read_text())["lowercase"] is False


def test_cnsd_spearman_by_hand():
    def vectors(sentences):
        return np.asarray([[float(s), math.sqrt(1 - float(s) ** 2)] if s != "a" else [1.0, 0.0] for s in sentences])

    # every pair is ("a", "C") with cosine exactly C
    test = Pairs(["a"] * 4, ["0.1", "0.5", "0.3", "0.9"], np.array([0.0, 3.0, 4.0, 5.0]))
    dev = Pairs(["a"] * 3, ["0.9", "0.5", "0.1"], np.array([1.0, 2.0, 3.0]))
    res = cnsd.score_cnsd({"test": test, "dev": dev}, vectors)
    # test: cosine ranks 1 3 2 4 vs gold ranks 1 2 3 4 -> sum d^2 = 2 -> rho = 1 - 6*2/(4*15) = 0.8
    # dev: cosine falls while gold rises -> -1
    assert res["CNSD"] == pytest.approx(80.0) and res["CNSD_dev"] == pytest.approx(-100.0)
    assert res["details"]["test"]["n"] == 4


def test_dev_evaluator_takes_pairs(monkeypatch):
    """A Chinese run selects its checkpoint on CNSD dev: the evaluator scores given pairs (same hand case)."""
    from sentaug.train import dev_score

    monkeypatch.setattr(dev_score, "embed", lambda model, tok, sentences, poolers, batch_size=128, batches=None: {
        poolers[0]: np.asarray([[float(s), math.sqrt(1 - float(s) ** 2)] if s != "a" else [1.0, 0.0]
                                for s in sentences])})
    monkeypatch.setattr(dev_score, "tokenized_batches", lambda *a, **k: iter(()))   # the fake embed needs no ids
    dev = Pairs(["a"] * 3, ["0.9", "0.5", "0.1"], np.array([1.0, 2.0, 3.0]))
    assert dev_score.DevEvaluator(pairs=dev)(None, None) == pytest.approx(-100.0)
