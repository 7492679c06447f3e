"""What a model folder is, as results that leave this project name it (MTEB's result files, a model card): a
name (`owner/name`), a revision, its embedding size, parameter count, longest input, base model and training
data. Read from the folder alone, without loading the model:

- a trained run (train_summary.json): `sentaug/<method>-<backbone>-<scale>-seed<seed>`, revised by the digest of
  its weights and configuration (`sha256:<12 hex>`: the same bytes, the same revision), trained from its
  backbone on its corpus;
- a hub snapshot, or a backbone the workflow fetched from the hub: its hub id and commit;
- any other folder (a package's, a random stand-in): `local/<name>`, revised by its digest.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..io import sha256_file
from .hub import SOURCE_FILE, model_source

# Files whose bytes make the model (the revision's digest): weights, the transformer's configuration, and the
# sentence-transformers modules' (pooling, normalisation). Logs, summaries and the model card are left out.
MODEL_FILES = ("config.json", "modules.json", "sentence_bert_config.json", "tokenizer.json", "vocab.txt",
               "merges.txt", "1_Pooling/config.json")
# Corpora the workflow trains on, as the hub's dataset ids name them where they are published.
CORPORA = {"wiki1m": "princeton-nlp/datasets-for-simcse (wiki1m_for_simcse.txt)",
           "wiki1m_head": "princeton-nlp/datasets-for-simcse (wiki1m_for_simcse.txt, first 11,914 lines)"}


def folder_revision(folder: str | Path) -> str:
    """`sha256:<12 hex>` over the model's own files (MODEL_FILES and every weight file), by relative path."""
    folder = Path(folder)
    files = sorted({*[folder / f for f in MODEL_FILES if (folder / f).is_file()],
                    *folder.glob("*.safetensors"), *folder.glob("pytorch_model*.bin")})
    h = hashlib.sha256()
    for path in files:
        h.update(f"{path.relative_to(folder).as_posix()}\t{sha256_file(path)}\n".encode())
    return f"sha256:{h.hexdigest()[:12]}"


def _config(folder: Path) -> dict:
    try:
        return json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def parameter_count(folder: str | Path) -> int | None:
    """Parameters in the folder's safetensors weights (read from their headers), None without any."""
    files = sorted(Path(folder).glob("*.safetensors"))
    if not files:
        return None
    from safetensors import safe_open

    total = 0
    for path in files:
        with safe_open(str(path), "pt") as f:
            for key in f.keys():
                n = 1
                for d in f.get_slice(key).get_shape():
                    n *= d
                total += n
    return total


def _base(source: dict | None) -> str | None:
    """The hub id a model was made from (a run's backbone, a fetched backbone), else None."""
    if not source:
        return None
    if "trained_from" in source:
        return _base(source["trained_from"])
    return source.get("id") if source.get("source", "hub") == "hub" and "id" in source else None


def model_identity(folder: str | Path, local: str | None = None) -> dict:
    """The identity of the model in `folder` (module docstring); `local` names a folder of the third kind
    (default: its folder's name)."""
    folder = Path(folder)
    config = _config(folder)
    source = model_source(folder)
    summary = {}
    if (folder / "train_summary.json").is_file():
        summary = json.loads((folder / "train_summary.json").read_text(encoding="utf-8"))
    spec = summary.get("spec") or {}
    if spec:
        name = f"sentaug/{spec['method']}-{spec['backbone']}-{spec['scale']}-seed{spec['seed']}"
        revision = folder_revision(folder)
        corpus = spec.get("corpus")
        training = [CORPORA.get(corpus, corpus)] if corpus else []
    elif source and source.get("source", "hub") == "hub" and source.get("id") and \
            ((folder / SOURCE_FILE).is_file() or source.get("loaded_from") == "hub"):
        name, revision, training = source["id"], source.get("revision") or folder_revision(folder), None
    else:
        raw = local or folder.name
        name = raw if "/" in raw else f"local/{raw}"
        revision, training = folder_revision(folder), None
    hidden = config.get("hidden_size") or config.get("d_model") or config.get("dim")
    return {"name": name, "revision": revision, "embed_dim": hidden, "n_parameters": parameter_count(folder),
            "max_tokens": config.get("max_position_embeddings"), "base_model": _base(source),
            "training_data": training, "trained": bool(spec), "spec": spec or None,
            "sentence_transformers": (folder / "modules.json").is_file(), "source": source}
