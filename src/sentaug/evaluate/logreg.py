"""L2-regularised logistic regression on frozen embeddings: a fast exact solver and SentEval's own.

SentEval (with `usepytorch`, as SimCSE runs it) trains `nn.Linear` with Adam/RMSprop, cross-entropy averaged
over the batch, `weight_decay = l2reg` on every parameter, and early stopping on a validation split. At
convergence that minimises  mean CE + (l2reg / 2) * ||theta||^2,  which is scikit-learn's multinomial
logistic regression with  C = 1 / (l2reg * n_train)  (sklearn leaves the bias unpenalised; the difference
is negligible at these l2reg values). `LbfgsLogReg` solves that objective to convergence with L-BFGS,
deterministically and much faster; `SentEvalLogReg` re-implements SentEval's PyTorchClassifier
(`senteval/tools/classifier.py`, nhid = 0) so the two can be compared on the same embeddings
(benchmarks/eval_suites.py --compare-solvers).

Both follow SentEval's interface: `fit(X, y, validation_data=None, validation_split=None)`, `score(X, y)`.
"""
from __future__ import annotations

import contextlib
import copy
import warnings

import numpy as np
import torch
from torch import nn

# SimCSE's evaluation.py classifier settings for SentEval's PyTorch logistic regression
SENTEVAL_CONFIGS = {
    "fast": {"optim": "rmsprop", "batch_size": 128, "tenacity": 3, "epoch_size": 2},
    "test": {"optim": "adam", "batch_size": 64, "tenacity": 5, "epoch_size": 4},
}


@contextlib.contextmanager
def one_thread():
    """Run torch single-threaded inside the block (restores the previous setting)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


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

    def predict(self, X) -> np.ndarray:
        return self.clf.predict(np.asarray(X, dtype=np.float64))

    def score(self, X, y) -> float:
        return float(np.mean(self.predict(X) == np.asarray(y)))


class SentEvalLogReg:
    """SentEval's PyTorchClassifier + MLP with nhid = 0 (a linear layer), re-implemented on torch.

    Same algorithm: seeded init, optimiser with weight_decay = l2 on all parameters, `epoch_size` passes per
    round over shuffled mini-batches, accuracy on the validation data after each round, keep the best model,
    stop after `tenacity` rounds without improvement or `max_epoch` passes. Random streams are local (not
    numpy/torch globals), so results are deterministic for a seed but not bit-identical to SentEval's.
    """

    def __init__(self, l2: float, n_classes: int, seed: int = 1111, optim: str = "adam", batch_size: int = 64,
                 tenacity: int = 5, epoch_size: int = 4, max_epoch: int = 200):
        if optim not in ("adam", "rmsprop"):
            raise ValueError(f"optim must be adam or rmsprop, got {optim!r}")
        self.l2, self.n_classes, self.seed = l2, n_classes, seed
        self.optim, self.batch_size, self.tenacity = optim, batch_size, tenacity
        self.epoch_size, self.max_epoch = epoch_size, max_epoch

    def set_l2(self, l2: float) -> "SentEvalLogReg":
        self.l2 = l2
        return self

    def _split(self, X, y, validation_data, validation_split, rng):
        if validation_data is not None:
            return X, y, *validation_data
        if not validation_split:
            raise ValueError("SentEvalLogReg.fit needs validation_data or validation_split")
        perm = rng.permutation(len(X))
        cut = int(validation_split * len(X))
        return X[perm[cut:]], y[perm[cut:]], X[perm[:cut]], y[perm[:cut]]

    def fit(self, X, y, validation_data=None, validation_split=None) -> "SentEvalLogReg":
        with one_thread():  # tiny matmuls: extra threads only add synchronisation (10x slower on a busy host)
            return self._fit(X, y, validation_data, validation_split)

    def _fit(self, X, y, validation_data, validation_split) -> "SentEvalLogReg":
        rng = np.random.RandomState(self.seed)
        gen = torch.Generator().manual_seed(self.seed)
        X, y = np.asarray(X, dtype=np.float32), np.asarray(y, dtype=np.int64)
        tx, ty, dx, dy = self._split(X, y, validation_data, validation_split, rng)
        tx, ty = torch.from_numpy(np.ascontiguousarray(tx)), torch.from_numpy(np.ascontiguousarray(ty))
        model = nn.Linear(X.shape[1], self.n_classes)
        with torch.no_grad():  # nn.Linear's default init, drawn from the local generator
            bound = 1.0 / np.sqrt(X.shape[1])
            model.weight.uniform_(-bound, bound, generator=gen)
            model.bias.uniform_(-bound, bound, generator=gen)
        opt_cls = torch.optim.Adam if self.optim == "adam" else torch.optim.RMSprop
        opt = opt_cls(model.parameters(), weight_decay=self.l2)  # default lr, as SentEval's get_optimizer
        loss_fn = nn.CrossEntropyLoss()
        self.model, best, best_acc, bad, epoch = model, copy.deepcopy(model), -1.0, 0, 0
        while epoch <= self.max_epoch:
            model.train()
            for _ in range(self.epoch_size):
                perm = torch.from_numpy(rng.permutation(len(tx)))
                for i in range(0, len(tx), self.batch_size):
                    idx = perm[i:i + self.batch_size]
                    loss = loss_fn(model(tx[idx]), ty[idx])
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
            epoch += self.epoch_size
            acc = self.score(dx, dy)
            if acc > best_acc:
                best_acc, best = acc, copy.deepcopy(model)
            else:
                if bad >= self.tenacity:
                    break
                bad += 1
        self.model = best
        return self

    @torch.inference_mode()
    def predict(self, X) -> np.ndarray:
        self.model.eval()
        return self.model(torch.as_tensor(np.asarray(X, dtype=np.float32))).argmax(1).numpy()

    def score(self, X, y) -> float:
        return float(np.mean(self.predict(X) == np.asarray(y)))


def make_classifier(solver: str, l2: float, n_classes: int, seed: int = 1111, mode: str = "fast"):
    """`lbfgs` (default, exact and fast) or `senteval` (SentEval's PyTorch LogReg with SimCSE's `mode` config)."""
    if solver == "lbfgs":
        return LbfgsLogReg(l2, seed=seed)
    if solver == "senteval":
        return SentEvalLogReg(l2, n_classes, seed=seed, **SENTEVAL_CONFIGS[mode])
    raise ValueError(f"unknown solver {solver!r}; known: lbfgs, senteval")
