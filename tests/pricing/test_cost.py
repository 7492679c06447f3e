"""The bill (`sentaug cost`) and the runtime a training job asks for: step times interpolated and
extrapolated from a table as documented (sentaug.pricing.step_times), one run's projection, GLUE and
indexes (sentaug.pricing.cost), each against a hand computation from a table of round numbers; the
table loader against benchmark JSON written here; the runtime of known jobs."""
import copy
import json
import math
import os
from pathlib import Path

import pytest
import yaml

from sentaug.evaluate import suites
from sentaug.pricing import cost
from sentaug.pricing.calibration import run_parts, table_from_benchmark, write_table
from sentaug.pricing.runtime import Runtimes
from sentaug.pricing.step_times import StepTimes, flops_per_token, known_devices
from sentaug.workflow import Workflow

ROOT = Path(__file__).resolve().parents[2]
BASE = {"layers": 12, "hidden": 768, "intermediate": 3072}
# Round numbers, so that every expectation below can be computed by hand.
TABLE = {"device": "Test GPU", "source": "tests", "length": 32,
         "shapes": {"bert-base": {"arch": "bert", **BASE}, "roberta-base": {"arch": "roberta", **BASE}},
         "steps": {"bert-base": {64: {"ms": 20.0}, 512: {"ms": 100.0}},
                   "roberta-base": {64: {"ms": 30.0}, 512: {"ms": 120.0}}},
         # each part's overhead under its key, timed on the method named (as the calibration keeps them)
         "overhead": {key: {"ratio": r, "at": "bert-base/64", "method": m} for key, m, r in
                      [("hard_negative", "simcse_retrieval", 1.2), ("switch_case", "cards", 1.5),
                       ("virtual_augmentation", "vascl", 1.1), ("discriminator", "augcse", 1.3),
                       ("mlm", "simcse_mlm", 2.0)]},
         "evaluation": {"dev_ms": 400.0, "dev_sentences": 4000, "best_write_ms": 500.0, "knn_s": 60.0,
                        "knn_rows": 1000000}}


@pytest.fixture
def times():
    return StepTimes("test", copy.deepcopy(TABLE))


@pytest.fixture(scope="module")
def paper(shipped_config):
    return Workflow({**copy.deepcopy(shipped_config), "scale": "paper"}, results="/nonexistent/results")


def test_flops_per_token_match_the_benchmarks_flop_counter():
    # gpu_training.py counted 2,104,888,393,728 FLOPs for a BERT-base step at batch 64 (2 x 64 x 32 tokens)
    # with torch's FlopCounterMode; ours leaves out the embeddings and the head
    assert flops_per_token({"arch": "bert", **BASE}, 32) * 4096 == pytest.approx(2_104_888_393_728, rel=2e-3)


def test_step_times_are_interpolated_in_tokens_and_held_or_scaled_outside(times):
    bert = {"arch": "bert", **BASE}
    assert times.step_ms(bert, 64, 32).ms == 20.0 and times.step_ms(bert, 64, 32).measured
    t = times.step_ms(bert, 128, 32)             # 8,192 tokens between 4,096 (20 ms) and 32,768 (100 ms)
    assert t.ms == pytest.approx(20 + 80 * 4096 / 28672) and not t.measured
    assert times.step_ms(bert, 32, 32).ms == 20.0                     # below: launch-bound, held
    assert times.step_ms(bert, 1024, 32).ms == pytest.approx(200.0)   # above: in proportion to tokens
    large = {"arch": "roberta", "layers": 24, "hidden": 1024, "intermediate": 4096}
    ratio = (24 * (2 * (4 * 1024 ** 2 + 2 * 1024 * 4096) + 4 * 32 * 1024)) / (12 * (2 * (4 * 768 ** 2 + 2 * 768 * 3072)
                                                                                  + 4 * 32 * 768))
    assert times.step_ms(large, 512, 32).ms == pytest.approx(120.0 * ratio)   # from roberta-base's own row
    tiny = {"arch": "bert", "layers": 2, "hidden": 128, "intermediate": 512}
    assert times.step_ms(tiny, 64, 32).ms == pytest.approx(20.0 * 2 / 12)      # the layer ratio, not 1/209
    deberta = {"arch": "deberta", "layers": 48, "hidden": 1536, "intermediate": 6144}
    assert times.reference("deberta") == "bert-base"                           # no deberta row: from bert-base
    assert times.scaled(4.0).step_ms(bert, 64, 32).ms == 5.0 and times.step_ms(bert, 64, 32).ms == 20.0
    assert times.step_ms(deberta, 64, 32).basis


@pytest.mark.parametrize("method, backbone, expected, measured", [
    ("cards", "bert-base-uncased", 1.5, True),                  # measured at bert-base, batch 64
    ("cards_r_top", "bert-base-uncased", 1.2 * 1.25, False),    # a hard negative x switch-case (1.5 / 1.2)
    ("simcse_sup", "bert-base-uncased", 1.2, False),            # the contradiction: a hard negative
    ("clear_del_word", "roberta-base", 2.0, False),             # MLM
    ("clear_double_mlm", "roberta-base", 3.0, False),           # two MLM copies: 1 + 2 x (2.0 - 1)
    ("sda_pi", "bert-base-uncased", 1.0, False),                # counted as SimCSE, and said so
    ("simcse", "bert-base-uncased", 1.0, True),
    ("simcse~train.lowercase=true", "bert-base-uncased", 1.0, True),   # a SimCSE variant: SimCSE's step
])
def test_method_overheads_compose_from_the_measured_features(times, paper, method, backbone, expected, measured):
    spec = paper.specs.train_spec(None, backbone, method, 42)
    ratio, basis = cost.method_overhead(times, spec, "bert-base/64")
    assert ratio == pytest.approx(expected) and (not basis) == measured


def test_a_timed_methods_overhead_is_kept_under_the_key_of_the_part_it_measures(shipped_config):
    from sentaug.pricing.calibration import overhead_key

    # gpu_training.py's `overhead` rows, as config.yaml declares those methods: SimCSE is the base; CARDS adds
    # switch-case positives and retrieved negatives, and its row stands for the switch-case (timed with the other)
    keys = {m: overhead_key(m, shipped_config["methods"])
            for m in ("simcse", "simcse_retrieval", "cards", "vascl", "augcse", "simcse_mlm")}
    assert keys == {"simcse": None, "simcse_retrieval": "hard_negative", "cards": "switch_case",
                    "vascl": "virtual_augmentation", "augcse": "discriminator", "simcse_mlm": "mlm"}
    with pytest.raises(ValueError, match="'sda_pi': no part of it stands for its measured overhead"):
        overhead_key("sda_pi", shipped_config["methods"])      # a cached positive: SimCSE's step, not its base


def test_a_runs_projection_is_steps_evaluations_checkpoints_and_start_up(times, paper):
    # SimCSE on BERT-base, wiki1m's 1,000,000 lines at batch 64: 15,625 steps of 20 ms, 125 dev evaluations
    # (0.4 s + a 0.5 s best-model write each: this table has no device copy of the best model), 3 checkpoints
    # (every 5,000 steps at paper scale) of 3 writes, 30 s to start
    spec = paper.specs.run_spec("leaderboard", "bert-base-uncased", "simcse", 42)
    p = cost.project_run(paper.paths, spec, times, paper.config)
    assert p.steps == 15_625 and p.basis == ["training start-up estimated at 30 s (not measured on Test GPU)"]
    assert p.seconds == pytest.approx(30 + 15_625 * 0.020 + 125 * (0.4 + 0.5) + 3 * 3 * 0.5)   # 459.5 s
    assert cost.train_runtime_minutes(p) == math.ceil(1.5 * 459.5 / 60 + 10) == 22
    assert cost.train_runtime_minutes(p, runs_per_gpu=2) == math.ceil(1.5 * 2 * 459.5 / 60 + 10) == 33
    assert cost.train_runtime_minutes(p, runs_per_gpu=2, sharing=1.6) == math.ceil(1.5 * 2 / 1.6 * 459.5 / 60 + 10)
    assert cost.train_runtime_minutes(cost.Projection(60)) == 15                  # the floor
    assert cost.train_runtime_minutes(cost.Projection(10 ** 6)) == 2880           # the cap


def test_a_setting_measured_at_its_real_shape_replaces_the_extrapolation(times, paper):
    """A run whose step setting the table times (gpu_calibrate.py) is priced from it: no overhead factor, no
    basis; a measured start-up replaces the 30 s estimate. Settings differing only on the host share a key."""
    spec = paper.specs.run_spec("cards", "roberta-base", "cards", 42)
    key = cost.step_setting(spec)
    assert key == f"roberta-base/b{spec['batch_size']}/L32/retrieved1"
    before = cost.project_run(paper.paths, spec, times, paper.config)
    assert before.basis == ["cards's overhead measured at bert-base/64",      # 120 ms x 1.5: extrapolated
                            "training start-up estimated at 30 s (not measured on Test GPU)"]
    times.table["settings"] = {key: {"ms": 80.0}}
    times.table["startup"] = {"training_s": 12.0}
    after = cost.project_run(paper.paths, spec, times, paper.config)
    assert after.measured and after.steps == before.steps
    assert after.parts["step_ms"] == 80.0 and after.parts["startup"] == 12.0
    assert after.parts["steps"] == pytest.approx(after.steps * 0.080)
    # host-side variations (sampling mode, k, the switch probability) share the step; s negatives do not
    variant = paper.specs.run_spec("cards", "roberta-base", "cards_d_uniform~negatives.s=16", 42)
    assert cost.step_setting(variant) == key.replace("retrieved1", "retrieved16")
    switch_case = paper.specs.run_spec("cards", "roberta-base", "simcse_switch_case~positive.p=0.1", 42)
    simcse = paper.specs.run_spec("cards", "roberta-base", "simcse", 42)
    assert cost.step_setting(switch_case) == cost.step_setting(simcse)
    vascl = paper.specs.run_spec("vascl", "roberta-base", "vascl", 42)
    assert cost.step_setting(vascl).endswith("/virtual_augmentation+nt_xent")
    double_mlm = paper.specs.run_spec("clear", "roberta-base", "clear_double_mlm", 42)
    assert cost.step_setting(double_mlm).endswith("/mlmx2+none")


def test_a_runs_steps_are_its_max_steps_or_its_epochs_of_batches():
    from sentaug.train.run_length import total_steps

    spec = {"max_steps": None, "epochs": 1, "batch_size": 64}
    assert total_steps(spec, 1_000_000) == 15_625 and total_steps(spec, 1_000_001) == 15_626   # a short last batch
    assert total_steps({**spec, "epochs": 3}, 100) == 6 and total_steps({**spec, "max_steps": 300}, 10 ** 6) == 300


def test_glue_and_index_projections(times):
    bert = {"arch": "bert", **BASE}
    # CoLA 8,551 and MRPC 3,668 examples, 3 epochs at batch 32: 804 + 345 steps of 32 x 128 tokens (4,096:
    # the batch-64 row) times the FLOPs per token ratio of length 128 to 32
    length_ratio = (2 * (4 * 768 ** 2 + 2 * 768 * 3072) + 4 * 128 * 768) / (2 * (4 * 768 ** 2 + 2 * 768 * 3072)
                                                                           + 4 * 32 * 768)
    start = cost.EVALUATION_STARTUP_S              # not measured on this table's device: the estimate, 15 s
    glue = cost.project_glue(times, bert, ["CoLA", "MRPC"], None, rdrop=False)
    assert glue.steps == 804 + 345 and glue.seconds == pytest.approx(start + 1149 * 0.020 * length_ratio)
    assert cost.project_glue(times, bert, ["CoLA"], 20, rdrop=False).steps == 20
    index = cost.project_index(times, bert, "wiki1m_head")      # 11,914 lines at 0.1 ms, top-k ~ rows^2
    assert index.seconds == pytest.approx(start + 11_914 * 0.0001 + 60 * (11_914 / 1e6) ** 2)


def test_glue_and_evaluations_are_priced_from_their_own_measurements(times, paper):
    """With a measured GLUE step per bucket width, embedding rate and start-up (benchmarks/gpu_glue_eval.py), GLUE
    and the evaluations are priced from them; each GLUE step at its bucket's width (the task's pairs by length,
    workload.yaml's glue_lengths), an unmeasured width as StepTimes.glue_step says; a training run keeps its own
    start-up."""
    times.table.update({"glue": {"bert-base": {"ms": 12.0, "rdrop_ms": 24.0, "width": 128, "per_task_s": 5.0,
                                               "rdrop_per_task_s": 6.0, "ms_by_width": {48: 6.0, 64: 8.0, 128: 12.0},
                                               "rdrop_ms_by_width": {48: 12.0, 64: 16.0, 128: 24.0}}},
                        "embedding": {"ms_per_sentence": 0.05}, "startup": {"evaluation_s": 8.0, "client_s": 0.5}})
    bert = {"arch": "bert", **BASE}
    # an epoch of each, by bucket width (glue_epoch: CoLA's pairs of at most 48 tokens in 4 buckets, MRPC's in 4):
    # CoLA 268 steps, MRPC 115
    assert cost.glue_epoch("CoLA")[0] == {8: 59, 16: 182, 24: 23, 48: 4}
    assert cost.glue_epoch("MRPC")[0] == {48: 40, 64: 49, 80: 23, 104: 3}
    # 3 epochs; below the smallest measured width its 6 ms (an upper bound), 80 and 104 between 64 and 128
    cola = 3 * 268 * 6.0
    mrpc = 3 * (40 * 6.0 + 49 * 8.0 + 23 * (8.0 + 4.0 * 16 / 64) + 3 * (8.0 + 4.0 * 40 / 64))
    glue = cost.project_glue(times, bert, ["CoLA", "MRPC"], None, rdrop=False)
    assert glue.steps == 3 * (268 + 115) and glue.seconds == pytest.approx(8 + 2 * 5 + (cola + mrpc) / 1000)
    assert glue.basis == ["GLUE step of bert-base at widths 8, 16, 24: the smallest measured width's (48: "
                          "launch-bound, an upper bound)",
                          "GLUE step of bert-base at widths 80, 104: linear between the measured widths 64 and 128"]
    rdrop = cost.project_glue(times, bert, ["CoLA", "MRPC"], None, rdrop=True)      # every step twice as long here
    assert rdrop.seconds == pytest.approx(8 + 2 * 6 + 2 * (cola + mrpc) / 1000)
    # in a model's process beside other evaluations: a client's start-up; max_steps in the epoch's proportions
    shared = cost.project_glue(times, bert, ["MRPC"], 23, rdrop=False, startup=cost.SHARED)
    assert shared.seconds == pytest.approx(0.5 + 5 + 23 * (40 * 6.0 + 49 * 8.0 + 23 * 9.0 + 3 * 10.5) / 115 / 1000)
    # MNLI's lengths are an estimate (not in the mirror), and said so
    assert any(s.startswith("MNLI: pair lengths estimated") for s in cost.project_glue(times, bert, ["MNLI"], None,
                                                                                        False).sizes)
    # roberta-large: bert-base's step times the FLOPs per token at each width, 24 x 1024 against 12 x 768
    large = {"arch": "roberta", "layers": 24, "hidden": 1024, "intermediate": 4096}
    ratio = lambda w: (24 * (2 * (4 * 1024 ** 2 + 2 * 1024 * 4096) + 4 * w * 1024)) / \
        (12 * (2 * (4 * 768 ** 2 + 2 * 768 * 3072) + 4 * w * 768))                     # noqa: E731
    glue_large = cost.project_glue(times, large, ["RTE"], 10, rdrop=False)
    rte = cost.glue_epoch("RTE")[0]
    by_hand = sum(10 * n / 78 * ms * ratio(w) for w, n, ms in
                  [(w, n, {48: 6.0, 64: 8.0, 88: 8.0 + 4.0 * 24 / 64, 128: 12.0}[w]) for w, n in rte.items()])
    assert rte == {48: 26, 64: 22, 88: 10, 128: 20}
    assert glue_large.seconds == pytest.approx(8 + 5 + by_hand / 1000)
    assert "GLUE step of roberta-large from bert-base's: by the ratio of their FLOPs per token (at least of their " \
        "layers)" in glue_large.basis
    # a backbone measured at one width (DeBERTa-1.5B's 193 ms at 128): other widths in proportion to the tokens
    times.table["shapes"]["deberta-48x1536"] = cost.workload()["shapes"]["deberta-v2-xxlarge"]
    times.table["glue"]["deberta-48x1536"] = {"ms": 192.0, "width": 128, "ms_by_width": {128: 192.0}}
    deberta = cost.project_glue(times, cost.workload()["shapes"]["deberta-v2-xxlarge"], ["RTE"], 78, rdrop=True)
    assert deberta.seconds == pytest.approx(8 + 6 + sum(n * 2 * 192.0 * w / 128 for w, n in rte.items()) / 1000)
    assert deberta.basis == ["R-drop's step as two of the measured GLUE steps (not measured with R-drop)",
                             "GLUE step of deberta-48x1536 at widths 48, 64, 88: in proportion to the tokens from "
                             "the measured 128",
                             "a GLUE task's one-off seconds as bert-base's (not measured for deberta-48x1536)"]
    n, _ = suites.workload("transfer")
    suite = cost.project_suite(times, bert, "transfer")
    assert suite.seconds == pytest.approx(8 + n * 0.05 / 1000)
    assert cost.project_suite(times, bert, "transfer", cost.SHARED).seconds == pytest.approx(0.5 + n * 0.05 / 1000)
    # the index embeds in fp32: the STS-B dev evaluation's rate (0.1 ms a sentence), with the measured start-up
    index = cost.project_index(times, bert, "wiki1m_head")
    assert index.seconds == pytest.approx(8 + 11_914 * 0.0001 + 60 * (11_914 / 1e6) ** 2)
    spec = paper.specs.run_spec("leaderboard", "bert-base-uncased", "simcse", 42)
    assert cost.project_run(paper.paths, spec, times, paper.config).parts["startup"] == cost.STARTUP_S
    assert times.scaled(2.0).glue_step(bert, True, 64).ms == 8.0      # the what-if speeds GLUE steps up too
    # without them: as before, and the basis says so
    for key in ("glue", "embedding", "startup"):
        del times.table[key]
    assert cost.project_glue(times, bert, ["MRPC"], None, False).basis[1] == "GLUE steps as SimCSE steps of 32 x 128 " \
                                                                             "tokens"
    assert "no evaluation embedding rate measured" in cost.project_suite(times, bert, "transfer").basis[-1]


def test_an_epoch_of_glue_by_bucket_by_hand(monkeypatch):
    """glue_epoch on lengths written out: 70 pairs of 8 tokens, 40 of 24 and 10 of 128; the buckets bucket_widths
    picks (8, 24, 128: no padding at all) hold 2, 1 and 0 whole batches of 32; the remainders (6 of 8, 8 of 24,
    10 of 128), pooled in bucket order, make one batch of 24 pairs padded to 128: 4 steps, as ceil(120 / 32)."""
    monkeypatch.setitem(cost.workload(), "glue_train", {"X": {"n": 120, "basis": "measured"}})
    monkeypatch.setitem(cost.workload(), "glue_lengths", {"X": {"basis": "measured", "counts": {8: 70, 24: 40,
                                                                                                 128: 10}}})
    cost.glue_epoch.cache_clear()
    try:
        assert cost.glue_epoch("X") == ({8: 2, 24: 1, 128: 1}, [])
        assert cost.glue_task_steps("X", None) == ({8: 6, 24: 3, 128: 3}, [])       # 3 epochs
        assert cost.glue_task_steps("X", 2) == ({8: 1.0, 24: 0.5, 128: 0.5}, [])    # in the epoch's proportions
    finally:
        cost.glue_epoch.cache_clear()


def test_the_loader_reads_the_glue_and_evaluation_benchmark(tmp_path):
    training = {"args": {"size": "base", "length": "32"}, "versions": {"gpu": "NVIDIA X"},
                "step": {"bert/b64": {"graph": {"median_step_ms": 9.5}}},
                "dev_eval": {"n_sentences": 2909, "ours": {"median_ms": 300.0}, "best_checkpoint_write_ms": 400.0},
                "knn": {"n": 1000, "torch_s": 2.0}}
    new = {"median_ms_by_width": {"48": 4.0, "88": 6.5, "128": 9.0}, "one_off_s": 5.0, "step_path": {"path": "graph"},
           "steps_by_width": {"48": 100, "88": 100, "128": 100}, "wall_s": 10.0}
    glue_eval = {"args": {"size": "base"}, "versions": {"gpu": "NVIDIA X"},
                 "glue": {"task": "RTE", "rdrop_off": {"new": new},
                          "rdrop_on": {"new": {**new, "median_ms_by_width": {"64": 9.0, "128": 16.0},
                                               "one_off_s": 6.5}}},
                 "embedding": {"bf16": {"sentences_per_s": 20_000.0}, "fp32": {"sentences_per_s": 9_000.0}},
                 "startup": {"bert-base": {"cold": {"total_s": 7.25, "client_total_s": 0.5},
                                           "warm": {"total_s": 6.5, "client_total_s": 0.25}}}}
    files = [tmp_path / "gpu_training.json", tmp_path / "glue_eval.json"]
    for f, data in zip(files, [training, glue_eval]):
        f.write_text(json.dumps(data))
    (tmp_path / "measured.yaml").write_text("commit: abc1234\ndate: '2026-11-20'\n")    # the folder's record
    table = table_from_benchmark(files)
    at = {"from": "glue_eval.json", "commit": "abc1234", "date": "2026-11-20"}
    # a task's one-off work: its wall time beyond its steps, each at its width's median: 10 - 100 x 19.5 ms
    assert table["glue"] == {"bert-base": {"ms": 9.0, "width": 128, "per_task_s": 8.05, "path": "graph",
                                           "ms_by_width": {48: 4.0, 88: 6.5, 128: 9.0}, "rdrop_ms": 16.0,
                                           "rdrop_per_task_s": 6.5, "rdrop_ms_by_width": {64: 9.0, 128: 16.0},
                                           "task": "RTE", **at}}
    assert table["embedding"] == {"ms_per_sentence": 0.05, "precision": "bf16", "backbone": "bert-base", **at}
    assert table["startup"] == {"evaluation_s": 7.25, "client_s": 0.5}          # the slower of the two
    assert table["measured"]["startup.evaluation_s"] == table["measured"]["startup.client_s"] == at
    assert table["sources"] == {"glue_eval.json": {"commit": "abc1234", "date": "2026-11-20"},
                                "gpu_training.json": {"commit": "abc1234", "date": "2026-11-20"}}
    assert yaml.safe_load(write_table(table, "x", tmp_path).read_text()) == table
    assert "glue" not in table_from_benchmark(files[:1])


def test_the_loader_keeps_the_fastest_trainer_path_and_says_which(tmp_path):
    step = {"args": {"size": "base", "length": "32"}, "versions": {"gpu": "NVIDIA X"},
            "step": {"bert/b64": {"model": {"median_model_ms": 5.0}, "ours": {"median_step_ms": 12.0},
                                  "graph": {"median_step_ms": 9.5}, "reference_fp32": {"median_step_ms": 3.0}},
                     "roberta/b512": {"ours": {"median_step_ms": 70.0}}}}
    second = {"args": {"size": "base", "length": "32"},
              "step": {"bert/b64": {"ours": {"median_step_ms": 11.0}, "ours_4d_mask": {"median_step_ms": 10.0}}},
              "overhead": {"simcse": {"median_step_ms": 10.0}, "cards": {"median_step_ms": 13.0}},
              "dev_eval": {"n_sentences": 2909, "ours": {"median_ms": 300.0}, "best_checkpoint_write_ms": 400.0},
              "knn": {"n": 1000, "torch_s": 2.0}}
    files = [tmp_path / "a.json", tmp_path / "b.json"]
    for f, data in zip(files, [step, second]):
        f.write_text(json.dumps(data))
    table = table_from_benchmark(files)
    assert table["device"] == "NVIDIA X" and table["length"] == 32
    unknown = {"commit": "unknown", "date": "unknown"}     # nothing records them here
    assert table["steps"]["bert-base"][64] == {"ms": 9.5, "path": "graph", "from": "a.json", **unknown}  # not the
    assert table["steps"]["roberta-base"][512] == {"ms": 70.0, "path": "ours", "from": "a.json", **unknown}  # ref.
    # CARDS's row is its switch-case positives' overhead (measured with the retrieved negatives: overhead_with)
    assert table["overhead"] == {"switch_case": {"ratio": 1.3, "at": "bert-base/64", "method": "cards",
                                                 "from": "b.json", **unknown}}
    assert table["evaluation"] == {"dev_ms": 300.0, "best_write_ms": 400.0, "dev_sentences": 2909, "knn_s": 2.0,
                                   "knn_rows": 1000}
    path = write_table(table, "x", tmp_path)
    assert yaml.safe_load(path.read_text()) == table
    # the calibration's settings (a CPU try with --tiny is no measurement) and the paper-length run's start-up
    (tmp_path / "cal.json").write_text(json.dumps({"args": {"tiny": "False"}, "settings": {
        "roberta-base/b512/L32/simcse": {"ms": 70.5, "path": "graph"}, "bert-base-uncased/b64/L32/simcse":
        {"skipped": "budget"}}}))
    (tmp_path / "tiny.json").write_text(json.dumps({"args": {"tiny": "True"}, "settings": {
        "roberta-base/b64/L32/simcse": {"ms": 3.0, "path": "eager"}}}))
    # a paper-length run's log (step, elapsed s) every 10 steps, dev evaluations every 20 steps and a checkpoint
    # every 40: 10 ms steps; the windows starting at step 20 and 40 hold 0.05 s of evaluation, the one at 40 also
    # a 1 s checkpoint
    log = [[10, 0.1], [20, 0.2], [30, 0.35], [40, 0.45], [50, 1.6], [60, 1.7]]
    (tmp_path / "run.json").write_text(json.dumps({"returncode": 0, "startup_and_end_s": 14.5, "log_elapsed": log,
                                                   "eval_steps": 20, "save_steps": 40}))
    assert run_parts(log, 20, 40) == {"step_ms": 10.0, "dev_ms": 50.0, "checkpoint_ms": 1000.0, "evaluations": 2,
                                      "checkpoints": 1}
    table = table_from_benchmark([*files, tmp_path / "cal.json", tmp_path / "tiny.json", tmp_path / "run.json"])
    assert table["settings"] == {"roberta-base/b512/L32/simcse": {"ms": 70.5, "path": "graph", "from": "cal.json",
                                                                  **unknown}}
    assert table["startup"] == {"training_s": 14.5}
    assert (table["evaluation"]["dev_ms"], table["evaluation"]["checkpoint_ms"]) == (50.0, 1000.0)   # the lowest
    (tmp_path / "c.json").write_text(json.dumps({"dev_eval": second["dev_eval"]}))
    with pytest.raises(ValueError, match="no `step` section"):
        table_from_benchmark([tmp_path / "c.json"])


H200_FILES = ["h200-2026-11-26-run1/gpu_training.json", "h200-2026-11-26-run1/concurrency.json",
              "h200-2026-11-26-run2/gpu_training_run2.json", "h200-2026-11-26-first/c_knn.json",
              "h200-2026-11-27-paper-scale/call1/calibration.json",
              "h200-2026-11-27-paper-scale/call2/calibration.json",
              "h200-2026-11-27-paper-scale/call1/paper_run.json", "h200-2026-11-27-paper-scale/call1/glue_eval.json",
              "h200-2026-11-27-paper-scale/call1/concurrency.json", "h200-2026-11-28-floor/call1/calibration.json",
              "h200-2026-11-28-floor/call1/concurrency_mps.json", "h200-2026-11-28-floor/call2/concurrency_one.json"]


def test_the_committed_h200_table_is_the_loaders_reading_of_the_gpu_figures():
    """The table is what the loader makes of the H200 runs kept in benchmarks/results: the graph step (the
    default path; the compiled one, opt-in, left out), the overheads on the graph path, the gain of 4 runs under
    MPS against one steady run, every paper-scale setting timed at its real shape (the newest measurement of
    each), the paper-length run's start-up, evaluations and checkpoints, GLUE's step per bucket width, DeBERTa's
    captured GLUE step and the bf16 embedding rate; each figure with the commit and date it was measured at."""
    results = ROOT / "benchmarks/results"
    committed = StepTimes.load("h200").table
    made = table_from_benchmark([results / f for f in H200_FILES], device_name=committed["device"],
                                source=committed["source"])
    assert made == committed
    # run 1's graph step (12.521 ms) beats run 2's (12.632), the same code and date; run 2's compiled 10.043 ms
    # is opt-in, not priced
    assert committed["steps"]["bert-base"][64] == {"ms": 12.521, "path": "graph",
                                                   "from": "h200-2026-11-26-run1/gpu_training.json",
                                                   "commit": "21dcf42", "date": "2026-11-26"}
    # CARDS over SimCSE on the graph path: 16.995 / 12.515 ms (run 1's overhead section)
    assert committed["overhead"]["switch_case"]["ratio"] == round(16.995 / 12.515, 3) == 1.358
    assert committed["overhead"]["switch_case"]["method"] == "cards"
    # 4 runs under MPS against ONE STEADY run (steps 100-690, 2026-11-28): 92.37 / 67.08 steps/s; the runs of
    # 2026-11-26/27, whose one-run window held the capture and the final evaluation, are left out
    assert committed["sharing"] == {"bert-base/b64/L32/simcse": {4: {
        "gain": round(92.37 / 67.08, 2), "mps": True, "steps_per_s": 92.37, "one_steady_run_steps_per_s": 67.08,
        "window_from_step": 100, "from": "h200-2026-11-28-floor/call1/concurrency_mps.json / "
                                         "h200-2026-11-28-floor/call2/concurrency_one.json",
        "commit": "23998d9", "date": "2026-11-28"}}} and round(92.37 / 67.08, 2) == 1.38
    assert committed["evaluation"]["best_snapshot_ms"] == 4.268
    # 25 of the bill's 30 settings: 17 timed on 2026-11-28 (23998d9), the other 8 from 2026-11-27 (6f2c2fc); a
    # setting timed on both days is priced from the newer
    assert len(committed["settings"]) == 25
    dates = [row["date"] for row in committed["settings"].values()]
    assert (dates.count("2026-11-28"), dates.count("2026-11-27")) == (17, 8)
    assert committed["settings"]["roberta-base/b512/L32/simcse"] == {
        "ms": 68.956, "path": "graph", "peak_memory_gib": 16.03, "from": "h200-2026-11-28-floor/call1/calibration.json",
        "commit": "23998d9", "date": "2026-11-28"}             # not 2026-11-27's 68.748 (14.6 GiB)
    # the peak memory of each timed setting and GLUE step: DeBERTa-1.5B's with R-drop from 2026-11-27, whose eager
    # steps were not timed (its capture failed) but reached their peak
    assert committed["settings"]["roberta-base/b512/L32/retrieved16"]["peak_memory_gib"] == 114.6
    deberta = committed["glue"]["deberta-48x1536"]
    assert (deberta["peak_memory_gib"], deberta["rdrop_peak_memory_gib"]) == (50.18, 83.25)
    assert committed["settings"]["bert-base-uncased/b64/L32/simcse"]["commit"] == "6f2c2fc"    # not reached 11-28
    # DeBERTa-1.5B's GLUE step, captured as a CUDA graph; RTE's per width on BERT-base, a task's one-off work its
    # wall time beyond its steps at their widths' medians: 3.75 s - (24 x 7.574 + 14 x 8.286 + 6 x 9.619 + 14 x
    # 11.728) ms
    assert committed["glue"]["deberta-48x1536"]["ms_by_width"] == {128: 193.454}
    assert committed["glue"]["bert-base"]["per_task_s"] == round(3.75 - (24 * 7.574 + 14 * 8.286 + 6 * 9.619
                                                                         + 14 * 11.728) / 1000, 2) == 3.23
    # the paper-length run: 235.1 s end to end, 220.68 s of them in its loop
    assert committed["startup"]["training_s"] == 14.4 == round(235.1 - 220.68, 1)
    assert committed["measured"]["startup.training_s"]["commit"] == "6f2c2fc"
    assert set(committed["sources"]) == set(H200_FILES)


def test_backbones_of_one_shape_share_their_measured_batches():
    """RoBERTa-base was measured at batch 512 and BERT-base at 64: the same work per token, so each borrows the
    other's batch instead of holding its own smallest batch's time below it."""
    h200 = StepTimes.load("h200")
    shape = {"arch": "roberta", "layers": 12, "hidden": 768, "intermediate": 3072}
    at64 = h200.step_ms(shape, 64, 32)
    assert at64.ms == 12.521 and at64.basis == ["roberta-base at batch 64: bert-base's measured step (the same shape)"]
    at128 = h200.step_ms({**shape, "arch": "bert"}, 128, 32)     # between 4,096 and 32,768 tokens: linear
    assert at128.ms == pytest.approx(12.521 + (69.135 - 12.521) * (8192 - 4096) / (32768 - 4096))
    assert at128.basis[0] == "linear in tokens per step between measured bert-base steps"


def test_unknown_devices_are_refused_with_the_known_ones(capsys):
    """The measured H200 and the two calibrated from it are known; any other device is refused, by the loader and
    by `sentaug cost` before its dry run, with the valid ones named."""
    from sentaug.cli import main
    from sentaug.pricing import datasheet

    assert known_devices() == ["h200"] and datasheet.known_devices() == ["a100", "h100", "h200"]
    with pytest.raises(ValueError, match=r"no step-time table for device 'v100' \(known: a100, h100, h200;"):
        datasheet.load("v100")
    assert main(["cost", "all", "--device", "v100"]) == 2
    assert "unknown device 'v100'" in (err := capsys.readouterr().err) and "valid: " in err
    assert {"a100", "h100", "h200"} <= set(err.split("valid: ")[1].strip().split(", "))


def test_every_kind_of_work_on_a_gpu_is_priced_and_a_job_on_cpus_is_not(paper):
    """sentaug.pricing.prices prices each `work` sentaug.workflow.jobs.RULES declares, and nothing else; a job on
    CPUs falls in the bill's `cpu` column unpriced, and an undeclared rule is refused by name."""
    from sentaug.pricing.prices import PRICES, price
    from sentaug.workflow.jobs import RULES

    assert {kind.work for kind in RULES.values() if kind.gpu} == set(PRICES)
    assert price("table", paper, {"paper": "sda", "table": "table4"}, None) == ("cpu", None)
    with pytest.raises(ValueError, match="rule 'finetune' is not declared"):
        price("finetune", paper, {}, None)


def test_a_training_job_asks_for_its_projected_runtime_unless_the_scale_sets_one(paper):
    h200 = StepTimes.load("h200").table
    ms, ev = h200["settings"]["bert-base-uncased/b64/L32/simcse"]["ms"], h200["evaluation"]
    # SimCSE, BERT-base, batch 64 on wiki1m: its measured start-up, 15,625 steps, 125 evaluations (each keeping
    # the best model on the device), one write at the end, 3 checkpoints (every 5,000 steps) as measured
    seconds = (h200["startup"]["training_s"] + 15_625 * ms / 1000
               + 125 * (ev["dev_ms"] + ev["best_snapshot_ms"]) / 1000 + ev["best_write_ms"] / 1000
               + 3 * ev["checkpoint_ms"] / 1000)
    expected = math.ceil(1.5 * seconds / 60 + 10)
    assert Runtimes(paper).train("leaderboard", "bert-base-uncased", "simcse", 42) == expected
    cfg = copy.deepcopy(paper.config)
    cfg["scales"]["paper"]["train_resources"]["runtime"] = 300
    assert Runtimes(Workflow(cfg, results="/x")).train("leaderboard", "bert-base-uncased", "simcse", 42) == 300
    cfg = copy.deepcopy(paper.config)
    del cfg["scales"]["paper"]["step_times"]        # no device to project on: the default runtime
    assert Runtimes(Workflow(cfg, results="/x")).train("leaderboard", "bert-base-uncased", "simcse", 42) == 60


def test_runs_sharing_a_gpu_ask_for_it_as_one_gres(paper):
    assert paper.resources.train_job_resources() == {"gpu": 1, "mem_mb": 32000}
    cfg = copy.deepcopy(paper.config)
    cfg["scales"]["paper"]["runs_per_gpu"] = 4
    shared = Workflow(cfg, results="/nonexistent")
    assert shared.resources.train_job_resources() == {"mem_mb": 32000, "gres": "gpu:1", "gpu_runs": 1}
    cfg["scales"]["paper"]["train_resources"]["gpu"] = 2
    with pytest.raises(ValueError, match="runs_per_gpu is 4: runs share a GPU only when each asks for one"):
        Workflow(cfg, results="/nonexistent").resources.train_job_resources()


@pytest.fixture
def test_device(tmp_path, monkeypatch):
    """TABLE as the step-time table of device `testgpu`."""
    from sentaug.pricing import step_times

    folder = tmp_path / "step_times"
    write_table(TABLE, "testgpu", folder)
    monkeypatch.setattr(step_times, "TABLES", folder)
    return "testgpu"


def test_the_bill_of_a_table_prices_every_job_of_its_dag(tmp_path, test_device):
    from sentaug.pricing.bill import compute_bill, format_bill, target_rows
    from sentaug.pricing.report_data import projected_jobs
    from tests.workflow_runs import demo_override

    results = tmp_path / "results"
    override = demo_override(tmp_path / "override.yaml", results)    # 6 steps of batch 16, dev every 3, seeds 1 2
    target = f"{results}/tables/vascl/table1.tex"                     # SimCSE and VaSCL on tiny-roberta
    bill = compute_bill([target], device=test_device, configfiles=[ROOT / "config.yaml", override])
    # tiny-roberta (2 layers): roberta-base's 30 ms (1,024 tokens: below its smallest batch) x 2/12 = 5 ms a
    # step, VaSCL's x 1.1; 2 dev evaluations of (0.4 + 0.5 s) x 2/12; 30 s to start
    simcse, vascl = 30 + 6 * 0.005 + 2 * 0.9 / 6, 30 + 6 * 0.0055 + 2 * 0.9 / 6
    # four STS evaluations of the runs and one of the untrained backbone (avg): 26,973 sentences at
    # 0.1 ms x 2/12, 15 s to start (each in a process of its own: a scale on CPUs)
    sts = cost.EVALUATION_STARTUP_S + 26_973 * 0.0001 / 6
    row = target_rows(bill)[0]
    assert (row["runs"], row["new"], row["built"], row["steps"]) == (4, 4, 0, 24)
    assert row["train_h"] == pytest.approx((2 * simcse + 2 * vascl) / 3600)
    assert row["eval_h"] == pytest.approx(5 * sts / 3600) and row["glue_h"] == 0
    assert row["total_h"] == pytest.approx((2 * simcse + 2 * vascl + 5 * sts) / 3600)
    text = format_bill(bill, runs=True)
    assert target in text and "new   train:backbone=tiny-roberta,method=vascl,paper=shared,seed=2: 6 steps" in text
    assert "1 table" in text and "Test GPU" in text
    # the bill as the report's front page reads it (sentaug.pricing.report_data): each device job once, in hours
    jobs = projected_jobs(bill)
    hours = lambda kind, **w: sorted(j["hours"] for j in jobs if j["kind"] == kind
                                     and w.items() <= j["wildcards"].items())
    assert hours("train", method="simcse") == pytest.approx([simcse / 3600] * 2)
    assert hours("train", method="vascl", seed="2") == pytest.approx([vascl / 3600])
    assert hours("eval") == pytest.approx([sts / 3600] * 5) and hours("glue") == []


GLUE_ROW = {"ms": 12.0, "rdrop_ms": 21.0, "width": 128, "ms_by_width": {8: 12.0, 128: 12.0},
            "rdrop_ms_by_width": {8: 21.0, 128: 21.0}, "per_task_s": 5.0, "rdrop_per_task_s": 7.0, "commit": "old",
            "date": "2026-11-01"}


@pytest.fixture
def glue_device(tmp_path, monkeypatch):
    """TABLE with a GLUE step (the same at every width: 12 ms, 21 ms with R-drop), measured at commit `old`, whose
    GLUE code changed since (sentaug.pricing.freshness answers so here), as the table of device `gluegpu`."""
    from sentaug.pricing import freshness, step_times

    folder = tmp_path / "step_times"
    write_table({**copy.deepcopy(TABLE), "glue": {"bert-base": dict(GLUE_ROW)}}, "gluegpu", folder)
    monkeypatch.setattr(step_times, "TABLES", folder)
    monkeypatch.setattr(freshness, "changed_since", lambda commit, kind: {"old": ("src/sentaug/train/step.py",),
                                                                          "new": ()}.get(commit))
    return "gluegpu"


def _glue_bill(tmp_path, device, **demo):
    from sentaug.pricing.bill import compute_bill
    from tests.workflow_runs import demo_override

    results = tmp_path / "results"
    override = demo_override(tmp_path / "override.yaml", results, **demo)
    return compute_bill([f"{results}/tables/cards/table6.tex"], device=device,
                        configfiles=[ROOT / "config.yaml", override])


# CARDS Table 6 at demo scale, by hand: GLUE fine-tuning of the pre-trained stand-in (tiny-roberta, 2 layers:
# bert-base's GLUE step x 2/12, the layer ratio) plain, with R-drop, and with R-drop and switch-case: 3 jobs of
# the 8 GLUE tasks x 20 steps (demo's --max-steps) each, every task's one-off work, one start-up each
GLUE_STEPS = 8 * 20
PLAIN = cost.EVALUATION_STARTUP_S + 8 * 5.0 + GLUE_STEPS * 12.0 * 2 / 12 / 1000        # 15 + 40 + 0.32 s
RDROP = cost.EVALUATION_STARTUP_S + 8 * 7.0 + GLUE_STEPS * 21.0 * 2 / 12 / 1000        # 15 + 56 + 0.56 s


def test_the_bill_of_glue_fine_tuning_is_the_hand_computed_one(tmp_path, glue_device):
    """A target with GLUE priced against hours worked out by hand (above): each job, the bill's row, the report's
    data; and what prices them: the GLUE figures measured on code changed since, the start-ups estimated."""
    from sentaug.pricing.bill import format_bill, target_rows
    from sentaug.pricing.report_data import projected_jobs

    bill = _glue_bill(tmp_path, glue_device)
    glue = {j.wildcards["evaluation"].split("/")[0]: j for j in bill.jobs.values() if j.kind == "glue"}
    assert sorted(glue) == ["glue", "glue~rdrop=1.0", "glue~rdrop=1.0~switch_case=0.1"]
    assert [glue[k].projection.steps for k in sorted(glue)] == [GLUE_STEPS] * 3
    assert glue["glue"].projection.seconds == pytest.approx(PLAIN)
    assert glue["glue~rdrop=1.0"].projection.seconds == pytest.approx(RDROP)
    assert glue["glue~rdrop=1.0~switch_case=0.1"].projection.seconds == pytest.approx(RDROP)
    row = target_rows(bill)[0]
    assert row["glue_h"] == pytest.approx((PLAIN + 2 * RDROP) / 3600)
    assert (row["runs"], row["train_h"], row["eval_h"]) == (0, 0, 0)
    assert row["total_h"] == pytest.approx((PLAIN + 2 * RDROP) / 3600)
    hours = [j["hours"] for j in projected_jobs(bill) if j["kind"] == "glue"]
    assert sorted(hours) == pytest.approx(sorted([PLAIN / 3600, RDROP / 3600, RDROP / 3600]))
    assert sum(j["hours"] for j in projected_jobs(bill)) == pytest.approx(row["total_h"])
    # the start-ups (15 s each) are estimates; the rest rests on GLUE figures of commit `old`
    p = bill.provenance()
    start = 3 * cost.EVALUATION_STARTUP_S / 3600
    assert (p["estimated"], p["older"], p["current"]) == pytest.approx((start, row["glue_h"] - start, 0.0))
    assert p["older_by"] == pytest.approx({("glue", "old", "2026-11-01"): row["glue_h"] - start})
    text = format_bill(bill)
    assert "from glue figures measured at old (2026-11-01); changed since: src/sentaug/train/step.py" in text


def test_a_models_evaluations_start_once_at_a_scale_on_gpus(tmp_path, glue_device):
    """At a scale on GPUs a model's evaluations run in one process (sentaug.evaluate.service): the three GLUE
    jobs of the one pre-trained model start it once (the first by its key, the plain one), the others as
    clients of it."""
    bill = _glue_bill(tmp_path, glue_device, train_resources={"gpu": 1})
    glue = {j.wildcards["evaluation"].split("/")[0]: j.projection.seconds for j in bill.jobs.values()
            if j.kind == "glue"}
    client = cost.CLIENT_STARTUP_S
    assert glue == pytest.approx({"glue": PLAIN, "glue~rdrop=1.0": RDROP - cost.EVALUATION_STARTUP_S + client,
                                  "glue~rdrop=1.0~switch_case=0.1": RDROP - cost.EVALUATION_STARTUP_S + client})


def test_runs_sharing_a_gpu_gain_only_what_was_measured_for_their_shape(paper):
    """The H200's one steady gain: 4 SimCSE runs of a 12 x 768 backbone at batch 64 and length 32 under MPS,
    x1.38; a run of that shape whose step does more (a retrieved negative), or of another batch, gains none."""
    h200 = StepTimes.load("h200")
    gain = lambda backbone, method, k=4: cost.sharing_gain(h200, paper.config, paper.specs.run_spec(        # noqa: E731
        "leaderboard" if backbone != "roberta-base" else "cards", backbone, method, 42), k)[0]
    assert paper.specs.run_spec("leaderboard", "bert-base-uncased", "simcse", 42)["batch_size"] == 64
    assert gain("bert-base-uncased", "simcse") == 1.38 and gain("bert-base-uncased", "simcse", 2) == 1.0
    assert gain("bert-base-uncased", "simcse", 1) == 1.0
    assert gain("bert-base-uncased", "simcse_retrieval") == 1.0
    spec = paper.specs.run_spec("cards", "roberta-base", "cards", 42)
    assert spec["batch_size"] != 64 and gain("roberta-base", "cards") == 1.0
    cfg = copy.deepcopy(paper.config)
    cfg["scales"]["paper"]["runs_per_gpu"] = 4
    shared = Workflow(cfg, results="/nonexistent")
    spec = shared.specs.run_spec("leaderboard", "bert-base-uncased", "simcse", 42)
    projection = cost.project_run(shared.paths, spec, h200, cfg)
    assert Runtimes(shared).train("leaderboard", "bert-base-uncased", "simcse", 42) == \
        cost.train_runtime_minutes(projection, 4, 1.38)


def test_a_figure_is_current_when_the_code_it_times_is_unchanged(monkeypatch):
    """sentaug.pricing.freshness: a figure measured at a commit is current when git finds no difference in the
    paths of its kind between that commit and the checkout; a commit not recorded or unknown to git cannot be
    checked (not current)."""
    from sentaug.pricing import freshness
    from sentaug.pricing.step_times import Source

    calls = []

    def git(*args):
        calls.append(args)
        if args[0] == "cat-file":
            return "" if args[2].startswith(("aaa", "bbb")) else None
        return {"aaa": "", "bbb": "src/sentaug/models/encoder.py\nsrc/sentaug/pricing/cost.py\n"}[args[2]]

    monkeypatch.setattr(freshness, "_git", git)
    freshness.changed_since.cache_clear()
    try:
        assert freshness.is_current(Source("step", "train", "aaa"))
        assert freshness.changed_since("bbb", "train") == ("src/sentaug/models",)       # the bill: no matter
        assert freshness.changed_since("bbb", "index") == ("src/sentaug/models",)
        assert not freshness.is_current(Source("step", "train", "bbb"))
        assert freshness.changed_since("ccc", "train") is None and freshness.changed_since("unknown", "glue") is None
        assert "cannot be checked" in freshness.why_not_current(Source("step", "train", "ccc"))
        assert ("diff", "--name-only", "bbb", "--", *freshness.CODE["train"]) in calls
    finally:
        freshness.changed_since.cache_clear()


def test_bad_targets_and_devices_are_named(tmp_path, test_device, capsys):
    from sentaug.cli import main

    assert main(["cost", "all", "--device", "a100"]) == 2
    assert "unknown device 'a100'; valid: testgpu" in capsys.readouterr().err
    assert main(["cost", str(tmp_path / "tables/sda/table99.tex"), "--device", test_device]) == 2
    err = capsys.readouterr().err
    assert "table99.tex" in err and "Targets are `all`, a table" in err


@pytest.mark.slow
def test_built_runs_are_billed_apart_beside_what_they_took(demo_tables, test_device, tmp_path):
    """SDA Table 4, built: its 16 runs are built, nothing new is billed, and what they took is the sum of
    their summaries' train_seconds, and of its evaluations the sum of their files' `seconds`; the report's front
    page says so."""
    from sentaug.report.bill_page import bill_totals, built_rows, hours
    from sentaug.report.front_page import front_page_rst
    from sentaug.pricing.bill import compute_bill, target_rows
    from sentaug.pricing.report_data import report_data

    results, override, targets = demo_tables
    bill = compute_bill([targets[0]], device=test_device, configfiles=[ROOT / "config.yaml", override])
    row = target_rows(bill)[0]
    took = [json.loads(p.read_text())["train_seconds"] for p in (results / "runs").rglob("train_summary.json")]
    assert (row["runs"], row["built"], row["new"], row["train_h"]) == (16, 16, 0, 0)
    assert row["built_actual_h"] == pytest.approx(sum(took) / 3600) and len(took) == 16
    evaluations = [json.loads(p.read_text())["seconds"] for p in (results / "eval").rglob("*.json")
                   if ".mteb" not in p.parent.as_posix()]      # the records, not their MTEB result files
    data = report_data(bill, bill)
    totals = bill_totals(built_rows(data["built"]["jobs"]))
    assert (totals["built"], totals["runs"]) == (16, 16) and totals["devices"] == ["cpu"]
    assert totals["train"] == pytest.approx(sum(took) / 3600) and totals["glue"] is None
    assert totals["eval"] == pytest.approx(sum(evaluations) / 3600) and len(evaluations) >= 17
    page = front_page_rst(data)
    assert page.startswith((ROOT / "report/workflow.rst").read_text().rstrip())
    assert "16 of 16 training runs" in page and f"- {hours(totals['train'])}\n" in page


@pytest.mark.mirror
def test_the_measured_work_sizes_are_the_datas(mirror):
    """workload.yaml's and the suites' `measured` counts, recounted from the files (the bundled demo data and the
    mirror)."""
    from sentaug.data import triplets
    from sentaug.data.clustering import load_clustering
    from sentaug.data.corpus import read_corpus
    from sentaug.data.intent import load_intent
    from sentaug.data.transfer import load_transfer
    from sentaug.evaluate import sts, transfer
    from sentaug.evaluate.glue import read_glue

    w = cost.workload()
    lines = lambda path: sum(1 for line in read_corpus(path) if line.flag != "empty")
    demo = ROOT / "src/sentaug/resources/demo/wiki/demo_corpus.txt"
    counted = {("examples", "demo_corpus"): lines(demo),
               ("examples", "wiki1m_head"): lines(mirror / "wiki/wiki1m_head.txt"),
               ("examples", "wiki1m_head1k"): min(1000, lines(mirror / "wiki/wiki1m_head.txt")),
               ("examples", "snli"): len(triplets.build_triplets(mirror, "snli")),
               ("examples", "anli_devtest"): len(triplets.build_triplets(mirror, "anli_devtest")),
               ("suite", "sts"): len(sts._all_sentences(sts.load_suite(mirror))),
               ("suite", "transfer"): len(transfer.all_sentences(load_transfer(mirror))),
               ("suite", "clustering"): len({t for d in load_clustering(mirror).values() for t in d.texts}),
               ("suite", "intent"): len({t for d in load_intent(mirror).values()
                                         for t in (*d.pool.texts, *d.test.texts)}),
               ("suite", "cola"): sum(len(read_glue(mirror, "CoLA", s).labels) for s in ("train", "dev"))}
    counted.update({("glue_train", t): len(read_glue(mirror, t, "train").labels)
                    for t in ("CoLA", "SST-2", "MRPC", "RTE", "STS-B")})
    declared = {**{k: w[k[0]][k[1]] for k in counted if k[0] != "suite"},   # a suite's own: its declaration
                **{("suite", name): suite.workload for name, suite in suites.registered().items() if suite.workload}}
    assert {k: declared[k]["n"] for k in counted} == counted
    measured = {key for key, entry in declared.items() if entry["basis"] == "measured"}
    measured |= {(table, key) for table in ("examples", "glue_train")
                 for key, entry in w[table].items() if entry["basis"] == "measured"}
    assert measured == set(counted)


@pytest.mark.mirror
def test_the_measured_glue_lengths_are_the_datas(mirror):
    """workload.yaml's `measured` glue_lengths, recounted from the mirror's training sets as
    benchmarks/glue_lengths.py counts them (roberta-base's tokenizer, as `sentaug evaluate glue` encodes pairs)."""
    import sys

    from transformers import AutoTokenizer

    from sentaug.evaluate.glue import read_glue

    models = Path(os.environ.get("SENTAUG_MODEL_MIRROR") or ROOT.parent / "shared/models") / "roberta-base-tokenizer"
    if not models.is_dir():
        pytest.skip(f"needs {models}")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import glue_lengths

    tok = AutoTokenizer.from_pretrained(models)
    entries = cost.workload()["glue_lengths"]
    for task in (t for t, e in entries.items() if isinstance(e, dict) and e["basis"] == "measured"):
        split = read_glue(mirror, task, "train")
        counted = glue_lengths.histogram(glue_lengths.lengths(tok, split.text_a, split.text_b))
        assert {int(w): n for w, n in entries[task]["counts"].items()} == counted, task


def test_glue_is_priced_with_its_recipes_batches_epochs_and_token_limits(shipped_config):
    """A GLUE table's recipe (config.yaml glue.recipes) sets each task's batch, epochs and token limit, and the bill
    follows it: CARDS Table 6's recipe runs RTE's 2,490 training pairs (workload.yaml) for 20 epochs in batches of
    48 pairs up to 320 tokens (DeBERTa's RTE script, CARDS's epochs), where `sentaug evaluate glue`'s defaults run
    3 epochs of 32: 3 x ceil(2,490 / 32) = 234 steps. Each epoch's buckets leave at most one partly filled batch
    per bucket; a step of 48 pairs costs 48/32 of the measured 32-pair step at its width."""
    recipe = shipped_config["glue"]["recipes"]["cards"]
    assert cost.glue_settings("RTE", recipe) == (48, 20, 320)
    assert cost.glue_settings("RTE", None) == (32, 3.0, 128)
    assert sum(cost.glue_task_steps("RTE", None)[0].values()) == 3 * math.ceil(2490 / 32) == 234
    steps, sizes = cost.glue_task_steps("RTE", None, recipe)
    assert 20 * 2490 / 48 <= sum(steps.values()) <= 20 * (2490 / 48 + len(steps))
    assert any("priced at 128" in s for s in sizes)          # 320 tokens asked, lengths counted up to 128
    h200 = StepTimes.load("h200")
    shape = cost.backbone_shape(shipped_config, "roberta-base")
    projection = cost.project_glue(h200, shape, ["RTE"], None, False, recipe=recipe)
    by_hand = sum(n * 48 / 32 * h200.glue_step(shape, False, w).ms / 1000 for w, n in steps.items())
    assert projection.parts["steps_by_width"] == {w: round(n, 1) for w, n in sorted(steps.items())}
    assert projection.seconds - projection.parts["startup"] - projection.parts["tasks_once"] == \
        pytest.approx(by_hand)
