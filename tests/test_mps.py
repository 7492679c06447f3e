"""NVIDIA MPS for runs sharing a GPU (sentaug.train.mps), against a stand-in `nvidia-cuda-mps-control` that
behaves as the real one does for what the module uses: `-d` daemonises (here: writes the control pipe and
counts the start), `get_server_list` on stdin answers 0 while the daemon runs, `quit` ends it."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sentaug.train import gpu_share, mps

FAKE = textwrap.dedent("""\
    #!{python}
    import os, sys, time
    from pathlib import Path
    pipe = Path(os.environ["CUDA_MPS_PIPE_DIRECTORY"])
    starts = Path(os.environ["FAKE_MPS_STARTS"])
    if sys.argv[1:] == ["-d"]:
        if os.environ.get("FAKE_MPS_FAIL"):
            print("An instance of this daemon is already running", file=sys.stderr)
            sys.exit(1)
        time.sleep(0.2)                     # a start takes a while: two callers at once would both start
        with open(starts, "a") as f:
            f.write(os.environ.get("CUDA_VISIBLE_DEVICES", "") + "\\n")
        (pipe / "control").write_text("")
        sys.exit(0)
    command = sys.stdin.read().strip()
    if not (pipe / "control").exists():
        sys.exit(1)
    if command == "quit":
        (pipe / "control").unlink()
    sys.exit(0)
""")


@pytest.fixture
def control(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / mps.CONTROL
    fake.write_text(FAKE.format(python=sys.executable))
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_MPS_STARTS", str(tmp_path / "starts"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    monkeypatch.setenv("SENTAUG_GPU_SLOTS", str(tmp_path / "slots"))
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    for key in (mps.PIPE, mps.LOG, mps.ENV_SWITCH):
        monkeypatch.delenv(key, raising=False)
    yield tmp_path
    while gpu_share._held:
        gpu_share._held.pop().close()


def starts(root: Path) -> list[str]:
    path = root / "starts"
    return path.read_text().splitlines() if path.exists() else []


def test_started_once_for_every_visible_gpu_pointed_at_then_stopped(control):
    where = control / "slots" / "local" / "mps"
    assert mps.folder() == where
    assert mps.start(log=open(os.devnull, "w")) and mps.start(log=open(os.devnull, "w"))      # the second finds it
    assert starts(control) == ["0,1"]                           # one daemon, for the GPUs visible before pinning
    assert os.environ[mps.PIPE] == str(where / "pipe") and os.environ[mps.LOG] == str(where / "log")
    assert mps.running()
    assert mps.stop(log=open(os.devnull, "w")) and not mps.running()
    assert mps.PIPE not in os.environ and not mps.stop()


def test_the_runs_of_a_group_starting_together_start_one_daemon(control):
    code = "from sentaug.train import mps; import os; mps.start(log=open(os.devnull, 'w'))"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env) for _ in range(3)]
    assert [p.wait() for p in procs] == [0, 0, 0]
    assert starts(control) == ["0,1"]


def test_off_absent_or_failing_leaves_the_runs_as_they_were(control, monkeypatch):
    monkeypatch.setenv(mps.ENV_SWITCH, "0")
    assert not mps.start() and starts(control) == []
    monkeypatch.delenv(mps.ENV_SWITCH)
    monkeypatch.setenv("FAKE_MPS_FAIL", "1")
    said = control / "said"
    with open(said, "w") as log:
        assert not mps.start(log=log)
    assert "did not start (An instance of this daemon is already running): runs share the GPU without MPS" in \
        said.read_text()
    assert mps.PIPE not in os.environ
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")                 # no GPU: nothing to serve
    monkeypatch.delenv("FAKE_MPS_FAIL")
    assert not mps.start() and starts(control) == []


def test_a_shared_training_job_starts_it_before_taking_its_gpu(control, monkeypatch):
    """`sentaug train` in a workflow with runs_per_gpu > 1: MPS first (for both GPUs), then the job's slot."""
    monkeypatch.setenv(gpu_share.ENV_RUNS_PER_GPU, "2")
    assert gpu_share.pin_from_environment() == "0"
    assert starts(control) == ["0,1"] and os.environ["CUDA_VISIBLE_DEVICES"] == "0"
    monkeypatch.setenv(gpu_share.ENV_RUNS_PER_GPU, "1")            # one run per GPU: no MPS, no slot
    mps.stop(log=open(os.devnull, "w"))
    assert gpu_share.pin_from_environment() is None and starts(control) == ["0,1"]


def test_the_workflow_hooks_start_and_stop_it_for_local_runs_only(control):
    class Workflow:
        local_exec, remote_exec = True, False

    assert not mps.start_for_local_run(Workflow, 1) and starts(control) == []
    assert mps.start_for_local_run(Workflow, 4) and mps.running()
    Workflow.local_exec = False                                   # a cluster run's main process: not its GPUs
    assert not mps.stop_for_local_run(Workflow, 4) and mps.running()
    Workflow.local_exec = True
    assert mps.stop_for_local_run(Workflow, 4) and not mps.running()
