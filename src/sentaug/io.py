"""Small I/O helpers shared by every stage: atomic writes, JSON, hashing, texts packed into arrays.

Every output of the workflow is written through `atomic_path` / `atomic_dir`, so an interrupted or failed
step never leaves a half-written file at the target path (Snakemake would otherwise treat it as done).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it onto `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600 files; outputs get the usual permissions
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary directory beside `path`; it replaces `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes 0700 folders
        if path.exists():
            old = path.with_name(f".{path.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(path, old)
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_json(path: str | os.PathLike, obj) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=False) + "\n", encoding="utf-8")


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def folder_digest(folder: str | os.PathLike) -> dict:
    """sha256 over (relative path, sha256) of every file below `folder`, with the file count and size."""
    folder, h = Path(folder), hashlib.sha256()
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))
    for path in files:
        h.update(f"{path.relative_to(folder).as_posix()}\t{sha256_file(path)}\n".encode())
    return {"sha256": h.hexdigest(), "files": len(files), "bytes": sum(p.stat().st_size for p in files)}


def pack_texts(texts: list[str]):
    """UTF-8 bytes and offsets [n + 1] (numpy arrays, for an .npz): compact, where a numpy unicode array pads
    every string to the longest."""
    import numpy as np

    encoded = [t.encode("utf-8") for t in texts]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


def unpack_texts(data, offsets) -> list[str]:
    """The texts `pack_texts` packed."""
    raw = data.tobytes()
    return [raw[a:b].decode("utf-8") for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]
