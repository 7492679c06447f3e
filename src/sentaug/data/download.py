"""Downloads with sha256 pins, a local mirror, and atomic writes.

`fetch(name, out_root)` writes the outputs of source `name` (see sources.yaml) under `out_root`, laid out
like ../shared/data. Each pinned file is taken from the mirror when the mirror holds it, and otherwise from its
official address: a member of a downloaded archive (`archive` + `members`), a file under `base_url`
(`members` maps our paths to the remote ones), or a file built from pinned downloads (`build`, e.g. the
clustering CSVs from the official label<TAB>text files, GLUE's MRPC split). Every file is verified before
anything appears at its target path: a checksum mismatch, a truncated transfer or a missing file is an error
naming the file, and leaves the target untouched (outputs are assembled in a temporary folder and renamed
into place at the end).

A pin is a sha256, a list of accepted sha256s, or a mapping with `sha256`, `git_blob_sha1` (git's content
hash, for files whose sha256 is not published), or `lines` + `prefix_bytes` + `prefix_sha256` (a file only
partly known), optionally with `mirror` (other paths to look for in a mirror). A file pinned `null` is
covered by the sha256 of the archive it comes from (GLUE's MNLI, QQP and QNLI train, WordNet) and is never taken
from a mirror, which could not be verified; a pinned archive that names `mirror` paths is (WordNet's zip).
"""
from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.request
import zipfile
from importlib import resources
from pathlib import Path

import yaml

from ..choices import unknown
from ..io import atomic_path, sha256_file


class DownloadError(ValueError):
    """A file could not be fetched or did not match its pin; the message names the file."""


@functools.lru_cache(maxsize=1)
def load_sources() -> dict:
    """sources.yaml, parsed once per process (the workflow's input functions ask for it per job); read-only."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load((resources.files("sentaug.data") / "sources.yaml").read_text(encoding="utf-8"), Loader=loader)


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


# -- pins -----------------------------------------------------------------------------------------------

def git_blob_sha1(path: Path) -> str:
    """git's object id of a file's content (`git hash-object`): sha1 of `blob <size>\\0` + content."""
    h = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def verify(path: Path, pin, label: str) -> None:
    """Check `path` against its pin (see the module docstring); a `null` pin is checked by its archive."""
    if pin is None:
        return
    if not isinstance(pin, dict):
        pin = {"sha256": pin}
    if "sha256" in pin:
        accepted = [pin["sha256"]] if isinstance(pin["sha256"], str) else list(pin["sha256"])
        got = sha256_file(path)
        if got not in accepted:
            raise DownloadError(f"{label}: sha256 {got} does not match the pinned {' or '.join(accepted)} "
                                f"(truncated, corrupted or changed upstream)")
    if "git_blob_sha1" in pin:
        got = git_blob_sha1(path)
        if got != pin["git_blob_sha1"]:
            raise DownloadError(f"{label}: git blob id {got} does not match the pinned {pin['git_blob_sha1']} "
                                f"(truncated, corrupted or changed upstream)")
    if "prefix_sha256" in pin:
        size = path.stat().st_size
        if size < pin["prefix_bytes"]:
            raise DownloadError(f"{label}: {size} bytes, expected more than {pin['prefix_bytes']} (truncated?)")
        with open(path, "rb") as f:
            head = hashlib.sha256(f.read(pin["prefix_bytes"])).hexdigest()
        if head != pin["prefix_sha256"]:
            raise DownloadError(f"{label}: sha256 of the first {pin['prefix_bytes']} bytes is {head}, "
                                f"expected {pin['prefix_sha256']}")
    if "lines" in pin:
        with open(path, "rb") as f:
            lines = sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 20), b""))
        if lines != pin["lines"]:
            raise DownloadError(f"{label}: {lines} lines, expected {pin['lines']} (truncated or changed upstream)")


def check_sources(sources: dict) -> None:
    """Every official file is pinned, by its own hash or by that of the archive it comes from, and has an
    official address (a mirror is never required)."""
    for name, src in sources["official"].items():
        downloads = src.get("downloads", {})
        for rel, pin in src["files"].items():
            spec = pin if isinstance(pin, dict) else {}
            if "build" in spec:
                missing = [k for k in spec["inputs"] if k not in downloads]
                if missing:
                    raise ValueError(f"sources.yaml: {name}: {rel} is built from undeclared download {missing[0]}")
                if any("sha256" not in downloads[k] for k in spec["inputs"]) and not _own_hash(pin):
                    raise ValueError(f"sources.yaml: {name}: {rel} and its inputs are unpinned")
            elif "archive" in src:
                if "member_by_name" not in src:
                    _member(name, src, rel)
                if not _own_hash(pin) and "sha256" not in downloads[src["archive"]]:
                    raise ValueError(f"sources.yaml: {name}: {rel} has no pin and its archive none either")
            elif "base_url" in src:
                _member(name, src, rel)
                if not _own_hash(pin):
                    raise ValueError(f"sources.yaml: {name}: {rel} has no pin")
            elif "derive" not in src:
                raise ValueError(f"sources.yaml: {name}: {rel} has no official address")


def _own_hash(pin) -> bool:
    """Whether a file is checked by a hash of its own (not only through its archive's)."""
    if pin is None:
        return False
    return not isinstance(pin, dict) or bool({"sha256", "git_blob_sha1", "prefix_sha256"} & set(pin))


# -- transfers --------------------------------------------------------------------------------------------

def download_url(url: str, dest: Path, progress: bool = True) -> None:
    """Stream `url` to `dest` atomically; a short read (fewer bytes than Content-Length) is an error."""
    from tqdm.auto import tqdm

    with atomic_path(dest) as tmp:
        try:
            response = urllib.request.urlopen(url, timeout=60)
        except OSError as e:
            raise DownloadError(f"{url}: download failed ({e}); set data.mirror or $SENTAUG_MIRROR to a local "
                                f"folder holding the file, laid out as the data folder (docs/data.md)") from e
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


def _download(name: str, src: dict, key: str, cache: Path, mirror: str | None = None) -> Path:
    """A declared download (`downloads: {key: {url, sha256}}`) in the cache, verified when it is pinned; taken from
    the mirror where a pinned download names its `mirror` paths and the mirror holds one. A lock keeps parallel
    jobs that share a download (SentEval's tar) from fetching it twice."""
    spec = src["downloads"][key]
    path = cache / key
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f".{path.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        origin = spec["url"]
        if not path.exists():
            found = _from_mirror(key, {"mirror": spec["mirror"]}, mirror) if "sha256" in spec and \
                "mirror" in spec else None
            if found is not None:
                _copy(found, path)
                _FROM_MIRROR.append(found)
                origin = f"mirror {found}"
            else:
                download_url(spec["url"], path)
        if "sha256" in spec:
            try:
                verify(path, spec["sha256"], f"{name}: {key} (from {origin})")
            except DownloadError:
                path.unlink(missing_ok=True)  # a bad download must not be reused by the next attempt
                raise
    return path


def _member(name: str, src: dict, rel: str) -> str:
    """The remote name of our file `rel` (archive member or path under base_url), by the `members` prefixes."""
    for ours, theirs in src.get("members", {}).items():
        if rel.startswith(ours):
            return theirs + rel[len(ours):]
    raise ValueError(f"sources.yaml: {name}: no `members` prefix covers {rel}")


def _member_by_name(name: str, archive: Path, file_name: str) -> str:
    """The one zip member called `file_name`, in whatever folder."""
    with zipfile.ZipFile(archive) as z:
        found = [m for m in z.namelist() if Path(m).name == file_name]
    if len(found) != 1:
        raise DownloadError(f"{name}: {archive} holds {len(found)} members named {file_name}, expected 1")
    return found[0]


def _extract(archive: Path, members: dict[str, str], stage: Path) -> list[str]:
    """Extract {member: our path} from a tar or zip archive into `stage`; returns the members it lacks."""
    wanted = dict(members)
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as z:
            for info in z.infolist():
                rel = wanted.pop(info.filename, None)
                if rel is not None and not info.is_dir():
                    _copy_stream(z.open(info), stage / rel)
    else:
        with tarfile.open(archive) as tar:
            for member in tar:
                rel = wanted.pop(member.name.removeprefix("./"), None)
                if rel is not None and member.isfile():
                    _copy_stream(tar.extractfile(member), stage / rel)
    return sorted(wanted)


def _builders() -> dict:
    from .clustering import raw_to_csv
    from .glue import mrpc_split

    return {
        "clustering_csv": lambda paths: raw_to_csv(paths[0].read_bytes(), paths[0].name),
        "glue_mrpc_train": lambda paths: mrpc_split(paths[0].read_bytes(), paths[1].read_bytes())[0],
        "glue_mrpc_dev": lambda paths: mrpc_split(paths[0].read_bytes(), paths[1].read_bytes())[1],
    }


# -- staging ------------------------------------------------------------------------------------------------

def _pin_mirror_paths(rel: str, pin) -> list[str]:
    return list(pin.get("mirror", [rel])) if isinstance(pin, dict) else [rel]


def _from_mirror(rel: str, pin, mirror: str | None) -> Path | None:
    if not mirror or pin is None:  # a file without its own pin cannot be checked: official archive only
        return None
    for candidate in _pin_mirror_paths(rel, pin):
        if (Path(mirror) / candidate).is_file():
            return Path(mirror) / candidate
    return None


def _stage_official(name: str, sources: dict, stage: Path, mirror: str | None, cache: Path) -> None:
    """Place every file of source `name` under `stage`, verified: from the mirror where it holds the file,
    else from the official address."""
    src = sources["official"][name]
    official = {}
    for rel, pin in src["files"].items():
        found = _from_mirror(rel, pin, mirror)
        if found is None:
            official[rel] = pin
        else:
            _copy(found, stage / rel)
            _FROM_MIRROR.append(found)
            verify(stage / rel, pin, f"{name}: {rel} (from mirror {found})")
    if not official:
        return
    try:
        _stage_from_official_addresses(name, sources, official, stage, mirror, cache)
    except DownloadError as e:
        if not mirror:
            raise
        rel = sorted(official, key=lambda r: (official[r] is None, r))[0]
        more = f" (and {len(official) - 1} more)" if len(official) > 1 else ""
        if official[rel] is None:       # checked by its archive's sha256 alone: a mirror can only hold the archive
            raise DownloadError(f"{name}: {rel}{more} is not in the mirror {mirror} (a file pinned only by its "
                                f"archive's sha256 comes from the archive), and fetching it from its official "
                                f"address failed: {e}") from e
        raise DownloadError(f"{name}: {rel}{more} is not in the mirror {mirror} (looked for "
                            f"{', '.join(_pin_mirror_paths(rel, official[rel]))}), and fetching it from its "
                            f"official address failed: {e}") from e


def _stage_from_official_addresses(name: str, sources: dict, files: dict, stage: Path, mirror, cache: Path) -> None:
    src = sources["official"][name]
    if "derive" in src:  # the first lines of another source's file (wiki1m_head)
        d = src["derive"]
        full = cache / d["file"]
        if not full.exists():
            _stage_official(d["from"], sources, cache, mirror, cache)
        for rel, pin in files.items():
            target = stage / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(full, "rb") as fin, open(target, "wb") as fout:
                for _, line in zip(range(d["head_lines"]), fin):
                    fout.write(line)
            verify(target, pin, f"{name}: {rel} (first {d['head_lines']} lines of {d['file']})")
        return
    built = {rel: pin for rel, pin in files.items() if isinstance(pin, dict) and "build" in pin}
    builders = _builders() if built else {}
    for rel, pin in built.items():
        inputs = [_download(name, src, key, cache, mirror) for key in pin["inputs"]]
        with atomic_path(stage / rel) as tmp:
            tmp.write_bytes(builders[pin["build"]](inputs))
        verify(stage / rel, pin, f"{name}: {rel} (built by {pin['build']} from {', '.join(pin['inputs'])})")
    rest = {rel: pin for rel, pin in files.items() if rel not in built}
    if not rest:
        return
    if "archive" in src:
        archive = _download(name, src, src["archive"], cache, mirror)
        url = src["downloads"][src["archive"]]["url"]
        try:
            if "member_by_name" in src:  # one member, its folder undocumented (SimCLUE's corpus.json)
                (rel,) = rest
                rest_members = {_member_by_name(name, archive, src["member_by_name"]): rel}
            else:
                rest_members = {_member(name, src, rel): rel for rel in rest}
            missing = _extract(archive, rest_members, stage)
            if missing:
                raise DownloadError(f"{name}: {archive} lacks {len(missing)} expected member(s): "
                                    f"{', '.join(missing[:5])}")
            for rel, pin in rest.items():
                verify(stage / rel, pin, f"{name}: {rel} (from {url})")
        except (DownloadError, zipfile.BadZipFile, tarfile.TarError) as e:
            archive.unlink(missing_ok=True)  # a bad download must not be reused by the next attempt
            if isinstance(e, DownloadError):
                raise
            raise DownloadError(f"{name}: {archive} from {url} is not a readable archive ({e})") from e
        return
    for rel, pin in rest.items():  # one file per address under base_url
        url = src["base_url"] + _member(name, src, rel)
        download_url(url, stage / rel)
        verify(stage / rel, pin, f"{name}: {rel} (from {url})")


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


def source_names(name: str, origin: str = "official", sources: dict | None = None) -> list[str]:
    """`name` itself, or every source in the group `name/` (e.g. `glue` -> glue/CoLA, glue/MNLI, ...)."""
    sources = sources or load_sources()
    known = sources.get(origin, {})
    if name in known:
        return [name]
    group = [n for n in known if n.startswith(name.rstrip("/") + "/")]
    if not group:
        groups = sorted({n.split("/")[0] for n in known if "/" in n})
        raise DownloadError(unknown(f"{origin} source", name, [*sorted(known), *groups],
                                    full_list="src/sentaug/data/sources.yaml"))
    return group


# The mirror's files that the fetch under way copied (fetch resets it and reports them in its `Fetched`).
_FROM_MIRROR: list[Path] = []


class Fetched(list):
    """The output paths a fetch wrote, and where their files came from: `mirror` (the mirror folder used, None
    without one) and `from_mirror` (how many files it gave; the others came from the official addresses or the
    download cache, or from the bundled demo data)."""

    def __init__(self, paths, origin: str, mirror: str | None, from_mirror: int):
        super().__init__(paths)
        self.origin, self.mirror, self.from_mirror = origin, mirror, from_mirror

    def said(self, name: str) -> str:
        """One line: what was fetched, into where, and from where."""
        where = ", ".join(str(p) for p in self) or "nothing"
        if self.origin == "demo":
            return f"{name}: {where} (the bundled demo data)"
        if self.mirror and self.from_mirror:
            return f"{name}: {where}, {self.from_mirror} file(s) from the mirror {self.mirror}, checked against their pins"
        if self.mirror:
            return f"{name}: {where}, from the official addresses (the mirror {self.mirror} does not hold it)"
        return f"{name}: {where}, from the official addresses (no mirror set: data.mirror or $SENTAUG_MIRROR)"


def fetch(name: str, out_root: str | os.PathLike, origin: str = "official", mirror: str | None = None,
          sources: dict | None = None) -> Fetched:
    """Fetch source `name` of `origin` into `out_root`; returns the output paths written (a `Fetched`: a list
    that also says whether the mirror gave them)."""
    sources = sources or load_sources()
    if name not in sources.get(origin, {}):
        raise DownloadError(unknown(f"{origin} source", name, sorted(sources[origin]),
                                    full_list="src/sentaug/data/sources.yaml"))
    src = sources[origin][name]
    mirror = mirror or os.environ.get("SENTAUG_MIRROR") or None
    if mirror and not Path(mirror).is_dir():
        raise DownloadError(f"mirror folder {mirror} does not exist")
    out_root = Path(out_root)
    out_root.mkdir(parents=True, exist_ok=True)
    cache = out_root / ".cache"
    stage = Path(tempfile.mkdtemp(prefix=f".{name.replace('/', '_')}.", dir=out_root))
    _FROM_MIRROR.clear()
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
        return Fetched(written, origin, mirror if origin != "demo" else None, len(_FROM_MIRROR))
    finally:
        shutil.rmtree(stage, ignore_errors=True)
