"""Step-time tables of GPUs nobody has measured, calibrated from the measured one (`reference` in
`src/sentaug/resources/devices.yaml`: the H200's) by the public datasheet figures written there: dense BF16
tensor-core rate F, memory bandwidth B and memory. A simple roofline model: each figure of work on the device
(`StepTimes.device_work`: training and GLUE steps, the dev evaluation, the embedding rate, the top-k, the best
model's copy) is split into a compute-bound part, its share c, and a memory-bound part, 1 - c, each scaled by the
ratio of the two devices' rates:

    t_device = t_reference x (c x F_reference / F_device + (1 - c) x B_reference / B_device)

c is the figure's measured MFU on the reference (its FLOPs over t_reference x F_reference) where the table says
what to count them from: a SimCSE step (`steps`, a setting whose work is `simcse`: two views of batch x length
tokens) and a GLUE step (32 pairs of `width` tokens, twice with R-drop), at `step_times.flops_per_token`; else
COMPUTE_SHARE; a copy on the device does no arithmetic (c = 0). The host's figures (start-ups, writes to disk, a
GLUE task's one-off work) are kept as the reference's host measured them, the methods' overheads as the ratios
they are, and the gains of runs sharing a GPU are dropped (none carries over to another device).

What it is not: a measurement. It leaves out what differs beyond the two rates (caches, clocks under load, kernel
choices, launch latency, the host), and every figure of such a table says so (`calibrated` on each row, CALIBRATED
in the bill). A measured table of the device (`step_times/<device>.yaml`) replaces the calibration by being there.
The memory a job needs is the peak the reference measured (`peak_memory_gib`), which does not depend on the rates;
`fits` compares it with the device's memory.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml

from . import step_times
from .cost import GLUE_BATCH, workload
from .step_times import StepTimes, flops_per_token

DEVICES = Path(str(resources.files("sentaug") / "resources" / "devices.yaml"))
CALIBRATED = "calibrated from datasheet rates, not measured"
# The compute share of a figure whose FLOPs the table does not give (a setting adding work to SimCSE's step, the
# dev evaluation, the embedding rate, the top-k): about the MFU the H200's countable steps reach (0.11 to 0.32,
# median 0.17: SimCSE steps of 12-layer and 24-layer backbones at batches 64 to 1024, GLUE steps by width).
COMPUTE_SHARE = 0.2
# GiB a job needs beyond its measured peak (torch's max_memory_allocated): CUDA's context and what the caching
# allocator holds beyond its allocations.
MEMORY_HEADROOM_GIB = 2.0


@dataclass(frozen=True)
class Device:
    """A GPU's datasheet figures (devices.yaml)."""
    key: str
    name: str
    bf16_tflops: float
    memory_tb_s: float
    memory_gb: float


@lru_cache(maxsize=1)
def _sheet() -> dict:
    return yaml.safe_load(DEVICES.read_text(encoding="utf-8"))


def device(key: str) -> Device | None:
    """The datasheet figures of device `key` (a step-time table's name); None for a device not in devices.yaml."""
    row = _sheet()["devices"].get(key)
    return Device(key, **row) if row else None


def reference() -> str:
    return _sheet()["reference"]


def known_devices() -> list[str]:
    """The devices the bill can price: those with a measured table, and those of devices.yaml while the reference
    table they are calibrated from is there."""
    measured = step_times.known_devices()
    return sorted({*measured, *(_sheet()["devices"] if reference() in measured else ())})


def load(name: str) -> StepTimes:
    """Device `name`'s step times: its measured table where there is one (a measured table replaces the
    calibration by being there), else the reference's calibrated to its datasheet figures (`calibrated`)."""
    if name in step_times.known_devices():
        return StepTimes.load(name)
    if name in known_devices():
        return calibrated(name)
    raise ValueError(f"no step-time table for device '{name}' (known: {', '.join(known_devices())}; measured "
                     f"tables live in {step_times.TABLES}, datasheet figures in {DEVICES})")


def fits(peak_gib: float, on: Device) -> bool:
    """Whether a job whose measured peak is `peak_gib` fits in `on`'s memory, with MEMORY_HEADROOM_GIB."""
    return peak_gib + MEMORY_HEADROOM_GIB <= on.memory_gb


def compute_share(times: StepTimes, figure: tuple, ms: float, on: Device) -> float:
    """The compute-bound share of a figure (StepTimes.device_work's) of `times`, measured on `on`: its MFU where
    its FLOPs can be counted (at most 1), else COMPUTE_SHARE; 0 for the copy of the best model."""
    shapes, length, flops = times.table["shapes"], times.length, None
    if figure[0] == "steps":
        _, key, batch = figure
        flops = flops_per_token(shapes[key], length) * 2 * batch * length
    elif figure[0] == "settings":
        backbone, batch, setting_length, work = figure[1].split("/")
        shape = workload()["shapes"].get(backbone)
        if work == "simcse" and shape:
            tokens = 2 * int(batch[1:]) * int(setting_length[1:])
            flops = flops_per_token(shape, int(setting_length[1:])) * tokens
    elif figure[0] == "glue":
        _, key, width, rdrop = figure
        flops = flops_per_token(shapes[key], width) * GLUE_BATCH * width * (2 if rdrop else 1)
    elif figure == ("evaluation", "best_snapshot_ms"):
        return 0.0
    if flops is None:
        return COMPUTE_SHARE
    return min(1.0, flops / (ms / 1000 * on.bf16_tflops * 1e12))


def factor(c: float, ref: Device, to: Device) -> float:
    """How many times longer a figure of compute share `c` takes on `to` than on `ref` (the module's model)."""
    return c * ref.bf16_tflops / to.bf16_tflops + (1 - c) * ref.memory_tb_s / to.memory_tb_s


def calibrated(key: str) -> StepTimes:
    """Device `key`'s table: the reference's measured one with every figure of work on the device scaled by
    `factor`, every row marked `calibrated` (its figures are not measured on `key`), its gains of sharing a GPU
    dropped."""
    ref_times, ref, to = StepTimes.load(reference()), device(reference()), device(key)
    times = ref_times.device_work(
        lambda figure, ms: ms * factor(compute_share(ref_times, figure, ms, ref), ref, to))
    table = times.table
    note = f"{CALIBRATED} (from {ref_times.name}.yaml, {ref.name})"
    for section in ("steps", "settings", "glue", "overhead", "measured"):
        for rows in (table.get(section) or {}).values():
            for row in (rows.values() if section == "steps" else [rows]):
                row["calibrated"] = ref_times.name
    if table.get("embedding"):
        table["embedding"]["calibrated"] = ref_times.name
    table.pop("sharing", None)
    table.update({"device": to.name, "calibrated": {"from": ref_times.name, "note": note},
                  "source": f"{ref_times.device}'s measured figures, each split into a compute-bound and a "
                            f"memory-bound part scaled by BF16 {ref.bf16_tflops:g} / {to.bf16_tflops:g} TFLOP/s and "
                            f"{ref.memory_tb_s:g} / {to.memory_tb_s:g} TB/s"})
    return StepTimes(key, table)
