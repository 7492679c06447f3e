"""A second `snakemake` in a folder another one has locked: its error says first whether that run is alive (a
process of this machine running Snakemake in the folder) or was killed and left a stale lock, and what to do."""
import os

from sentaug.snakemake_hooks.lock_hint import lock_answer, snakemake_processes
from tests.workflow_runs import isolated_workdir, snakemake


def _process(proc, pid: int, cwd, *words: str) -> None:
    entry = proc / str(pid)
    entry.mkdir(parents=True)
    (entry / "cmdline").write_bytes(b"\0".join(w.encode() for w in words) + b"\0")
    (entry / "cwd").symlink_to(cwd)


def test_the_snakemake_processes_of_a_folder_are_found_from_proc(tmp_path):
    proc, here, elsewhere = tmp_path / "proc", tmp_path / "checkout", tmp_path / "other"
    here.mkdir(), elsewhere.mkdir()
    (proc / "self").mkdir(parents=True)
    _process(proc, 4242, here, "/usr/bin/python3", ".venv/bin/snakemake", "results/tables/sda/table4.tex",
             "--cores", "2")
    _process(proc, 4300, here, "snakemake", "-n", "all")                  # a dry run holds no lock
    _process(proc, 4301, elsewhere, ".venv/bin/snakemake", "all")          # another folder's run
    _process(proc, 4302, here, "python", "-m", "pytest")                    # not Snakemake
    found = snakemake_processes(here, proc)
    assert [(p["pid"], p["command"]) for p in found] == [
        (4242, ".venv/bin/snakemake results/tables/sda/table4.tex --cores 2")]
    assert snakemake_processes(here, tmp_path / "no-proc") is None
    live = lock_answer(here, found)
    assert live.startswith("A Snakemake run holds the lock of this folder: process 4242 (.venv/bin/snakemake "
                           "results/tables/sda/table4.tex --cores 2). It is alive: wait for it to end, or stop it "
                           "(kill 4242)")
    assert lock_answer(here, []).startswith(f"No Snakemake process runs in {here} on this machine, so the lock is "
                                            f"stale (left by a run that was killed): add --unlock")
    assert "ps -ef | grep snakemake" in lock_answer(here, None)


def test_a_stale_lock_is_named_first_in_snakemakes_lock_error(tmp_path):
    """A lock left behind (as `kill -9` leaves it) on a target's output: the run stops before any job, and the
    first line of its error says the lock is stale and how to remove it."""
    wd = isolated_workdir(tmp_path)
    locks = wd / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.output.lock").write_text("results/tables/sda/table4.tex\n")
    run = snakemake("results/tables/sda/table4.tex", "--cores", "1", cwd=wd, timeout=300)
    assert run.returncode == 1
    lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
    at = lines.index("LockException:")
    assert lines[at + 1].startswith(f"No Snakemake process runs in {os.path.realpath(wd)} on this machine, so the "
                                    f"lock is stale")
    assert "Directory cannot be locked" in lines[at + 2]
    assert not (wd / "results" / "tables").exists()          # nothing ran
