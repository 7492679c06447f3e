"""One process for a model's evaluations (`sentaug.evaluate.service`): jobs of `sentaug evaluate <suite>` started
at once with SENTAUG_EVALUATION_SERVICE=1 hand their commands to one process, which loads the model once and
writes each job's result file as the job's own process writes it; which commands it takes."""
import json
import os
import subprocess
import sys

import pytest
import torch

from sentaug.cli import main
from sentaug.evaluate import service
from tests.test_job_server import ROOT

SUITES = [["sts"], ["cola"], ["transfer", "--mode", "fast"]]


@pytest.fixture(scope="module")
def tiny_and_demo(tmp_path_factory, shipped_config):
    root = tmp_path_factory.mktemp("service")
    spec = json.dumps(shipped_config["backbones"]["tiny-bert"])
    assert main(["backbone", "tiny-bert", "--spec", spec, "--out", str(root / "tiny-bert")]) == 0
    for group in ("senteval", "transfer", "glue/CoLA"):
        assert main(["download", group, "--origin", "demo", "--out", str(root / "data")]) == 0
    return root / "tiny-bert", root / "data"


def _result(path):
    record = json.loads(path.read_text())
    record.pop("seconds", None)               # the clock
    return record


def test_jobs_of_one_model_run_in_one_process_and_write_what_their_own_processes_write(tiny_and_demo, tmp_path):
    model, data = tiny_and_demo
    torch.set_num_threads(1)
    shared = ["--model", str(model), "--pooler", "avg", "--data", str(data), "--scale", "demo"]
    for suite in SUITES:          # each command in a process of its own (here, this one): the reference
        out = tmp_path / "own" / f"{suite[0]}.json"
        assert main(["evaluate", suite[0], *shared, *suite[1:], "--out", str(out)]) == 0
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, service.ENV: "1", "SENTAUG_EVALUATION_LINGER_S": "5", "TMPDIR": str(tmp_path / "tmp"),
           "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT / "src")}
    jobs = [subprocess.Popen([sys.executable, "-m", "sentaug.cli", "evaluate", suite[0], *shared, *suite[1:], "--out",
                              str(tmp_path / "one" / f"{suite[0]}.json")], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for suite in SUITES]
    outputs = [job.communicate(timeout=600) for job in jobs]
    assert [job.returncode for job in jobs] == [0] * len(SUITES), [err[-2000:] for _, err in outputs]
    for suite in SUITES:
        assert _result(tmp_path / "one" / f"{suite[0]}.json") == _result(tmp_path / "own" / f"{suite[0]}.json")
    # one of the jobs was the model's process and ran the three commands; each job printed its own summary
    leaders = [err for _, err in outputs if "[evaluation process]" in err]
    assert len(leaders) == 1 and f"{model.resolve()} on auto: 3 commands in this process" in leaders[0]
    assert all(f"tiny-bert [avg]" in out for out, _ in outputs)
    assert [p.suffix for p in (tmp_path / "tmp").rglob("*") if p.is_file()] == [".lock"]   # its lock, free


def test_which_commands_a_models_process_takes(tmp_path):
    model = tmp_path / "m"
    model.mkdir()
    assert service.served(["evaluate", "sts", "--model", str(model), "--pooler", "avg"]) == (str(model), "auto")
    assert service.served(["evaluate", "glue", f"--model={model}", "--device", "cuda:1"]) == (str(model), "cuda:1")
    assert service.served(["evaluate", "suites", "--model", str(model)]) is None      # one process already
    assert service.served(["train", "--model", str(model)]) is None
    assert service.served(["evaluate", "sts"]) is None
    auto, cuda = (service.address(str(model), device, str(tmp_path))[0] for device in ("auto", "cuda"))
    assert auto != cuda
    assert service.run(["evaluate", "sts", "--model", str(model)], main) is None   # the variable unset: its own
