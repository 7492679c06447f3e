"""SentEval transfer protocol: nested CV on a hand-computable set, the L-BFGS solver against the objective
it claims to solve (scipy), SentEval's reader semantics, and the official sizes on the real data."""
import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import log_softmax

from sentaug.data.transfer import load_transfer, read_binary, read_mrpc, read_trec
from sentaug.evaluate.logreg import LbfgsLogReg, SentEvalLogReg, make_classifier
from sentaug.evaluate.transfer import REGS, inner_kfold, kfold_then_test, mrpc_features


def noisy_separable(k=4):
    """k*k points per label; label 0 around x=-1, label 1 around x=+1, except that one label-1 point sits
    exactly on a label-0 point (an outlier no linear classifier gets right)."""
    n = k * k
    off = np.array([[0.05 * (i % 4), 0.05 * (i // 4)] for i in range(n)])
    x0, x1 = off + [-1.0, 0.0], off + [1.0, 0.0]
    x1[0] = x0[5]
    return np.vstack([x0, x1]), np.array([0] * n + [1] * n)


def test_nested_cv_on_a_tiny_separable_set_matches_the_hand_computation():
    # k = 4, 16 points a label: outer folds hold 4 + 4 points, inner folds 3 + 3. The outlier is in exactly one
    # outer test fold (7/8 right -> 87.5, its inner CV is clean -> dev 100); in the 3 other outer folds it is
    # in exactly one inner test fold (5/6 right), so their dev is (3 * 100 + 83.33) / 4 = 95.83, for every l2.
    X, y = noisy_separable()
    new = lambda l2: make_classifier("lbfgs", l2, 2)  # noqa: E731
    res = inner_kfold(X, y, 4, new)
    assert sorted(res["fold_test"]) == [87.5, 100.0, 100.0, 100.0]
    assert sorted(res["fold_dev"]) == [95.83, 95.83, 95.83, 100.0]
    assert res["test"] == pytest.approx((87.5 + 300) / 4, abs=0.006)
    assert res["dev"] == pytest.approx((3 * 95.83 + 100) / 4, abs=0.006)
    assert set(res["l2"]) <= set(REGS)


def test_kfold_then_test_scores_the_official_test_set():
    X, y = noisy_separable()
    Xte = np.array([[-1.0, 0.0], [1.0, 0.0], [-0.9, 0.1], [5.0, 0.0]])
    res = kfold_then_test(X, y, Xte, np.array([0, 1, 1, 1]), 4, lambda l2: LbfgsLogReg(l2))
    assert res["test"] == 75.0  # (-0.9, 0.1) lies in the label-0 cluster: 3 of 4 right
    assert res["dev"] == pytest.approx((87.5 + 300) / 4, abs=0.006)  # the outlier costs 1/8 in one fold


def _objective(theta, X, Y, l2, d, c):
    W, b = theta[:d * c].reshape(d, c), theta[d * c:]
    logp = log_softmax(X @ W + b, axis=1)
    return -np.mean((Y * logp).sum(1)) + 0.5 * l2 * np.sum(W ** 2)


@pytest.mark.parametrize("l2", [1e-3, 1e-2])
def test_lbfgs_minimises_mean_cross_entropy_plus_half_l2_squared_norm(l2):
    # Reference: the same objective written out and minimised by scipy (weights penalised, bias not).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 5))
    y = np.argmax(X[:, :3] + 0.8 * rng.normal(size=(90, 3)), axis=1)
    Y = np.eye(3)[y]
    ref = minimize(_objective, np.zeros(5 * 3 + 3), args=(X, Y, l2, 5, 3), method="BFGS",
                   options={"gtol": 1e-9}).x
    clf = LbfgsLogReg(l2, tol=1e-9).fit(X, y)
    logits_ref = X @ ref[:15].reshape(5, 3) + ref[15:]
    logits = clf.clf.decision_function(X)
    # softmax logits are defined up to a per-row constant: compare centred logits
    centre = lambda z: z - z.mean(1, keepdims=True)  # noqa: E731
    np.testing.assert_allclose(centre(logits), centre(logits_ref), atol=2e-4)


def torch_senteval_fit(X, y, dx, dy, l2, n_classes, seed, optim, batch_size, tenacity, epoch_size, max_epoch=200):
    """Reference: SentEval's PyTorchClassifier.fit (nhid = 0) written with nn.Linear, autograd and torch's
    optimisers, one l2 at a time, the same init and shuffles as the solver under test."""
    import copy

    import torch
    from torch import nn

    rng = np.random.RandomState(seed)
    init = np.random.RandomState(seed)
    bound = 1.0 / np.sqrt(X.shape[1])
    model = nn.Linear(X.shape[1], n_classes)
    with torch.no_grad():
        model.weight.copy_(torch.from_numpy(init.uniform(-bound, bound, (n_classes, X.shape[1]))))
        model.bias.copy_(torch.from_numpy(init.uniform(-bound, bound, (1, n_classes))[0]))
    opt = (torch.optim.Adam if optim == "adam" else torch.optim.RMSprop)(model.parameters(), weight_decay=l2)
    tx, ty = torch.from_numpy(X.astype(np.float32)), torch.from_numpy(y)
    score = lambda m: float((m(torch.from_numpy(dx.astype(np.float32))).argmax(1).numpy() == dy).mean())  # noqa
    best, best_acc, bad, epoch = copy.deepcopy(model), -1.0, 0, 0
    while epoch <= max_epoch:
        for _ in range(epoch_size):
            perm = torch.from_numpy(rng.permutation(len(tx)))
            for i in range(0, len(tx), batch_size):
                idx = perm[i:i + batch_size]
                loss = nn.functional.cross_entropy(model(tx[idx]), ty[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
        epoch += epoch_size
        acc = score(model)
        if acc > best_acc:
            best_acc, best = acc, copy.deepcopy(model)
        else:
            if bad >= tenacity:
                break
            bad += 1
    return best, best_acc


@pytest.mark.parametrize("mode", ["fast", "test"])
def test_vectorised_senteval_solver_follows_each_single_l2_torch_trajectory(mode):
    from sentaug.evaluate.logreg import SENTEVAL_CONFIGS

    rng = np.random.default_rng(3)
    means = rng.normal(scale=0.6, size=(3, 6))
    y = rng.integers(0, 3, size=500)
    X = (means[y] + rng.normal(size=(500, 6))).astype(np.float32)
    tx, ty, dx, dy = X[:400], y[:400], X[400:], y[400:]
    regs = [1e-5, 1e-3, 1e-1]                  # 1e-1: strong enough to change the weights visibly
    clf = SentEvalLogReg(regs, 3, seed=7, **SENTEVAL_CONFIGS[mode]).fit(tx, ty, validation_data=(dx, dy))
    accs = clf.scores(dx, dy)
    for r, l2 in enumerate(regs):
        ref, ref_acc = torch_senteval_fit(tx, ty, dx, dy, l2, 3, 7, **SENTEVAL_CONFIGS[mode])
        assert accs[r] == ref_acc
        np.testing.assert_allclose(clf.W[r], ref.weight.detach().numpy().T, atol=2e-4)
        np.testing.assert_allclose(clf.b[r], ref.bias.detach().numpy(), atol=2e-4)
    assert not np.allclose(clf.W[0], clf.W[2], atol=1e-3)


def test_mrpc_features_are_abs_difference_and_product():
    u, v = np.array([[1.0, -2.0]]), np.array([[3.0, 4.0]])
    np.testing.assert_array_equal(mrpc_features(u, v), [[2.0, 6.0, 3.0, -8.0]])


def test_readers_follow_senteval_order_and_labels(tmp_path):
    (tmp_path / "MR").mkdir()
    (tmp_path / "MR/rt-polarity.pos").write_text("a  good film \nfine\n", encoding="latin-1")
    (tmp_path / "MR/rt-polarity.neg").write_text("bad\nnot  good at all\n", encoding="latin-1")
    mr = read_binary(tmp_path, "MR")
    # sorted by (token count, label): 1 token (neg 0 before pos 1), then 3 tokens, then 4
    assert mr.sentences == ["bad", "fine", "a good film", "not good at all"]
    assert mr.labels.tolist() == [0, 1, 1, 0]
    (tmp_path / "TREC").mkdir()
    (tmp_path / "TREC/train_5500.label").write_text("NUM:dist How far is it ?\nABBR:exp What is AI ?\n",
                                                    encoding="latin-1")
    (tmp_path / "TREC/TREC_10.label").write_text("LOC:city Where is Caf\xe9 ?\n", encoding="latin-1")
    trec = read_trec(tmp_path)
    assert trec["train"].sentences == ["What is AI ?", "How far is it ?"]
    assert trec["train"].labels.tolist() == [0, 5]
    assert trec["test"].sentences == ["Where is Caf\xe9 ?"] and trec["test"].labels.tolist() == [4]
    (tmp_path / "MRPC").mkdir()
    head = "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
    (tmp_path / "MRPC/msr_paraphrase_train.txt").write_text(head + "1\t1\t2\ta b c\tx y\n0\t3\t4\ta\tz\n")
    (tmp_path / "MRPC/msr_paraphrase_test.txt").write_text(head + "1\t5\t6\tq\tr\n")
    mrpc = read_mrpc(tmp_path)
    assert mrpc["train"].s1 == ["a", "a b c"] and mrpc["train"].labels.tolist() == [0, 1]


def test_a_missing_task_file_is_one_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="rt-polarity.pos"):
        load_transfer(tmp_path, ("MR",))
    with pytest.raises(ValueError, match="unknown transfer task"):
        load_transfer(tmp_path, ("SST5",))


@pytest.mark.mirror
def test_real_transfer_data_has_senteval_sizes(mirror):
    data = load_transfer(mirror)
    sizes = {t: len(d.labels) for t, d in data.items() if not isinstance(d, dict)}
    assert sizes == {"MR": 10662, "CR": 3775, "SUBJ": 10000, "MPQA": 10606}
    assert [int(data[t].labels.sum()) for t in ("MR", "CR", "SUBJ", "MPQA")] == [5331, 2407, 5000, 3312]
    assert {s: len(d.labels) for s, d in data["SST2"].items()} == {"train": 67349, "dev": 872, "test": 1821}
    assert {s: len(d.labels) for s, d in data["TREC"].items()} == {"train": 5452, "test": 500}
    assert {s: len(d.labels) for s, d in data["MRPC"].items()} == {"train": 4076, "test": 1725}
    assert np.bincount(data["TREC"]["test"].labels).tolist() == [9, 138, 94, 65, 81, 113]  # TREC-10 classes
