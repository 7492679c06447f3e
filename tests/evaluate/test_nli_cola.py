"""AugCSE's NLI data and probes: triplets grouped by premise (its data/download_anli.py), the ANLI score and the
A/E/C isomorphism of `sentaug evaluate nli`, the CoLA probe of `sentaug evaluate cola`, each against a hand
computation or an independent reimplementation."""
import json
import math

import numpy as np
import pytest

from sentaug.data.nli import NLIPair, NLITriplet, read_nli_triplets
from sentaug.data.triplets import build_triplets, contrast_pairs, group_triplets, sample, triplets_cli
from sentaug.evaluate import analysis
from sentaug.evaluate.cola import fit_multinomial, probe_accuracy
from sentaug.evaluate.nli import discrimination, isomorphism, isomorphism_samples, score_nli

PAIRS = [NLIPair("p1", "e1", "entailment"), NLIPair("p1", "c1", "contradiction"), NLIPair("p1", "n1", "neutral"),
         NLIPair("p2", "e2", "entailment"), NLIPair("p2", "n2", "neutral"),                 # no contradiction
         NLIPair("p3", "c3", "contradiction"), NLIPair("p3", "e3a", "entailment"),
         NLIPair("p3", "e3b", "entailment"), NLIPair("p3", "c3b", "contradiction")]


def test_triplets_keep_premises_with_both_labels_one_draw_each():
    triplets = group_triplets(PAIRS, seed=5)
    assert [t.anchor for t in triplets] == ["p1", "p3"]          # p2 has no contradiction: dropped
    assert triplets[0] == NLITriplet("p1", "e1", "c1")           # one of each: no choice to make
    assert triplets[1].positive in ("e3a", "e3b") and triplets[1].negative in ("c3", "c3b")
    assert group_triplets(PAIRS, seed=5) == triplets              # the draw is seeded
    draws = {group_triplets(PAIRS, seed=s)[1] for s in range(40)}
    assert len(draws) == 4                                         # every (e, c) combination of p3 occurs


def test_contrast_pairs_are_every_entailment_against_every_other_hypothesis():
    # the paper's ANLI score: entailment vs contradiction; the code's: vs every non-entailment
    assert contrast_pairs(PAIRS) == [("p1", "e1", "c1"), ("p3", "e3a", "c3"), ("p3", "e3a", "c3b"),
                                     ("p3", "e3b", "c3"), ("p3", "e3b", "c3b")]
    code = contrast_pairs(PAIRS, ("neutral", "contradiction"))
    assert len(code) == 2 + 1 + 4 and ("p2", "e2", "n2") in code


def test_sample_draws_without_replacement_in_order():
    rows = [NLITriplet(str(i), "e", "c") for i in range(10)]
    picked = sample(rows, 4, seed=1)
    assert len(picked) == 4 and len(set(picked)) == 4
    assert [int(t.anchor) for t in picked] == sorted(int(t.anchor) for t in picked)
    assert sample(rows, 20) == rows


def write_demo_nli(root):
    """SNLI (SentEval layout) with 3 premises of which 2 have both labels; ANLI with 1 such premise per file."""
    snli = root / "nli" / "snli_senteval"
    snli.mkdir(parents=True)
    rows = {"dev": [("a b", "c d", "entailment"), ("a b", "e f", "contradiction"), ("g h", "i j", "neutral"),
                    ("g h", "k l", "contradiction")],
            "test": [("m n", "o p", "contradiction"), ("m n", "q r", "entailment")]}
    for split, items in rows.items():
        for i, name in enumerate(("s1", "s2", "labels")):
            (snli / f"{name}.{split}").write_text("".join(f"{r[i]}\n" for r in items))
    for r in ("R1", "R2", "R3"):
        folder = root / "nli" / "anli" / r
        folder.mkdir(parents=True)
        for split in ("dev", "test"):
            lines = [{"context": f"{r} {split} context", "hypothesis": f"{r} {split} yes", "label": "e"},
                     {"context": f"{r} {split} context", "hypothesis": f"{r} {split} no", "label": "c"},
                     {"context": f"{r} {split} context", "hypothesis": f"{r} {split} maybe", "label": "n"}]
            (folder / f"{split}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_triplet_files_are_nli_for_simcse_csvs_sampled_to_another_set(tmp_path):
    write_demo_nli(tmp_path)
    assert [t.anchor for t in build_triplets(tmp_path, "snli")] == ["a b", "m n"]
    assert len(build_triplets(tmp_path, "anli_devtest")) == 6
    out = tmp_path / "out" / "snli.csv"
    stats = triplets_cli("snli", str(tmp_path), str(out))
    assert read_nli_triplets(out) == [NLITriplet("a b", "c d", "e f"), NLITriplet("m n", "q r", "o p")]
    assert stats["n"] == 2 and json.loads(out.with_suffix(".json").read_text())["n"] == 2
    # ANLI (6 triplets) sampled down to SNLI's size (2)
    small = tmp_path / "out" / "anli_devtest.as_snli.csv"
    assert triplets_cli("anli_devtest", str(tmp_path), str(small), sample_as="snli")["n"] == 2
    assert len(read_nli_triplets(small)) == 2
    with pytest.raises(ValueError, match="unknown NLI triplet set 'mnli'"):
        build_triplets(tmp_path, "mnli")


def test_discrimination_counts_cosine_wins_and_the_codes_dot_product_differs():
    a = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    p = np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 1.0]])         # cos 0.707, 1, 1      dot 1, 1, 1
    n = np.array([[3.0, 3.5], [-1.0, 0.0], [0.0, 1.0]])        # cos 0.651, -1, 1     dot 3, -1, 1
    # cosine: rows 0, 1 win (row 2 ties: a failure) -> 2/3; dot: row 1 only -> 1/3
    assert discrimination(a, p, n) == pytest.approx(200 / 3)
    assert discrimination(a, p, n, "dot") == pytest.approx(100 / 3)


def test_score_nli_reports_both_anli_scores_and_the_analysis_distances():
    rng = np.random.default_rng(0)
    trials = {"paper": contrast_pairs(PAIRS), "code": contrast_pairs(PAIRS, ("neutral", "contradiction")),
              "splits": ["x"]}
    sets = {"nli": [NLITriplet(f"a{i}", f"e{i}", f"c{i}") for i in range(30)],
            "anli": [NLITriplet(f"A{i}", f"E{i}", f"C{i}") for i in range(12)]}
    table = {}

    def vectors(sentences):
        for s in sentences:
            table.setdefault(s, rng.normal(size=6))
        return np.stack([table[s] for s in sentences])

    samples = isomorphism_samples(sets, seed=3)
    assert [len(samples["nli"][0]), samples["nli"][1]["sampled_as"], len(samples["anli"][0])] == [12, "anli", 12]
    res = score_nli(vectors, trials, samples, gh_sample=500, seed=3)
    rows = trials["paper"]
    wins = sum(analysis.augmentation_cosine(vectors([r[0]]), vectors([r[1]]))[0]
               > analysis.augmentation_cosine(vectors([r[0]]), vectors([r[2]]))[0] for r in rows)
    assert res["anli"]["accuracy"] == pytest.approx(100 * wins / len(rows)) and res["anli"]["trials"] == 5
    assert res["anli"]["trials_code"] == 7
    nli = samples["nli"][0]
    a, c = vectors([t.anchor for t in nli]), vectors([t.negative for t in nli])
    iso = res["isomorphism"]["nli"]["A-C"]
    assert iso["cond_hm"] == pytest.approx(analysis.cond_hm(a, c))
    assert iso["svg"] == pytest.approx(analysis.svg(a, c))
    assert iso["gromov_hausdorff"] == pytest.approx(analysis.gromov_hausdorff(a, c, sample=500, seed=3))
    assert isomorphism([a, a, c])["A-E"]["svg"] == 0.0           # a sample against itself


def test_probe_fits_the_multinomial_objective_of_the_official_code():
    """scikit-learn's LogisticRegression(multi_class="multinomial", C) as AugCSE's code ran it, minimised
    directly: C * sum CE(softmax(W x + b)) + ||W||^2 / 2 over two classes."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(1)
    x = rng.normal(size=(80, 3))
    y = (x @ np.array([1.0, -2.0, 0.5]) + rng.normal(scale=1.5, size=80) > 0).astype(int)
    C, d = 0.05, 3

    def objective(theta):
        W, b = theta[:2 * d].reshape(2, d), theta[2 * d:]
        logits = x @ W.T + b
        lse = np.logaddexp(logits[:, 0], logits[:, 1])
        return C * np.sum(lse - logits[np.arange(len(y)), y]) + 0.5 * np.sum(W ** 2)

    theta = minimize(objective, np.zeros(2 * d + 2), method="BFGS", options={"gtol": 1e-10}).x
    W, b = theta[:2 * d].reshape(2, d), theta[2 * d:]
    clf = fit_multinomial(x, y, C=C)
    # binary weights = the class difference (lbfgs stops at scikit-learn's default tolerance, as in the code)
    assert clf.coef_[0] == pytest.approx(W[1] - W[0], rel=2e-3)
    assert fit_multinomial(x, y, C=C / 2).coef_[0] != pytest.approx(W[1] - W[0], rel=0.1)   # C not doubled
    grid = rng.normal(size=(200, 3))
    assert (clf.predict(grid) == np.argmax(grid @ W.T + b, axis=1)).all()


def test_probe_accuracy_by_hand():
    # separable training data around 0; evaluation points -0.5 (0), 0.5 (1), 3 (1), -3 labelled 1 (wrong side)
    x = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    y = np.array([0, 0, 1, 1])
    assert probe_accuracy(x, y, np.array([[-0.5], [0.5], [3.0], [-3.0]]), np.array([0, 1, 1, 1])) == 75.0


def test_nli_and_cola_suites_end_to_end(tmp_path, minilm_path):
    """The CLI on small NLI files and the bundled demo CoLA: the JSON's scores are the module functions' on
    `embed`."""
    import shutil
    from importlib import resources

    from sentaug.cli import main
    from sentaug.evaluate.nli import anli_trials
    from sentaug.models.encoder import embed, load_pretrained

    write_demo_nli(tmp_path)
    shutil.copytree(str(resources.files("sentaug") / "resources" / "demo" / "glue" / "CoLA"), tmp_path / "glue/CoLA")
    assert main(["evaluate", "nli", "--model", minilm_path, "--pooler", "avg", "--data", str(tmp_path),
                 "--set", "nli=snli", "--set", "anli=anli_devtest", "--out", str(tmp_path / "nli.json")]) == 0
    assert main(["evaluate", "cola", "--model", minilm_path, "--pooler", "avg", "--data", str(tmp_path),
                 "--out", str(tmp_path / "cola.json")]) == 0
    nli, cola = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("nli", "cola"))
    model, tok = load_pretrained(minilm_path)
    rows = anli_trials(tmp_path)["paper"]
    v = [embed(model, tok, [r[i] for r in rows], ("avg",))["avg"] for i in range(3)]
    assert nli["anli"]["accuracy"] == pytest.approx(discrimination(*v), abs=1e-9)
    assert nli["anli"]["trials"] == 6 and nli["anli"]["trials_code"] == 12
    # SNLI has 2 triplets, ANLI 6: the NLI set is not sampled up
    assert (nli["isomorphism"]["nli"]["n"], nli["isomorphism"]["anli"]["n"]) == (2, 6)
    from sentaug.data.glue import read_glue

    train, dev = (read_glue(tmp_path / "glue" / "CoLA", split) for split in ("train", "dev"))
    expected = probe_accuracy(embed(model, tok, train.text_a, ("avg",))["avg"], train.labels,
                              embed(model, tok, dev.text_a, ("avg",))["avg"], dev.labels)
    assert cola["accuracy"] == pytest.approx(round(expected, 2)) and (cola["n_train"], cola["n_dev"]) == (64, 32)
    assert math.isfinite(nli["isomorphism"]["anli"]["E-C"]["cond_hm"])


def test_isomorphism_table_reads_set_pair_and_metric(tmp_path):
    """Table 15's cells: isomorphism.<set>.<pair>.<metric> of the nli suite's JSON, per block and row."""
    import yaml
    from pathlib import Path

    from sentaug.report.tables import render_table

    paper = yaml.safe_load((Path(__file__).parents[2] / "papers/augcse.yaml").read_text())
    paper["tables"] = {"table15": paper["tables"]["table15"]}
    (tmp_path / "augcse.yaml").write_text(yaml.safe_dump(paper))
    iso = {s: {p: {"cond_hm": 10 * k + j, "svg": k + j / 10, "gromov_hausdorff": j / 100}
               for j, p in enumerate(["A-E", "A-C", "E-C"])} for k, s in enumerate(["nli", "anli"])}
    (tmp_path / "nli.json").write_text(json.dumps({"isomorphism": iso}))
    inputs = {"rows": {str(i): [str(tmp_path / "nli.json")] for i in range(6)}}
    render_table(str(tmp_path / "augcse.yaml"), "table15", json.dumps(inputs), str(tmp_path / "t.tex"), "demo")
    import pandas as pd

    t = pd.read_csv(tmp_path / "t.csv").set_index(["block", "row", "column"])
    assert t.loc[("ANLI", "COND-HM", "E-C"), "reproduced"] == 12.0          # anli (k=1), E-C (j=2)
    assert t.loc[("MNLI + SNLI (sample)", "SVG", "A-C"), "reproduced"] == 0.1
    assert t.loc[("ANLI", "GD", "A-E"), ["reproduced", "paper"]].tolist() == [0.0, 51.7]
