"""Short-text clustering: Hungarian accuracy on hand-made label permutations and against brute force,
NMI/ARI on hand-computed cases, K-means runs on separated blobs, the CSV reader, and the real data sizes."""
import itertools

import numpy as np
import pytest

from sentaug.data.clustering import load_clustering, read_cluster_csv
from sentaug.evaluate.clustering import cluster_scores, hungarian_accuracy, kmeans_runs, score_clustering


def from_counts(counts):
    """Label arrays realising counts[cluster][class]."""
    pred, true = [], []
    for c, row in enumerate(counts):
        for k, n in enumerate(row):
            pred += [c] * n
            true += [k] * n
    return np.array(true), np.array(pred)


def test_a_relabelled_perfect_clustering_scores_one():
    y = np.array([0, 0, 1, 1, 2, 2])
    assert hungarian_accuracy(y, np.array([2, 2, 0, 0, 1, 1])) == 1.0
    assert hungarian_accuracy(y, np.array([7, 7, 3, 3, 5, 5])) == 1.0  # any cluster ids


def test_one_misplaced_example_costs_one_over_n():
    y = np.array([0, 0, 1, 1, 2, 2])
    assert hungarian_accuracy(y, np.array([1, 1, 2, 0, 0, 0])) == pytest.approx(5 / 6)


def test_the_optimal_assignment_beats_the_greedy_one():
    # cluster x class counts [[5, 4], [4, 0]]: greedy takes the 5 and then 0 (5/13); the best map is the two 4s.
    y, p = from_counts([[5, 4], [4, 0]])
    assert hungarian_accuracy(y, p) == pytest.approx(8 / 13)


def test_more_clusters_than_classes_leaves_a_cluster_unmatched():
    y = np.array([0, 0, 0, 1, 1, 1])
    assert hungarian_accuracy(y, np.array([0, 0, 2, 1, 1, 1])) == pytest.approx(5 / 6)


def test_hungarian_accuracy_equals_brute_force_over_all_maps():
    rng = np.random.default_rng(0)
    for _ in range(20):
        y, p = rng.integers(0, 5, 60), rng.integers(0, 5, 60)
        best = max(np.mean(np.array(perm)[p] == y) for perm in itertools.permutations(range(5)))
        assert hungarian_accuracy(y, p) == pytest.approx(best)


def test_nmi_and_ari_on_hand_computed_cases():
    y = np.array([0, 0, 1, 1])
    s = cluster_scores(y, np.array([1, 1, 0, 0]))
    assert (s["acc"], s["nmi"], s["ari"]) == pytest.approx((1.0, 1.0, 1.0))
    s = cluster_scores(y, np.zeros(4, dtype=int))  # one cluster: no information
    assert (s["acc"], s["nmi"], s["ari"]) == pytest.approx((0.5, 0.0, 0.0))
    # contingency all ones: sum C(n_ij, 2) = 0, expected index = 2 * 2 / C(4, 2) = 2/3, max index = 2
    s = cluster_scores(y, np.array([0, 1, 0, 1]))
    assert s["ari"] == pytest.approx((0 - 2 / 3) / (2 - 2 / 3))
    assert s["nmi"] == pytest.approx(0.0, abs=1e-12)


def test_kmeans_runs_recover_separated_blobs_on_every_seed():
    rng = np.random.default_rng(0)
    centres = np.array([[10.0, 0, 0], [0, 10.0, 0], [0, 0, 10.0]])
    y = rng.permutation(np.repeat([2, 0, 1], 30))
    X = centres[y] + rng.normal(scale=0.5, size=(90, 3))
    res = kmeans_runs(X, y, 3, seeds=(0, 1, 2))
    for m in ("acc", "nmi", "ari"):
        assert res[m]["mean"] == 100.0 and res[m]["sd"] == 0.0 and len(res[m]["runs"]) == 3


def test_score_clustering_reports_the_mean_and_sd_over_seeds(tmp_path):
    # Two overlapping-free groups plus one ambiguous point halfway: accuracy is 1 or 10/11 depending on the seed.
    (tmp_path / "clustering").mkdir()
    rows = [f"t{i},{'a' if i < 5 else 'b'}" for i in range(10)]
    (tmp_path / "clustering/agnews.csv").write_text("text,label\n" + "\n".join(rows) + "\n")
    data = load_clustering(tmp_path, ("AgNews",))
    X = np.array([[0.0]] * 5 + [[1.0]] * 5)
    res = score_clustering(data, lambda texts: X[[int(t[1:]) for t in texts]], seeds=(0, 1))
    assert res["AgNews"] == 100.0 and res["avg"] == 100.0
    assert res["details"]["AgNews"]["k"] == 2 and res["details"]["AgNews"]["n"] == 10


def test_csv_reader_keeps_quoting_and_codes_labels_by_first_appearance(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text('text,label\n"a, b",7\nc,3\n"say ""hi""",7\n', encoding="utf-8")
    d = read_cluster_csv(path)
    assert d.texts == ["a, b", "c", 'say "hi"'] and d.labels.tolist() == [0, 1, 0] and d.n_classes == 2
    path.write_text("sentence,label\nx,1\n")
    with pytest.raises(ValueError, match="header"):
        read_cluster_csv(path)


@pytest.mark.mirror
def test_real_clustering_sets_have_the_published_sizes(mirror):
    data = load_clustering(mirror)
    assert {n: (len(d.texts), d.n_classes) for n, d in data.items()} == {
        "AgNews": (8000, 4), "SearchSnippets": (12340, 8), "StackOverflow": (20000, 20),
        "Biomedical": (20000, 20), "Tweet": (2472, 89), "GoogleNews-TS": (11109, 152),
        "GoogleNews-T": (11108, 152), "GoogleNews-S": (11108, 152)}
    # balanced sets: StackOverflow and Biomedical have 1,000 texts a class (SCCL / VaSCL table 4, ImN = 1)
    assert set(np.bincount(data["StackOverflow"].labels)) == {1000}
    assert set(np.bincount(data["Biomedical"].labels)) == {1000}


def test_cli_scores_a_tiny_model_like_an_independent_kmeans_and_brute_force_match(tmp_path, minilm_path):
    import json

    from sklearn.cluster import KMeans

    from sentaug.cli import main
    from sentaug.models.encoder import embed, load_pretrained
    from tests.train.test_train import write_backbone

    model = write_backbone(tmp_path / "bb", minilm_path, dropout=0.0)
    texts = [f"{w} number {i}" for w in ("apple", "river", "violin") for i in range(6)]
    labels = [w for w in ("fruit", "water", "music") for _ in range(6)]
    (tmp_path / "clustering").mkdir()
    (tmp_path / "clustering/tweet89.csv").write_text(
        "text,label\n" + "".join(f"{t},{y}\n" for t, y in zip(texts, labels)))
    out = tmp_path / "clustering.json"
    assert main(["evaluate", "clustering", "--model", model, "--pooler", "avg", "--data", str(tmp_path),
                 "--tasks", "Tweet", "--seeds", "2", "--out", str(out)]) == 0
    got = json.loads(out.read_text())
    net, tok = load_pretrained(model, "cpu")
    X = embed(net, tok, texts, poolers=("avg",))["avg"].astype(np.float64)
    y = np.repeat([0, 1, 2], 6)
    accs = []
    for seed in (0, 1):
        p = KMeans(n_clusters=3, n_init=1, random_state=seed).fit_predict(X)
        accs.append(max(np.mean(np.array(perm)[p] == y) for perm in itertools.permutations(range(3))))
    assert got["Tweet"] == pytest.approx(round(100 * np.mean(accs), 2))
    assert got["details"]["Tweet"]["acc"]["runs"] == pytest.approx([100 * a for a in accs], abs=1e-3)
    assert got["suite"] == "clustering" and got["pooler"] == "avg" and got["seeds"] == [0, 1]
