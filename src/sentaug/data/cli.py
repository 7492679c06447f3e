"""The data stage's commands: `sentaug download` (a pinned data set, from its official address or a mirror),
`sentaug data-stats` and `sentaug nli-triplets`, added to the command line by `sentaug.cli`.
"""
from __future__ import annotations

from ..cli_args import out_arg


def cmd_download(a):
    from .download import fetch, source_names

    for name in source_names(a.name, a.origin):  # a group (`glue`) fetches each of its sources
        print(fetch(name, a.out, origin=a.origin, mirror=a.mirror).said(name), flush=True)


def cmd_data_slice(a):
    from .slices import slice_cli

    slice_cli(a.folder, a.data, a.out, a.spec)


def cmd_data_stats(a):
    from .stats import data_stats_cli

    data_stats_cli(a.what, a.data, a.out)


def cmd_nli_triplets(a):
    from .triplets import triplets_cli

    triplets_cli(a.set, a.data, a.out, seed=a.seed, sample_as=a.sample_as)


def add_data_commands(sub) -> None:
    """`download`, `data-slice`, `data-stats` and `nli-triplets` under the command line's subparsers `sub`."""
    d = sub.add_parser("download", help="fetch a data set (official address or mirror), verify its sha256, write it "
                                        "atomically")
    d.add_argument("name", help="source name (src/sentaug/data/sources.yaml), e.g. senteval, wiki1m_head, transfer, "
                                "glue/CoLA, or a group: glue")
    d.add_argument("--origin", choices=["official", "demo"], default="official",
                   help="the official sources, or the bundled demo data (default: official)")
    d.add_argument("--mirror", help="local folder laid out like the data folder, used instead of the network "
                                    "(default: $SENTAUG_MIRROR)")
    out_arg(d, "the data folder to install into")
    d.set_defaults(func=cmd_download)

    sl = sub.add_parser("data-slice", help="cut an installed data folder to a small deterministic slice (the test "
                                           "scale's data; sentaug.data.slices)")
    sl.add_argument("folder", help="data folder, e.g. sts, transfer, glue/CoLA")
    sl.add_argument("--data", required=True, help="the data root it is installed in (official, pin-checked)")
    sl.add_argument("--spec", required=True, help='the slice as JSON: rows per file (12), {"rows": 12, "files": '
                                                  '{"<glob>": 100}} or {"per_class": 20, "classes": 4}')
    out_arg(sl, "the data root to write the sliced folder into")
    sl.set_defaults(func=cmd_data_slice)

    ds = sub.add_parser("data-stats", help="statistics of the evaluation data from the files (SDA Table 2: STS "
                                          "pairs per split; VaSCL Table 4: clustering sets), as JSON")
    ds.add_argument("what", choices=["sts", "clustering"])
    ds.add_argument("--data", required=True, help="data folder (sts/, sick/, cnsd/ or clustering/)")
    out_arg(ds, "JSON")
    ds.set_defaults(func=cmd_data_stats)

    nt = sub.add_parser("nli-triplets", help="NLI (premise, entailment, contradiction) triplets for the nli "
                                             "training source, in nli_for_simcse.csv's layout")
    nt.add_argument("--set", required=True, help="the triplet set: snli, anli_devtest, anli_train or nli_for_simcse")
    nt.add_argument("--data", required=True, help="data folder (nli/...)")
    nt.add_argument("--sample-as", help="sample the set down to the size of this one")
    nt.add_argument("--seed", type=int, default=0, help="the sampling's seed (default: 0)")
    out_arg(nt, "CSV (a stats JSON is written beside it)")
    nt.set_defaults(func=cmd_nli_triplets)
