"""Reading back what the workflow wrote (augmentation caches, spaCy parses, token files, retrieval indexes,
result JSONs), checked, so that a damaged file is reported by its path with what to do about it.

Why: every output is written atomically (`sentaug.io`), but a file can still be damaged afterwards (a disk
error, a copy cut short, a hand edit). Read as it is, a truncated augmentation cache made a training job fail
with pyarrow's "Parquet magic bytes not found in footer", naming no file. Here each reader either
- compares the file with the digest its sidecar records (an augmentation cache's stats JSON holds the size and
  sha256 of its parquet, `cache_bytes` and `cache_sha256`; a retrieval index's JSON, `index_bytes` and
  `index_sha256`: `file_digest`), or
- relies on the checksum its format carries (token files and indexes are zip archives with a CRC-32 per member;
  a spaCy DocBin is zlib-compressed, with its Adler-32), or, for a JSON result, on its parse,
and any failure to read it becomes one `DamagedFile` error naming the path: delete it and rerun, Snakemake
rebuilds it (a missing output is rebuilt; a damaged one would otherwise be taken as done).
"""
from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Iterator

from .io import sha256_file


class DamagedFile(ValueError):
    """A file the workflow wrote cannot be read as what it should be. The message names the file and the fix."""

    def __init__(self, path: str | os.PathLike, what: str, problem: str):
        self.path = str(path)
        super().__init__(f"{what} {path} is damaged ({problem}). Delete it (rm {path}) and run the same command "
                         f"again: Snakemake rebuilds it")


@contextlib.contextmanager
def reading(path: str | os.PathLike, what: str) -> Iterator[None]:
    """Turn any failure to read `path` inside the block into a `DamagedFile` naming it. A missing file stays a
    FileNotFoundError (nothing to delete), and a DamagedFile raised inside passes through."""
    try:
        yield
    except (FileNotFoundError, DamagedFile, MemoryError):
        raise
    except Exception as e:      # pyarrow, zipfile, zlib, msgpack and json each raise their own kinds
        raise DamagedFile(path, what, f"{type(e).__name__}: {_first_line(e)}") from e


def _first_line(e: Exception) -> str:
    text = str(e).strip().splitlines()
    return text[0][:200] if text else "no message"


def file_digest(path: str | os.PathLike, prefix: str) -> dict:
    """A file's digest as its sidecar records it: {"<prefix>_bytes": size, "<prefix>_sha256": sha256}."""
    return {f"{prefix}_bytes": Path(path).stat().st_size, f"{prefix}_sha256": sha256_file(path)}


def check_digest(path: str | os.PathLike, recorded: dict, what: str, prefix: str) -> None:
    """Raise DamagedFile unless `path` has the size and sha256 that `recorded` (its sidecar) holds under
    `prefix`; a sidecar written before digests were recorded holds none, and then nothing is compared."""
    size, digest = recorded.get(f"{prefix}_bytes"), recorded.get(f"{prefix}_sha256")
    if size is None or digest is None:
        return
    actual = Path(path).stat().st_size
    if actual != size:
        raise DamagedFile(path, what, f"{actual} bytes, its sidecar records {size}: truncated or overwritten")
    if sha256_file(path) != digest:
        raise DamagedFile(path, what, "its sha256 does not match the one its sidecar records")


def cache_sidecar(path: str | os.PathLike) -> Path:
    """An augmentation cache's stats JSON (`sentaug.augment.cache`), which holds its digest."""
    return Path(path).with_suffix(".json")


def read_cache(path: str | os.PathLike, columns: list[str] | None = None):
    """An augmentation cache as a DataFrame, checked against the digest in its stats JSON when there is one."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"augmentation cache not found: {path}")
    sidecar = cache_sidecar(path)
    if sidecar.is_file():
        check_digest(path, read_result(sidecar, what="augmentation cache stats"), "augmentation cache", "cache")
    with reading(path, "augmentation cache"):
        return pd.read_parquet(path, columns=columns)


def cache_columns(path: str | os.PathLike) -> list[str]:
    """The column names of an augmentation cache (its parquet schema)."""
    import pyarrow.parquet as pq

    with reading(path, "augmentation cache"):
        return list(pq.read_schema(path).names)


def read_result(path: str | os.PathLike, what: str = "result file"):
    """A JSON file the workflow wrote (an evaluation's result, a run's summary, a sidecar)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{what} not found: {path}")
    with reading(path, what):
        return json.loads(path.read_text(encoding="utf-8"))
