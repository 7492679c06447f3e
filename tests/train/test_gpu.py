"""The training step on a GPU (marker `gpu`: skipped where there is no CUDA device; benchmarks/gpu_pytest.sh runs
them on a GPU machine). At BERT-base size (random weights, built from config.yaml's `bert-base-random`), sentences
of at least 32 tokens, batch 64:

* graph and eager runs of one seed agree over 50 steps within bf16's tolerance: the logged losses, the STS-B dev
  score and the weights;
* two replays of the captured step at learning rate 0 leave the weights as they were and give other gradients
  (fresh dropout masks at every replay);
* a capture that fails falls back to eager steps, says why, and trains as an eager run does;
* a batch too large for the GPU stops the run naming the batch, the memory asked for and what is free;
* every method of config.yaml runs 10 steps on the graph path with finite losses (tiny models, through
  benchmarks/gpu_training.py's `methods` section: its stand-in caches, token files and retrieval index).

Data: $SENTAUG_MIRROR (wiki1m's head, STS-B dev) and $SENTAUG_MODEL_MIRROR (bert-base-uncased-tokenizer), else the
bundled demo data and a WordPiece vocabulary of its words. SENTAUG_GPU_REHEARSAL=1 runs these tests on the CPU,
the CUDA graph replaced by its stand-in (tests/train/graph_stand_in.py), with tiny models: a check of the tests
themselves before a GPU run (the out-of-memory test needs CUDA's allocator and is skipped there).
"""
import collections
import gc
import json
import math
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
import yaml

from sentaug.data.download import demo_root
from sentaug.models.backbones import build_backbone
from sentaug.train import trainer as trainer_module
from sentaug.train.method import Method
from sentaug.train.step import WARMUP_STEPS, StepRunner

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from gpu_runs import TOKENIZERS, KeptRunners, agreement, long_lines, replays, spec_for  # noqa: E402

pytestmark = pytest.mark.gpu

CONFIG = yaml.safe_load((ROOT / "config.yaml").read_text())
LENGTH, STEPS = 32, 50              # the benchmark's agreement: 50 steps of [2 x 64, 32] batches
WEIGHT_TOLERANCE = 0.1      # graph against eager: the weights' difference over their change in 50 steps (bf16)
FRESH_DROPOUT = 0.01        # two replays' gradients differ by more than this share of their norm
METHOD_LINES = 1500         # the methods' corpus: 10 full batches of the largest batch (128)
OOM_BATCH = 2048            # 4,096 texts x 512 tokens: BERT-base's activations need several times an H200
REHEARSAL = os.environ.get("SENTAUG_GPU_REHEARSAL") == "1"


@dataclass
class Rig:
    device: str
    tmp: Path
    data: Path          # wiki/wiki1m_head.txt (METHOD_LINES lines) and sts/STSBenchmark/sts-dev.csv
    tokenizers: Path    # holding the folder gpu_runs.TOKENIZERS["bert"] names
    lines: list         # every line of the source corpus
    corpus: Path        # its lines of at least LENGTH tokens, where there are a run's worth
    backbone: str       # BERT-base-sized (tiny in a rehearsal)


def write_vocabulary(lines: list[str], out: Path) -> None:
    """A WordPiece vocabulary of the corpus' 3,000 commonest words, laid out like the mirror's tokenizer."""
    words = collections.Counter(w for line in lines for w in re.findall(r"\w+|[^\w\s]", line.lower()))
    out.mkdir(parents=True)
    (out / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
                                              *(w for w, _ in words.most_common(3000))]) + "\n")
    (out / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True, "model_max_length": 512,
                                                           "tokenizer_class": "BertTokenizer"}))


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gpu")
    mirror = Path(os.environ.get("SENTAUG_MIRROR") or "/nonexistent")
    wiki, dev = mirror / "wiki/wiki1m_head.txt", mirror / "sts/STSBenchmark/sts-dev.csv"
    if not (wiki.is_file() and dev.is_file()):
        wiki, dev = demo_root() / "wiki/demo_corpus.txt", demo_root() / "sts/STSBenchmark/sts-dev.csv"
    lines = [t for t in wiki.read_text(encoding="utf-8", errors="replace").splitlines() if t.strip()]
    data = tmp / "data"
    (data / "wiki").mkdir(parents=True)
    (data / "wiki/wiki1m_head.txt").write_text("\n".join(lines[:METHOD_LINES]) + "\n", encoding="utf-8")
    (data / "sts/STSBenchmark").mkdir(parents=True)
    shutil.copy(dev, data / "sts/STSBenchmark/sts-dev.csv")
    tokenizers, name = tmp / "tokenizers", TOKENIZERS["bert"]
    models = Path(os.environ.get("SENTAUG_MODEL_MIRROR") or "/nonexistent")
    if (models / name).is_dir():
        shutil.copytree(models / name, tokenizers / name)
    else:
        write_vocabulary(lines, tokenizers / name)
    sizes = CONFIG["backbones"]
    spec = {**sizes["bert-base-random"], "tokenizer": str(tokenizers / name),
            **({"size": sizes["tiny-bert"]["size"]} if REHEARSAL else {})}
    backbone = tmp / "bert-base-random"
    build_backbone("bert-base-random", spec, backbone)
    long = long_lines(lines, str(backbone), LENGTH)
    corpus = tmp / "corpus.txt"
    corpus.write_text("\n".join(long if len(long) >= STEPS * 64 else lines) + "\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        if REHEARSAL:   # the graph path on the CPU: step_path as on CUDA, the stand-in capturing and replaying
            from tests.train.graph_stand_in import RecordedGraphs

            step_path = trainer_module.step_path
            mp.setattr(trainer_module, "step_path", lambda mode, device, compile_backbone:
                       step_path(mode, torch.device("cuda"), compile_backbone))
            mp.setattr(StepRunner, "graphs", RecordedGraphs)
        yield Rig("cpu" if REHEARSAL else "cuda", tmp, data, tokenizers, lines, corpus, str(backbone))


def expected_paths(n: int, batch: int, steps: int) -> dict:
    """Graph and eager steps of a run of `steps` steps over `n` examples: an epoch's last batch, when smaller, runs
    eagerly; the first WARMUP_STEPS full batches warm up eagerly; every other step is a replay."""
    per_epoch = -(-n // batch)
    smaller = sum(1 for k in range(steps) if n % batch and k % per_epoch == per_epoch - 1)
    return {"graph_steps": steps - smaller - WARMUP_STEPS, "eager_steps": smaller + WARMUP_STEPS}


def run(rig: Rig, spec: dict, name: str, **kw) -> dict:
    """The trainer on the rig's corpus: its summary, logged losses and STS-B dev scores, and output folder."""
    out = rig.tmp / "runs" / name
    summary = trainer_module.train(spec, str(rig.corpus), None, rig.backbone, str(rig.data), str(out),
                                   device=rig.device, **kw)
    log = [json.loads(r) for r in (out / "train_log.jsonl").read_text().splitlines()]
    return {"summary": summary, "losses": [r["loss"] for r in log], "out": out,
            "stsb_dev": [r["stsb_dev"] for r in log if "stsb_dev" in r]}


def weights(folder) -> dict:
    from safetensors.torch import load_file

    return {k: v.float() for k, v in load_file(Path(folder) / "model.safetensors").items()
            if not k.startswith("pooler.")}     # the backbone (the saved pooler is the trained head)


@pytest.fixture(scope="module")
def graph_and_eager(rig):
    """Two runs of SimCSE, seed 1, 50 steps: on the graph path (its runner kept) and eagerly, both padded (packed
    rows draw their attention dropout over other shapes: the same law, other masks)."""
    spec = spec_for(CONFIG, "simcse", LENGTH, max_steps=STEPS)
    kept = KeptRunners()
    with kept.watching():
        graph = run(rig, spec, "graph", packing="off")
    eager = run(rig, spec, "eager", step_mode="eager")
    yield spec, graph, eager, kept.runners[0]
    kept.runners.clear()
    gc.collect()
    if rig.device == "cuda":
        torch.cuda.empty_cache()


def test_graph_and_eager_runs_of_one_seed_agree_over_50_steps(rig, graph_and_eager, record_property):
    spec, graph, eager, _ = graph_and_eager
    n = len(rig.corpus.read_text(encoding="utf-8").splitlines())
    assert graph["summary"]["step_path"]["path"] == "graph"
    assert {k: graph["summary"]["step_path"][k] for k in ("graph_steps", "eager_steps")} == \
        expected_paths(n, spec["batch_size"], STEPS)
    assert eager["summary"]["step_path"] == {"path": "eager", "graph_steps": 0, "eager_steps": STEPS,
                                             "why": "eager steps asked for (--step eager)", "packed_rows_of": None}
    agreed = agreement(graph, eager)
    start, a, b = weights(rig.backbone), weights(graph["out"]), weights(eager["out"])
    assert a.keys() == b.keys() == start.keys()
    moved = math.sqrt(sum(float((b[k] - start[k]).pow(2).sum()) for k in b))
    apart = math.sqrt(sum(float((a[k] - b[k]).pow(2).sum()) for k in a))
    figures = {"n_sentences": n, "losses_graph": agreed["losses_graph"], "losses_eager": agreed["losses_eager"],
               "max_rel_loss_diff": agreed["max_rel_loss_diff"], "stsb_dev_diff": agreed["stsb_dev_diff"],
               "weights_moved": moved, "weights_apart": apart, "weights_apart_share": apart / moved}
    for key, value in figures.items():
        record_property(key, value)
    print(f"[gpu] graph against eager, {STEPS} steps: {json.dumps(figures)}")
    assert len(agreed["losses_graph"]) == STEPS // trainer_module.LOG_EVERY
    assert agreed["within_tolerance"], agreed
    assert moved > 0 and apart <= WEIGHT_TOLERANCE * moved


def test_two_replays_at_learning_rate_0_keep_the_weights_and_draw_new_dropout(graph_and_eager, record_property):
    replayed = replays(graph_and_eager[3])
    for key, value in replayed.items():
        record_property(key, value)
    print(f"[gpu] two replays at learning rate 0: {json.dumps(replayed)}")
    assert replayed["weights_unchanged_at_lr_0"]
    assert replayed["rel_grad_diff"] > FRESH_DROPOUT


def test_a_failed_capture_falls_back_to_eager_steps_and_says_why(rig, monkeypatch, record_property):
    spec = spec_for(CONFIG, "simcse", LENGTH, max_steps=6)
    if REHEARSAL:
        from tests.train.graph_stand_in import failing

        monkeypatch.setattr(StepRunner, "graphs", failing(None, "efficient"))
    else:
        compute = Method.compute

        def compute_refusing_capture(self, inputs):
            if torch.cuda.is_current_stream_capturing():
                raise RuntimeError("forced capture failure (raised inside the step, as it was captured)")
            return compute(self, inputs)

        monkeypatch.setattr(Method, "compute", compute_refusing_capture)
    fallen = run(rig, spec, "fallen")
    monkeypatch.undo()
    eager = run(rig, spec, "fallen-eager", step_mode="eager", packing="rows")     # packed, as the fallen run
    path = fallen["summary"]["step_path"]
    record_property("why", path["why"])
    print(f"[gpu] a failed capture: {json.dumps(path)}; losses {fallen['losses']} (eager {eager['losses']})")
    assert (path["path"], path["graph_steps"], path["eager_steps"]) == ("eager", 0, 6)
    assert re.fullmatch(r"CUDA graph capture failed \(default attention: RuntimeError: forced capture failure [^;]*; "
                        r"efficient: RuntimeError: forced capture failure [^;]*\); eager steps instead", path["why"])
    assert agreement(fallen, eager)["within_tolerance"]


@pytest.mark.skipif(REHEARSAL, reason="needs CUDA's allocator (a rehearsal on the CPU)")
def test_a_batch_too_large_for_the_gpu_names_the_batch_the_memory_asked_for_and_what_is_free(rig, record_property):
    spec = spec_for(CONFIG, "simcse", 512, batch_size=OOM_BATCH, max_steps=2)
    corpus = rig.tmp / "oom_corpus.txt"
    corpus.write_text("\n".join((rig.lines * (OOM_BATCH // len(rig.lines) + 1))[:OOM_BATCH]) + "\n")
    out = rig.tmp / "runs" / "oom"
    with pytest.raises(trainer_module.OutOfDeviceMemory) as caught:
        trainer_module.train(spec, str(corpus), None, rig.backbone, str(rig.data), str(out), device="cuda")
    message = str(caught.value)
    del caught          # its traceback holds the step's tensors
    gc.collect()
    torch.cuda.empty_cache()
    record_property("message", message)
    print(f"[gpu] out of memory: {message}")
    assert message.startswith(f"out of GPU memory at step 1 (batch {OOM_BATCH}: {2 * OOM_BATCH} texts x 512 tokens); ")
    figures = re.search(r"; ([\d.]+) (KiB|MiB|GiB) asked for; ([\d.]+) GiB free of ([\d.]+) GiB on cuda", message)
    assert figures, message
    asked = float(figures.group(1)) * 1024 ** ("KiB", "MiB", "GiB").index(figures.group(2)) / 1024**2   # GiB
    free, capacity = float(figures.group(3)), float(figures.group(4))
    assert capacity == pytest.approx(torch.cuda.mem_get_info()[1] / 2**30, abs=0.01)
    assert asked > free - 0.005 and free < capacity       # it asked for more than there was (to rounding)
    assert "no checkpoint had been saved yet" in message and not out.exists()


METHODS = list(CONFIG["methods"])


@pytest.fixture(scope="module")
def methods_section(rig):
    """benchmarks/gpu_training.py's `methods` section: 10 steps of every method, tiny models, 8 processes."""
    out = rig.tmp / "methods.json"
    cmd = [sys.executable, str(ROOT / "benchmarks/gpu_training.py"), "--device", rig.device, "--size", "tiny",
           "--sections", "methods", "--method-steps", "10", "--method-workers", "2" if REHEARSAL else "8",
           "--length", str(LENGTH), "--data", str(rig.data), "--tokenizers", str(rig.tokenizers),
           "--workdir", str(rig.tmp / "methods"), "--deadline", "1800" if REHEARSAL else "120", "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "TQDM_DISABLE": "1"})
    assert out.exists(), proc.stdout[-2000:] + proc.stderr[-3000:]
    return json.loads(out.read_text())["methods"]["methods"]


@pytest.mark.parametrize("method", METHODS)
def test_every_method_runs_10_graph_steps_with_finite_losses(methods_section, method, rig):
    result = methods_section[method]
    assert result["finite"], result
    # every batch full (METHOD_LINES >= 10 x 128), packed into rows: each row count's first 3 steps warm up, its
    # later ones replay its graph (an MLM-only method encodes no texts to pack: one shape)
    path = result["step_path"]
    assert path["path"] == ("eager" if REHEARSAL else "graph"), result
    if not REHEARSAL:
        assert path["graph_steps"] + path["eager_steps"] == 10 and path["graph_steps"] >= 1, result
        assert path["eager_steps"] >= WARMUP_STEPS * path.get("graphs", 1), result
