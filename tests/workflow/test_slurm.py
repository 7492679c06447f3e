"""The workflow on SLURM: what each job asks for in a paper-scale dry run of the profile (no cluster needed),
then a real cluster: one node with slurmdbd and two dummy GPUs (scripts/slurm_local.sh up; CI brings it up, and
the tests marked `slurm` are skipped where no cluster answers).

* Paper scale, `snakemake all -n --profile profiles/slurm`: every job of a rule on a GPU (training, indexes,
  evaluations with GLUE's fine-tuning, the analyses' embeddings) asks for a GPU on the GPU partition for the
  bill's projection of it with the margin; every other job for the CPU partition, no GPU, the default hour.

* SDA Table 4 through `--profile profiles/slurm`, built once for the tests below, with two training runs
  per GPU (`runs_per_gpu: 2`): every job is an sbatch job (counted in sacct, with the account the profile
  names), the evaluations go in groups, the training runs in pairs, each pair one SLURM job with one GPU
  (read back from `scontrol show job` and sacct) in which both runs train at once, and the table equals the
  local build (one run per GPU) cell for cell.
* Without an account (`slurm-no-account`): a run that asks for two GPUs trains under torchrun with two
  processes (gloo on the CPU) and ends with the single-process weights.
* A training job requeued with `scontrol requeue` resumes from its last checkpoint and ends bit-identical to
  an uninterrupted run.
"""
import json
import math
import re
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from sentaug.report.provenance import STAMP_COLUMNS
from tests.workflow_runs import (LONG_RUN, ROOT, checkpoint_steps, demo_override, demo_table_targets,
                                 differing_tensors, job_counts, long_override, snakemake, snakemake_env)

pytestmark = pytest.mark.slow

PROFILE = ROOT / "profiles/slurm/config.yaml"


def test_every_job_kind_asks_for_its_node_and_its_projected_time_at_paper_scale(tmp_path):
    """The paper-scale dry run of the profile, each job's resources as Snakemake hands them to the SLURM plugin,
    against the bill of the same DAG: a GPU rule's job (sentaug.workflow.jobs) on config.yaml's GPU partition
    with one GPU (an evaluation's as `gres`, which a group of them takes once) for its projection with the margin
    (sentaug.pricing.cost.train_runtime_minutes; an evaluation's with its own start-up, the bill counting one per
    model), every other job on the profile's CPU partition without one."""
    from sentaug.pricing.bill import compute_bill
    from sentaug.pricing.cost import RUNTIME_FLOOR_MIN, train_runtime_minutes
    from sentaug.pricing.prices import price
    from sentaug.workflow.jobs import RULES
    from sentaug.workflow.planned import planned_jobs

    results = str(tmp_path / "results")          # nothing built: every job planned
    jobs = planned_jobs(["all", "--profile", "profiles/slurm", "--config", "scale=paper", f"results={results}"],
                        ROOT, forceall=True)
    bill = compute_bill(["all"], scale="paper", config={"results": results})
    profile = yaml.safe_load(PROFILE.read_text())
    assert {job.key for job in jobs} == set(bill.jobs)
    kinds = {}
    for job in jobs:
        res = job.resources
        asks = (res["slurm_partition"], res.get("gpu"), res.get("gres"))
        if RULES[job.rule].gpu:     # its projection in a process of its own (it may be the one that loads its model)
            projected = train_runtime_minutes(price(job.rule, bill.workflow, job.wildcards, bill.times)[1])
            assert (res["runtime"], asks) == (projected, ("gpu", 1, None) if job.rule in ("train", "index")
                                              else ("gpu", None, "gpu:1")), job.key
        else:
            assert (res["runtime"], asks) == (profile["default-resources"]["runtime"], ("cpu", None, None)), job.key
        kinds.setdefault(job.rule, []).append(res["runtime"])
    # every kind is there, and GLUE's fine-tuning asks for its projection, not the floor (sts's, at 15 min)
    assert {rule for rule, kind in RULES.items() if kind.gpu} <= set(kinds)
    glue = [job for job in jobs if job.rule == "evaluate_run"
            and job.wildcards["evaluation"].partition("~")[0] == "glue"]       # glue~recipe=roberta (CLEAR)
    assert glue and min(job.resources["runtime"] for job in glue) > RUNTIME_FLOOR_MIN


def node_cpus() -> int:
    out = subprocess.run(["sinfo", "-h", "-o", "%c"], capture_output=True, text=True, check=True).stdout
    return min(int(x) for x in out.split())


def slurm_profile(tmp: Path, account: str | None) -> Path:
    """profiles/slurm with its documented settings filled in for this cluster: the account (or
    slurm-no-account), cores = the node's cores; status checks from 2 s on (the default, 40 s, is for real
    clusters)."""
    profile = yaml.safe_load(PROFILE.read_text())
    if account:
        profile["default-resources"]["slurm_account"] = account
    else:
        profile["slurm-no-account"] = True
    profile["cores"] = node_cpus()
    profile["slurm-init-seconds-before-status-checks"] = 2
    folder = tmp / ("profile_" + (account or "no_account"))
    folder.mkdir()
    (folder / "config.yaml").write_text(yaml.safe_dump(profile))
    return folder


def run_uuid(output: str) -> str:
    return re.search(r"SLURM run ID: (\S+)", output).group(1)


def sacct_jobs(name: str) -> list[dict]:
    """The jobs named `name` (a Snakemake run's id), one row per job, as sacct reports them."""
    fields = ["JobID", "Account", "Partition", "State", "AllocTRES"]
    out = subprocess.run(["sacct", "-X", "-n", "-P", "-S", "now-2days", "--name", name, "-o", ",".join(fields)],
                         capture_output=True, text=True, check=True).stdout
    return [dict(zip(fields, line.split("|"))) for line in out.splitlines() if line]


def scontrol_job(job_id: str) -> dict:
    out = subprocess.run(["scontrol", "show", "job", job_id], capture_output=True, text=True, check=True).stdout
    return dict(kv.split("=", 1) for kv in out.split() if "=" in kv)


RUNS_PER_GPU = 2


@pytest.fixture(scope="module")
def sbatch_table4(tmp_path_factory):
    """SDA Table 4 built through sbatch with the account `ci`, training asking for a GPU (a config override:
    the GRES request must reach SLURM and be scheduled) and RUNS_PER_GPU runs sharing each: (results,
    planned jobs per rule, the run's sacct rows, scontrol's view of each job)."""
    tmp = tmp_path_factory.mktemp("sbatch_table4")
    results = tmp / "results"
    override = demo_override(tmp / "override.yaml", results, train_resources={"gpu": 1}, runs_per_gpu=RUNS_PER_GPU)
    profile = slurm_profile(tmp, account="ci")
    target = demo_table_targets(results)[0]
    planned = job_counts(snakemake(target, "-n", "--configfile", "config.yaml", str(override)).stdout)
    run = snakemake(target, "--profile", str(profile), "--configfile", "config.yaml", str(override))
    assert run.returncode == 0, run.stderr[-4000:]
    jobs = sacct_jobs(run_uuid(run.stdout + run.stderr))
    details = {j["JobID"]: scontrol_job(j["JobID"]) for j in jobs}
    return results, planned, jobs, details, run.stdout + run.stderr


@pytest.mark.slurm
def test_table4_through_sbatch_equals_the_local_build(demo_tables, sbatch_table4):
    local_results = demo_tables[0]
    results, planned, jobs, details, output = sbatch_table4
    profile = yaml.safe_load(PROFILE.read_text())
    grouped = {}            # the profile's groups: their jobs go to SLURM group-components at a time
    for rule, n in planned.items():
        if rule in profile["groups"]:
            grouped[profile["groups"][rule]] = grouped.get(profile["groups"][rule], 0) + n
    expected_jobs = (sum(planned.values()) - sum(grouped.values()) - planned["train"]
                     + sum(math.ceil(n / profile["group-components"][group]) for group, n in grouped.items())
                     + math.ceil(planned["train"] / RUNS_PER_GPU))
    assert len(jobs) == expected_jobs == len(re.findall(r"submitted with SLURM jobid", output))
    assert {j["State"] for j in jobs} == {"COMPLETED"} and {j["Account"] for j in jobs} == {"ci"}
    train = [j for j in jobs if details[j["JobID"]]["Comment"].startswith("rule_train")]
    assert len(train) == planned["train"] / RUNS_PER_GPU
    # training asks for a GPU here (the override), so the evaluations, in groups, ask for one too
    evaluations = [j for j in jobs if details[j["JobID"]]["Comment"].startswith("rule_evaluate_")]
    assert len(evaluations) == math.ceil(grouped["evaluate"] / profile["group-components"]["evaluate"])
    for j in train + evaluations:     # one GPU for each pair of runs, each group of evaluations: a string GRES,
        assert details[j["JobID"]]["TresPerNode"] == "gres:gpu:1" and j["Partition"] == "gpu"   # not added up
        assert "gres/gpu=1" in j["AllocTRES"]        # scheduled with the GPU
    assert all("gres/gpu" not in j["AllocTRES"] and j["Partition"] == "cpu" for j in jobs
               if j not in train + evaluations)

    ours = pd.read_csv(results / "tables/sda/table4.csv")
    local = pd.read_csv(local_results / "tables/sda/table4.csv")
    stamp = list(STAMP_COLUMNS)         # when each was built
    pd.testing.assert_frame_equal(ours.drop(columns=stamp), local.drop(columns=stamp), check_exact=True)
    for path in sorted((local_results / "eval").rglob("sts.json")):
        mine = json.loads((results / path.relative_to(local_results)).read_text())
        theirs = json.loads(path.read_text())
        for varies in ("model", "data", "seconds"):   # paths and timing
            mine.pop(varies), theirs.pop(varies)
        assert mine == theirs, path


@pytest.mark.slurm
def test_the_runs_of_a_pair_train_at_once_in_their_slurm_job(sbatch_table4):
    """Each training run's log says which SLURM job it ran in and when it started (sentaug.train.gpu_share);
    it ended when it wrote its summary. The RUNS_PER_GPU runs of each SLURM job overlap in time."""
    results, planned, jobs, details, _ = sbatch_table4
    gpu_jobs = {j["JobID"] for j in jobs if "gres/gpu=1" in j["AllocTRES"]        # those of training
                and details[j["JobID"]]["Comment"].startswith("rule_train")}
    by_job = {}
    for log in (results / "logs/train").rglob("*.log"):
        job, start = re.search(r"\[gpu-share\] up to 2 runs share GPU \S+ of SLURM job (\d+); started at (\S+)",
                               log.read_text()).groups()
        run = results / "runs" / log.relative_to(results / "logs/train").with_suffix("")
        end = (run / "train_summary.json").stat().st_mtime
        by_job.setdefault(job, []).append((float(start), end))
    assert len(by_job) == planned["train"] / RUNS_PER_GPU and set(by_job) == gpu_jobs
    for job, spans in by_job.items():
        assert len(spans) == RUNS_PER_GPU
        assert max(start for start, _ in spans) < min(end for _, end in spans), (job, spans)


@pytest.mark.slurm
def test_two_gpus_train_under_torchrun_like_one_process_without_an_account(tmp_path):
    results = tmp_path / "results"
    override = demo_override(tmp_path / "override.yaml", results, train_resources={"gpu": 2, "threads": 2})
    # Dropout off: two processes draw other dropout masks than one would, everything else must agree.
    cfg = yaml.safe_load(override.read_text())
    cfg["backbones"] = {"tiny-bert": {"dropout": 0.0}}
    override.write_text(yaml.safe_dump(cfg))
    profile = slurm_profile(tmp_path, account=None)
    run_dir = results / "runs/demo/shared/tiny-bert/simcse/seed1"
    run = snakemake(str(run_dir), "--profile", str(profile), "--configfile", "config.yaml", str(override))
    assert run.returncode == 0, run.stderr[-4000:]
    jobs = sacct_jobs(run_uuid(run.stdout + run.stderr))
    assert {j["State"] for j in jobs} == {"COMPLETED"} and {j["Account"] for j in jobs} == {"sentaug"}  # the default
    train = [j for j in jobs if scontrol_job(j["JobID"])["Comment"].startswith("rule_train_")]
    assert len(train) == 1 and scontrol_job(train[0]["JobID"])["TresPerJob"] == "gres:gpu:2"
    assert "gres/gpu=2" in train[0]["AllocTRES"]
    summary = json.loads((run_dir / "train_summary.json").read_text())
    assert summary["processes"] == 2

    single = tmp_path / "single"
    spec = summary["spec"]
    subprocess.run([sys.executable, "-m", "sentaug.cli", "train", "--spec", json.dumps(spec),
                    "--corpus", str(results / "data/demo/wiki/demo_corpus.txt"),
                    "--backbone", str(results / "backbones/tiny-bert"), "--dev-data", str(results / "data/demo"),
                    "--out", str(single)], check=True, env={**snakemake_env(), "OMP_NUM_THREADS": "1"},
                   capture_output=True)
    assert json.loads((single / "train_summary.json").read_text())["processes"] == 1
    import torch
    from safetensors.torch import load_file

    a, b = load_file(str(run_dir / "model.safetensors")), load_file(str(single / "model.safetensors"))
    for name in a:   # the gradient sum over two processes is rounded differently: float tolerance
        torch.testing.assert_close(a[name], b[name], rtol=0, atol=2e-5, msg=name)
    loss = lambda d: [json.loads(r)["loss"] for r in (d / "train_log.jsonl").read_text().splitlines()]
    assert loss(run_dir) == pytest.approx(loss(single), rel=1e-5)


def _running_train_job(comment_prefix="rule_train_") -> str | None:
    out = subprocess.run(["squeue", "-h", "-t", "RUNNING", "-o", "%i|%k"], capture_output=True, text=True).stdout
    ids = [line.split("|")[0] for line in out.splitlines() if line.split("|")[1].startswith(comment_prefix)]
    return ids[0] if ids else None


@pytest.mark.slurm
def test_requeued_training_job_resumes_bit_identical(long_reference, tmp_path):
    _, reference = long_reference
    results = tmp_path / "results"
    override = long_override(tmp_path / "override.yaml", results)
    profile = slurm_profile(tmp_path, account=None)
    run_dir = results / LONG_RUN
    partial = Path(f"{run_dir}.partial")
    log = open(tmp_path / "snakemake.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "snakemake", str(run_dir), "--profile", str(profile),
                             "--configfile", "config.yaml", str(override)], cwd=ROOT, env=snakemake_env(),
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        job = None
        deadline = time.time() + 600
        while time.time() < deadline and proc.poll() is None:
            if max(checkpoint_steps(partial), default=0) >= 6:
                job = _running_train_job()
                break
            time.sleep(0.05)
        assert job, "the training job never reached its second checkpoint"
        subprocess.run(["scontrol", "requeue", job], check=True)
        # A requeued job waits about two minutes before it may start again; the test lets it start sooner, but
        # not within the second its old credential was revoked: slurmd refuses a credential that is not newer
        # ("Killing non-startable batch job: Job credential revoked"), and that incarnation FAILS.
        for _ in range(100):
            if scontrol_job(job)["JobState"] == "PENDING":
                break
            time.sleep(0.1)
        time.sleep(2)
        subprocess.run(["scontrol", "update", f"JobId={job}", "StartTime=now"], check=True)
        assert proc.wait(timeout=900) == 0, (tmp_path / "snakemake.log").read_text()[-4000:]
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
    history = subprocess.run(["sacct", "-D", "-X", "-n", "-P", "-j", job, "-o", "State"], capture_output=True,
                             text=True, check=True).stdout.split()
    assert history == ["REQUEUED", "COMPLETED"]
    assert int(scontrol_job(job)["Restarts"]) == 1
    train_log = (results / "logs/train/demo/shared/tiny-bert/simcse/seed1.log").read_text()
    resumed = int(re.search(r"resumed at step (\d+)", train_log).group(1))
    assert resumed >= 3          # from a checkpoint, not from scratch
    assert differing_tensors(run_dir, reference) == []
    loss = lambda d: [json.loads(r)["loss"] for r in (d / "train_log.jsonl").read_text().splitlines()]
    assert loss(run_dir) == loss(reference)
