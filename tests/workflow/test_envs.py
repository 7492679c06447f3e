"""envs/*.yaml hold what their rules import. Each env's pip part (what the jobs import; conda's channels cannot be
reached here, and its part is python and pip) is installed into a fresh virtual environment, and demo jobs of its
rules run in it exactly as Snakemake runs them (the command `snakemake -n -p` prints), with no PYTHONPATH: sentaug
comes from the env's own install of this checkout. Each job must give the output the full environment gave.

Slow (three environments with torch, spaCy and faiss installed; pip's cache makes a second run faster)."""
import filecmp
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.workflow_runs import demo_override, snakemake

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
ENVS = ROOT / "envs"

# The demo jobs run in each env (output, relative to the results folder): every rule group of the env, and the
# imports it alone brings (torch in the augment env: the masked LM of CTxt; WordNet's nltk; faiss in train's).
JOBS = {
    "base": ["data/demo/sts", "analysis/data_stats/demo/sts.json", "tables/sda/table2.tex",
             "report/tables/sda/table2.html"],
    "augment": ["parse/demo_corpus.spacy", "augment/demo_corpus/vascl_wnet_10/seed1.parquet",
                "augment/demo_corpus/vascl_ctxt_10/seed1.parquet"],
    "train": ["backbones/tiny-bert", "runs/demo/shared/tiny-bert/simcse/seed1",
              "eval/demo/shared/tiny-bert/simcse/seed1/sts.json",
              "index/demo_corpus/tiny-bert/cls_before_pooler/k8.npz"],
}
CORES = "2"
CARD = "README.md"      # a trained run's model card


def rule_envs() -> dict[str, str]:
    """rule -> the env file its `conda:` names, read from rules/*.smk."""
    envs = {}
    for smk in sorted((ROOT / "rules").glob("*.smk")):
        rule = None
        lines = smk.read_text().splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"\s*rule (\w+):", line)
            if m:
                rule = m.group(1)
            elif line.strip() == "conda:" and rule:
                envs[rule] = Path(lines[i + 1].strip().strip('"')).stem
    return envs


def pip_part(env: str) -> list[str]:
    """The env's pip requirements, but for direct URLs (spaCy's Chinese pipeline: on GitHub, not a package index
    this machine reaches; no demo job imports it)."""
    spec = yaml.safe_load((ENVS / f"{env}.yaml").read_text())
    pip = next(d["pip"] for d in spec["dependencies"] if isinstance(d, dict) and "pip" in d)
    return [r for r in pip if " @ http" not in r]


def test_every_rule_names_an_env_and_the_jobs_cover_each():
    envs = rule_envs()
    assert set(envs.values()) == set(JOBS) == {p.stem for p in ENVS.glob("*.yaml")}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The demo outputs, built by Snakemake in the full environment (CARDS' retrieval index at k = 8: small)."""
    tmp = tmp_path_factory.mktemp("envs")
    results = tmp / "results"
    override = demo_override(tmp / "override.yaml", results, seeds=[1])
    targets = [str(results / job) for jobs in JOBS.values() for job in jobs]
    run = snakemake(*targets, "--cores", CORES, "--configfile", "config.yaml", str(override))
    assert run.returncode == 0, run.stderr[-4000:]
    return tmp, results, override


def job_command(target: str, override: Path) -> tuple[str, str]:
    """(rule, shell command) of the job that makes `target`, as Snakemake prints it in a forced dry run."""
    run = snakemake(target, "-f", "-n", "-p", "--cores", CORES, "--configfile", "config.yaml", str(override))
    assert run.returncode == 0, run.stderr[-4000:]
    commands = re.findall(r"^Shell command: (.*)$", run.stdout, re.M)
    rule = re.search(r"^job\s+count\n[- ]+\n(\w+)\s+1$", run.stdout, re.M)
    assert len(commands) == 1 and rule, run.stdout[-3000:]
    return rule.group(1), commands[0]


def install(env: str, venv: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    requirements = venv / "requirements.txt"
    requirements.write_text("\n".join(pip_part(env)) + "\n")
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-r", str(requirements)],
                          env={**os.environ, "SENTAUG_ROOT": str(ROOT)}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]


def same_output(a: Path, b: Path) -> bool:
    """Equal outputs: every file byte for byte, but a parquet cache by its rows, a JSON but for how long the job
    took (its numbers to 1e-12), and a report page but for its provenance (when, the digest of its CSV, which
    holds that time, and the versions of the libraries installed: an env has fewer)."""
    if a.is_dir():    # (Snakemake stamps a folder it made with .snakemake_timestamp)
        files = [{p.relative_to(root) for p in root.rglob("*") if p.is_file() and p.name != ".snakemake_timestamp"}
                 for root in (a, b)]
        return files[0] == files[1] and all(same_output(a / p, b / p) for p in files[0]
                                            if p.name not in ("train_summary.json", "train_log.jsonl", CARD))
    if a.suffix == ".parquet":
        import pandas as pd

        return pd.read_parquet(a).equals(pd.read_parquet(b))
    if a.suffix == ".json":
        x, y = json.loads(a.read_text()), json.loads(b.read_text())
        for record in (x, y):
            if isinstance(record, dict):
                record.pop("seconds", None)
        return _same_record(x, y)
    if a.suffix == ".html":     # a report page: but for when it was built, and with which versions of what
        built = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC|<code>[0-9a-f]{64}</code>|rendered with</td>\s*<td>[^<]*")
        return built.sub("", a.read_text()) == built.sub("", b.read_text())
    return filecmp.cmp(a, b, shallow=False)


def _same_record(x, y) -> bool:
    """Equal JSON values, floats to 1e-12 (relative): run afresh rather than forked from the demo's job server, an
    evaluation was seen to differ in the last digit of one float (a mean over STS12's topics)."""
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(_same_record(x[k], y[k]) for k in x)
    if isinstance(x, list):
        return isinstance(y, list) and len(x) == len(y) and all(map(_same_record, x, y))
    if isinstance(x, float) and isinstance(y, (int, float)):
        return y == pytest.approx(x, rel=1e-12, abs=1e-12, nan_ok=True)
    return x == y


@pytest.mark.parametrize("env", list(JOBS))
def test_env_runs_its_rules(env, built, tmp_path):
    tmp, results, override = built
    venv = tmp_path / env
    install(env, venv)
    envs = rule_envs()
    # Python's own settings go (no PYTHONPATH, no activated venv: sentaug from the env's install); the machine's
    # stay: e.g. OPENBLAS_CORETYPE picks the BLAS kernels of faiss's search, whose rounding reorders near-tied
    # neighbours of the index when it differs from the full environment's run
    python_vars = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "VIRTUAL_ENV_PROMPT", "CONDA_PREFIX")
    clean = {**{k: v for k, v in os.environ.items() if k not in python_vars},
             "PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": os.environ.get("HOME", str(tmp_path)),
             "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    cards = []
    for job in JOBS[env]:
        target = results / job
        rule, command = job_command(str(target), override)
        assert envs[rule] == env, f"{job}: rule {rule} runs in envs/{envs[rule]}.yaml"
        reference = tmp_path / "full-env" / job      # the full environment's output, the same name
        reference.parent.mkdir(parents=True, exist_ok=True)
        os.replace(target, reference)
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=ROOT, env=clean,
                              capture_output=True, text=True)
        log = re.search(r"(?:2>|>) (\S+\.log)", command)
        detail = Path(log.group(1)).read_text()[-3000:] if log and Path(log.group(1)).is_file() else done.stderr
        assert done.returncode == 0, f"{rule} in envs/{env}.yaml: {detail}"
        assert same_output(reference, target), f"{rule}: {job} differs from the full environment's"
        if (target / CARD).is_file():
            cards.append((reference / CARD, target / CARD))
    # a run's model card gains the scores of the run's evaluations as they are written (sentaug.train.model_card):
    # compared once the env's own evaluation has run, against the card the full build left
    assert [str(b) for a, b in cards if a.read_text() != b.read_text()] == []
