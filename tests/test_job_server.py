"""The job server (sentaug.job_server): a command run in a fork of it writes what the command writes in a process of
its own, byte for byte (a random backbone's weights, an STS evaluation), with the job's stdout, stderr and exit
status; a job whose environment differs from the server's runs in its own process; the Snakefile's hooks start
it only for local runs of a scale that enables it, and stop it. Also the other onstart hook of local runs: the
first table built is announced with its path."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from sentaug import job_server, snakemake_hooks
from sentaug.job_server import decline_reason

ROOT = Path(__file__).resolve().parents[1]
PRELOAD = ["torch", "transformers.models.bert.modeling_bert", "sentaug.cli", "sentaug.evaluate.sts",
           "sentaug.models.backbones"]


def job_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in (job_server.ENV_SOCKET, "PYTEST_CURRENT_TEST")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    return {**env, **{v: "1" for v in job_server.THREAD_VARIABLES}, **extra}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A job server with torch, BERT and two of the package's stages imported: (socket, log file)."""
    folder = tmp_path_factory.mktemp("server")
    sock, log = folder / "socket", folder / "server.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "sentaug.job_server", str(sock), *PRELOAD], cwd=folder,
                                env=job_env(), stdout=err, stderr=err, start_new_session=True)
    deadline = time.monotonic() + 120
    while not sock.exists():
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)
    yield sock, log
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    assert not sock.exists()


def sentaug(args, cwd, sock=None, **extra) -> subprocess.CompletedProcess:
    env = job_env(**extra)
    if sock is not None:
        env[job_server.ENV_SOCKET] = str(sock)
    return subprocess.run([sys.executable, "-m", "sentaug.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_a_fork_writes_what_its_own_process_writes(server, tmp_path):
    sock, log = server
    spec = json.dumps(yaml.safe_load((ROOT / "config.yaml").read_text())["backbones"]["tiny-bert"])
    data = tmp_path / "data"
    assert sentaug(["download", "senteval", "--origin", "demo", "--out", str(data)], tmp_path).returncode == 0
    outputs, forked = {}, log.read_text().count("forked ")
    for mode, via in (("own", None), ("fork", sock)):
        backbone = tmp_path / mode / "tiny-bert"
        built = sentaug(["backbone", "tiny-bert", "--spec", spec, "--out", str(backbone)], server[0].parent, via)
        assert built.returncode == 0, built.stderr
        scored = sentaug(["evaluate", "sts", "--model", str(backbone), "--pooler", "avg", "--data", str(data),
                          "--scale", "demo", "--out", str(tmp_path / mode / "sts.json")], server[0].parent, via)
        assert scored.returncode == 0, scored.stderr
        result = json.loads((tmp_path / mode / "sts.json").read_text())
        result.pop("seconds"), result.pop("model")          # the time it took, the folder it read
        outputs[mode] = ((backbone / "model.safetensors").read_bytes(), result)
    assert outputs["fork"][0] == outputs["own"][0]
    assert outputs["fork"][1] == outputs["own"][1]
    assert "imported 5 modules" in log.read_text() and "declined" not in log.read_text()
    assert log.read_text().count("forked ") == forked + 2          # the backbone and the evaluation ran in forks


def test_the_job_gets_its_streams_and_exit_status(server, tmp_path):
    sock, log = server
    listed = sentaug(["augment", "--list"], sock.parent, sock)
    assert listed.returncode == 0 and listed.stdout == sentaug(["augment", "--list"], sock.parent).stdout
    assert "RandomDeletion" in listed.stdout
    missing = sentaug(["tokenize", "--texts", str(tmp_path / "none.txt"), "--backbone", str(tmp_path),
                       "--max-length", "8", "--out", str(tmp_path / "t.npz")], sock.parent, sock)
    assert missing.returncode == 2 and "none.txt" in missing.stderr
    unknown = sentaug(["no-such-command"], sock.parent, sock)
    assert unknown.returncode == 2 and "unknown command 'no-such-command'" in unknown.stderr


def test_a_job_with_another_environment_runs_in_its_own_process(server):
    sock, log = server
    before = log.read_text().count("declined")
    run = sentaug(["augment", "--list"], sock.parent, sock, SENTAUG_SOMETHING="1")
    assert run.returncode == 0 and "RandomDeletion" in run.stdout
    assert log.read_text().count("declined") == before + 1
    assert "environment differs in SENTAUG_SOMETHING" in log.read_text()


def test_declines_what_would_import_other_code_or_settings():
    env = {"PATH": "/bin", "HF_HUB_OFFLINE": "0", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    path = ["/src"]
    ok = {"executable": sys.executable, "path": path, "env": dict(env)}
    assert decline_reason(ok, env, path) is None
    shell = {**ok, "env": {**env, "PWD": "/x", "SHLVL": "2", "_": "/usr/bin/python", "TMPDIR": "/scratch"}}
    assert decline_reason(shell, env, path) is None
    threads = {**ok, "env": {**env, **{v: "4" for v in job_server.THREAD_VARIABLES}}}
    assert decline_reason(threads, env, path) is None
    assert "HF_HUB_OFFLINE" in decline_reason({**ok, "env": {**env, "HF_HUB_OFFLINE": "1"}}, env, path)
    assert "thread counts" in decline_reason({**ok, "env": {**env, "OMP_NUM_THREADS": "4"}}, env, path)
    assert "interpreter" in decline_reason({**ok, "executable": "/usr/bin/python3"}, env, path)
    assert "sys.path" in decline_reason({**ok, "path": ["/elsewhere"]}, env, path)


def test_a_fork_takes_the_jobs_thread_count():
    code = ("import torch; from sentaug.job_server import apply_threads; apply_threads('3'); "
            "from threadpoolctl import threadpool_info; "
            "print(torch.get_num_threads(), sorted({p['num_threads'] for p in threadpool_info()}))")
    out = subprocess.run([sys.executable, "-c", code], env=job_env(), capture_output=True, text=True, check=True)
    assert out.stdout.split(maxsplit=1) == ["3", "[3]\n"]


def test_the_hooks_start_a_server_only_for_local_runs_that_enable_it(tmp_path, monkeypatch):
    monkeypatch.delenv(job_server.ENV_SOCKET, raising=False)
    local = SimpleNamespace(local_exec=True, remote_exec=False)
    assert not snakemake_hooks.start_job_server(local, False, str(tmp_path / "log"))
    assert not snakemake_hooks.start_job_server(SimpleNamespace(local_exec=False, remote_exec=False), True,
                                                str(tmp_path / "log"))
    assert not snakemake_hooks.start_job_server(SimpleNamespace(local_exec=True, remote_exec=True), True,
                                                str(tmp_path / "log"))
    assert job_server.ENV_SOCKET not in os.environ
    assert snakemake_hooks.start_job_server(local, True, str(tmp_path / "log"))
    (process, folder), = snakemake_hooks._JOB_SERVER
    sock = Path(os.environ[job_server.ENV_SOCKET])
    assert sock.parent == Path(folder)
    snakemake_hooks.stop_job_server()
    assert process.poll() is not None and not Path(folder).exists()
    assert job_server.ENV_SOCKET not in os.environ


def test_the_first_table_built_is_announced(tmp_path, capsys):
    tables = tmp_path / "tables"
    (tables / "sda").mkdir(parents=True)
    (tables / "sda/old.csv").write_text("scale,row,reproduced,skipped\ndemo,a,1.0,\n")
    snakemake_hooks.announce_first_table(str(tables), then="open the report", interval_s=0.05)
    (tables / "sda/table5.csv").write_text("scale,row,reproduced,skipped\ndemo,,,no corpus at this scale\n")
    time.sleep(0.3)
    assert "First table" not in capsys.readouterr().err
    (tables / "sda/table4.tex").write_text("x")
    (tables / "sda/table4.csv").write_text("scale,row,reproduced,skipped\ndemo,SimCSE,40.1,\n")
    deadline = time.monotonic() + 10
    while "First table" not in (err := capsys.readouterr().err) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert f"First table written: {tables / 'sda/table4.tex'}" in err and "open the report" in err
