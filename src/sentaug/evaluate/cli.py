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

from ..cli_args import default_pooler, forward_args, hidden_alias, model_arg, out_arg, pooler_arg, precision_arg
from .suites import SUITES

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
    wanted = [f"glue/{t}" for t in _task_list(tasks)] if suite == "glue" and tasks else SUITES[suite]
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


def _resolved(a, suite: str, folders=()):
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


def cmd_evaluate_sts(a):
    a = _resolved(a, "sts")
    from .sts import evaluate_sts_cli

    evaluate_sts_cli(model=a.model, pooler=a.pooler, data=a.data, out=a.out, batch_size=a.batch_size,
                     device=a.device, scale=a.scale, lowercase=a.lowercase, normalize=a.normalize)


def cmd_evaluate_cnsd(a):
    a = _resolved(a, "cnsd")
    from .cnsd import evaluate_cnsd_cli

    evaluate_cnsd_cli(model=a.model, pooler=a.pooler, data=a.data, out=a.out, batch_size=a.batch_size,
                      device=a.device, scale=a.scale, normalize=a.normalize)


def cmd_evaluate_transfer(a):
    a = _resolved(a, "transfer")
    from .transfer import evaluate_transfer_cli

    evaluate_transfer_cli(model=a.model, pooler=a.pooler, data=a.data, out=a.out, mode=a.mode, tasks=a.tasks,
                          solver=a.solver, batch_size=a.batch_size, device=a.device, scale=a.scale,
                          normalize=a.normalize)


def cmd_evaluate_clustering(a):
    a = _resolved(a, "clustering")
    from .clustering import evaluate_clustering_cli

    evaluate_clustering_cli(model=a.model, pooler=a.pooler, data=a.data, out=a.out, datasets=a.tasks,
                            seeds=tuple(range(a.seeds)), n_init=a.n_init, batch_size=a.batch_size,
                            device=a.device, scale=a.scale, normalize=a.normalize)


def cmd_evaluate_intent(a):
    a = _resolved(a, "intent")
    from .intent import evaluate_intent_cli

    evaluate_intent_cli(model=a.model, pooler=a.pooler, data=a.data, out=a.out, datasets=a.tasks,
                        batch_size=a.batch_size, device=a.device, scale=a.scale, iterations=a.iterations,
                        normalize=a.normalize)


def _task_list(tasks):
    """--tasks given as `CoLA RTE` or `CoLA,RTE`."""
    return [t for item in tasks for t in item.split(",") if t] if tasks else None


def cmd_evaluate_glue(a):
    a = _resolved(a, "glue")
    from .glue import evaluate_glue_cli

    evaluate_glue_cli(model=a.model, pooler=a.pooler, data=a.data, out=a.out, tasks=_task_list(a.tasks),
                      max_steps=a.max_steps, rdrop=a.rdrop, switch_case_p=a.switch_case, train_on_dev=a.train_on_dev,
                      seed=a.seed, learning_rate=a.lr, batch_size=a.train_batch_size, epochs=a.epochs,
                      max_seq_length=a.max_seq_length, eval_batch_size=a.batch_size, device=a.device,
                      scale=a.scale, batching=a.batching, step=a.step, recipe=_recipe(a.recipe))


def _recipe(value: str | None) -> dict | None:
    """`--recipe`: inline JSON or a JSON file (as `--spec`)."""
    if not value:
        return None
    import json

    return json.loads(Path(value).read_text(encoding="utf-8") if not value.lstrip().startswith("{") else value)


def cmd_evaluate_analysis(a):
    a = _resolved(a, "analysis")
    from .analysis import evaluate_analysis_cli

    evaluate_analysis_cli(model=a.model, pooler=a.pooler, data=a.data, out=a.out, parts=_task_list(a.tasks),
                          augmentations=a.augmentations or (), ks=tuple(a.k), stackoverflow_limit=a.stackoverflow_limit,
                          iso_sample=a.iso_sample, gh_sample=a.gh_sample, lm=None if a.lm == "none" else a.lm,
                          seed=a.seed, batch_size=a.batch_size, device=a.device, scale=a.scale,
                          nli_limit=a.nli_limit)


def cmd_evaluate_nli(a):
    from ..data.triplets import SETS

    sets = dict(item.split("=", 1) for item in a.triplets or [])
    # and the folders of its triplet sets (an unknown one is named by evaluate_nli_cli)
    a = _resolved(a, "nli", [SETS[name][0] for name in sets.values() if name in SETS])
    from .nli import evaluate_nli_cli

    evaluate_nli_cli(model=a.model, pooler=a.pooler, data=a.data, out=a.out, sets=sets,
                     anli_splits=tuple(a.anli_splits), iso_sample=a.iso_sample, gh_sample=a.gh_sample, seed=a.seed,
                     batch_size=a.batch_size, device=a.device, scale=a.scale, normalize=a.normalize)


def cmd_evaluate_cola(a):
    a = _resolved(a, "cola")
    from .cola import evaluate_cola_cli

    evaluate_cola_cli(model=a.model, pooler=a.pooler, data=a.data, out=a.out, C=a.C, max_iter=a.max_iter,
                      batch_size=a.batch_size, device=a.device, scale=a.scale, normalize=a.normalize)


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


def add_evaluate_commands(sub) -> None:
    """`evaluate` and one subcommand per suite, under the command line's subparsers `sub`."""
    ev = sub.add_parser("evaluate", help="score a model on an evaluation suite (STS, transfer, clustering, intent, "
                                         "GLUE, ...)")
    evs = ev.add_subparsers(dest="suite", required=True, metavar="SUITE")
    sts = evs.add_parser("sts", help="STS12-16 ('all' setting), STS-B and SICK-R, SimCSE's SentEval protocol")
    _suite_args(sts, "sts/, sick/", tasks=False)
    sts.add_argument("--lowercase", action="store_true",
                     help="lower-case every sentence first (CARDS Table 4: upper case ignored in evaluation)")
    sts.set_defaults(func=cmd_evaluate_sts)
    cn = evs.add_parser("cnsd", help="Chinese STS-B (CNSD) test and dev, Spearman x100 of cosine (SDA Table 5)")
    _suite_args(cn, "cnsd/cnsd-sts-{dev,test}.txt")
    cn.set_defaults(func=cmd_evaluate_cnsd)
    tr = evs.add_parser("transfer", help="SentEval transfer: MR CR SUBJ MPQA SST2 TREC MRPC (logistic regression)")
    _suite_args(tr, "transfer/")
    tr.add_argument("--mode", choices=["fast", "test"], default="fast", help="k = 5 (fast) or 10 (test) folds")
    tr.add_argument("--solver", choices=["senteval", "lbfgs"], default="senteval",
                    help="SentEval's early-stopped classifier (default) or the same objective solved by L-BFGS")
    tr.set_defaults(func=cmd_evaluate_transfer)
    cl = evs.add_parser("clustering", help="short-text clustering: K-means over seeds, Hungarian accuracy/NMI/ARI")
    _suite_args(cl, "clustering/")
    cl.add_argument("--seeds", type=int, default=10, help="K-means runs (seeds 0..N-1)")
    cl.add_argument("--n-init", type=int, default=1, help="k-means++ restarts per run")
    cl.set_defaults(func=cmd_evaluate_clustering)
    it = evs.add_parser("intent", help="few-shot intent classification (K = 5/10/20, 5 fixed splits)")
    _suite_args(it, "intent/")
    it.add_argument("--iterations", type=int, default=1000,
                    help="linear-layer iterations per split (VaSCL: 1000; fewer only for demo runs)")
    it.set_defaults(func=cmd_evaluate_intent)
    gl = evs.add_parser("glue", help="GLUE fine-tuning (CLEAR Table 1 / CARDS Table 6), optional R-drop + switch-case")
    _suite_args(gl, "glue/<TASK>/train.tsv, dev.tsv")
    gl.add_argument("--max-steps", type=int, default=None, help="optimiser steps per task (overrides --epochs)")
    gl.add_argument("--epochs", type=float, default=3.0, help="fine-tuning epochs per task (default: 3)")
    gl.add_argument("--lr", type=float, default=2e-5, help="fine-tuning learning rate (default: 2e-5)")
    gl.add_argument("--train-batch-size", type=int, default=32, help="fine-tuning batch size (default: 32)")
    gl.add_argument("--max-seq-length", type=int, default=128, help="token limit (default: 128)")
    gl.add_argument("--rdrop", type=float, default=0.0, metavar="ALPHA", help="weight of R-drop's symmetric KL")
    gl.add_argument("--switch-case", type=float, default=0.0, metavar="P",
                    help="switch-case probability on the second R-drop pass (CARDS Table 6)")
    gl.add_argument("--train-on-dev", action="store_true",
                    help="smoke test only: fine-tune on the dev split when a task has no train.tsv")
    gl.add_argument("--seed", type=int, default=42, help="fine-tuning seed (default: 42)")
    gl.add_argument("--recipe", metavar="JSON", help="a paper's fine-tuning recipe, inline JSON or a file: {\"all\": "
                                                     "{setting: value}, \"tasks\": {TASK: {setting: value}}} over "
                                                     "the flags above (config.yaml glue.recipes)")
    gl.add_argument("--batching", choices=["auto", "order", "buckets"], default="auto",
                    help="each epoch's batches: slices of its shuffled order, or length buckets padded to a few "
                         "widths (auto: buckets on a GPU, order on the CPU)")
    gl.add_argument("--step", choices=["auto", "graph", "eager"], default="auto",
                    help="auto: one CUDA graph per batch shape on a GPU, eager steps on the CPU")
    gl.set_defaults(func=cmd_evaluate_glue)
    an = evs.add_parser("analysis", help="alignment/uniformity, StackOverflow neighbourhoods, augmentation "
                                         "cosine, COND-HM/SVG/GH, perplexity difference")
    _suite_args(an, "sts/STSBenchmark, clustering/stackoverflow.csv, nli/snli_senteval")
    an.add_argument("--augmentations", nargs="+", metavar="FILE.parquet",
                    help="augmentation caches (columns original, augmented, changed)")
    an.add_argument("--k", type=int, nargs="+", default=[1, 5, 10, 20, 50, 100], help="top-K for neighbourhoods")
    an.add_argument("--stackoverflow-limit", type=int, default=None, help="subsample StackOverflow (default: all)")
    an.add_argument("--iso-sample", type=int, default=5000, help="changed rows used per augmentation")
    an.add_argument("--gh-sample", type=int, default=500,
                    help="rows per sample for the GH (bottleneck) distance (0: skip it)")
    an.add_argument("--nli-limit", type=int, default=None, help="premises used for the NLI distances (default: all)")
    an.add_argument("--lm", default="gpt2", help="causal LM for perplexity: a folder or a hub id, pinned as "
                    "ID@COMMIT if you like; 'none' to skip")
    an.add_argument("--seed", type=int, default=0, help="sampling seed (default: 0)")
    an.set_defaults(func=cmd_evaluate_analysis)

    nl = evs.add_parser("nli", help="ANLI entailment-vs-contradiction score and A/E/C isomorphism of NLI triplet "
                                    "sets (AugCSE Tables 1 and 15)")
    _suite_args(nl, "nli/anli, nli/snli_senteval, nli/simcse")
    hidden_alias(nl.add_argument("--triplets", "--set", dest="triplets", action="append", metavar="NAME=SET",
                                 help="a triplet set for the isomorphism part, e.g. nli=snli (repeatable)"), "--set")
    nl.add_argument("--anli-splits", nargs="+", default=["dev", "test"],
                    help="ANLI splits scored (dev, test, train, or R1/dev, ...)")
    nl.add_argument("--iso-sample", type=int, default=5000, help="triplets used per set for the isomorphism")
    nl.add_argument("--gh-sample", type=int, default=500, help="rows per sample for the GH (bottleneck) distance")
    nl.add_argument("--seed", type=int, default=0, help="sampling seed (default: 0)")
    nl.set_defaults(func=cmd_evaluate_nli)
    co = evs.add_parser("cola", help="CoLA probe: logistic regression on frozen embeddings, dev accuracy "
                                     "(AugCSE Table 1)")
    _suite_args(co, "glue/CoLA/train.tsv, dev.tsv")
    co.add_argument("--C", type=float, default=1.0, help="inverse L2 strength (scikit-learn's C)")
    co.add_argument("--max-iter", type=int, default=1000, help="solver iterations (default: 1000)")
    co.set_defaults(func=cmd_evaluate_cola)
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
