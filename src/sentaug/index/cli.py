"""The index stage's command: `sentaug index`, CARDS's retrieval index, added to the command line by `sentaug.cli`.
"""
from __future__ import annotations

from ..cli_args import default_pooler, forward_args, model_arg, out_arg, pooler_arg


def cmd_index(a):
    from .neighbours import build_index

    build_index(a.corpus, a.model, default_pooler(a.model, a.pooler), a.k, a.out, batch_size=a.batch_size,
                device=a.device, max_length=a.max_length or None)


def add_index_commands(sub) -> None:
    """`index` under the command line's subparsers `sub`."""
    ix = sub.add_parser("index", help="CARDS retrieval index: exact top-k neighbours under the frozen backbone")
    ix.add_argument("--corpus", required=True, help="text file, one sentence per line")
    model_arg(ix, "the backbone that embeds the corpus, frozen (a folder in Hugging Face layout)", alias=True)
    pooler_arg(ix)
    ix.add_argument("--k", type=int, required=True, help="neighbours kept per sentence (self excluded)")
    out_arg(ix, ".npz path; the provenance .json is written beside it")
    ix.add_argument("--max-length", type=int, default=32, help="token limit when embedding (0: none; default 32)")
    forward_args(ix, device_help="cpu searches with faiss; cuda with torch matmul")
    ix.set_defaults(func=cmd_index)
