"""Hugging Face hub models pinned to a commit: the one helper every hub load goes through.

A hub model is loaded at the commit `config.yaml` pins it to (`backbones.<name>.revision`, docs/data.md), as the
data downloads are pinned by their sha256. `from_pretrained` passes `revision=` to a transformers class when, and
only when, the reference is a hub id: a local folder, a model-mirror folder, a package's files or a random
stand-in load as they always have (a revision names a commit of a hub repository, not a folder's content).

A reference may carry its pin itself as ``<hub id>@<40-hex commit>`` (`pinned_ref`), for the places that pass a
model as one string: `sentaug evaluate --model`, `evaluate analysis --lm`, an augmentation's ``model=``
parameter. `model_source` reads back what a model folder was made from (its `SOURCE_FILE`, a run's
train_summary.json, a hub cache snapshot's commit) for the provenance of runs and results.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

# A hub repository id (`name` or `owner/name`) and a commit of it (what the hub's `revision=` takes).
HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")
REVISION = re.compile(r"^[0-9a-f]{40}$")
# What a materialised backbone folder was made from (`sentaug.models.backbones.build_backbone` writes it).
SOURCE_FILE = "backbone_source.json"


def split_ref(ref: str | os.PathLike) -> tuple[str, str | None]:
    """(model reference, its pinned commit or None): ``owner/name@<commit>`` -> ("owner/name", commit); a path
    that exists, or anything else, is returned whole with None."""
    ref = str(ref)
    name, at, revision = ref.rpartition("@")
    if at and REVISION.match(revision) and HUB_ID.match(name) and not Path(ref).exists():
        return name, revision
    return ref, None


def pinned_ref(hub_id: str, revision: str | None) -> str:
    """``<hub id>@<commit>``, or the id alone when it is not pinned."""
    return f"{hub_id}@{revision}" if revision else hub_id


def is_hub_id(ref: str | os.PathLike) -> bool:
    """Whether `ref` names a hub repository rather than a local folder (a folder of that name wins, as it does
    for transformers)."""
    ref = str(ref)
    return bool(HUB_ID.match(ref)) and ".." not in ref and not Path(ref).expanduser().exists()


def revision_kwargs(ref: str | os.PathLike, revision: str | None) -> dict:
    """``{"revision": revision}`` for a hub id with a pin, else nothing (a local folder or mirror takes none)."""
    if revision is None or not is_hub_id(ref):
        return {}
    if not REVISION.match(revision):
        raise ValueError(f"{ref}: revision {revision!r} is not a 40-hex commit of its hub repository")
    return {"revision": revision}


def resolve(ref: str | os.PathLike, revision: str | None = None) -> tuple[str, dict]:
    """The name to load and the keyword arguments that pin it: `ref` may carry its pin (``id@commit``) or be
    given one; two different pins are an error."""
    name, carried = split_ref(ref)
    if carried and revision and carried != revision:
        raise ValueError(f"{ref}: pinned to {carried} but asked for revision {revision}")
    return name, revision_kwargs(name, carried or revision)


def from_pretrained(cls, ref: str | os.PathLike, revision: str | None = None, **kwargs):
    """`cls.from_pretrained(ref, **kwargs)` (a transformers Auto class, tokenizer or model), with
    ``revision=`` where `ref` is a hub id and a pin is given (`revision`, or carried as ``id@commit``)."""
    name, pin = resolve(ref, revision)
    return cls.from_pretrained(name, **pin, **kwargs)


def snapshot_download(repo: str, revision: str | None = None, **kwargs) -> str:
    """`huggingface_hub.snapshot_download` of `repo` at its pin (the hub's default branch when unpinned)."""
    import huggingface_hub

    name, pin = resolve(repo, revision)
    return huggingface_hub.snapshot_download(name, **pin, **kwargs)


def loaded_from(ref: str | os.PathLike, revision: str | None = None) -> dict:
    """Where a model reference loads from, for provenance: the hub id and the commit it is pinned to (None:
    whatever the hub serves), or the local folder (no revision applies)."""
    name, carried = split_ref(ref)
    revision = carried or revision
    if is_hub_id(name):
        return {"id": name, "revision": revision, "loaded_from": "hub"}
    return {"loaded_from": str(Path(name).expanduser().resolve())}


def _read(path: Path) -> dict | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def model_source(path: str | os.PathLike) -> dict | None:
    """What the model folder `path` was made from, for the results it scores: a materialised backbone's
    `SOURCE_FILE`; a run's backbone (its train_summary.json, ``{"trained_from": ...}``); a hub snapshot in the
    Hugging Face cache (``models--owner--name/snapshots/<commit>``: its id and commit). None when unknown."""
    path = Path(path)
    if (path / SOURCE_FILE).is_file():
        return _read(path / SOURCE_FILE)
    if (path / "train_summary.json").is_file():
        summary = _read(path / "train_summary.json") or {}
        return {"trained_from": summary.get("backbone_source")}
    parts = path.expanduser().resolve().parts
    for i, part in enumerate(parts[:-1]):
        if part == "snapshots" and i and parts[i - 1].startswith("models--") and REVISION.match(parts[i + 1]):
            return {"source": "hub", "id": parts[i - 1].removeprefix("models--").replace("--", "/"),
                    "revision": parts[i + 1], "loaded_from": "hub"}
    return None


def describe(source: dict | None) -> str:
    """A `model_source` in a few words: ``id@commit`` (a pinned hub model), ``id (unpinned)``, ``id (from
    <folder>)`` (a mirror folder), the package and its version, a random init; a run's is its backbone's."""
    if not source:
        return "not recorded"
    if "trained_from" in source:
        return describe(source["trained_from"])
    if "id" in source:
        if source.get("loaded_from", "hub") != "hub":
            return f"{source['id']} (from {source['loaded_from']})"
        return pinned_ref(source["id"], source.get("revision")) if source.get("revision") else \
            f"{source['id']} (unpinned)"
    if "package" in source:
        return f"{source['package']} {source.get('version') or ''}".strip()
    if "arch" in source:
        return f"random {source['arch']} (seed {source.get('seed', 0)})"
    return str(source.get("loaded_from", "not recorded"))
