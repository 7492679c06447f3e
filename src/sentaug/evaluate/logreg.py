"""L2-regularised logistic regression on frozen embeddings: a fast exact solver and SentEval's own.

SentEval (with `usepytorch`, as SimCSE runs it) trains `nn.Linear` with Adam/RMSprop, cross-entropy averaged
over the batch, `weight_decay = l2reg` on every parameter, and early stopping on a validation split. At
convergence that minimises  mean CE + (l2reg / 2) * ||theta||^2,  which is scikit-learn's multinomial
logistic regression with  C = 1 / (l2reg * n_train)  (sklearn leaves the bias unpenalised; the difference
is negligible at these l2reg values). Early stopping keeps SentEval's classifier away from that optimum
(up to ~1 point of accuracy on MR/TREC), so `SentEvalLogReg`, SentEval's PyTorchClassifier
(`senteval/tools/classifier.py`, nhid = 0) vectorised over the l2 values, is the default; `LbfgsLogReg`
solves the objective to convergence (benchmarks/eval_suites.py --compare-solvers measures the gap).

Both follow SentEval's interface: `fit(X, y, validation_data=None, validation_split=None)`, `score(X, y)`.
"""
from __future__ import annotations

import warnings

import numpy as np

# SimCSE's evaluation.py classifier settings for SentEval's PyTorch logistic regression
SENTEVAL_CONFIGS = {
    "fast": {"optim": "rmsprop", "batch_size": 128, "tenacity": 3, "epoch_size": 2},
    "test": {"optim": "adam", "batch_size": 64, "tenacity": 5, "epoch_size": 4},
}


class LbfgsLogReg:
    """Multinomial logistic regression minimising mean CE + l2/2 ||W||^2 (L-BFGS, scikit-learn).

    `warm_start` reuses the previous solution as the starting point (a regularisation path: fit the
    strongest l2 first); the optimum does not depend on it, only the iteration count does.
    """

    def __init__(self, l2: float, seed: int = 1111, max_iter: int = 1000, tol: float = 1e-5):
        from sklearn.linear_model import LogisticRegression

        self.l2 = l2
        self.clf = LogisticRegression(C=1.0, max_iter=max_iter, tol=tol, random_state=seed, warm_start=True)

    def set_l2(self, l2: float) -> "LbfgsLogReg":
        self.l2 = l2
        return self

    def fit(self, X, y, validation_data=None, validation_split=None) -> "LbfgsLogReg":
        X = np.asarray(X, dtype=np.float64)
        self.clf.set_params(C=1.0 / (self.l2 * len(X)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ConvergenceWarning at max_iter: the result is still used
            self.clf.fit(X, y)
        return self

    def scan(self, regs, xtr, ytr, xval, yval) -> list[float]:
        """Validation accuracy of each l2 in `regs`, strongest first so that L-BFGS warm-starts along the path."""
        acc = {}
        for l2 in sorted(regs, reverse=True):
            acc[l2] = self.set_l2(l2).fit(xtr, ytr).score(xval, yval)
        return [acc[l2] for l2 in regs]

    def predict(self, X) -> np.ndarray:
        return self.clf.predict(np.asarray(X, dtype=np.float64))

    def score(self, X, y) -> float:
        return float(np.mean(self.predict(X) == np.asarray(y)))


class SentEvalLogReg:
    """SentEval's PyTorchClassifier + MLP with nhid = 0 (a linear layer), re-implemented in numpy for several
    l2 values at once.

    Same algorithm as SentEval: nn.Linear's default init (identical for every l2, as SentEval seeds each
    classifier alike), Adam (lr 1e-3) or RMSprop (lr 1e-2) with weight_decay = l2 on weight and bias, mean
    cross-entropy over mini-batches of shuffled examples, `epoch_size` passes per round, accuracy on the
    validation data after each round, the best model kept, stop after `tenacity` rounds without
    improvement or past `max_epoch`. The R = len(l2) models share the shuffles (SentEval draws them from
    the same seed) and are trained as one (R, d, c) tensor with analytic gradients: the optimiser maths is
    elementwise, so each model follows exactly its own single-l2 trajectory (tests/evaluate/test_transfer.py checks
    this against a torch autograd re-implementation), 4 l2 values cost about one fit, and there is no
    autograd overhead on these tiny matrices. Deterministic for a seed; not bit-identical to SentEval.
    """

    def __init__(self, l2, n_classes: int, seed: int = 1111, optim: str = "adam", batch_size: int = 64,
                 tenacity: int = 5, epoch_size: int = 4, max_epoch: int = 200):
        if optim not in ("adam", "rmsprop"):
            raise ValueError(f"optim must be adam or rmsprop, got {optim!r}")
        self.n_classes, self.seed = n_classes, seed
        self.optim, self.batch_size, self.tenacity = optim, batch_size, tenacity
        self.epoch_size, self.max_epoch = epoch_size, max_epoch
        self.set_l2(l2)

    def set_l2(self, l2) -> "SentEvalLogReg":
        self.l2 = np.atleast_1d(np.asarray(l2, dtype=np.float32))
        return self

    def scan(self, regs, xtr, ytr, xval, yval) -> list[float]:
        """Validation accuracy of each l2 in `regs` (all trained at once)."""
        return list(self.set_l2(regs).fit(xtr, ytr, validation_data=(xval, yval)).scores(xval, yval))

    def fit(self, X, y, validation_data=None, validation_split=None) -> "SentEvalLogReg":
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1):   # tiny matrices: extra BLAS threads only add synchronisation
            return self._fit(np.asarray(X, dtype=np.float32), np.asarray(y, dtype=np.int64),
                             validation_data, validation_split)

    def _fit(self, X, y, validation_data, validation_split) -> "SentEvalLogReg":
        rng = np.random.RandomState(self.seed)
        if validation_data is not None:
            tx, ty, (dx, dy) = X, y, validation_data
        elif validation_split:
            perm = rng.permutation(len(X))
            cut = int(validation_split * len(X))
            tx, ty, dx, dy = X[perm[cut:]], y[perm[cut:]], X[perm[:cut]], y[perm[:cut]]
        else:
            raise ValueError("SentEvalLogReg.fit needs validation_data or validation_split")
        dx, dy = np.asarray(dx, dtype=np.float32), np.asarray(dy)
        R, d, c = len(self.l2), X.shape[1], self.n_classes
        bound = 1.0 / np.sqrt(d)                       # nn.Linear's default init
        init = np.random.RandomState(self.seed)
        W = np.repeat(init.uniform(-bound, bound, (c, d)).T[None].astype(np.float32), R, 0)
        b = np.repeat(init.uniform(-bound, bound, (1, c)).astype(np.float32), R, 0)
        params, wd = [W, b], [self.l2[:, None, None], self.l2[:, None]]
        m = [np.zeros_like(p) for p in params]
        v = [np.zeros_like(p) for p in params]
        onehot = np.eye(c, dtype=np.float32)[ty]
        active = np.ones(R, dtype=bool)
        self.W, self.b = W.copy(), b.copy()
        best, bad, epoch, t = np.full(R, -1.0), np.zeros(R, dtype=int), 0, 0
        while epoch <= self.max_epoch and active.any():
            for _ in range(self.epoch_size):
                perm = rng.permutation(len(tx))
                for i in range(0, len(tx), self.batch_size):
                    idx = perm[i:i + self.batch_size]
                    xb = tx[idx]
                    z = xb @ W + b[:, None, :]                       # (R, B, c)
                    z -= z.max(-1, keepdims=True)
                    p = np.exp(z)
                    p /= p.sum(-1, keepdims=True)
                    g = (p - onehot[idx]) / len(idx)
                    grads = [xb.T @ g + wd[0] * W, g.sum(1) + wd[1] * b]
                    t += 1
                    for k, (param, grad) in enumerate(zip(params, grads)):
                        mask = active.reshape((R,) + (1,) * (param.ndim - 1))
                        if self.optim == "adam":           # torch.optim.Adam, defaults
                            m[k] = 0.9 * m[k] + 0.1 * grad
                            v[k] = 0.999 * v[k] + 0.001 * grad * grad
                            step = (1e-3 / (1 - 0.9 ** t)) * m[k] / (np.sqrt(v[k] / (1 - 0.999 ** t)) + 1e-8)
                        else:                              # torch.optim.RMSprop, defaults
                            v[k] = 0.99 * v[k] + 0.01 * grad * grad
                            step = 1e-2 * grad / (np.sqrt(v[k]) + 1e-8)
                        param -= np.where(mask, step, 0.0).astype(np.float32)
            epoch += self.epoch_size
            acc = np.mean(np.argmax(dx @ W + b[:, None, :], -1) == dy, axis=1)
            improved = active & (acc > best)
            self.W[improved], self.b[improved], best[improved] = W[improved], b[improved], acc[improved]
            stalled = active & ~improved
            active &= ~(stalled & (bad >= self.tenacity))
            bad[stalled] += 1
        return self

    def predict_all(self, X) -> np.ndarray:
        """(R, n) predictions, one row per l2."""
        return np.argmax(np.asarray(X, dtype=np.float32) @ self.W + self.b[:, None, :], -1)

    def scores(self, X, y) -> np.ndarray:
        return np.mean(self.predict_all(X) == np.asarray(y), axis=1)

    def predict(self, X) -> np.ndarray:
        return self.predict_all(X)[0]

    def score(self, X, y) -> float:
        return float(self.scores(X, y)[0])


def make_classifier(solver: str, l2: float, n_classes: int, seed: int = 1111, mode: str = "fast"):
    """`lbfgs` (default, exact and fast) or `senteval` (SentEval's PyTorch LogReg with SimCSE's `mode` config)."""
    if solver == "lbfgs":
        return LbfgsLogReg(l2, seed=seed)
    if solver == "senteval":
        return SentEvalLogReg(l2, n_classes, seed=seed, **SENTEVAL_CONFIGS[mode])
    raise ValueError(f"unknown solver {solver!r}; known: lbfgs, senteval")
