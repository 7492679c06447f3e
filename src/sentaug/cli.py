"""`sentaug` command line: one subcommand per pipeline stage; the Snakemake rules call these. The
evaluation suites' commands live beside the suites (`sentaug.evaluate.cli`).

Heavy libraries (torch, spaCy, transformers) are imported inside the handlers so that `sentaug --help`
and the light stages start fast.
"""
from __future__ import annotations

import argparse
import errno
import json
import os
import sys

from .augment.registry import PluginError
from .evaluate.cli import add_evaluate_commands
from .workflow.bill import add_cost_command

# Seconds between two redraws of a progress bar whose stream is not a terminal (a job's log file).
LOG_PROGRESS_INTERVAL_S = 30


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

    build_backbone(a.name, json.loads(a.spec), a.out, model_mirror=a.model_mirror)


def cmd_parse(a):
    from .augment.parse import parse_corpus

    parse_corpus(a.corpus, a.out, model=a.model, workers=a.workers)


def cmd_augment(a):
    from .augment import registry

    registry.load_modules(a.module, origin="sentaug augment --module")
    if a.list:
        print(registry.describe())
        return
    if not (a.name and a.corpus and a.out and a.seed is not None):
        raise SystemExit("sentaug augment NAME --corpus FILE --seed S --out FILE.parquet [--param k=v ...]")
    from .augment.cache import build_cache

    build_cache(a.name, a.corpus, a.out, seed=a.seed, params=_kv(a.param), parse=a.parse, workers=a.workers,
                spacy_model=a.spacy_model, tokenizer=a.tokenizer)


def cmd_train(a):
    from pathlib import Path

    from .train.gpu_share import pin_from_environment

    pin_from_environment()      # runs sharing GPUs: this run's GPU, chosen before torch starts CUDA
    from .train.trainer import train

    spec = json.loads(Path(a.spec).read_text(encoding="utf-8") if a.spec.endswith(".json") else a.spec)
    train(spec, corpus=a.corpus, positives=a.positives, backbone=a.backbone,
          dev_data=a.dev_data, out=a.out, resume=a.resume, index=a.index, tokens=a.tokens or (),
          compile_backbone=a.compile, step_mode=a.step)


def cmd_tokenize(a):
    from .models.tokens import build_token_file

    meta = build_token_file(a.texts, a.backbone, a.max_length, a.out, add_tokens=a.add_tokens or ())
    print(f"{a.out}: {meta['n_texts']} distinct texts, {meta['n_tokens']} tokens (tokenizer {meta['fingerprint']})")


def cmd_nli_triplets(a):
    from .data.triplets import triplets_cli

    triplets_cli(a.set, a.data, a.out, seed=a.seed, sample_as=a.sample_as)


def cmd_describe_spec(a):
    from .report.describe import describe_spec_cli

    describe_spec_cli(json.loads(a.spec), a.out)


def cmd_describe_model_size(a):
    from .report.describe import describe_model_size_cli

    describe_model_size_cli(json.loads(a.spec), a.backbone, a.out)


def cmd_index(a):
    from .index.neighbours import build_index

    build_index(a.corpus, a.backbone, a.pooler, a.k, a.out, batch_size=a.batch_size, device=a.device,
                max_length=a.max_length or None)


def cmd_augment_cosine(a):
    from .report.census import embedding_stats

    embedding_stats(a.cache, a.model, a.out, max_lines=a.max_lines or None, batch_size=a.batch_size,
                    device=a.device)


def cmd_project(a):
    from .evaluate.projection import project_cli

    project_cli(a.model, a.pooler, a.caches, a.labels, a.method, a.out, sample=a.sample, seed=a.seed,
                batch_size=a.batch_size, device=a.device, scale=a.scale)


def cmd_tokenization_effects(a):
    from .augment.cards import tokenization_effects_cli

    tokenization_effects_cli(a.corpus, a.tokenizer, a.out, context=a.context)


def cmd_report_page(a):
    from .report.pages import render_page

    render_page(a.kind, a.name, a.out, a.scale, a.inputs, spec_file=a.spec, csv=a.csv, png=a.png)


def cmd_report_leaderboard(a):
    from .report.leaderboard import render_leaderboard

    render_leaderboard(a.spec, a.board, a.inputs, a.out, a.figure, scale=a.scale)


def cmd_report_compare(a):
    from .report.compare import render_comparison

    render_comparison(a.name, a.inputs, a.out, scale=a.scale)


def cmd_report_leaderboard_progress(a):
    from . import config as sc
    from .report.leaderboard import board_progress
    from .workflow import Workflow

    config = {**sc.load_yaml(a.config), "scale": a.scale}
    sc.validate(config)    # as the Snakefile does: a bad key or scale is named, not a KeyError deep in a path
    print(board_progress(Workflow(config, results=a.results), a.board), end="")


def cmd_token_pca(a):
    from .evaluate.token_embeddings import token_pca_cli

    token_pca_cli(a.model, a.out, corpus=a.corpus)


def cmd_report_census(a):
    from .report.census import render_census

    render_census(a.inputs, a.out, scale=a.scale)


def cmd_conformance(a):
    from .augment.conformance import conformance_cli

    result = conformance_cli(a.out, only=a.only, spacy_model=a.spacy_model)
    for op, e in result.items():
        print(f"{op:38s} {e['agree']:3d}/{e['n']:3d} agree ({e['agreement']:.2f} %)")


def cmd_report_table(a):
    from .report.tables import render_table

    render_table(a.paper_file, a.table, a.inputs, a.out, scale=a.scale)


def cmd_report_figure(a):
    from .report.figures import render_figure

    render_figure(a.paper_file, a.figure, a.inputs, a.out, scale=a.scale)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sentaug", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("download", help="fetch a data set (official URL or mirror), verify sha256, write atomically")
    d.add_argument("name", help="source name (src/sentaug/data/sources.yaml), e.g. senteval, wiki1m_head, transfer, "
                                "glue/CoLA, or a group: glue")
    d.add_argument("--origin", choices=["official", "demo"], default="official")
    d.add_argument("--mirror", help="local folder laid out like ../shared/data (default: $SENTAUG_MIRROR)")
    d.add_argument("--out", required=True)
    d.set_defaults(func=cmd_download)

    ds = sub.add_parser("data-stats", help="statistics of the evaluation data from the files (SDA Table 2: STS "
                                          "pairs per split; VaSCL Table 4: clustering sets), as JSON")
    ds.add_argument("what", choices=["sts", "clustering"])
    ds.add_argument("--data", required=True, help="folder laid out like ../shared/data (sts/, sick/, cnsd/ or "
                                                  "clustering/)")
    ds.add_argument("--out", required=True, help="JSON")
    ds.set_defaults(func=cmd_data_stats)

    b = sub.add_parser("backbone", help="materialise a backbone (hub id, package, or random init) in HF layout")
    b.add_argument("name")
    b.add_argument("--spec", required=True, help="the backbone's config.yaml entry as JSON")
    b.add_argument("--model-mirror", help="folder laid out like ../shared/models (default: $SENTAUG_MODEL_MIRROR)")
    b.add_argument("--out", required=True)
    b.set_defaults(func=cmd_backbone)

    pa = sub.add_parser("parse", help="spaCy dependency parse of a corpus, cached once for every augmentation")
    pa.add_argument("--corpus", required=True)
    pa.add_argument("--out", required=True, help="DocBin file (.spacy)")
    pa.add_argument("--model", default="en_core_web_sm")
    pa.add_argument("--workers", type=int, default=1)
    pa.set_defaults(func=cmd_parse)

    au = sub.add_parser("augment", help="build an augmentation cache (parquet + stats JSON)")
    au.add_argument("name", nargs="?")
    au.add_argument("--list", action="store_true", help="print every augmentation with its parameters")
    au.add_argument("--module", action="append", metavar="MODULE",
                    help="import this module first: a plugin that registers augmentations (config augment.modules)")
    au.add_argument("--corpus")
    au.add_argument("--parse", help="cached spaCy parse of the corpus (built on the fly when omitted)")
    au.add_argument("--seed", type=int)
    au.add_argument("--param", action="append", metavar="K=V")
    au.add_argument("--workers", type=int, default=1)
    au.add_argument("--spacy-model", default="en_core_web_sm")
    au.add_argument("--tokenizer", help="also record the length change in this tokenizer's tokens (a folder, "
                                        "hub id, or mirror:/package:/bundled: reference)")
    au.add_argument("--out")
    au.set_defaults(func=cmd_augment)

    t = sub.add_parser("train", help="train one method/backbone/seed (one trainer for every method)")
    t.add_argument("--spec", required=True, help="resolved training spec (JSON, or a .json file holding it), see "
                                                 "sentaug.config.train_spec")
    t.add_argument("--corpus", required=True)
    t.add_argument("--positives", nargs="+", metavar="FILE.parquet",
                   help="augmentation caches the method reads, in the order sentaug.config.method_caches gives")
    t.add_argument("--index", help="retrieval index (.npz) for methods with retrieved negatives")
    t.add_argument("--backbone", required=True, help="backbone folder (HF layout)")
    t.add_argument("--dev-data", required=True, help="folder laid out like ../shared/data (STS-B dev)")
    t.add_argument("--out", required=True)
    t.add_argument("--resume", action="store_true", help="continue from <out>.partial/last if present")
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
    tk.add_argument("--backbone", required=True, help="backbone folder (HF layout) whose tokenizer to use")
    tk.add_argument("--max-length", type=int, required=True, help="truncation, as training's max_seq_length")
    tk.add_argument("--add-tokens", nargs="+", metavar="TOKEN", help="tokens the method adds (CLEAR's [DEL])")
    tk.add_argument("--out", required=True, help=".npz path")
    tk.set_defaults(func=cmd_tokenize)

    add_evaluate_commands(sub)
    add_cost_command(sub)

    nt = sub.add_parser("nli-triplets", help="NLI (premise, entailment, contradiction) triplets for the nli "
                                             "training source, in nli_for_simcse.csv's layout")
    nt.add_argument("--set", required=True, help="snli, anli_devtest, anli_train or nli_for_simcse")
    nt.add_argument("--data", required=True, help="folder laid out like ../shared/data (nli/...)")
    nt.add_argument("--sample-as", help="sample the set down to the size of this one")
    nt.add_argument("--seed", type=int, default=0)
    nt.add_argument("--out", required=True, help="CSV (a stats JSON is written beside it)")
    nt.set_defaults(func=cmd_nli_triplets)

    de = sub.add_parser("describe", help="what a run is, as JSON (tables that are configuration)")
    des = de.add_subparsers(dest="what", required=True)
    ds = des.add_parser("spec", help="the resolved training spec")
    ds.add_argument("--spec", required=True, help="resolved training spec (JSON)")
    ds.add_argument("--out", required=True)
    ds.set_defaults(func=cmd_describe_spec)
    dm = des.add_parser("model-size", help="parameters in training and at inference")
    dm.add_argument("--spec", required=True, help="resolved training spec (JSON)")
    dm.add_argument("--backbone", required=True, help="backbone folder (its config.json is read)")
    dm.add_argument("--out", required=True)
    dm.set_defaults(func=cmd_describe_model_size)

    ix = sub.add_parser("index", help="CARDS retrieval index: exact top-k neighbours under the frozen backbone")
    ix.add_argument("--corpus", required=True)
    ix.add_argument("--backbone", required=True, help="backbone folder (HF layout), used frozen")
    ix.add_argument("--pooler", required=True,
                    choices=["cls", "cls_before_pooler", "avg", "avg_top2", "avg_first_last", "avg_emb_last"])
    ix.add_argument("--k", type=int, required=True, help="neighbours kept per sentence (self excluded)")
    ix.add_argument("--out", required=True, help=".npz path; the provenance .json is written beside it")
    ix.add_argument("--batch-size", type=int, default=128)
    ix.add_argument("--max-length", type=int, default=32, help="token limit when embedding (0: none)")
    ix.add_argument("--device", default=None, help="cpu searches with faiss; cuda with torch matmul")
    ix.set_defaults(func=cmd_index)

    r = sub.add_parser("report", help="render paper tables and figures")
    rs = r.add_subparsers(dest="what", required=True)
    tb = rs.add_parser("table")
    tb.add_argument("--paper-file", required=True)
    tb.add_argument("--table", required=True)
    tb.add_argument("--inputs", required=True, help="JSON mapping of row keys to result files")
    tb.add_argument("--scale", required=True)
    tb.add_argument("--out", required=True, help=".tex path; the .csv is written beside it")
    tb.set_defaults(func=cmd_report_table)
    fg = rs.add_parser("figure")
    fg.add_argument("--paper-file", required=True)
    fg.add_argument("--figure", required=True)
    fg.add_argument("--inputs", required=True, help='JSON {"panels": [[point, ...], ...], "meta": {...}}')
    fg.add_argument("--scale", required=True)
    fg.add_argument("--out", required=True, help=".pdf path; the .png and .csv are written beside it")
    fg.set_defaults(func=cmd_report_figure)
    pg = rs.add_parser("page", help="one self-contained HTML page (table or figure, caption, numbers, provenance): "
                                    "an entry of the Snakemake report")
    pg.add_argument("--kind", required=True, choices=["table", "figure", "leaderboard", "census"])
    pg.add_argument("--name", required=True, help="the table's or figure's name (a leaderboard's: its board)")
    pg.add_argument("--spec", help="papers/<paper>.yaml (or papers/leaderboard.yaml)")
    pg.add_argument("--csv", help="the output's CSV")
    pg.add_argument("--png", help="the figure's PNG")
    pg.add_argument("--inputs", required=True, help='JSON {"results": [result files or run folders], "meta": {...}}')
    pg.add_argument("--scale", required=True)
    pg.add_argument("--out", required=True, help=".html")
    pg.set_defaults(func=cmd_report_page)
    lb = rs.add_parser("leaderboard", help="every method on equal terms: means and paired differences to the "
                                           "baseline with t intervals over seeds")
    lb.add_argument("--spec", required=True, help="papers/leaderboard.yaml")
    lb.add_argument("--board", required=True, help="leaderboard (the first backbone's) or leaderboard-<backbone>")
    lb.add_argument("--inputs", required=True, help='JSON {"rows": [...], "meta": {...}} (Workflow.leaderboard_points)')
    lb.add_argument("--scale", required=True)
    lb.add_argument("--out", required=True, help=".tex path; the .csv and .md are written beside it")
    lb.add_argument("--figure", required=True, help=".pdf path; the .png is written beside it")
    lb.set_defaults(func=cmd_report_leaderboard)
    cp = rs.add_parser("compare", help="a comparison (config key comparisons): the configuration's methods beside "
                                       "SimCSE and the papers' main methods, as the leaderboard computes its cells")
    cp.add_argument("--name", required=True, help="the comparison's name (config key comparisons.<name>)")
    cp.add_argument("--inputs", required=True, help='JSON {"spec": {...}, "rows": [...], "meta": {...}} '
                                                    '(Workflow.comparisons, comparison_points, comparison_meta)')
    cp.add_argument("--scale", required=True)
    cp.add_argument("--out", required=True, help=".tex path; the .csv and .md are written beside it")
    cp.set_defaults(func=cmd_report_compare)
    lp = rs.add_parser("leaderboard-progress", help="a board from whichever result files exist now (pending cells "
                                                    "say how many seeds are written), as Markdown on stdout")
    lp.add_argument("--board", default="leaderboard", help="leaderboard (the first backbone's) or "
                                                           "leaderboard-<backbone>")
    lp.add_argument("--scale", required=True)
    lp.add_argument("--config", default="config.yaml")
    lp.add_argument("--results", default="results")
    lp.set_defaults(func=cmd_report_leaderboard_progress)
    ce = rs.add_parser("census", help="augmentation census table (share changed, edit distance, length, cosine)")
    ce.add_argument("--inputs", required=True,
                    help='JSON {"rows": {name: {"stats": cache stats JSON, "embedding": augment-cosine JSON}}, '
                         '"meta": {...}}')
    ce.add_argument("--scale", required=True)
    ce.add_argument("--out", required=True, help=".tex path; the .csv is written beside it")
    ce.set_defaults(func=cmd_report_census)

    ac = sub.add_parser("augment-cosine", help="cosine original/augmented and token length change of one cache "
                                               "under a backbone (mean pooling)")
    ac.add_argument("--cache", required=True, help="augmentation cache (parquet)")
    ac.add_argument("--model", required=True, help="backbone folder (HF layout)")
    ac.add_argument("--out", required=True, help="JSON")
    ac.add_argument("--max-lines", type=int, default=2000, help="cosine sample size (0: every line)")
    ac.add_argument("--batch-size", type=int, default=128)
    ac.add_argument("--device", default=None)
    ac.set_defaults(func=cmd_augment_cosine)

    pj = sub.add_parser("project", help="2-D PCA / t-SNE of originals and their augmentations (AugCSE Figs. 2-4)")
    pj.add_argument("--model", required=True, help="model folder (HF layout)")
    pj.add_argument("--pooler", required=True)
    pj.add_argument("--caches", nargs="+", required=True, metavar="FILE.parquet", help="augmentation caches")
    pj.add_argument("--labels", nargs="+", help="one label per cache (default: the augmentation folder's name)")
    pj.add_argument("--method", choices=["pca", "tsne"], default="pca")
    pj.add_argument("--sample", type=int, default=200, help="changed rows per augmentation, and originals")
    pj.add_argument("--seed", type=int, default=0)
    pj.add_argument("--batch-size", type=int, default=128)
    pj.add_argument("--device", default=None)
    pj.add_argument("--scale", default=None, help="recorded in the output")
    pj.add_argument("--out", required=True, help="JSON: coordinates and a label per point")
    pj.set_defaults(func=cmd_project)

    te = sub.add_parser("tokenization-effects", help="CARDS Table 1: effect of switch-case on each word's "
                                                     "tokenization over a corpus")
    te.add_argument("--corpus", required=True)
    te.add_argument("--tokenizer", required=True, help="folder, hub id, or mirror:/package:/bundled: reference")
    te.add_argument("--out", required=True, help="JSON")
    te.add_argument("--context", choices=["isolated", "sentence"], default="isolated",
                    help="tokenize each word alone (default, as CARDS Table 1) or as in its sentence")
    te.set_defaults(func=cmd_tokenization_effects)

    tp = sub.add_parser("token-pca", help="CARDS Fig. 1: 2-D PCA of a backbone's token embeddings with each token's "
                                          "case / sub-token category and corpus frequency")
    tp.add_argument("--model", required=True, help="backbone folder (HF layout)")
    tp.add_argument("--corpus", help="corpus whose token frequencies colour Fig. 1b (and settle ambiguous tokens)")
    tp.add_argument("--out", required=True, help="JSON")
    tp.set_defaults(func=cmd_token_pca)

    co = sub.add_parser("conformance", help="agreement of the augmentations with the code the papers ran, on the "
                                            "stored reference cases (NL-Augmenter's test.json, SDA, CARDS)")
    co.add_argument("--out", required=True, help="JSON: per augmentation, its reference, cases, agreement, failures")
    co.add_argument("--only", nargs="*", help="these augmentations (registry names) only")
    co.add_argument("--spacy-model", default="en_core_web_sm")
    co.set_defaults(func=cmd_conformance)
    return p


def space_progress_in_logs() -> None:
    """Redraw progress bars every LOG_PROGRESS_INTERVAL_S seconds when stderr is not a terminal.

    A job's stderr is its log file, where tqdm's redraws (up to ten a second) pile up: 90 KB of them for one
    small-scale GLUE evaluation, one per step of a paper-scale training. tqdm takes its defaults from TQDM_*
    variables when it is first imported, which no handler has done yet (they import lazily), and child
    processes (torchrun's, worker pools) inherit them. A minimum interval the user set wins. The maximum
    follows the minimum: below it (tqdm's 10 s), tqdm's monitor thread redraws a bar that has not been drawn
    for that long with its old count, a frame that says nothing new."""
    if not sys.stderr.isatty():
        minimum = os.environ.setdefault("TQDM_MININTERVAL", str(LOG_PROGRESS_INTERVAL_S))
        os.environ.setdefault("TQDM_MAXINTERVAL", minimum)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    space_progress_in_logs()
    try:
        args.func(args)
    except (FileNotFoundError, ValueError, PluginError) as e:
        # Bad input (a plugin that fails to import too) is reported in one line that names the file, key or
        # module; tracebacks are for bugs.
        print(f"sentaug {args.command}: error: {e}", file=sys.stderr)
        return 2
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
