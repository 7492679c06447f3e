"""benchmarks/build_stages.py: a build's time per rule from Snakemake's records, each job counted once."""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import build_stages  # noqa: E402


def _record(folder: Path, name: str, rule: str, start: float, end: float, job_hash: int, **extra) -> None:
    (folder / name).write_text(json.dumps({"rule": rule, "starttime": start, "endtime": end, "job_hash": job_hash,
                                           "incomplete": False, **extra}))


def test_a_job_with_two_outputs_counts_once_and_unfinished_or_earlier_jobs_not_at_all(tmp_path, capsys):
    meta = tmp_path / ".snakemake" / "metadata"
    meta.mkdir(parents=True)
    _record(meta, "a", "train", 100.0, 160.0, 1)
    (meta / "sub").mkdir()                              # a long output name's record, in nested folders
    _record(meta / "sub", "b", "train", 100.004, 160.0, 1)    # the same job's second output, a few ms apart
    _record(meta, "c", "train", 130.0, 150.0, 2)
    _record(meta, "d", "table", 170.0, 171.0, 3)
    _record(meta, "e", "train", 10.0, 20.0, 4)          # an earlier sitting: left out by --since
    _record(meta, "f", "train", 180.0, 190.0, 5, incomplete=True)
    (meta / "g").write_text("{not json")
    records = build_stages.jobs(tmp_path, since=50.0)
    assert sorted((r["rule"], r["start"]) for r in records) == [("table", 170.0), ("train", 100.0), ("train", 130.0)]
    rows = build_stages.stages(records)
    # train: 60 + 20 = 80 job-s, median (60 + 20) / 2 = 40, longest 60; table: 1
    assert rows == [{"rule": "train", "jobs": 2, "job_s": 80.0, "median_s": 40.0, "max_s": 60.0},
                    {"rule": "table", "jobs": 1, "job_s": 1.0, "median_s": 1.0, "max_s": 1.0}]
    build_stages.main([str(tmp_path), "--since", "1970-01-01T00:00:50", "--markdown"])
    out = capsys.readouterr().out
    assert "| `train` | 2 | 1.3 | 40.0 | 60 |" in out and "| all | 3 | 1.4 | | |" in out
    assert "span: 1.2 min from 1970-01-01 00:01 UTC" in out        # 100 s to 171 s
