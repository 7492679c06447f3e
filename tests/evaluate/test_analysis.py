"""Representation analysis: every measure on inputs whose answer is known by hand or by a reference
computation (scipy pdist, brute-force bottleneck matching)."""
import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.spatial.distance import pdist
from scipy.stats import ortho_group

from sentaug.evaluate import analysis as an


pytestmark = pytest.mark.usefixtures("one_thread")      # tiny models: one torch thread (tests/conftest.py)


def test_alignment_known_answers():
    e = np.eye(3)
    assert an.alignment(e, e) == 0.0
    assert an.alignment(e[:2], e[1:3]) == pytest.approx(2.0)           # ||e1 - e2||^2 = 2
    assert an.alignment(e[:1], -3 * e[:1]) == pytest.approx(4.0)        # antipodal, after normalising
    assert an.alignment(e[:2], e[1:3], alpha=1) == pytest.approx(math.sqrt(2))


def test_uniformity_known_answers_and_reference():
    assert an.uniformity(np.eye(4)) == pytest.approx(-4.0)              # every pair at squared distance 2
    assert an.uniformity(np.array([[1.0, 0], [-2.0, 0]])) == pytest.approx(-8.0)
    x = np.random.default_rng(0).normal(size=(50, 8))
    xn = x / np.linalg.norm(x, axis=1, keepdims=True)
    ref = math.log(np.mean(np.exp(-2 * pdist(xn, "sqeuclidean"))))
    assert an.uniformity(x, chunk=7) == pytest.approx(ref, rel=1e-10)


def test_neighbourhood_purity_hand_made():
    angles = np.array([0.0, 0.1, math.pi / 2, 1.4])                     # a, b (class 0); c, d (class 1)
    pts = np.stack([np.cos(angles), np.sin(angles)], 1)
    res = an.neighbourhood_stats(pts * np.array([[1], [2], [3], [4]]), ["x", "x", "y", "y"], ks=(1, 2))
    # K=1: a<->b, c<->d, all same class. K=2: the second neighbour of each is from the other class.
    assert res["1"]["purity"] == 1.0 and res["2"]["purity"] == 0.5
    gap = math.pi / 2 - 1.4
    assert res["1"]["cosine_distance"] == pytest.approx((2 * (1 - math.cos(0.1)) + 2 * (1 - math.cos(gap))) / 4)
    # second neighbours: a->d (1.4), b->d (1.3), c->b (pi/2 - 0.1), d->b (1.3)
    second = [1.4, 1.3, math.pi / 2 - 0.1, 1.3]
    first = [0.1, 0.1, gap, gap]
    chord = lambda t: math.sqrt(2 - 2 * math.cos(t))
    assert res["2"]["euclidean_distance"] == pytest.approx(np.mean([chord(t) for t in first + second]))


def matrix_with_spectrum(s, n=40, seed=0):
    d = len(s)
    u = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, d)))[0]
    v = ortho_group.rvs(d, random_state=seed)
    return u @ np.diag(s) @ v.T


def test_svg_and_cond_hm_known_spectra():
    s, t = np.array([4.0, 2.0, 1.0, 1.0]), np.array([1.0, 1.0, 1.0, 1.0])
    x, y = matrix_with_spectrum(s), matrix_with_spectrum(t, seed=1)
    assert an.svg(x, y, normalize=False) == pytest.approx(math.log(4) ** 2 + math.log(2) ** 2)
    assert an.svg(x, x @ ortho_group.rvs(4, random_state=3), normalize=False) == pytest.approx(0.0, abs=1e-18)
    # effective ranks: exp(H) = 2^1.75 = 3.36 -> 3 for s (kappa = 4 / 1), exactly 4 for t (kappa = 1)
    assert an.effective_rank(s) == 3 and an.effective_rank(t) == 4
    assert an.cond_hm(s, t, spectra=True) == pytest.approx(2 * 4 * 1 / (4 + 1))
    assert an.cond_hm(x, y, normalize=False) == pytest.approx(1.6)
    # (8, 4, 2, 1): p = (8, 4, 2, 1)/15, exp(H) = 3.12 -> erank 3 -> kappa = 8 / 2 = 4
    assert an.effective_condition_number([8.0, 4.0, 2.0, 1.0]) == 4.0


def brute_bottleneck(a, b):
    """Reference: try every bijection between a + diag and b + diag (small diagrams only)."""
    left = [("p", v) for v in a] + [("d", None)] * len(b)
    right = [("p", v) for v in b] + [("d", None)] * len(a)
    best = math.inf
    for perm in itertools.permutations(range(len(right))):
        worst = 0.0
        for (kl, vl), (kr, vr) in zip(left, (right[i] for i in perm)):
            if kl == "p" and kr == "p":
                c = abs(vl - vr)
            elif kl == "p":
                c = vl / 2
            elif kr == "p":
                c = vr / 2
            else:
                c = 0.0
            worst = max(worst, c)
        best = min(best, worst)
    return best


def test_rips_h0_and_bottleneck():
    line = np.array([[0.0], [1.0], [3.0], [6.0], [6.0]])               # gaps 1, 2, 3 and a duplicate (0)
    assert an.rips_h0_deaths(line).tolist() == [0.0, 1.0, 2.0, 3.0]
    rng = np.random.default_rng(5)
    for _ in range(6):
        a, b = rng.uniform(0, 2, 3), rng.uniform(0, 2, rng.integers(1, 4))
        assert an.bottleneck_h0(a, b) == pytest.approx(brute_bottleneck(a, b))


def test_gromov_hausdorff_simple_sets():
    # two-point spaces at distances 1 and 1.2: d_GH = 0.1; the H0 bottleneck is 0.2 = 2 d_GH
    x, y = np.array([[0.0, 0.0], [1.0, 0.0]]), np.array([[5.0, 5.0], [5.0, 6.2]])
    assert an.gromov_hausdorff(x, y, normalize=False) == pytest.approx(0.2)
    # an isometric copy (rotation) is at distance 0, with or without the normalisation
    p = np.random.default_rng(1).normal(size=(60, 5))
    q = p @ ortho_group.rvs(5, random_state=2)
    assert an.gromov_hausdorff(p, q) == pytest.approx(0.0, abs=1e-9)
    assert an.gromov_hausdorff(p, 2 * q, normalize=False) > 0.1


def zero_gpt2(path, minilm_path):
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    tok = AutoTokenizer.from_pretrained(minilm_path)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=64, n_embd=16, n_layer=1, n_head=2))
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return str(path), len(tok)


def test_perplexity_uniform_model(tmp_path, minilm_path):
    lm, vocab = zero_gpt2(tmp_path / "lm", minilm_path)
    # all logits 0: every token has probability 1/V, so every perplexity is exactly V
    res = an.perplexity_difference(["a short sentence here .", "two words"], ["another one .", "x y z w"], lm)
    assert res["original"] == pytest.approx(vocab, rel=1e-5) and res["augmented"] == pytest.approx(vocab, rel=1e-5)
    assert res["difference"] == pytest.approx(0.0, abs=vocab * 1e-5)
    with pytest.raises(FileNotFoundError, match="cannot be loaded"):
        an.load_causal_lm(str(tmp_path / "no-such-lm"))


def test_suite_on_small_inputs(tmp_path, minilm_path):
    """The CLI path on a tiny data folder: topic clusters that MiniLM separates, and an augmentation cache
    whose augmentations are the originals themselves (cosine 1, SVG 0, GH 0, COND-HM = its own kappa)."""
    topics = {"python": ["how to sort a list in python", "python list comprehension syntax",
                         "reverse a python list", "append to a list in python"],
              "cooking": ["how long to boil pasta", "best way to cook spaghetti",
                          "how much salt for pasta water", "cooking rice on the stove"]}
    so = tmp_path / "data/clustering/stackoverflow.csv"
    so.parent.mkdir(parents=True)
    pd.DataFrame([(t, k) for k, ts in topics.items() for t in ts], columns=["text", "label"]).to_csv(so, index=False)
    originals = [t for ts in topics.values() for t in ts]
    cache = tmp_path / "augment/wiki/identity/seed0.parquet"
    cache.parent.mkdir(parents=True)
    pd.DataFrame({"original": originals + ["unchanged"], "augmented": originals + ["unchanged"],
                  "changed": [True] * 8 + [False]}).to_parquet(cache)
    out = tmp_path / "analysis.json"
    an.evaluate_analysis_cli(minilm_path, "avg", tmp_path / "data", out, augmentations=[cache], ks=(1, 3), lm=None)
    rec = json.loads(out.read_text())
    assert rec["stackoverflow"]["top_k"]["3"]["purity"] == 1.0
    assert "alignment_uniformity" in rec["skipped"]
    aug = rec["augmentations"]["identity/seed0"]
    assert aug["n_changed"] == 8 and aug["cosine"]["mean"] == pytest.approx(1.0, abs=1e-6)
    assert aug["svg"] == pytest.approx(0.0, abs=1e-12) and aug["gromov_hausdorff"] == pytest.approx(0.0, abs=1e-9)
