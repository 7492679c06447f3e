"""Few-shot intent: fixed splits (identical across runs, K per class, disjoint from validation and test),
ATIS class filtering, the best-validation checkpoint rule, and the real data sizes."""
import numpy as np
import pytest

from sentaug.data.intent import load_intent, read_intent
from sentaug.evaluate.intent import KS, fewshot_split, score_intent_set, train_linear


def write_set(root, name, splits):
    for split, rows in splits.items():
        folder = root / "intent" / name / "fewshot_intent_format" / split
        folder.mkdir(parents=True)
        (folder / "seq.in").write_text("".join(f"{t}\n" for t, _ in rows))
        (folder / "label").write_text("".join(f"{y}\n" for _, y in rows))


@pytest.fixture()
def hwu(tmp_path):
    classes = ["alarm", "music", "weather"]
    train = [(f"{c} train {i}", c) for c in classes for i in range(30)]
    valid = [(f"{c} valid {i}", c) for c in classes for i in range(15)]
    test = [(f"{c} test {i}", c) for c in classes for i in range(10)]
    write_set(tmp_path, "hwu64", {"train": train, "valid": valid, "test": test})
    return read_intent(tmp_path, "HWU64")


def test_train_and_valid_are_merged_into_the_pool(hwu):
    assert len(hwu.pool.texts) == 135 and len(hwu.test.texts) == 30
    assert hwu.classes == ["alarm", "music", "weather"]


def test_splits_are_identical_across_runs_and_differ_between_split_numbers(hwu):
    for k in KS:
        a = fewshot_split(hwu.pool.labels, hwu.classes, k, split=2)
        b = fewshot_split(list(hwu.pool.labels), list(reversed(hwu.classes)), k, split=2)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    c = fewshot_split(hwu.pool.labels, hwu.classes, 5, split=3)
    assert not np.array_equal(fewshot_split(hwu.pool.labels, hwu.classes, 5, split=2)[0], c[0])


def test_splits_hold_k_per_class_and_are_disjoint_from_validation_and_test(hwu):
    labels = np.array(hwu.pool.labels)
    for k in KS:
        for split in range(5):
            tr, va = fewshot_split(hwu.pool.labels, hwu.classes, k, split)
            for part in (tr, va):
                assert sorted(np.unique(labels[part], return_counts=True)[1].tolist()) == [k] * 3
            assert not set(tr) & set(va)
            texts = {hwu.pool.texts[i] for i in np.concatenate([tr, va])}
            assert not texts & set(hwu.test.texts)
            assert all(" test " not in t for t in texts)


def test_smaller_k_training_sets_are_contained_in_larger_ones(hwu):
    t5, t10, t20 = (set(fewshot_split(hwu.pool.labels, hwu.classes, k, 1)[0]) for k in (5, 10, 20))
    assert t5 <= t10 <= t20


def test_a_small_class_gives_validation_what_is_left_and_too_small_a_class_is_an_error(hwu):
    labels = np.array(hwu.pool.labels)
    tr, va = fewshot_split(hwu.pool.labels, hwu.classes, 40, 0)  # 45 a class: 40 train + 5 validation
    assert len(tr) == 120 and len(va) == 15 and not set(tr) & set(va)
    assert sorted(np.unique(labels[va], return_counts=True)[1].tolist()) == [5, 5, 5]
    with pytest.raises(ValueError, match="need more than K"):
        fewshot_split(hwu.pool.labels, hwu.classes, 45, 0)


def test_atis_drops_classes_with_fewer_than_40_pool_examples(tmp_path):
    train = [("fly", "atis_flight")] * 30 + [("fare", "atis_airfare")] * 30 + [("meal", "atis_meal")] * 30
    valid = [("fly", "atis_flight")] * 10 + [("fare", "atis_airfare")] * 9 + [("meal", "atis_meal")] * 20
    test = [("fly", "atis_flight"), ("fare", "atis_airfare"), ("meal", "atis_meal"), ("x", "atis_city")]
    write_set(tmp_path, "atis", {"train": train, "valid": valid, "test": test})
    d = read_intent(tmp_path, "ATIS")
    assert d.classes == ["atis_flight", "atis_meal"]  # 40 and 50 kept, 39 dropped
    assert len(d.pool.texts) == 90 and d.test.labels == ["atis_flight", "atis_meal"]


def test_the_reported_accuracy_is_the_test_accuracy_at_the_first_best_validation_step():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 20)
    X = np.c_[np.where(y == 0, -3.0, 3.0), rng.normal(size=40)]
    r = train_linear(X, y, X, y, X, y, 2, seed=0, lr=0.05, iterations=300, eval_every=100)
    assert r["steps"] == [100, 200, 300]
    assert max(r["val"]) == 1.0 and r["test_at_best"] == 1.0  # separable by a margin of 6
    assert r["best_step"] == r["steps"][r["val"].index(1.0)]


def test_score_intent_set_is_deterministic_and_learns_separable_intents(hwu):
    centres = {"alarm": [4.0, 0, 0], "music": [0, 4.0, 0], "weather": [0, 0, 4.0]}
    rng = np.random.default_rng(0)
    vec = {t: np.array(centres[t.split()[0]]) + rng.normal(scale=0.3, size=3)
           for t in hwu.pool.texts + hwu.test.texts}
    vectors = lambda texts: np.stack([vec[t] for t in texts])  # noqa: E731
    train = {"lr": 0.05, "batch_size": 32, "iterations": 200, "eval_every": 100}
    a = score_intent_set(hwu, vectors, ks=(5,), n_splits=2, train=train)
    b = score_intent_set(hwu, vectors, ks=(5,), n_splits=2, train=train)
    assert a == b
    assert a[5]["mean"] == 100.0 and a[5]["sd"] == 0.0


@pytest.mark.mirror
def test_real_intent_sets_have_the_published_sizes(mirror):
    data = load_intent(mirror)
    got = {n: (len(d.pool.texts), len(d.test.texts), len(d.classes)) for n, d in data.items()}
    assert got == {"SNIPS": (13084 + 700, 700, 7), "BANKING77": (8622 + 1540, 3080, 77),
                   "CLINC150": (15000 + 3000, 4500, 150), "HWU64": (8954 + 1076, 1076, 64),
                   "ATIS": (4834, 800, 8)}  # ATIS: the 8 classes with >= 40 of 4,978 pool examples (VaSCL app. C)
    short = {}
    for name, d in data.items():  # 20 training examples a class everywhere; validation short only where noted
        tr, va = fewshot_split(d.pool.labels, d.classes, 20, 4)
        assert len(tr) == 20 * len(d.classes)
        short[name] = 20 * len(d.classes) - len(va)
        assert not set(tr) & set(va)  # disjoint examples (some texts occur twice in a pool, e.g. BANKING77)
    counts = {c: d.pool.labels.count(c) for d in [data["HWU64"]] for c in d.classes}
    assert short == {"SNIPS": 0, "BANKING77": 0, "CLINC150": 0, "ATIS": 0,
                     "HWU64": sum(max(0, 40 - n) for n in counts.values())}


def test_intent_installs_verified_from_its_official_addresses_or_a_mirror(tmp_path, monkeypatch):
    """One raw file per address (jianguoz/Few-Shot-Intent-Detection, Datasets/<NAME>/<split>/): a remote file
    that differs from its pin is refused, naming it, and so is a changed file in a mirror."""
    import copy

    from sentaug.data.download import DownloadError, fetch, load_sources

    monkeypatch.delenv("SENTAUG_MIRROR", raising=False)
    sources = copy.deepcopy(load_sources())
    src = sources["official"]["intent"]
    assert len(src["files"]) == 30  # 5 sets x {train, valid, test} x {seq.in, label}
    assert src["members"]["intent/atis/fewshot_intent_format/"] == "Datasets/ATIS/"
    remote = tmp_path / "remote"
    for rel in src["files"]:
        path = remote / [theirs + rel[len(ours):] for ours, theirs in src["members"].items() if rel.startswith(ours)][0]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    src["base_url"] = remote.as_uri() + "/"   # the official layout, served locally, with wrong contents
    with pytest.raises(DownloadError, match=r"intent/atis/fewshot_intent_format/test/label \(from file:.*"
                                            r"Datasets/ATIS/test/label\): sha256"):
        fetch("intent", tmp_path / "out", sources=sources)
    assert not (tmp_path / "out" / "intent").exists()
    mirror = tmp_path / "mirror"
    for rel in src["files"]:
        (mirror / rel).parent.mkdir(parents=True, exist_ok=True)
        (mirror / rel).write_text("x\n")
    with pytest.raises(DownloadError, match=r"intent/atis/fewshot_intent_format/test/label \(from mirror"):
        fetch("intent", tmp_path / "out", mirror=str(mirror), sources=sources)
    assert not (tmp_path / "out" / "intent").exists()


def test_demo_iterations_reach_the_record(tmp_path, minilm_path):
    """`--iterations` (demo scale only) is what the linear layers run: checkpoints every 100 up to it."""
    from sentaug.evaluate.intent import evaluate_intent_cli

    write_set(tmp_path, "snips", {"train": [(f"{c} please {i}", c) for c in ("play", "book") for i in range(22)],
                                  "valid": [(f"{c} now {i}", c) for c in ("play", "book") for i in range(4)],
                                  "test": [(f"{c} later {i}", c) for c in ("play", "book") for i in range(3)]})
    rec = evaluate_intent_cli(minilm_path, "avg", tmp_path, tmp_path / "intent.json", datasets=["SNIPS"],
                              iterations=200)
    assert rec["train"]["iterations"] == 200
    assert {s for k in ("5", "10", "20") for s in rec["details"]["SNIPS"][k]["best_steps"]} <= {100, 200}


@pytest.mark.mirror
def test_intent_download_from_the_real_mirror_matches_its_pins(tmp_path, mirror):
    from sentaug.data.download import fetch

    fetch("intent", tmp_path, mirror=str(mirror))
    assert load_intent(tmp_path)["CLINC150"].classes == load_intent(mirror)["CLINC150"].classes
