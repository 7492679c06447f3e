"""CoLA probe on frozen embeddings (AugCSE Table 1's CoLA column, section 3.1 case study 1).

The paper scores linguistic acceptability "in accuracy" with a classifier on frozen sentence embeddings. Its
code (testing_part/src/experimenters: `cola_experiment_with_batcher`, `train_single_layer(eval_type="linear")`)
fits scikit-learn's LogisticRegression(solver="lbfgs", C=1.0, max_iter=1000) on the embeddings of GLUE CoLA's
train split as they come (no scaling) and reports accuracy on its validation split (GLUE's dev.tsv; the test
labels are not public). This module does the same, x100.

That code asked for `multi_class="multinomial"`, which scikit-learn has since removed; binary problems are now
fit as one logistic regression. The two-class multinomial model softmax(W x + b) is the binary model with
w = w1 - w2, and at the optimum w1 = -w2, so its penalty ||W||^2 / 2 is ||w||^2 / 4: the multinomial fit with C
is the binary fit with 2 C (tests/evaluate/test_nli_cola.py checks the predictions against the multinomial objective
minimised directly).
"""
from __future__ import annotations

import time
import warnings

import numpy as np


def fit_multinomial(x_train, y_train, C: float = 1.0, max_iter: int = 1000):
    """scikit-learn's lbfgs LogisticRegression minimising the multinomial objective
    C * sum CE(softmax(W x + b)) + ||W||^2 / 2 (binary labels: the equivalent binary fit with 2 C)."""
    from sklearn.linear_model import LogisticRegression

    y_train = np.asarray(y_train)
    binary = len(np.unique(y_train)) == 2
    clf = LogisticRegression(C=2 * C if binary else C, max_iter=max_iter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # ConvergenceWarning at max_iter: the code used the result too
        clf.fit(np.asarray(x_train, dtype=np.float64), y_train)
    return clf


def probe_accuracy(x_train, y_train, x_eval, y_eval, C: float = 1.0, max_iter: int = 1000) -> float:
    """Accuracy x100 on (x_eval, y_eval) of the multinomial logistic regression fit on the training set."""
    clf = fit_multinomial(x_train, y_train, C, max_iter)
    return float(100.0 * np.mean(clf.predict(np.asarray(x_eval, dtype=np.float64)) == np.asarray(y_eval)))


def evaluate_cola_cli(model, pooler, data, out, C: float = 1.0, max_iter: int = 1000, batch_size: int = 128,
                      device=None, scale=None, normalize=False) -> dict:
    """`sentaug evaluate cola`: GLUE CoLA train -> dev accuracy; one JSON written atomically."""
    from ..io import write_json
    from .embeddings import embed_lookup, load_model, run_metadata

    start = time.perf_counter()
    train, dev = load_cola(data)
    net, tokenizer = load_model(model, device)
    vectors = embed_lookup(net, tokenizer, train.text_a + dev.text_a, pooler, batch_size, progress=True,
                           normalize=normalize)
    res = score_cola(train, dev, vectors, C, max_iter)
    record = {**run_metadata(model, pooler, data, scale, start, normalize), "suite": "cola", **res}
    write_json(out, record)
    print(f"{model} [{pooler}] CoLA dev accuracy {res['accuracy']:.2f} (majority class "
          f"{res['majority_baseline']:.2f}; {res['n_train']} train / {res['n_dev']} dev)")
    return record


def load_cola(data):
    """GLUE CoLA's train and dev splits under the data folder `data`."""
    from ..data.glue import read_glue, task_dir

    folder = task_dir(data, "CoLA")
    return read_glue(folder, "train"), read_glue(folder, "dev")


def score_cola(train, dev, vectors, C: float = 1.0, max_iter: int = 1000) -> dict:
    """The probe's dev accuracy and the train majority class's, x100. `vectors(sentences) -> array`."""
    acc = probe_accuracy(vectors(train.text_a), train.labels, vectors(dev.text_a), dev.labels, C, max_iter)
    classes, counts = np.unique(train.labels, return_counts=True)
    majority = float(100.0 * np.mean(dev.labels == classes[np.argmax(counts)]))   # train's majority class
    return {"accuracy": round(acc, 2), "majority_baseline": round(majority, 2), "C": C, "max_iter": max_iter,
            "n_train": len(train.labels), "n_dev": len(dev.labels)}
