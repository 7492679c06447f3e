"""Data parallelism on the CPU (gloo, 2 processes) against one process on the same global batch."""
import json
import os
import socket

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from sentaug.objectives.infonce.module import InfoNCE
from sentaug.train import distributed


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(rank: int, port: int):
    os.environ.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "WORLD_SIZE": "2",
                       "RANK": str(rank), "LOCAL_RANK": str(rank)})


def _loss_and_grads_worker(rank, port, out):
    _env(rank, port)
    distributed.setup(torch.device("cpu"))
    torch.manual_seed(0)
    enc = torch.nn.Linear(5, 3)
    x1, x2 = torch.randn(8, 5), torch.randn(8, 5)
    mine = distributed.local_slice(list(range(8)), 8)
    z1 = distributed.gather_with_grad(enc(x1[mine]))
    z2 = distributed.gather_with_grad(enc(x2[mine]))
    loss = InfoNCE(0.1)(z1, z2)
    loss.backward()
    distributed.reduce_gradients(enc)
    torch.save({"loss": loss.item(), "grad": enc.weight.grad, "bias": enc.bias.grad}, f"{out}/rank{rank}.pt")
    dist.destroy_process_group()


def test_gathered_loss_and_summed_gradients_equal_the_single_process_ones(tmp_path):
    mp.spawn(_loss_and_grads_worker, args=(_free_port(), str(tmp_path)), nprocs=2, join=True)
    torch.manual_seed(0)
    enc = torch.nn.Linear(5, 3)
    x1, x2 = torch.randn(8, 5), torch.randn(8, 5)
    loss = InfoNCE(0.1)(enc(x1), enc(x2))
    loss.backward()
    for rank in (0, 1):
        got = torch.load(tmp_path / f"rank{rank}.pt")
        assert got["loss"] == pytest.approx(loss.item(), rel=1e-6)
        torch.testing.assert_close(got["grad"], enc.weight.grad, rtol=1e-5, atol=1e-7)
        torch.testing.assert_close(got["bias"], enc.bias.grad, rtol=1e-5, atol=1e-7)


def _train_worker(rank, port, args):
    from sentaug.train.trainer import train

    _env(rank, port)
    torch.set_num_threads(1)
    spec, corpus, backbone, data, out = args
    train(spec, corpus, None, backbone, data, out)
    dist.destroy_process_group()


def test_the_trainer_under_two_processes_matches_one_process(tmp_path, minilm_path):
    from safetensors.torch import load_file

    from sentaug.train.trainer import train
    from tests.train.test_train import ANCHORS, POSITIVES, spec, write_backbone, write_paired_dev

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(ANCHORS + POSITIVES) + "\n")
    write_paired_dev(tmp_path / "data")
    backbone = write_backbone(tmp_path / "bb", minilm_path, dropout=0.0)
    s = spec(method="simcse", positive={"source": "dropout"}, max_steps=2, batch_size=8, eval_steps=2,
             learning_rate=1e-4)
    mp.spawn(_train_worker, args=(_free_port(), (s, str(corpus), backbone, str(tmp_path / "data"),
                                                  str(tmp_path / "ddp"))), nprocs=2, join=True)
    train(s, str(corpus), None, backbone, str(tmp_path / "data"), str(tmp_path / "single"))
    log = lambda run: [json.loads(x) for x in (tmp_path / run / "train_log.jsonl").read_text().splitlines()]
    assert [r["loss"] for r in log("ddp")] == pytest.approx([r["loss"] for r in log("single")], rel=1e-5)
    a, b = load_file(str(tmp_path / "ddp/model.safetensors")), load_file(str(tmp_path / "single/model.safetensors"))
    for name in a:
        assert (a[name] - b[name]).abs().max() < 1e-5, name
