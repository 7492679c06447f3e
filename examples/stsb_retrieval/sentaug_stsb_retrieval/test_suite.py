"""The suite's scores against hand computations: `pytest examples/stsb_retrieval` (sentaug's src on PYTHONPATH)."""
import numpy as np
import pytest

from sentaug_stsb_retrieval.suite import retrieval_scores

# Three candidates on the unit circle at 0, 90 and 180 degrees; the queries' vectors are given by name.
VECTORS = {"c0": [1.0, 0.0], "c90": [0.0, 1.0], "c180": [-1.0, 0.0],
           "near0": [1.0, 0.1], "near90": [0.2, 1.0], "between": [1.0, 1.0]}


def vectors(sentences):
    return np.array([VECTORS[s] for s in sentences])


def test_a_query_closest_to_its_partner_ranks_it_first():
    res = retrieval_scores(["near0", "near90"], ["c0", "c90"], ["c0", "c90", "c180"], vectors)
    assert (res["mrr"], res["recall_at_1"]) == (100.0, 100.0)
    assert (res["n_queries"], res["n_candidates"]) == (2, 3)


def test_ranks_by_cosine_and_ties_rank_above_the_partner():
    # near0's partner c90 is second (c0 is closer): 1/2. `between` is 45 degrees from c0 and c90 alike: the tie
    # ranks c0 above its partner c90, so 1/2 and not first
    res = retrieval_scores(["near0", "between"], ["c90", "c90"], ["c0", "c90", "c180"], vectors)
    assert res["mrr"] == pytest.approx(100 * (1 / 2 + 1 / 2) / 2)
    assert res["recall_at_1"] == 0.0
    # near90's partner c180 is last of three (c90 at cos ~0.98, c0 at ~0.2, c180 at ~-0.2): 1/3
    res = retrieval_scores(["near0", "near90"], ["c0", "c180"], ["c0", "c90", "c180"], vectors)
    assert res["mrr"] == pytest.approx(100 * (1 + 1 / 3) / 2, abs=1e-4)
    assert res["recall_at_1"] == 50.0
