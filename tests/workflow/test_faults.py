"""Faults injected for real, and what must hold after each (nothing lost, nothing half-written kept).

| fault                                                   | what must hold                                      |
|---------------------------------------------------------|-----------------------------------------------------|
| SIGKILL of a training process at random steps (x3)      | resumes from its checkpoint; weights bit-identical  |
| SIGKILL of Snakemake (and its jobs) mid-DAG             | the rerun completes; same weights; no partial file  |
| checkpoint truncated / corrupted (same size)            | detected by its sha256, never loaded; previous one  |
|                                                         | or scratch, with a message; same weights            |
| checkpoint carrying pickled code (valid hash)           | weights_only load refuses it; the code never runs   |
| NaN loss (a NaN embedding row met at a known step)      | stops with a message naming the step; last good     |
|                                                         | checkpoint kept and loadable; no output             |
| download corrupted / cut mid-stream (local HTTP server) | error naming the file; nothing at the target        |
| write failing for lack of space (RLIMIT_FSIZE)          | error; no output, no temporary file left            |
| malformed config (type, unknown key, reference)         | Snakemake stops before any job, naming the key      |
| corpus with empty, non-UTF-8, over-long, CRLF lines     | trains under the policy of sentaug.data.corpus      |
| an intermediate damaged after it was written (truncated | the job reading it fails naming the file and saying |
| / a byte flipped): augmentation cache, spaCy parse,     | to delete it (Snakemake rebuilds it); nothing else  |
| token file, retrieval index, evaluation result          | is written                                          |
| a name that is not declared, typed by a user: a table,  | one or two lines naming it and the valid choices,   |
| figure, paper, method, augmentation in a Snakemake      | the closest first, the first thing printed after    |
| target; a scale, suite, command, board, source, page    | Snakemake's preamble; no traceback; nothing built   |
| on the command line or in --config                      |                                                     |

The SLURM faults (a requeued job) are in tests/workflow/test_slurm.py.
"""
import hashlib
import http.server
import json
import math
import os
import random
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch
import yaml
from safetensors.torch import load_file, save_file

from sentaug.data.download import DownloadError, fetch
from sentaug.train.checkpoint import Checkpoints, DivergenceGuard, TrainingDiverged
from sentaug.train.trainer import batch_order, spec_digest, train
from tests.train.test_train import ANCHORS, POSITIVES, spec, write_backbone, write_paired_dev
from tests.workflow_runs import (LONG_RUN, LONG_THREADS, ROOT, checkpoint_steps, differing_tensors,
                                 isolated_workdir, long_override, snakemake_env)

ENV = {**snakemake_env(), "OMP_NUM_THREADS": str(LONG_THREADS), "PYTHONPATH": str(ROOT / "src")}


# -- training processes killed -------------------------------------------------------------------------------

def _train_command(reference_results: Path, spec_: dict, out: Path) -> list[str]:
    return [sys.executable, "-m", "sentaug.cli", "train", "--spec", json.dumps(spec_),
            "--corpus", str(reference_results / "data/demo/wiki/demo_corpus.txt"),
            "--backbone", str(reference_results / "backbones/tiny-bert"),
            "--dev-data", str(reference_results / "data/demo"), "--out", str(out), "--resume"]


@pytest.mark.slow
def test_training_killed_at_random_steps_resumes_bit_identical(long_reference, tmp_path):
    results, reference = long_reference
    spec_ = json.loads((reference / "train_summary.json").read_text())["spec"]
    out = tmp_path / "run"
    partial = Path(f"{out}.partial")
    rng = random.Random(20261122)
    kill_after = sorted(rng.sample(range(3, spec_["max_steps"] - 3), 3))   # a checkpoint step to wait for,
    kills, resumed = 0, []                                                # then a random delay
    for attempt in range(len(kill_after) + 1):
        log = tmp_path / f"attempt{attempt}.log"
        with open(log, "w") as err:
            proc = subprocess.Popen(_train_command(results, spec_, out), env=ENV, stdout=subprocess.DEVNULL,
                                    stderr=err)
            if attempt < len(kill_after):
                while proc.poll() is None and max(checkpoint_steps(partial), default=0) < kill_after[attempt]:
                    time.sleep(0.02)
                time.sleep(rng.uniform(0, 0.4))          # anywhere: mid-step, mid-save, mid-evaluation
                if proc.poll() is None:
                    proc.send_signal(signal.SIGKILL)
                    kills += 1
            assert proc.wait(timeout=600) in (0, -signal.SIGKILL)
        text = log.read_text()
        if "resumed at step" in text:
            resumed.append(int(text.split("resumed at step ")[1].split()[0]))
        if out.exists():
            break
    assert kills == len(kill_after), "the run finished before every kill"
    assert resumed and resumed == sorted(resumed) and min(resumed) >= kill_after[0]   # never from scratch
    assert differing_tensors(out, reference) == []
    loss = lambda d: [json.loads(r)["loss"] for r in (d / "train_log.jsonl").read_text().splitlines()]
    assert loss(out) == loss(reference)
    assert not partial.exists()


@pytest.mark.slow
def test_snakemake_killed_mid_dag_reruns_to_the_same_result(long_reference, tmp_path):
    """Snakemake and every job it runs are killed at once (a lost session or node) while training runs. The
    rerun (after `--unlock`, which the lock left behind asks for) completes, resumes the training from its
    checkpoint and ends with the uninterrupted weights; no partial or temporary file is left."""
    _, reference = long_reference
    wd = isolated_workdir(tmp_path)
    results = tmp_path / "results"
    override = long_override(tmp_path / "override.yaml", results)
    target = str(results / "eval/demo/shared/tiny-bert/simcse/seed1/sts.json")
    cmd = [sys.executable, "-m", "snakemake", target, "--cores", "2", "--configfile", "config.yaml", str(override)]
    partial = Path(f"{results / LONG_RUN}.partial")
    with open(tmp_path / "killed.log", "w") as log:
        proc = subprocess.Popen(cmd, cwd=wd, env=ENV, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        while proc.poll() is None and max(checkpoint_steps(partial), default=0) < 9:
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert not (results / LONG_RUN).exists() and not Path(target).exists()

    locked = subprocess.run(cmd, cwd=wd, env=ENV, capture_output=True, text=True)
    assert locked.returncode != 0 and "--unlock" in locked.stdout + locked.stderr
    subprocess.run([*cmd, "--unlock"], cwd=wd, env=ENV, capture_output=True, check=True)
    rerun = subprocess.run(cmd, cwd=wd, env=ENV, capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr[-4000:]
    train_log = (results / "logs/train/demo/shared/tiny-bert/simcse/seed1.log").read_text()
    assert int(train_log.split("resumed at step ")[1].split()[0]) >= 9
    assert differing_tensors(results / LONG_RUN, reference) == []
    assert json.loads(Path(target).read_text())["STSBenchmark"] > 0
    leftovers = [p for p in results.rglob("*") if p.name.endswith((".partial", ".tmp", ".old"))]
    assert leftovers == []
    again = subprocess.run([*cmd, "-n"], cwd=wd, env=ENV, capture_output=True, text=True)
    assert "Nothing to be done" in again.stdout + again.stderr


# -- checkpoints ------------------------------------------------------------------------------------------------

@pytest.fixture()
def tiny(tmp_path, minilm_path):
    """A corpus, STS-B dev data and a small BERT (dropout on: resuming must restore the RNG)."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(ANCHORS + POSITIVES) + "\n")
    write_paired_dev(tmp_path / "data")
    backbone = write_backbone(tmp_path / "bb", minilm_path, dropout=0.1)
    s = spec(method="simcse", positive={"source": "dropout"}, max_steps=8, batch_size=4, eval_steps=4,
             save_steps=2, pooler="cls")

    def run(out, **kw):
        return train(s, str(corpus), None, backbone, str(tmp_path / "data"), str(tmp_path / out), **kw)

    run("reference")
    return tmp_path, s, run


def _flip_byte(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def test_truncated_checkpoint_is_not_loaded_and_the_previous_one_is(tiny, capfd):
    root, _, run = tiny
    run("run", stop_after=6)
    ckpts = root / "run.partial/checkpoints"
    assert sorted(p.name for p in ckpts.iterdir()) == ["step00000004", "step00000006"]
    state = ckpts / "step00000006/state.pt"
    state.write_bytes(state.read_bytes()[: state.stat().st_size // 2])
    capfd.readouterr()
    run("run", resume=True)
    err = capfd.readouterr().err
    assert "step00000006 is damaged and was not loaded" in err and "truncated" in err
    assert "resumed at step 4" in err
    assert differing_tensors(root / "run", root / "reference") == []


def test_corrupted_checkpoints_are_not_loaded_and_the_run_restarts_from_scratch(tiny, capfd):
    root, _, run = tiny
    run("run", stop_after=6)
    for step in (4, 6):   # one flipped byte each: the size is right, the sha256 is not
        state = root / f"run.partial/checkpoints/step{step:08d}/state.pt"
        _flip_byte(state, state.stat().st_size // 2)
    capfd.readouterr()
    run("run", resume=True)
    err = capfd.readouterr().err
    assert err.count("sha256 of state.pt does not match") == 2
    assert "training starts from scratch" in err and "resumed at step" not in err
    assert differing_tensors(root / "run", root / "reference") == []


class _Payload:
    """What an attacker with write access to the checkpoint folder could put there: unpickling it runs code."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.mkdir, (str(self.marker),)


def test_a_checkpoint_carrying_pickled_code_is_refused_and_the_code_never_runs(tiny, capfd):
    root, s, run = tiny
    run("run", stop_after=4)
    folder = root / "run.partial/checkpoints/step00000004"
    assert torch.load(folder / "state.pt", weights_only=True)["step"] == 4   # genuine ones are weights only
    marker = root / "code_ran"
    evil = folder / "state.pt"
    torch.save({"step": 4, "digest": spec_digest(s), "method": _Payload(marker)}, evil)
    meta = json.loads((folder / "meta.json").read_text())   # a consistent meta: the hash alone cannot help
    meta.update(bytes=evil.stat().st_size, sha256=hashlib.sha256(evil.read_bytes()).hexdigest())
    (folder / "meta.json").write_text(json.dumps(meta))
    capfd.readouterr()
    run("run", resume=True)
    err = capfd.readouterr().err
    assert "step00000004 is damaged and was not loaded: it does not load as weights only" in err
    assert "resumed at step 2" in err
    assert not marker.exists()
    assert differing_tensors(root / "run", root / "reference") == []
    # The payload is live: an unrestricted load runs it.
    payload, live = root / "payload.pt", root / "code_ran_here"
    torch.save({"method": _Payload(live)}, payload)
    subprocess.run([sys.executable, "-c", "import sys, torch; torch.load(sys.argv[1], weights_only=False)",
                    str(payload)], env=ENV, cwd=ROOT, capture_output=True, check=True)
    assert live.is_dir()


def test_nan_loss_stops_the_run_and_keeps_the_last_good_checkpoint(tmp_path, minilm_path):
    """A NaN in the embedding row of a word that only one corpus line has: the loss turns NaN at the first
    step whose batch holds that line, computed here from the batch order."""
    from transformers import AutoTokenizer

    word = "volcano"
    lines = ANCHORS + POSITIVES[:3] + [f"the {word} erupted ."]
    poisoned = len(lines) - 1
    first_use = {seed: next(t + 1 for t in range(12) if poisoned in batch_order(len(lines), 4, seed, t))
                 for seed in range(1, 20)}
    seed = next(seed for seed, step in first_use.items() if 3 <= step <= 8)   # a few good steps first
    bad_step = first_use[seed]
    s = spec(method="simcse", positive={"source": "dropout"}, max_steps=12, batch_size=4, eval_steps=6,
             save_steps=1, pooler="cls", seed=seed)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(lines) + "\n")
    write_paired_dev(tmp_path / "data")
    backbone = Path(write_backbone(tmp_path / "bb", minilm_path, dropout=0.1))
    token = AutoTokenizer.from_pretrained(backbone).convert_tokens_to_ids(word)
    weights = load_file(str(backbone / "model.safetensors"))
    weights["embeddings.word_embeddings.weight"][token] = float("nan")
    save_file(weights, str(backbone / "model.safetensors"), metadata={"format": "pt"})

    out = tmp_path / "run"
    with pytest.raises(TrainingDiverged, match=rf"the loss is nan at step {bad_step}: training stopped"):
        train(s, str(corpus), None, str(backbone), str(tmp_path / "data"), str(out))
    assert not out.exists()
    kept = Checkpoints(Path(f"{out}.partial"))
    assert [int(p.name[4:]) for p in kept.steps()] == [bad_step - 1, bad_step - 2][: min(2, bad_step - 1)]
    state = torch.load(kept.steps()[0] / "state.pt", weights_only=True)
    assert all(torch.isfinite(v).all() for k, v in state["method"].items() if "word_embeddings" not in k)

    from sentaug.cli import main

    args = ["train", "--spec", json.dumps(s), "--corpus", str(corpus), "--backbone", str(backbone),
            "--dev-data", str(tmp_path / "data"), "--out", str(tmp_path / "cli")]
    assert main(args) == 2     # one line, no traceback (sentaug.cli reports ValueErrors that way)


def test_an_infinite_loss_is_caught_too():
    guard = DivergenceGuard()
    for step, value in enumerate([2.0, 1.5, math.inf, math.nan], start=1):
        guard.observe(torch.tensor(value), step)
    with pytest.raises(TrainingDiverged, match="the loss is inf at step 3"):
        guard.check("")
    fine = DivergenceGuard()
    fine.observe(torch.tensor(1.0), 1)
    fine.check("")


# -- downloads --------------------------------------------------------------------------------------------------

BODY = bytes(range(256)) * 400   # 100 kB


class _FaultyHandler(http.server.BaseHTTPRequestHandler):
    fault = "corrupt"

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        half = len(BODY) // 2
        if self.fault == "corrupt":      # every byte arrives, one of them wrong
            self.wfile.write(BODY[:half] + bytes([BODY[half] ^ 1]) + BODY[half + 1:])
        else:                            # the connection is reset half-way
            self.wfile.write(BODY[:half])
            self.wfile.flush()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("fault", ["corrupt", "reset"])
def test_a_download_corrupted_or_cut_mid_stream_leaves_nothing(tmp_path, fault, monkeypatch):
    monkeypatch.delenv("SENTAUG_MIRROR", raising=False)
    handler = type("Handler", (_FaultyHandler,), {"fault": fault})
    server = http.server.HTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.handle_request, daemon=True).start()
    sources = {"official": {"corpus": {"base_url": f"http://127.0.0.1:{server.server_port}/",
                                       "members": {"wiki/corpus.txt": "corpus.txt"}, "outputs": ["wiki/corpus.txt"],
                                       "files": {"wiki/corpus.txt": hashlib.sha256(BODY).hexdigest()}}}}
    out = tmp_path / "data"
    with pytest.raises(DownloadError, match="corpus.txt"):
        fetch("corpus", out, sources=sources)
    server.server_close()
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) in ([], [".cache"])


# -- no space left ---------------------------------------------------------------------------------------------

def _with_file_size_limit(limit: int, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`sentaug ARGS` in a process whose writes fail beyond `limit` bytes per file (EFBIG, as a full disk
    fails them with ENOSPC)."""
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]),) * 2); "
            "from sentaug.cli import main; sys.exit(main(sys.argv[2:]))")
    return subprocess.run([sys.executable, "-c", code, str(limit), *args], cwd=cwd, env=ENV, capture_output=True,
                          text=True)


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_writes_failing_for_lack_of_space_leave_no_partial_output(tiny, tmp_path):
    root, s, _ = tiny
    # 1. a download: the demo STS and SICK files, copied and verified
    out = tmp_path / "download"
    failed = _with_file_size_limit(8192, "download", "senteval", "--origin", "demo", "--out", str(out), cwd=tmp_path)
    assert failed.returncode != 0 and "File too large" in failed.stderr
    assert _files(out) == []
    # 2. an augmentation cache (parquet, then its stats JSON)
    cache = tmp_path / "cache/c.parquet"
    corpus = root / "big_corpus.txt"
    corpus.write_text("".join(f"{a} , a red car and a blue sky {i}\n" for i in range(300) for a in ANCHORS[:3]))
    failed = _with_file_size_limit(16384, "augment", "ColorTransformation", "--corpus", str(corpus), "--seed", "1",
                                   "--out", str(cache), cwd=tmp_path)
    assert failed.returncode != 0 and "File too large" in failed.stderr
    assert _files(cache.parent) == []
    # 3. a training run (a checkpoint is larger than the limit: torch.save fails with its own RuntimeError);
    # with the space back it resumes and ends as an uninterrupted run
    run = tmp_path / "train"
    args = ["train", "--spec", json.dumps(s), "--corpus", str(root / "corpus.txt"), "--backbone", str(root / "bb"),
            "--dev-data", str(root / "data"), "--out", str(run), "--resume"]
    failed = _with_file_size_limit(1 << 20, *args, cwd=tmp_path)
    assert failed.returncode != 0 and "unexpected pos" in failed.stderr
    assert not run.exists()
    same_threads = {**ENV, "OMP_NUM_THREADS": str(torch.get_num_threads())}   # as the in-process reference
    subprocess.run([sys.executable, "-m", "sentaug.cli", *args], env=same_threads, capture_output=True, check=True)
    assert differing_tensors(run, root / "reference") == []
    # ... and with the space back, the same commands succeed and write everything
    ok = subprocess.run([sys.executable, "-m", "sentaug.cli", "download", "senteval", "--origin", "demo",
                         "--out", str(out)], env=ENV, capture_output=True, text=True)
    assert ok.returncode == 0 and (out / "sts/STSBenchmark/sts-dev.csv").is_file()


# -- configuration ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("override, message", [
    ({"scales": {"demo": {"train": {"max_steps": "ten"}}}}, r"'ten' is not of type"),
    ({"scales": {"demo": {"trian": {"max_steps": 10}}}},
     r"'scales\.demo\.trian': unknown setting 'trian' of 'scales\.demo' \(did you mean 'train'\?\)"),
    ({"scales": {"demo": {"backbones": {"bert-base-uncased": "tiny-bret"}}}},
     r"scales\.demo\.backbones': unknown backbone 'tiny-bret'"),
])
def test_a_malformed_config_stops_the_workflow_naming_the_key(tmp_path, override, message):
    path = tmp_path / "override.yaml"
    path.write_text(yaml.safe_dump(override))
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--configfile", "config.yaml", str(path)],
                          cwd=ROOT, env=ENV, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert re.search(message, out, re.S), out[-3000:]
    if "is not of type" in message or "unexpected" in message:   # and where: the path to the key, in one line
        assert "config key 'scales.demo" in out and "Traceback" not in out


# -- corpus ----------------------------------------------------------------------------------------------------

def test_a_corpus_with_bad_lines_trains_under_the_documented_policy(tmp_path, minilm_path):
    """sentaug.data.corpus: empty and whitespace-only lines are never trained on; invalid UTF-8 is decoded
    with U+FFFD and kept; an over-long line is kept and cut to max_seq_length tokens; CRLF endings dropped."""
    from sentaug.train.sources import TrainingData

    good = [a.encode() for a in ANCHORS]
    long_line = " ".join(["word"] * 3000).encode()
    raw = [good[0], b"", good[1] + b"\r", b"   ", b"caf\xe9 au lait , bad bytes", good[2], long_line, *good[3:]]
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(b"\n".join(raw) + b"\n")
    write_paired_dev(tmp_path / "data")
    backbone = write_backbone(tmp_path / "bb", minilm_path, dropout=0.1)
    s = spec(method="simcse", positive={"source": "dropout"}, max_steps=4, batch_size=5, eval_steps=4)
    data = TrainingData(s, corpus)
    assert len(data) == len(raw) - 2                           # 8 anchors + the bad-bytes line + the long one
    assert data.lines == [0, 2, 4, 5, 6, 7, 8, 9, 10, 11]       # corpus line numbers kept (CRLF line: 2)
    assert "caf\ufffd au lait , bad bytes" in data.originals and ANCHORS[1] in data.originals
    summary = train(s, str(corpus), None, backbone, str(tmp_path / "data"), str(tmp_path / "run"))
    assert summary["n_train_pairs"] == 10 and summary["steps"] == 4
    log = [json.loads(r) for r in (tmp_path / "run/train_log.jsonl").read_text().splitlines()]
    assert all(math.isfinite(r["loss"]) for r in log)
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(backbone)
    assert len(tok(long_line.decode(), truncation=True, max_length=s["max_seq_length"])["input_ids"]) == 32


# -- intermediates damaged after they were written ----------------------------------------------------------------

def _content_middle(path: Path) -> int:
    """The offset of a byte of content half-way through `path`; in a zip archive (token files, indexes), half-way
    through the data of its largest member: a flipped byte in a member's header changes nothing that is read."""
    import zipfile

    if not zipfile.is_zipfile(path):
        return path.stat().st_size // 2
    member = max(zipfile.ZipFile(path).infolist(), key=lambda m: m.compress_size)
    name_length, extra_length = struct.unpack("<HH", path.read_bytes()[member.header_offset + 26:][:4])
    return member.header_offset + 30 + name_length + extra_length + member.compress_size // 2


DAMAGES = {"truncated": lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
           "one byte flipped": lambda p: _flip_byte(p, _content_middle(p))}


@pytest.fixture(scope="module")
def intermediates(tmp_path_factory, minilm_path):
    """One of each intermediate the workflow writes, built by the commands that write them, and what reads it."""
    from sentaug.augment.cache import build_cache
    from sentaug.augment.parse import parse_corpus
    from sentaug.index.neighbours import build_index
    from sentaug.models.tokens import build_token_file

    root = tmp_path_factory.mktemp("intermediates")
    corpus = root / "corpus.txt"
    corpus.write_text("\n".join(ANCHORS) + "\n")
    backbone = write_backbone(root / "bb", minilm_path, dropout=0.0)
    build_cache("word_deletion", corpus, root / "cache.parquet", seed=1)
    parse_corpus(corpus, root / "corpus.spacy", model="en_core_web_sm")
    build_token_file(corpus, backbone, 32, root / "tokens.npz", progress=False)
    build_index(corpus, backbone, "cls", 2, root / "index.npz")
    scores = {"STS12": 61.5, "STS13": 62.5, "STS14": 63.5, "STS15": 64.5, "STS16": 65.5, "STSBenchmark": 66.5,
              "SICKRelatedness": 67.5}
    (root / "sts.json").write_text(json.dumps({**scores, "avg": sum(scores.values()) / 7, "model": "m"}))
    write_paired_dev(root)      # what a training run that reads its inputs through scores itself on
    return root, corpus, backbone


def _read_back(kind: str, root: Path, corpus: Path, backbone: str) -> int:
    """Run what reads an intermediate of `kind`, through the command line as a rule runs it: its exit status."""
    from sentaug.cli import main

    run_spec = spec(positive={"source": "cache", "augmentation": "word_deletion"}, batch_size=4)
    common = ["--corpus", str(corpus), "--backbone", backbone, "--dev-data", str(root), "--out", str(root / "run")]
    args = {"cache": ["train", "--spec", json.dumps(run_spec), "--positives", str(root / "cache.parquet"), *common],
            "tokens": ["train", "--spec", json.dumps(spec(method="simcse", positive={"source": "dropout"})),
                       "--tokens", str(root / "tokens.npz"), *common],
            "index": ["train", "--spec", json.dumps(spec(method="simcse", positive={"source": "dropout"}, negatives={
                "source": "retrieved", "mode": "top_k_uniform", "k": 2, "s": 1})), "--index", str(root / "index.npz"),
                *common],
            "parse": ["augment", "punctuation_insertion", "--corpus", str(corpus), "--parse", str(root / "corpus.spacy"),
                      "--seed", "1", "--out", str(root / "pi.parquet")],
            "result": ["report", "table", "--paper-file", str(ROOT / "papers/sda.yaml"), "--table", "table4",
                       "--inputs", json.dumps({"rows": {str(i): [str(root / "sts.json")] for i in range(10)}}),
                       "--scale", "demo", "--out", str(root / "t4.tex")]}[kind]
    return main(args)


FILES = {"cache": "cache.parquet", "parse": "corpus.spacy", "tokens": "tokens.npz", "index": "index.npz",
         "result": "sts.json"}


@pytest.mark.parametrize("kind", FILES)
def test_an_intact_intermediate_is_read_back_by_the_command_that_reads_it(intermediates, kind):
    """The reader that refuses a damaged file (below) takes the intact one: the command succeeds and what it
    writes comes from the file (the cache's 8 pairs trained on, the token file's ids looked up, the parse's
    punctuation inserted, the result's scores in the table)."""
    root, corpus, backbone = intermediates
    outputs = [root / name for name in ("run", "pi.parquet", "t4.tex", "t4.csv")]
    try:
        assert _read_back(kind, root, corpus, backbone) == 0
        if kind in ("cache", "tokens", "index"):
            summary = json.loads((root / "run/train_summary.json").read_text())
            assert summary["steps"] == 1 and summary["spec"]["method"] == {"cache": "sda_pi"}.get(kind, "simcse")
            assert summary["n_train_pairs"] == len(ANCHORS)
            if kind == "cache":      # word deletion changed every sentence of the cache
                assert summary["spec"]["positive"] == {"source": "cache", "augmentation": "word_deletion"}
            if kind == "tokens":     # a batch of 8 anchors and their 8 positives: every id from the file
                assert summary["token_lookups"] == {"from_files": 16, "tokenized": 0}
            if kind == "index":
                assert summary["spec"]["negatives"]["source"] == "retrieved"
        elif kind == "parse":
            import pandas as pd

            cache = pd.read_parquet(root / "pi.parquet")
            assert list(cache["original"]) == ANCHORS and cache["changed"].any()
        else:       # every row of the table is that result: its scores and their mean, 64.50
            table = (root / "t4.tex").read_text()
            assert all(f"{v:.2f}" in table for v in (61.5, 62.5, 63.5, 64.5, 65.5, 66.5, 67.5)), table
    finally:
        for path in outputs:         # the damaged cases check that nothing of theirs is written
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)


# A JSON result has no digest: a flipped byte may still parse (a digit changed), truncation cannot.
@pytest.mark.parametrize("kind, damage", [(k, d) for k in FILES for d in DAMAGES
                                          if (k, d) != ("result", "one byte flipped")])
def test_a_damaged_intermediate_is_named_with_what_to_do(intermediates, kind, damage, capsys):
    """The reader fails in one line naming the damaged file and the fix (a truncated cache once failed a training
    job with pyarrow's "Parquet magic bytes not found in footer", naming no file); nothing else is written."""
    root, corpus, backbone = intermediates
    path = root / FILES[kind]
    if kind == "cache" and damage == "one byte flipped":   # same size: only the sidecar's sha256 can tell
        assert json.loads((root / "cache.json").read_text())["cache_sha256"] == hashlib.sha256(
            path.read_bytes()).hexdigest()
    intact = path.read_bytes()
    try:
        DAMAGES[damage](path)
        capsys.readouterr()
        assert _read_back(kind, root, corpus, backbone) == 2
        err = capsys.readouterr().err
        (line,) = [ln for ln in err.splitlines() if ln.startswith("sentaug ")]      # one line, no traceback
        assert "Traceback" not in err and f"{path} is damaged" in line, err
        assert line.endswith(f"Delete it (rm {path}) and run the same command again: Snakemake rebuilds it")
        assert not any((root / name).exists() for name in ("run", "pi.parquet", "t4.tex", "t4.csv"))
    finally:
        path.write_bytes(intact)


# -- a user's mistyped names --------------------------------------------------------------------------------------
# (how it is typed, the answer: written by hand from papers/*.yaml, config.yaml and the command line, the valid
# choices closest first by difflib's ratio 2M/T, e.g. 'tabel4' ~ 'table4': 2 * 5 / 12 = 0.83, ~ 'table2': 0.67)
SDA_TABLES = "table4, table2, table3, table5, table6, table7"
_METHODS = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))["methods"]    # 12 of them are named
MISTAKES = [
    (["snakemake", "results/tables/sda/tabel4.tex"],
     f"unknown table 'tabel4' of paper 'sda' (did you mean 'table4'?); valid: {SDA_TABLES}"),
    (["snakemake", "results/tables/SDA/table4.tex"],
     "unknown paper 'SDA' (did you mean 'sda'?); valid: sda, cards, vascl, augcse, clear"),
    (["snakemake", "results/figures/sda/figure1.pdf"],
     "unknown figure 'figure1' of paper 'sda' (did you mean 'figure2'?); valid: figure2"),
    (["snakemake", "results/figures/clear/figure1.pdf"], "unknown figure 'figure1' of paper 'clear': there are none"),
    (["snakemake", "results/runs/demo/shared/tiny-roberta/cardz/seed1"],
     "unknown method 'cardz' (did you mean 'cards'?); valid: cards, simcse, sda_pi, sda_aa, sda_dn, "
     "sda_pi_official_code, sda_aa_official_code, sda_dn_official_code, simcse_switch_case, simcse_retrieval, "
     f"cards_r_top, cards_d_uniform, ... ({len(_METHODS) - 12} more: sentaug list methods)"),
    (["snakemake", "results/eval/demo/shared/tiny-bert/cardz/seed1/transfer.json"], "unknown method 'cardz' (did you"),
    (["snakemake", "results/augment/demo_corpus/sda_pii/seed1.parquet"],
     "unknown augmentation 'sda_pii' (did you mean 'sda_pi'?); valid: sda_pi, sda_pi_zh, sda_aa, sda_dn, "),
    (["snakemake", "--config", "scale=huge"],
     "config key 'scale': unknown scale 'huge'; valid: demo, small, test, paper, gpu"),
    (["sentaug", "cost", "all", "--scale", "huge"], "sentaug cost: error: unknown scale 'huge'; valid: demo, small, "
                                                    "test, paper, gpu"),
    (["sentaug", "cost", "results/tables/sda/tabel4.tex"],
     f"sentaug cost: error: unknown table 'tabel4' of paper 'sda' (did you mean 'table4'?); valid: {SDA_TABLES}"),
    (["sentaug", "evaluate", "stss", "--model", "m", "--out", "{tmp}/o.json"],
     "sentaug evaluate: error: argument SUITE: unknown suite 'stss' (did you mean 'sts'?); valid: sts, suites, cnsd, "
     "transfer, clustering, intent, glue, analysis, nli, cola"),
    (["sentaug", "list", "method"], "sentaug list: error: argument KIND: unknown kind 'method' (did you mean "
                                    "'methods'?); valid: methods, tables, figures, augmentations"),
    (["sentaug", "augment", "punctuation_insertio", "--corpus", "c.txt", "--seed", "1", "--out", "{tmp}/o.parquet"],
     "sentaug augment: error: unknown augmentation 'punctuation_insertio' (did you mean 'punctuation_insertion'?); "
     "valid: punctuation_insertion, punctuation_insertion_zh, punctuation_insertion_official_code, "),
    (["sentaug", "report", "leaderboard-progress", "--board", "leaderbord", "--scale", "demo"],
     "sentaug report: error: unknown board 'leaderbord' (did you mean 'leaderboard'?); valid: leaderboard, "
     "leaderboard-bert-base-uncased"),
    (["sentaug", "download", "senteva", "--out", "{tmp}/data"],
     "sentaug download: error: unknown official source 'senteva' (did you mean 'senteval'?); valid: senteval, "),
    (["sentaug", "docs", "scale"],
     "sentaug docs: error: unknown page 'scale' (did you mean 'scales'?); valid: scales, "),
]


def _answer(command: list[str], tmp: Path) -> tuple[int, str]:
    """`command` run in the checkout (Snakemake dry runs; the command line's outputs, if any, in `tmp`)."""
    program = ["-m", "snakemake", "-n"] if command[0] == "snakemake" else ["-m", "sentaug.cli"]
    proc = subprocess.run([sys.executable, *program, *(w.format(tmp=tmp) for w in command[1:])], cwd=ROOT, env=ENV,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)   # in a terminal's order
    return proc.returncode, proc.stdout


def test_a_mistyped_name_is_answered_in_one_line_naming_the_valid_choices(tmp_path):
    """Each of MISTAKES run for real: it fails, its first line of output after Snakemake's preamble is the answer,
    at most two lines long, no traceback or Snakemake exception is printed, and nothing is written."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:       # each mostly imports and parses: four side by side
        answers = list(pool.map(lambda m: _answer(m[0], tmp_path), MISTAKES))
    for (command, expected), (returncode, out) in zip(MISTAKES, answers):
        said = out.split("Building DAG of jobs...\n")[-1] if command[0] == "snakemake" else out
        if command[:3] == ["snakemake", "--config", "scale=huge"]:    # answered while the Snakefile is read
            said = out.split("extended by additional config specified via the command line.\n")[-1]
        assert returncode != 0, (command, out)
        assert said.startswith(expected), (command, out[-2000:])
        assert len(said.strip().splitlines()) <= 2, (command, said)
        assert "Traceback" not in out and 'File "' not in out and "Exception" not in out, (command, out[-2000:])
    assert not (ROOT / "results/tables/sda/tabel4.tex").exists() and not list(tmp_path.iterdir())
