"""scripts/setup.sh picks the torch build for the machine, with nothing to set (`--torch-plan` says which and how,
installing nothing): CUDA where an NVIDIA GPU answers, else the CPU build from PyTorch's CPU index, else (that
index unreachable) what the configured package index offers."""
import http.server
import os
import re
import socket
import subprocess
import threading

import pytest

from tests.test_cli import ROOT

SETUP = ROOT / "scripts/setup.sh"


def _fake_nvidia_smi(folder, gpu: str | None):
    """An nvidia-smi that names `gpu`, or one that finds none (drivers installed, no device): exit status 9."""
    folder.mkdir()
    script = folder / "nvidia-smi"
    script.write_text(f"#!/bin/sh\necho '{gpu}'\n" if gpu else "#!/bin/sh\necho 'No devices were found' >&2\nexit 9\n")
    script.chmod(0o755)
    return str(folder)


def _plan(path_first: str, **env) -> list[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("TORCH_BUILD", "TORCH_CPU_INDEX")}
    environ.update(PATH=f"{path_first}:{os.environ['PATH']}", **env)
    out = subprocess.run(["bash", str(SETUP), "--torch-plan"], env=environ, capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def cpu_index():
    """A local stand-in for PyTorch's CPU index: /whl/torch/ answers 200."""
    class Index(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/whl/torch/" else 404)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Index)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/whl"
    server.shutdown()


def test_the_torch_version_is_the_one_constraints_pin():
    pinned = re.search(r"^torch==(\S+)$", (ROOT / "constraints.txt").read_text(), re.M).group(1)
    assert f"TORCH_VERSION={pinned}\n" in SETUP.read_text()


def test_an_nvidia_gpu_gets_the_cuda_build(tmp_path):
    assert _plan(_fake_nvidia_smi(tmp_path / "bin", "NVIDIA H100 80GB HBM3")) == [
        "torch 2.13.0: NVIDIA GPU found (NVIDIA H100 80GB HBM3): the CUDA build, from the package index",
        "pip install torch==2.13.0"]


def test_no_gpu_gets_the_cpu_build_from_pytorchs_cpu_index(tmp_path, cpu_index):
    assert _plan(_fake_nvidia_smi(tmp_path / "bin", None), TORCH_CPU_INDEX=cpu_index) == [
        f"torch 2.13.0: no NVIDIA GPU: the CPU build, from {cpu_index}",
        f"pip install --index-url {cpu_index} torch==2.13.0"]


def test_no_gpu_and_no_cpu_index_falls_back_to_the_package_index(tmp_path):
    unreachable = f"http://127.0.0.1:{_closed_port()}/whl"
    assert _plan(_fake_nvidia_smi(tmp_path / "bin", None), TORCH_CPU_INDEX=unreachable) == [
        f"torch 2.13.0: no NVIDIA GPU, and {unreachable} cannot be reached: the build the configured package index "
        "offers", "pip install torch==2.13.0"]


def test_torch_build_overrides_the_detection(tmp_path, cpu_index):
    assert _plan(_fake_nvidia_smi(tmp_path / "bin", "NVIDIA A100"), TORCH_BUILD="cpu",
                 TORCH_CPU_INDEX=cpu_index)[1] == f"pip install --index-url {cpu_index} torch==2.13.0"
    assert _plan(_fake_nvidia_smi(tmp_path / "bin2", None), TORCH_BUILD="cuda")[0].startswith(
        "torch 2.13.0: TORCH_BUILD=cuda: the CUDA build")
