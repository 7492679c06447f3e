"""`sentaug` command line: one subcommand per pipeline stage; the Snakemake rules call these.

Heavy libraries (torch, spaCy, transformers) are imported inside the handlers so that `sentaug --help`
and the light stages start fast.
"""
from __future__ import annotations

import argparse
import errno
import json
import sys


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
    from .data.download import fetch

    fetch(a.name, a.out, origin=a.origin, mirror=a.mirror)


def cmd_backbone(a):
    from .models.backbones import build_backbone

    build_backbone(a.name, json.loads(a.spec), a.out, model_mirror=a.model_mirror)


def cmd_parse(a):
    from .augment.parse import parse_corpus

    parse_corpus(a.corpus, a.out, model=a.model, workers=a.workers)


def cmd_augment(a):
    from .augment import registry

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

    from .train.trainer import train

    spec = json.loads(Path(a.spec).read_text(encoding="utf-8") if a.spec.endswith(".json") else a.spec)
    train(spec, corpus=a.corpus, positives=a.positives, backbone=a.backbone,
          dev_data=a.dev_data, out=a.out, resume=a.resume, index=a.index)


def cmd_evaluate_sts(a):
    from .evaluate.sts import evaluate_sts_cli

    evaluate_sts_cli(model=a.model, pooler=a.pooler, data=a.data, out=a.out, batch_size=a.batch_size,
                     device=a.device, scale=a.scale)


def cmd_evaluate_transfer(a):
    from .evaluate.transfer import evaluate_transfer_cli

    evaluate_transfer_cli(model=a.model, pooler=a.pooler, data=a.data, out=a.out, mode=a.mode, tasks=a.tasks,
                          solver=a.solver, batch_size=a.batch_size, device=a.device, scale=a.scale)


def cmd_evaluate_clustering(a):
    from .evaluate.clustering import evaluate_clustering_cli

    evaluate_clustering_cli(model=a.model, pooler=a.pooler, data=a.data, out=a.out, datasets=a.tasks,
                            seeds=tuple(range(a.seeds)), n_init=a.n_init, batch_size=a.batch_size,
                            device=a.device, scale=a.scale)


def cmd_evaluate_intent(a):
    from .evaluate.intent import evaluate_intent_cli

    evaluate_intent_cli(model=a.model, pooler=a.pooler, data=a.data, out=a.out, datasets=a.tasks,
                        batch_size=a.batch_size, device=a.device, scale=a.scale)


def _task_list(tasks):
    """--tasks given as `CoLA RTE` or `CoLA,RTE`."""
    return [t for item in tasks for t in item.split(",") if t] if tasks else None


def cmd_evaluate_glue(a):
    from .evaluate.glue import evaluate_glue_cli

    evaluate_glue_cli(model=a.model, pooler=a.pooler, data=a.data, out=a.out, tasks=_task_list(a.tasks),
                      max_steps=a.max_steps, rdrop=a.rdrop, switch_case_p=a.switch_case, train_on_dev=a.train_on_dev,
                      seed=a.seed, learning_rate=a.lr, batch_size=a.train_batch_size, epochs=a.epochs,
                      max_seq_length=a.max_seq_length, eval_batch_size=a.batch_size, device=a.device,
                      scale=a.scale)


def cmd_evaluate_analysis(a):
    from .evaluate.analysis import evaluate_analysis_cli

    evaluate_analysis_cli(model=a.model, pooler=a.pooler, data=a.data, out=a.out, parts=_task_list(a.tasks),
                          augmentations=a.augmentations or (), ks=tuple(a.k), stackoverflow_limit=a.stackoverflow_limit,
                          iso_sample=a.iso_sample, gh_sample=a.gh_sample, lm=None if a.lm == "none" else a.lm,
                          seed=a.seed, batch_size=a.batch_size, device=a.device, scale=a.scale)


def _suite_args(parser, data_help: str) -> None:
    """The arguments every `evaluate SUITE` shares (same as `evaluate sts`), plus --tasks."""
    parser.add_argument("--model", required=True)
    parser.add_argument("--pooler", required=True,
                        choices=["cls", "cls_before_pooler", "avg", "avg_top2", "avg_first_last", "avg_emb_last"])
    parser.add_argument("--data", required=True, help=data_help)
    parser.add_argument("--out", required=True)
    parser.add_argument("--tasks", nargs="+", help="a subset of the suite's tasks / data sets (default: all)")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--device", default=None)
    parser.add_argument("--scale", default=None, help="recorded in the output")


def cmd_index(a):
    from .index.neighbours import build_index

    build_index(a.corpus, a.backbone, a.pooler, a.k, a.out, batch_size=a.batch_size, device=a.device,
                max_length=a.max_length or None)


def cmd_augment_cosine(a):
    from .report.census import embedding_stats

    embedding_stats(a.cache, a.model, a.out, max_lines=a.max_lines or None, batch_size=a.batch_size,
                    device=a.device)


def cmd_tokenization_effects(a):
    from .augment.cards import tokenization_effects_cli

    tokenization_effects_cli(a.corpus, a.tokenizer, a.out, context=a.context)


def cmd_report_census(a):
    from .report.census import render_census

    render_census(a.inputs, a.out, scale=a.scale)


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
    d.add_argument("name", help="source name, e.g. senteval, wiki1m, wiki1m_head, demo_corpus")
    d.add_argument("--origin", choices=["official", "demo"], default="official")
    d.add_argument("--mirror", help="local folder laid out like ../shared/data (default: $SENTAUG_MIRROR)")
    d.add_argument("--out", required=True)
    d.set_defaults(func=cmd_download)

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
    t.set_defaults(func=cmd_train)

    ev = sub.add_parser("evaluate", help="evaluation suites")
    evs = ev.add_subparsers(dest="suite", required=True)
    sts = evs.add_parser("sts", help="STS12-16 ('all' setting), STS-B and SICK-R, SimCSE's SentEval protocol")
    sts.add_argument("--model", required=True)
    sts.add_argument("--pooler", required=True,
                     choices=["cls", "cls_before_pooler", "avg", "avg_top2", "avg_first_last", "avg_emb_last"])
    sts.add_argument("--data", required=True, help="folder laid out like ../shared/data (sts/, sick/)")
    sts.add_argument("--out", required=True)
    sts.add_argument("--batch-size", type=int, default=128)
    sts.add_argument("--device", default=None)
    sts.add_argument("--scale", default=None, help="recorded in the output")
    sts.set_defaults(func=cmd_evaluate_sts)
    tr = evs.add_parser("transfer", help="SentEval transfer: MR CR SUBJ MPQA SST2 TREC MRPC (logistic regression)")
    _suite_args(tr, "folder laid out like ../shared/data (transfer/)")
    tr.add_argument("--mode", choices=["fast", "test"], default="fast", help="k = 5 (fast) or 10 (test) folds")
    tr.add_argument("--solver", choices=["senteval", "lbfgs"], default="senteval",
                    help="SentEval's early-stopped classifier (default) or the same objective solved by L-BFGS")
    tr.set_defaults(func=cmd_evaluate_transfer)
    cl = evs.add_parser("clustering", help="short-text clustering: K-means over seeds, Hungarian accuracy/NMI/ARI")
    _suite_args(cl, "folder laid out like ../shared/data (clustering/)")
    cl.add_argument("--seeds", type=int, default=10, help="K-means runs (seeds 0..N-1)")
    cl.add_argument("--n-init", type=int, default=1, help="k-means++ restarts per run")
    cl.set_defaults(func=cmd_evaluate_clustering)
    it = evs.add_parser("intent", help="few-shot intent classification (K = 5/10/20, 5 fixed splits)")
    _suite_args(it, "folder laid out like ../shared/data (intent/)")
    it.set_defaults(func=cmd_evaluate_intent)
    gl = evs.add_parser("glue", help="GLUE fine-tuning (CLEAR Table 1 / CARDS Table 6), optional R-drop + switch-case")
    _suite_args(gl, "folder laid out like ../shared/data (glue/<TASK>/train.tsv, dev.tsv)")
    gl.add_argument("--max-steps", type=int, default=None, help="optimiser steps per task (overrides --epochs)")
    gl.add_argument("--epochs", type=float, default=3.0)
    gl.add_argument("--lr", type=float, default=2e-5)
    gl.add_argument("--train-batch-size", type=int, default=32)
    gl.add_argument("--max-seq-length", type=int, default=128)
    gl.add_argument("--rdrop", type=float, default=0.0, metavar="ALPHA", help="weight of R-drop's symmetric KL")
    gl.add_argument("--switch-case", type=float, default=0.0, metavar="P",
                    help="switch-case probability on the second R-drop pass (CARDS Table 6)")
    gl.add_argument("--train-on-dev", action="store_true",
                    help="smoke test only: fine-tune on the dev split when a task has no train.tsv")
    gl.add_argument("--seed", type=int, default=42)
    gl.set_defaults(func=cmd_evaluate_glue)
    an = evs.add_parser("analysis", help="alignment/uniformity, StackOverflow neighbourhoods, augmentation "
                                         "cosine, COND-HM/SVG/GH, perplexity difference")
    _suite_args(an, "folder laid out like ../shared/data (sts/STSBenchmark, clustering/stackoverflow.csv)")
    an.add_argument("--augmentations", nargs="+", metavar="FILE.parquet",
                    help="augmentation caches (columns original, augmented, changed)")
    an.add_argument("--k", type=int, nargs="+", default=[1, 5, 10, 20, 50, 100], help="top-K for neighbourhoods")
    an.add_argument("--stackoverflow-limit", type=int, default=None, help="subsample StackOverflow (default: all)")
    an.add_argument("--iso-sample", type=int, default=5000, help="changed rows used per augmentation")
    an.add_argument("--gh-sample", type=int, default=500, help="rows per sample for the GH (bottleneck) distance")
    an.add_argument("--lm", default="gpt2", help="causal LM (HF id or folder) for perplexity; 'none' to skip")
    an.add_argument("--seed", type=int, default=0)
    an.set_defaults(func=cmd_evaluate_analysis)

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

    te = sub.add_parser("tokenization-effects", help="CARDS Table 1: effect of switch-case on each word's "
                                                     "tokenization over a corpus")
    te.add_argument("--corpus", required=True)
    te.add_argument("--tokenizer", required=True, help="folder, hub id, or mirror:/package:/bundled: reference")
    te.add_argument("--out", required=True, help="JSON")
    te.add_argument("--context", choices=["isolated", "sentence"], default="isolated",
                    help="tokenize each word alone (default, as CARDS Table 1) or as in its sentence")
    te.set_defaults(func=cmd_tokenization_effects)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except (FileNotFoundError, ValueError) as e:
        # Bad input is reported in one line that names the file or key; tracebacks are for bugs.
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
    sys.exit(main())
