"""`sentaug evaluate <suite>`: the evaluation suites' commands (their handlers and arguments), added to the
command line by `sentaug.cli`. Handlers import their suite lazily, like every handler of the command line.

For a model of your own: `--model` is a folder or a Hugging Face hub id, checked (`resolve_model`) before any
data is fetched. `--pooler` defaults to the one the run was selected with (its train_summary.json), else to the
pooling and normalisation of the folder's sentence-transformers modules, else cls_before_pooler; a `--pooler`
given is applied as it stands (no normalisation). Without `--data` the suite's data sets are fetched once,
through `sentaug.data.download` (the mirror, $SENTAUG_MIRROR, where it holds them, else the official addresses,
every file checked against its pin), into `data_home()`; without `--out` the results go to
`<--results-dir>/<model>/<suite>.json`. The rules always pass --pooler, --data and --out.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..cli_args import default_pooler, forward_args, model_arg, out_arg, pooler_arg, precision_arg
from . import suites as registry

# Where `sentaug evaluate` files results without --out: <RESULTS_DIR>/<model>/<suite>.json
RESULTS_DIR = "results/evaluations"


def data_home(origin: str = "official") -> Path:
    """Where data fetched for `sentaug evaluate` lives: $SENTAUG_DATA, else ~/.cache/sentaug/data (XDG), one folder
    per origin, laid out as the workflow's data folders."""
    root = os.environ.get("SENTAUG_DATA") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / \
        "sentaug" / "data"
    return Path(root) / origin


def suite_data(suite: str, data: str | None, origin: str = "official", tasks=None, folders=()) -> str:
    """`data` if given; else the data home, after fetching whichever of the suite's folders (and `folders`) it
    lacks (of GLUE, only the `tasks` asked for: MNLI and QQP alone are hundreds of MB)."""
    if data:
        return data
    from ..data.download import fetch, load_sources, source_names

    home, sources = data_home(origin), load_sources()
    wanted = registry.get(suite).fetch_folders(tasks)
    for group in dict.fromkeys(_source_of(folder, sources[origin]) for folder in [*wanted, *folders]):
        for name in source_names(group, origin, sources):
            if not all((home / output).exists() for output in sources[origin][name]["outputs"]):
                mirror = os.environ.get("SENTAUG_MIRROR") if origin != "demo" else None
                print(f"fetching {name} ({origin}) into {home}"
                      + (f", from the mirror {mirror} ($SENTAUG_MIRROR) where it holds the files" if mirror else ""),
                      flush=True)
                print(fetch(name, home, origin=origin).said(name), flush=True)
    return str(home)


def _in_precision(handler):
    """`handler` with every embedding it makes in the command's --precision (`embedding_precision`)."""
    def run(a):
        from ..models.encoder import embedding_precision

        with embedding_precision(a.precision):
            return handler(a)

    run.__name__ = handler.__name__
    return run


def _with_mteb(handler):
    """`handler`, then its record also as MTEB's result files beside it (`<name>.mteb/`) and, for a trained run,
    its scores in the run's model card (`sentaug.evaluate.mteb_results.export`)."""
    def run(a):
        out = handler(a)
        if getattr(a, "out", None) and Path(a.out).is_file():
            from .mteb_results import export

            written = export(a.out, a.model, a.suite_name, getattr(a, "model_name", None))
            if written is not None:
                print(f"MTEB result files: {written}", flush=True)
        return out

    run.__name__ = handler.__name__
    return run


def _source_of(folder: str, sources: dict) -> str:
    """The source that installs a data folder: the one named after it, else the one listing it among its outputs
    (`senteval` installs sts/ and sick/), else the folder as a group of sources (glue: glue/CoLA, glue/MNLI, ...)."""
    if folder in sources:
        return folder
    return next((name for name, src in sources.items() if folder in src["outputs"]), folder)


def resolved(a, suite: str, folders=()):
    """The model (checked first), its sentence embedding, the output file and the suite's data folder (and
    `folders`), as `sentaug evaluate` fills them in (module docstring)."""
    from ..models.model_folder import choose_embedding, resolve_model

    model = resolve_model(a.model)
    embedding = choose_embedding(model, a.pooler)
    if a.pooler is None:
        print(f"{a.model}: {embedding.pooler}{' + L2 normalisation' if embedding.normalize else ''} "
              f"({embedding.source})", flush=True)
    a.model, a.pooler, a.normalize = str(model.path), embedding.pooler, embedding.normalize
    a.model_name = model.name       # what its results are filed under, and its MTEB name when a local folder
    a.out = a.out or str(result_file(a.results_dir, model.name, suite))
    a.data = suite_data(suite, a.data, a.origin, getattr(a, "tasks", None), folders)
    return a


def result_file(results_dir: str | os.PathLike, model_name: str, suite: str) -> Path:
    """Where a suite's results of a model go when no --out is given: one folder per model."""
    return Path(results_dir) / model_name / f"{suite}.json"


def task_list(tasks):
    """--tasks given as `CoLA RTE` or `CoLA,RTE`."""
    return [t for item in tasks for t in item.split(",") if t] if tasks else None


def suite_command(suite):
    """`sentaug evaluate <suite>`'s handler: its arguments resolved (`resolved`), then the suite's `run`."""
    def run(a):
        suite.run(resolved(a, suite.name, suite.extra_folders(a)))

    run.__name__ = f"cmd_evaluate_{suite.name}"
    return run


# What `evaluate suites` gives every suite it runs (--flag, attribute); a suite's own words may not name the model
# or the device: the one model loaded for them all.
SHARED_FLAGS = (("--pooler", "pooler"), ("--data", "data"), ("--origin", "origin"), ("--batch-size", "batch_size"),
                ("--precision", "precision"), ("--scale", "scale"), ("--results-dir", "results_dir"))
LOADED_MODEL_FLAGS = ("--model", "--device")


def suite_commands(a, parsers) -> list:
    """The parsed command of each --suite "SUITE [ARGS]" of `evaluate suites`, with the shared flags and the model
    filled in; every one checked before any runs (a bad one stops them all, naming it)."""
    import shlex

    commands = []
    for text in a.suite:
        words = shlex.split(text)
        if not words or words[0] not in parsers or words[0] == "suites":
            known = ", ".join(name for name in parsers if name != "suites")
            raise ValueError(f"--suite {text!r}: starts with no suite (choose from {known})")
        named = [w for w in words[1:] if w.split("=", 1)[0] in LOADED_MODEL_FLAGS]
        if named:
            raise ValueError(f"--suite {text!r}: {named[0].split('=', 1)[0]} is given once, for every suite (the "
                             f"model is loaded once)")
        shared = ["--model", a.model, *(["--device", a.device] if a.device else [])]
        for flag, attr in SHARED_FLAGS:
            if getattr(a, attr) is not None:
                shared += [flag, str(getattr(a, attr))]
        commands.append(parsers[words[0]].parse_args([*shared, *words[1:]]))
    return commands


def cmd_evaluate_suites(a):
    """Several suites of one model in this process: the model loaded once (`models_kept`), each suite's
    sentences embedded and its result file written as `sentaug evaluate <suite>` writes it."""
    from ..models.encoder import models_kept

    commands = suite_commands(a, a.suite_parsers)
    with models_kept():
        for command in commands:
            command.func(command)


def cmd_evaluate_mteb(a):
    """`sentaug evaluate mteb`: `<name>.mteb/` beside each result file given or found (its model: the record's
    `model`, which must still be there), and a trained run's scores in its card."""
    from .mteb_results import export

    files = []
    for item in map(Path, a.records):
        files += sorted(p for p in item.rglob("*.json") if ".mteb" not in p.parent.as_posix()) if item.is_dir() \
            else [item]
    written = [w for w in (export(f) for f in files) if w is not None]
    print(f"MTEB result files for {len(written)} of {len(files)} result files" + (f": {written[0]}, ..." if written
                                                                                  else ""))


MODULE_FLAG = "--module"


def module_arg(parser) -> None:
    """--module: read before the command line is parsed (`load_named_modules`), so that its suites are commands."""
    parser.add_argument(MODULE_FLAG, action="append", metavar="MODULE",
                        help="a module that registers evaluation suites, imported first (a plugin not installed, "
                             "on PYTHONPATH; repeatable)")


def load_named_modules(argv: list[str]) -> None:
    """Import the modules `sentaug evaluate ... --module M` names, before its suites become commands."""
    if not argv or argv[0] != "evaluate":
        return
    import argparse

    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument(MODULE_FLAG, action="append", default=[])
    registry.load_modules(pre.parse_known_args(argv[1:])[0].module, origin="sentaug evaluate --module")


def _suite_args(parser, data_help: str, tasks: bool = True) -> None:
    """The arguments every `evaluate SUITE` shares, plus --tasks."""
    model_arg(parser, "the model to evaluate: a folder (a trained run, a backbone, a sentence-transformers or "
                      "Hugging Face model) or a Hugging Face hub id (ID@COMMIT pins its commit)", metavar="DIR|HUB_ID")
    pooler_arg(parser, sentence_transformers=True)
    parser.add_argument("--data", help=f"data folder ({data_help}); default: fetched once into $SENTAUG_DATA, "
                                       "else ~/.cache/sentaug/data, from the mirror or the official addresses")
    parser.add_argument("--origin", choices=["official", "demo"], default="official",
                        help="without --data: the official data sets, or the bundled demo data (default: official)")
    parser.add_argument("--out", help="JSON of the results (default: <--results-dir>/<model>/<suite>.json)")
    parser.add_argument("--results-dir", default=RESULTS_DIR,
                        help=f"folder of results by model, when no --out is given (default: {RESULTS_DIR}); the "
                             "model's name is its hub id or its path, with '/' written '__'")
    if tasks:
        parser.add_argument("--tasks", nargs="+", help="a subset of the suite's tasks / data sets (default: all)")
    forward_args(parser, None, "sentences per forward pass (default: 128 on the CPU; on a GPU, length-sorted "
                               "batches of up to 32,768 tokens)")
    precision_arg(parser)
    parser.add_argument("--scale", default=None, help="recorded in the output")
    module_arg(parser)


def add_evaluate_commands(sub) -> None:
    """`evaluate` and one subcommand per suite, under the command line's subparsers `sub`."""
    ev = sub.add_parser("evaluate", help="score a model on an evaluation suite (STS, transfer, clustering, intent, "
                                         "GLUE, ...)")
    evs = ev.add_subparsers(dest="suite", required=True, metavar="SUITE")
    for name, suite in registry.registered().items():
        parser = evs.add_parser(name, help=suite.help)
        _suite_args(parser, suite.data_help, tasks=suite.tasks)
        suite.add_arguments(parser)
        parser.set_defaults(func=suite_command(suite))
    for name, suite in evs.choices.items():
        suite.set_defaults(func=_in_precision(_with_mteb(suite.get_default("func"))), suite_name=name)
    several = evs.add_parser("suites", help="several suites of one model in one process: the model loaded once, "
                                            "each suite's result file as its own command writes it")
    model_arg(several, "the model to evaluate: a folder (a trained run, a backbone, a sentence-transformers or "
                       "Hugging Face model) or a Hugging Face hub id (ID@COMMIT pins its commit)", metavar="DIR|HUB_ID")
    pooler_arg(several, sentence_transformers=True)
    several.add_argument("--data", help="data folder of every suite (default: each suite's, fetched once)")
    several.add_argument("--origin", choices=["official", "demo"], default=None,
                         help="without --data: the official data sets, or the bundled demo data (default: official)")
    forward_args(several, None, "sentences per forward pass (default: each suite's)")
    precision_arg(several)
    several.add_argument("--scale", default=None, help="recorded in the outputs")
    several.add_argument("--results-dir", default=None,
                         help=f"folder of results by model, for the suites given no --out (default: {RESULTS_DIR})")
    module_arg(several)
    several.add_argument("--suite", action="append", required=True, metavar="'SUITE [ARGS]'",
                         help="one suite and its own arguments, as `sentaug evaluate SUITE` takes them, but for "
                              "the model, the device and the flags above (repeatable; run in this order)")
    several.set_defaults(func=_in_precision(cmd_evaluate_suites), suite_parsers=dict(evs.choices))
    mt = evs.add_parser("mteb", help="MTEB's result files (and a trained run's model card scores) from result "
                                     "files already written: what every evaluation now writes beside its record")
    mt.add_argument("records", nargs="+", metavar="RESULT.json|DIR",
                    help="result files of `sentaug evaluate` or the workflow, or folders searched for them")
    mt.set_defaults(func=cmd_evaluate_mteb)


def cmd_project(a):
    from .projection import project_cli

    project_cli(a.model, default_pooler(a.model, a.pooler), a.caches, a.labels, a.method, a.out, sample=a.sample,
                seed=a.seed, batch_size=a.batch_size, device=a.device, scale=a.scale)


def cmd_token_pca(a):
    from .token_embeddings import token_pca_cli

    token_pca_cli(a.model, a.out, corpus=a.corpus)


def add_analysis_commands(sub) -> None:
    """The analyses behind figures: `project` and `token-pca` (the census's, `augment-cosine`, is the report's)."""
    pj = sub.add_parser("project", help="2-D PCA / t-SNE of originals and their augmentations (AugCSE Figs. 2-4)")
    model_arg(pj)
    pooler_arg(pj)
    pj.add_argument("--caches", nargs="+", required=True, metavar="FILE.parquet", help="augmentation caches")
    pj.add_argument("--labels", nargs="+", help="one label per cache (default: the augmentation folder's name)")
    pj.add_argument("--method", choices=["pca", "tsne"], default="pca", help="the projection (default: pca)")
    pj.add_argument("--sample", type=int, default=200, help="changed rows per augmentation, and originals")
    pj.add_argument("--seed", type=int, default=0, help="the sample's seed (default: 0)")
    forward_args(pj)
    pj.add_argument("--scale", default=None, help="recorded in the output")
    out_arg(pj, "JSON: coordinates and a label per point")
    pj.set_defaults(func=cmd_project)

    tp = sub.add_parser("token-pca", help="CARDS Fig. 1: 2-D PCA of a backbone's token embeddings with each token's "
                                          "case / sub-token category and corpus frequency")
    model_arg(tp, "the backbone folder (Hugging Face layout)")
    tp.add_argument("--corpus", help="corpus whose token frequencies colour Fig. 1b (and settle ambiguous tokens)")
    out_arg(tp, "JSON")
    tp.set_defaults(func=cmd_token_pca)
