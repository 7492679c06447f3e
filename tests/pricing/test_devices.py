"""Other GPUs than the measured H200 (issue 59): step-time tables calibrated from its measured one by datasheet
rates (sentaug.pricing.datasheet), the jobs that do not fit in a device's memory, and `--speedup` on every
kind of device-hour. The expectations are computed here by hand, from the datasheet numbers and the measured
H200 figures, not by the code under test."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from sentaug.pricing import cost
from sentaug.pricing.bill import fit_in_memory
from sentaug.pricing.datasheet import load
from sentaug.workflow import Workflow

ROOT = Path(__file__).resolve().parents[2]
# The datasheets (NVIDIA's H200, H100 and A100 ones): dense BF16 TFLOP/s, memory TB/s, memory GB
H200, H100, A100 = (989, 4.8, 141), (989, 3.35, 80), (312, 2.039, 80)
# BERT-base's training FLOPs per token at 32 tokens: 3 (forward and backward) x 12 layers x (2 x (4 x 768^2 +
# 2 x 768 x 3072) + 4 x 32 x 768) = 3 x 12 x (2 x 7,077,888 + 98,304) = 3 x 12 x 14,254,080
BERT_BASE_FLOPS_PER_TOKEN = 513_146_880


def by_hand(ms: float, flops: float | None, to: tuple) -> float:
    """A figure measured on the H200 on device `to`: its compute-bound share c (its MFU on the H200, else 0.2)
    at the ratio of BF16 rates, the rest at the ratio of bandwidths."""
    c = 0.2 if flops is None else flops / (ms / 1000 * H200[0] * 1e12)
    return ms * (c * H200[0] / to[0] + (1 - c) * H200[1] / to[1])


@pytest.fixture(scope="module")
def paper(shipped_config):
    return Workflow({**copy.deepcopy(shipped_config), "scale": "paper"}, results="/nonexistent/results")


def test_a_simcse_run_on_an_a100_by_hand(paper):
    """One row of the A100's bill, SimCSE on BERT-base at batch 64 (15,625 steps on wiki1m): its step measured
    on the H200 (12.511 ms, an MFU of 17 %) scaled by the roofline split; the dev evaluation at the fixed 0.2
    compute share, the best model's copy on the device by the bandwidths alone; start-up and writes to disk as the
    H200's host measured them."""
    h200 = load("h200").table
    ms = h200["settings"]["bert-base-uncased/b64/L32/simcse"]["ms"]
    assert ms == 12.511
    flops = BERT_BASE_FLOPS_PER_TOKEN * 2 * 64 * 32            # two views of 64 sentences of 32 tokens
    assert flops / (ms / 1000 * 989e12) == pytest.approx(0.1699, abs=1e-4)
    step = ms * (0.1699 * 989 / 312 + 0.8301 * 4.8 / 2.039)      # 12.511 x 2.4927 = 31.19 ms
    assert by_hand(ms, flops, A100) == pytest.approx(step, rel=1e-4) == pytest.approx(31.19, abs=0.01)
    a100 = load("a100")
    assert a100.setting("bert-base-uncased/b64/L32/simcse").ms == pytest.approx(step, rel=1e-4)

    ev = h200["evaluation"]
    dev = by_hand(ev["dev_ms"], None, A100) + ev["best_snapshot_ms"] * 4.8 / 2.039
    seconds = (h200["startup"]["training_s"] + 15_625 * step / 1000 + 125 * dev / 1000 + ev["best_write_ms"] / 1000
               + 3 * ev["checkpoint_ms"] / 1000)
    spec = paper.specs.run_spec("leaderboard", "bert-base-uncased", "simcse", 42)
    p = cost.project_run(paper.paths, spec, a100, paper.config)
    assert p.steps == 15_625 and p.seconds == pytest.approx(seconds, rel=1e-4)
    # every figure it is priced from says it is calibrated, none that it was measured on the A100
    assert all(s.calibrated == "h200" for _, _, sources in p.pieces for s in sources or [])
    assert a100.device == "NVIDIA A100 80GB SXM" and a100.calibrated.startswith(
        "calibrated from datasheet rates, not measured")


def test_an_h100_keeps_the_h200s_compute_rate_and_pays_for_its_bandwidth():
    """The H100 SXM has the H200's BF16 rate: only the memory-bound share of a figure grows, by 4.8 / 3.35. The
    GLUE step of DeBERTa-1.5B (193.454 ms for 32 pairs of 128 tokens) counts its FLOPs at 128 tokens."""
    # 3 x 48 x (2 x (4 x 1536^2 + 2 x 1536 x 6144) + 4 x 128 x 1536) FLOPs per token, 32 x 128 tokens
    flops = 3 * 48 * (2 * (4 * 1536 ** 2 + 2 * 1536 * 6144) + 4 * 128 * 1536) * 32 * 128
    c = flops / (0.193454 * 989e12)
    expected = 193.454 * (c + (1 - c) * 4.8 / 3.35)
    assert load("h100").glue_step(
        {"arch": "deberta", "layers": 48, "hidden": 1536, "intermediate": 6144}, False).ms == pytest.approx(expected)
    # the embedding rate (no FLOPs in the table): the fixed 0.2 compute share
    assert load("h100").table["embedding"]["ms_per_sentence"] == pytest.approx(
        0.0924 * (0.2 + 0.8 * 4.8 / 3.35))


def test_a_measured_table_replaces_the_calibration_by_being_there(tmp_path, monkeypatch):
    from sentaug.pricing import datasheet, step_times

    folder = tmp_path / "step_times"
    folder.mkdir()
    (folder / "h200.yaml").write_text((step_times.TABLES / "h200.yaml").read_text())
    monkeypatch.setattr(step_times, "TABLES", folder)
    assert load("h100").calibrated is not None
    measured = load("h200").table | {"device": "NVIDIA H100 SXM (measured)"}
    from sentaug.pricing.calibration import write_table

    write_table(measured, "h100", folder)
    h100 = load("h100")
    assert h100.calibrated is None and h100.device == "NVIDIA H100 SXM (measured)"
    assert h100.setting("bert-base-uncased/b64/L32/simcse").ms == 12.511
    # without the measured H200 table nothing is calibrated, and only what is measured is known
    (folder / "h200.yaml").unlink()
    assert datasheet.known_devices() == ["h100"]


def test_what_does_not_fit_in_80_gb():
    """The measured peaks (torch's max allocated, GiB) + 2 GiB against the device's memory: RoBERTa-base with 16
    retrieved negatives per anchor at batch 512 (114.6 GiB) and DeBERTa-1.5B's GLUE step with R-drop (83.25 GiB)
    do not fit in 80 GB; DeBERTa's plain GLUE step (50.18 GiB) and 8 retrieved negatives (65.54 GiB) do; all fit
    in the H200's 141 GB. A job whose work is larger than the measured one's is not known to fit."""
    h200, a100 = load("h200"), load("a100")
    deberta = {"arch": "deberta", "layers": 48, "hidden": 1536, "intermediate": 6144}
    for times in (h200, a100):      # the peaks travel with the calibration: they do not depend on the rates
        assert times.setting_peak("roberta-base/b512/L32/retrieved16") == 114.6
        assert times.setting_peak("roberta-base/b512/L32/retrieved8") == 65.54
        assert times.glue_peak(deberta, True)[0] == 83.25 and times.glue_peak(deberta, False)[0] == 50.18

    def job(gib, lower_bound=False):
        return cost.Projection(1.0, peak=cost.Peak(gib, "test", lower_bound))

    for gib, on_h200, on_a100 in ((114.6, True, False), (83.25, True, False), (65.54, True, True),
                                  (50.18, True, True)):
        assert (fit_in_memory(job(gib), h200), fit_in_memory(job(gib), a100)) == (on_h200, on_a100)
        assert gib + 2 <= 141 and (gib + 2 <= 80) == on_a100
    assert fit_in_memory(job(50.18, lower_bound=True), a100) is None        # fits at batch 32, theirs is larger
    assert fit_in_memory(job(83.25, lower_bound=True), a100) is False       # does not even at the measured one
    assert fit_in_memory(cost.Projection(1.0), a100) is None                # no peak measured


def test_speedup_scales_the_training_glue_and_evaluation_hours(paper):
    """--speedup s: every figure of work on the device s times faster, in each of the three kinds of device-hour:
    a training run's steps and dev evaluations, a GLUE job's steps, an evaluation's embedding; start-ups, a GLUE
    task's one-off work and writes to disk as measured. Leaving any kind out fails its line."""
    h200 = load("h200")
    fast = h200.scaled(2.0)
    ev = h200.table["evaluation"]
    spec = paper.specs.run_spec("leaderboard", "bert-base-uncased", "simcse", 42)
    run, run2 = (cost.project_run(paper.paths, spec, t, paper.config) for t in (h200, fast))
    device_s = 15_625 * 12.511 / 1000 + 125 * (ev["dev_ms"] + ev["best_snapshot_ms"]) / 1000
    assert run.seconds - run2.seconds == pytest.approx(device_s / 2)
    shape = cost.backbone_shape(paper.config, "roberta-base")
    glue, glue2 = (cost.project_glue(t, shape, ["RTE", "MRPC"], None, False) for t in (h200, fast))
    steps = dict((n, s) for n, s, _ in glue.pieces)["steps"]
    assert steps > 0 and glue.seconds - glue2.seconds == pytest.approx(steps / 2)
    suite, suite2 = (cost.project_suite(t, shape, "sts") for t in (h200, fast))
    n = suite.parts["sentences"]
    assert n > 0 and suite.seconds - suite2.seconds == pytest.approx(n * 0.0924 / 1000 / 2)
    assert suite.parts["startup"] == suite2.parts["startup"]


@pytest.fixture(scope="module")
def bills(tmp_path_factory):
    """The paper scale's bill of `all` on each device and with --speedup 2 on the H200, over one dry run of
    Snakemake (the DAG does not depend on the device), with a results folder of nothing built."""
    from sentaug.pricing import bill

    results = tmp_path_factory.mktemp("bills") / "results"
    dags = {}
    real = bill._dag

    def once(targets, configfiles, overrides, workdir):
        key = (tuple(targets), tuple(map(str, configfiles)), repr(sorted(overrides.items())))
        if key not in dags:
            dags[key] = real(targets, configfiles, overrides, workdir)
        return dags[key]

    bill._dag = once
    try:
        return {(device, speedup): bill.compute_bill(["all"], "paper", device, {"results": str(results)},
                                                     speedup=speedup)
                for device, speedup in (("h200", 1.0), ("a100", 1.0), ("h100", 1.0), ("h200", 2.0))}
    finally:
        bill._dag = real


def test_the_measured_h200_bill_is_unchanged(bills):
    """The paper scale's bill on the measured H200 as `sentaug cost all --scale paper` printed it before issue 59
    (60.34 + 33.12 + 5.45 = 98.90 h): the calibration, the memory check and the new provenance category change
    none of its hours; none of its jobs is too large for the H200, and none of its figures is calibrated."""
    from sentaug.pricing.bill import target_rows

    b = bills[("h200", 1.0)]
    row = target_rows(b)[0]
    assert [round(row[k], 2) for k in ("train_h", "glue_h", "eval_h", "total_h")] == [60.34, 33.12, 5.45, 98.90]
    assert b.too_large() == [] and b.provenance()["calibrated"] == 0.0 and b.times.calibrated is None


def test_the_bills_of_the_calibrated_devices(bills):
    """On an A100 and an H100 every hour is calibrated (but the estimated start-ups), the bill says so, and the
    jobs too large for 80 GB are left out of the hours and named: 9 runs with 16 retrieved negatives, and the 2
    GLUE jobs of DeBERTa-1.5B with R-drop. Both are slower than the H200 on the jobs they can run."""
    from sentaug.pricing.bill import format_bill, target_rows
    from sentaug.pricing.report_data import projected_jobs, provenance_note

    h200 = target_rows(bills[("h200", 1.0)])[0]
    for device in ("a100", "h100"):
        b = bills[(device, 1.0)]
        row, p = target_rows(b)[0], b.provenance()
        assert p["current"] == p["older"] == 0.0 and p["calibrated"] / p["total"] > 0.95
        assert p["calibrated"] + p["estimated"] == pytest.approx(row["total_h"])
        too_large = sorted((j.kind, j.projection.peak.gib) for j in b.too_large())
        assert too_large == [("glue", 83.25)] * 2 + [("train", 114.6)] * 9
        assert row["train_h"] + sum(j.hours for j in b.too_large() if j.kind == "train") > h200["train_h"]
        text = format_bill(b)
        assert "Every figure of this bill is calibrated from datasheet rates, not measured" in text
        assert "calibrated from datasheet rates, not measured: " in text
        assert "Does not fit in the 80 GB of one" in text and "roberta-base/b512/L32/retrieved16: 114.6 GiB" in text
        assert sum(j["hours"] for j in projected_jobs(b) if j["fits"] is not False) == pytest.approx(row["total_h"])
        assert "calibrated from datasheet rates, not measured" in provenance_note(p)


def test_speedup_in_the_bill_halves_each_kinds_device_work(bills):
    """The bill with --speedup 2: in each of its three columns the pieces of work on the device take half the
    hours, the rest (start-ups, a GLUE task's one-off work, writes to disk) the same."""
    base, fast = bills[("h200", 1.0)], bills[("h200", 2.0)]
    # (device work, host work) by column; a run's dev evaluations (scaled) hold its last best-model write to disk
    # (not): the one run above tests them
    pieces = {"train": ({"steps"}, {"startup", "checkpoints"}), "glue": ({"steps"}, {"startup", "tasks_once"}),
              "eval": ({"embedding", "knn"}, {"startup"})}
    for kind, (device, host) in pieces.items():
        def hours(b, parts):
            return sum(s for j in b.jobs.values() if j.kind == kind and not j.built
                       for name, s, _ in j.projection.pieces if name in parts) / 3600
        assert hours(base, device) > 0 and hours(base, host) > 0
        assert hours(fast, device) == pytest.approx(hours(base, device) / 2), kind
        assert hours(fast, host) == pytest.approx(hours(base, host)), kind
