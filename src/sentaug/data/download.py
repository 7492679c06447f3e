"""Downloads with sha256 pins, a local mirror, and atomic writes.

`fetch(name, out_root)` writes the outputs of source `name` (see sources.yaml) under `out_root`, laid out
like ../shared/data. Every file is verified before anything appears at its target path: a checksum
mismatch, a truncated transfer or a missing mirror file is an error naming the file, and leaves the
target untouched (outputs are assembled in a temporary folder and renamed into place at the end).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.request
from importlib import resources
from pathlib import Path

import yaml

from ..io import atomic_path, sha256_file


class DownloadError(ValueError):
    """A file could not be fetched or did not match its pin; the message names the file."""


def load_sources() -> dict:
    return yaml.safe_load((resources.files("sentaug.data") / "sources.yaml").read_text(encoding="utf-8"))


def demo_root() -> Path:
    return Path(str(resources.files("sentaug") / "resources" / "demo"))


def demo_manifest() -> dict[str, str]:
    manifest = demo_root() / "MANIFEST.sha256"
    pins = {}
    for line in manifest.read_text(encoding="utf-8").splitlines():
        if line.strip():
            digest, rel = line.split(maxsplit=1)
            pins[rel.strip()] = digest
    return pins


def verify(path: Path, pin, label: str) -> None:
    """Check `path` against a pin: a sha256, a list of accepted sha256s, or a prefix/line-count pin."""
    if isinstance(pin, dict):
        size = path.stat().st_size
        if size < pin["prefix_bytes"]:
            raise DownloadError(f"{label}: {size} bytes, expected more than {pin['prefix_bytes']} (truncated?)")
        with open(path, "rb") as f:
            head = hashlib.sha256(f.read(pin["prefix_bytes"])).hexdigest()
        if head != pin["prefix_sha256"]:
            raise DownloadError(f"{label}: sha256 of the first {pin['prefix_bytes']} bytes is {head}, "
                                f"expected {pin['prefix_sha256']}")
        with open(path, "rb") as f:
            lines = sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 20), b""))
        if lines != pin["lines"]:
            raise DownloadError(f"{label}: {lines} lines, expected {pin['lines']} (truncated or changed upstream)")
        return
    accepted = [pin] if isinstance(pin, str) else list(pin)
    got = sha256_file(path)
    if got not in accepted:
        raise DownloadError(f"{label}: sha256 {got} does not match the pinned {' or '.join(accepted)} "
                            f"(truncated, corrupted or changed upstream)")


def download_url(url: str, dest: Path, progress: bool = True) -> None:
    """Stream `url` to `dest` atomically; a short read (fewer bytes than Content-Length) is an error."""
    from tqdm.auto import tqdm

    with atomic_path(dest) as tmp:
        try:
            response = urllib.request.urlopen(url, timeout=60)
        except OSError as e:
            raise DownloadError(f"{url}: download failed ({e}); set data.mirror or $SENTAUG_MIRROR "
                                f"to a local copy laid out like ../shared/data") from e
        with response, open(tmp, "wb") as f:
            total = int(response.headers.get("Content-Length") or 0) or None
            bar = tqdm(total=total, unit="B", unit_scale=True, desc=Path(url).name, disable=not progress)
            received = 0
            try:
                while block := response.read(1 << 20):
                    f.write(block)
                    received += len(block)
                    bar.update(len(block))
            except OSError as e:
                raise DownloadError(f"{url}: connection lost after {received} bytes ({e})") from e
            finally:
                bar.close()
        if total is not None and received != total:
            raise DownloadError(f"{url}: truncated download, {received} of {total} bytes")


def _pin_mirror_paths(rel: str, pin) -> list[str]:
    return list(pin.get("mirror", [rel])) if isinstance(pin, dict) else [rel]


def _stage_official(name: str, sources: dict, stage: Path, mirror: str | None, cache: Path) -> None:
    """Place every file of source `name` under `stage`, verified."""
    src = sources["official"][name]
    files = src["files"]
    if "derive" in src:
        d = src["derive"]
        for rel, pin in files.items():
            found = _from_mirror(rel, pin, mirror)
            if found is None:
                full = cache / d["file"]
                if not full.exists():
                    _stage_official(d["from"], sources, cache, mirror, cache)
                found = full
                target = stage / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                with open(found, "rb") as fin, open(target, "wb") as fout:
                    for _, line in zip(range(d["head_lines"]), fin):
                        fout.write(line)
            else:
                _copy(found, stage / rel)
            verify(stage / rel, pin, f"{name}: {rel}")
        return
    if mirror:
        for rel, pin in files.items():
            found = _from_mirror(rel, pin, mirror)
            if found is None:
                raise DownloadError(f"{name}: {rel} is not in the mirror {mirror} "
                                    f"(looked for {', '.join(_pin_mirror_paths(rel, pin))})")
            _copy(found, stage / rel)
            verify(stage / rel, pin, f"{name}: {rel} (from mirror {found})")
        return
    if src.get("mirror_only"):  # official release needs a conversion sentaug does not do (see its `note`)
        raise DownloadError(f"{name}: no direct download from {src['url']} (different layout); set data.mirror "
                            f"or $SENTAUG_MIRROR to a folder laid out like ../shared/data")
    if "zips" in src:  # one zip per folder (GLUE): {our prefix: url}, members named <zip folder>/<file>
        _stage_zips(name, src, stage, cache)
        return
    archive = cache / Path(src["url"]).name
    if not archive.exists():
        download_url(src["url"], archive)
    if src.get("archive") == "tar":
        members = {prefix_theirs + rel[len(prefix_ours):]: rel
                   for rel in files for prefix_ours, prefix_theirs in src["members"].items()
                   if rel.startswith(prefix_ours)}
        with tarfile.open(archive) as tar:
            for member in tar:
                rel = members.pop(member.name.removeprefix("./"), None)
                if rel is not None and member.isfile():
                    _copy_stream(tar.extractfile(member), stage / rel)
        if members:
            missing = ", ".join(sorted(members)[:5])
            raise DownloadError(f"{name}: {archive} lacks {len(members)} expected member(s): {missing}")
    elif src.get("archive") == "zip":   # one member, found by its file name (SimCLUE's corpus.json)
        import zipfile

        (rel,) = files
        with zipfile.ZipFile(archive) as z:
            found = [m for m in z.namelist() if Path(m).name == src["member"]]
            if len(found) != 1:
                archive.unlink(missing_ok=True)
                raise DownloadError(f"{name}: {archive} holds {len(found)} members named {src['member']}, expected 1")
            _copy_stream(z.open(found[0]), stage / rel)
    else:
        (rel,) = files
        _copy(archive, stage / rel)
    try:
        for rel, pin in files.items():
            verify(stage / rel, pin, f"{name}: {rel} (from {src['url']})")
    except DownloadError:
        archive.unlink(missing_ok=True)  # a bad download must not be reused by the next attempt
        raise


def _stage_zips(name: str, src: dict, stage: Path, cache: Path) -> None:
    """Download each zip of `src['zips']` and extract the pinned files under its prefix, verified."""
    import zipfile

    uncovered = [rel for rel in src["files"] if not any(rel.startswith(p) for p in src["zips"])]
    if uncovered:
        raise DownloadError(f"{name}: {uncovered[0]} has no official archive (see sources.yaml); "
                            f"set data.mirror or $SENTAUG_MIRROR to a folder that holds it")
    for prefix, url in src["zips"].items():
        wanted = {rel for rel in src["files"] if rel.startswith(prefix)}
        archive = cache / Path(url).name
        if not archive.exists():
            download_url(url, archive)
        try:
            with zipfile.ZipFile(archive) as z:
                for rel in wanted:
                    member = src["members"][prefix] + rel[len(prefix):]
                    if member not in z.namelist():
                        raise DownloadError(f"{name}: {archive} lacks the member {member}")
                    _copy_stream(z.open(member), stage / rel)
                    verify(stage / rel, src["files"][rel], f"{name}: {rel} (from {url})")
        except (DownloadError, zipfile.BadZipFile):
            archive.unlink(missing_ok=True)  # a bad download must not be reused by the next attempt
            raise


def _from_mirror(rel: str, pin, mirror: str | None) -> Path | None:
    if not mirror:
        return None
    for candidate in _pin_mirror_paths(rel, pin):
        if (Path(mirror) / candidate).is_file():
            return Path(mirror) / candidate
    return None


def _copy(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)


def _copy_stream(stream, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    with stream, open(dest, "wb") as f:
        shutil.copyfileobj(stream, f)


def _stage_demo(name: str, src: dict, stage: Path) -> None:
    root, pins = demo_root(), demo_manifest()
    selected = [rel for rel in pins if any(rel.startswith(p) for p in src["prefixes"])]
    if not selected:
        raise DownloadError(f"demo source {name}: no files under {src['prefixes']} in {root}/MANIFEST.sha256")
    for rel in selected:
        _copy(root / rel, stage / rel)
        verify(stage / rel, pins[rel], f"demo {name}: {rel}")


def fetch(name: str, out_root: str | os.PathLike, origin: str = "official", mirror: str | None = None,
          sources: dict | None = None) -> list[Path]:
    """Fetch source `name` of `origin` into `out_root`; returns the output paths written."""
    sources = sources or load_sources()
    if name not in sources.get(origin, {}):
        raise DownloadError(f"unknown {origin} source '{name}'; known: {', '.join(sorted(sources[origin]))}")
    src = sources[origin][name]
    mirror = mirror or os.environ.get("SENTAUG_MIRROR") or None
    if mirror and not Path(mirror).is_dir():
        raise DownloadError(f"mirror folder {mirror} does not exist")
    out_root = Path(out_root)
    out_root.mkdir(parents=True, exist_ok=True)
    cache = out_root / ".cache"
    stage = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=out_root))
    try:
        if origin == "demo":
            _stage_demo(name, src, stage)
        else:
            _stage_official(name, sources, stage, mirror, cache)
        written = []
        for output in src["outputs"]:  # every file verified: move the outputs into place
            target = out_root / output
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_dir():
                shutil.rmtree(target)
            os.replace(stage / output, target)
            written.append(target)
        return written
    finally:
        shutil.rmtree(stage, ignore_errors=True)
