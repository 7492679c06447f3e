"""Several training runs on one GPU (`scales.<scale>.runs_per_gpu`): the slots that pin a run to a GPU
(sentaug.train.gpu_share), what the workflow asks of Snakemake in each place (sentaug.snakemake_hooks.
share_gpus), and that the Snakemake internals it relies on are still there. The cluster side is tested on
the local SLURM cluster (tests/workflow/test_slurm.py); a local run with two GPUs' worth of slots here."""
import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from sentaug.snakemake_hooks import share_evaluation_processes, share_gpus
from sentaug.train import gpu_share

ROOT = Path(__file__).resolve().parents[2]
GPUS = ["0", "1"]      # what CUDA_VISIBLE_DEVICES=0,1 shows a job (a run sees only its own GPU once pinned)


@pytest.fixture
def slots(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    yield tmp_path / "slots"
    while gpu_share._held:
        gpu_share._held.pop().close()


def test_runs_fill_each_gpu_before_doubling_up_and_wait_when_all_slots_are_taken(slots):
    taken = [gpu_share.take_slot(2, GPUS, folder=slots, log=open(os.devnull, "w")) for _ in range(4)]
    assert taken == ["0", "1", "0", "1"] and os.environ["CUDA_VISIBLE_DEVICES"] == "1"
    assert gpu_share.take_slot(2, GPUS, folder=slots, wait=False) is None          # 2 runs x 2 GPUs are running
    gpu_share._held.pop(1).close()                                             # the run on GPU 1, slot 1 ends
    assert gpu_share.take_slot(2, GPUS, folder=slots, wait=False, log=open(os.devnull, "w")) == "1"


def test_a_slot_is_held_by_another_process_until_it_ends(slots):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from sentaug.train.gpu_share import take_slot; "
                               f"print(take_slot(1, ['0', '1'], folder=__import__('pathlib').Path({str(slots)!r})), flush=True); "
                               "sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    try:
        assert holder.stdout.readline().strip() == "0"
        assert gpu_share.take_slot(1, GPUS, folder=slots, wait=False, log=open(os.devnull, "w")) == "1"
        assert gpu_share.take_slot(1, GPUS, folder=slots, wait=False) is None
    finally:
        holder.kill()
        holder.wait()
    assert gpu_share.take_slot(1, GPUS, folder=slots, wait=False, log=open(os.devnull, "w")) == "0"   # freed by its end


def test_one_visible_gpu_or_none_is_shared_as_it_is(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    monkeypatch.setenv("SLURM_JOB_ID", "77")
    log = tmp_path / "log"
    with open(log, "w") as f:
        assert gpu_share.take_slot(4, folder=tmp_path, log=f) is None
    assert re.fullmatch(r"\[gpu-share\] up to 4 runs share GPU 0 of SLURM job 77; started at \d+\.\d+\n",
                        log.read_text())
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "0" and not list(tmp_path.glob("*.lock"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert gpu_share.visible_gpus() == []
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2, 3")
    assert gpu_share.visible_gpus() == ["2", "3"]


class FakeWorkflow:
    """What share_gpus reads and calls of Snakemake's workflow object."""

    def __init__(self, remote=False, nodes=None, resources=None):
        self.remote_exec = remote
        self.resource_settings = SimpleNamespace(nodes=nodes)
        self.global_resources = dict(resources or {})
        self.group_settings = SimpleNamespace(group_components={"evaluate": 8})
        self.local = set()

    def localrules(self, *rules):
        self.local.update(rules)

    def register_resource(self, name, value):
        self.global_resources[name] = value


def test_what_sharing_asks_of_snakemake_in_each_place(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2")
    monkeypatch.delenv(gpu_share.ENV_RUNS_PER_GPU, raising=False)
    wf = FakeWorkflow()
    assert share_gpus(wf, 1) is None and wf.global_resources == {}        # k = 1: nothing changes
    assert gpu_share.ENV_RUNS_PER_GPU not in os.environ
    group = share_gpus(wf, 2)                                              # locally: 2 x 3 GPUs run at once
    assert wf.global_resources == {"gpu_runs": 6} and os.environ[gpu_share.ENV_RUNS_PER_GPU] == "2"
    assert group({}) == "train" and wf.group_settings.group_components == {"evaluate": 8, "train": 2}
    wf = FakeWorkflow(resources={"gpu_runs": 3})
    share_gpus(wf, 2)
    assert wf.global_resources == {"gpu_runs": 3}                           # --resources gpu_runs=3 wins
    wf = FakeWorkflow(nodes=64)                                             # the main process of a cluster run
    group = share_gpus(wf, 4)
    assert wf.global_resources == {} and group({}) == "train"
    wf.group_settings.group_components = {"train": 3}                      # --group-components train=3 wins
    assert group({}) == "train" and wf.group_settings.group_components == {"train": 3}
    wf = FakeWorkflow(remote=True, nodes=1)                                 # inside the SLURM job of a group
    assert share_gpus(wf, 4) is None
    assert wf.local == {"train"} and wf.global_resources == {"_nodes": 4}



def test_a_slurm_job_of_evaluations_runs_them_at_once_whatever_type_snakemake_gave_its_nodes(monkeypatch):
    """Inside a SLURM job Snakemake holds `--jobs` as a Resource object, not an int (a comparison with it once
    failed every SLURM job on load); after share_gpus it is the int that set."""
    import snakemake.api  # noqa: F401  (snakemake.workflow's import order)
    from snakemake.resources import Resource

    from sentaug.evaluate.service import ENV
    from sentaug.snakemake_hooks.gpu_groups import EVALUATION_RULES, GROUP_JOBS_AT_ONCE

    monkeypatch.delenv(ENV, raising=False)
    wf = FakeWorkflow(remote=True, resources={"_nodes": Resource("_nodes", 1)})
    assert share_evaluation_processes(wf, on_gpus=False) is False and ENV not in os.environ and not wf.local
    assert share_evaluation_processes(wf, on_gpus=True) is True and os.environ[ENV] == "1"
    assert wf.local == set(EVALUATION_RULES) and wf.global_resources["_nodes"] == GROUP_JOBS_AT_ONCE
    wf = FakeWorkflow(remote=True, resources={"_nodes": Resource("_nodes", 100)})
    share_evaluation_processes(wf, on_gpus=True)
    assert wf.global_resources["_nodes"] == 100
    wf = FakeWorkflow(remote=True, nodes=1)
    share_gpus(wf, 4)
    share_evaluation_processes(wf, on_gpus=True)
    assert wf.global_resources["_nodes"] == GROUP_JOBS_AT_ONCE and wf.local == {"train", *EVALUATION_RULES}

def test_the_snakemake_internals_sharing_relies_on_are_still_there():
    """An upgrade that changes them would make GPU sharing silently serial: say so here."""
    import snakemake.api  # noqa: F401  (snakemake.workflow cannot be imported first: circular)
    from snakemake.settings.types import GroupSettings
    from snakemake.workflow import Workflow
    from snakemake_executor_plugin_slurm import Executor

    assert "group_components" in GroupSettings.__dataclass_fields__
    assert "self.global_resources[name] = value" in inspect.getsource(Workflow.register_resource)
    assert "rule.group is None" in inspect.getsource(Workflow.is_local)
    # the reason for the workaround (snakemake-executor-plugin-slurm#469): one job at a time inside a SLURM job
    assert "--jobs 1" in inspect.getsource(Executor.additional_general_args)


@pytest.mark.slow
def test_a_node_with_two_gpus_runs_two_runs_on_each(tmp_path):
    """runs_per_gpu 2, two (here pretended) GPUs: Snakemake runs at most 4 training jobs at once and each
    takes a slot on one GPU, two per GPU."""
    results = tmp_path / "results"
    override = tmp_path / "override.yaml"
    override.write_text(yaml.safe_dump({"results": str(results), "scales": {"demo": {
        "seeds": [1, 2], "train": {"max_steps": 4, "batch_size": 16, "learning_rate": 1e-4, "eval_steps": 4},
        "train_resources": {"gpu": 1, "threads": 1}, "runs_per_gpu": 2}}}))
    runs = [results / f"runs/demo/shared/tiny-roberta/{m}/seed{s}" for m in ("simcse", "vascl") for s in (1, 2)]
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "0,1", "SENTAUG_GPU_SLOTS": str(tmp_path / "slots")}
    env.pop("SENTAUG_MIRROR", None)
    run = subprocess.run([sys.executable, "-m", "snakemake", *map(str, runs), "--cores", "4", "--configfile",
                          "config.yaml", str(override)], cwd=ROOT, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    log = Path(re.search(r"Complete log\(s\): (\S+)", run.stderr).group(1)).read_text()
    assert re.search(r"Provided resources: .*gpu_runs\W+(\w+\W+)?4\b", log)     # 2 runs x 2 GPUs at once
    pins = []
    for r in runs:
        log = (results / "logs/train/demo/shared/tiny-roberta" / r.parent.name / f"{r.name}.log").read_text()
        pins += re.findall(r"\[gpu-share\] GPU (\d), slot (\d) of 2", log)
        assert json.loads((r / "train_summary.json").read_text())["steps"] == 4
    assert sorted(pins) == [("0", "1"), ("0", "2"), ("1", "1"), ("1", "2")]
