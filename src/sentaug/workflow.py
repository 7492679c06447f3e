"""Where the workflow keeps every output, and which result files each table row reads.

The Snakefile builds one `Workflow` from the validated config and its rules ask it for paths; nothing here
runs a job. Keeping this in the package (not in `rules/*.smk`) lets tests resolve a table's inputs without
Snakemake and keeps the rules free of logic.

Runs are keyed by (scale, paper, backbone, method, seed). Only paper scale applies the papers' own training
recipes, so below it a method's run does not depend on the paper and every paper's tables share one run:
its paper component is `shared` (SimCSE is trained once per backbone and seed, not once per paper).
"""
from __future__ import annotations

import json
from pathlib import Path

from . import config as sc

SHARED_RUNS = "shared"

# Downstream suites (`sentaug evaluate SUITE`, one JSON per model) and the data folders each reads under a
# data root.
SUITES = ["transfer", "clustering", "intent", "glue", "analysis"]
# What a training job asks for unless `scales.<scale>.train_resources` says otherwise.
TRAIN_RESOURCES = {"gpu": 0, "threads": 2, "mem_mb": 4000, "runtime": 60}
SUITE_DATA = {"transfer": ["transfer"], "clustering": ["clustering"], "intent": ["intent"], "glue": ["glue"],
              "analysis": ["sts", "clustering"]}


class Workflow:
    def __init__(self, config: dict, results: str = "results", papers: dict | None = None):
        self.config = config
        self.R = results
        self.scale = config["scale"]
        self.S = sc.scale_settings(config)
        self.origin = self.S["data"]           # demo (bundled) or official (downloads / mirror)
        self.corpus = self.S["corpus"]
        self.seeds = self.S["seeds"]
        self.papers = papers if papers is not None else {n: sc.load_paper(config, n) for n in config["papers"]}

    # -- data ---------------------------------------------------------------------------------------------
    def data_root(self, origin: str | None = None) -> str:
        return f"{self.R}/data/{origin or self.origin}"

    def corpus_file(self, corpus: str | None = None) -> str:
        from .data.download import load_sources

        corpus = corpus or self.corpus
        origin = "demo" if corpus in load_sources()["demo"] else "official"
        return f"{self.data_root(origin)}/wiki/{corpus}.txt"

    def suite_data(self, suite: str, origin: str = "official") -> list[str]:
        return [f"{self.data_root(origin)}/{folder}" for folder in SUITE_DATA[suite]]

    # -- models and caches --------------------------------------------------------------------------------
    def backbone_dir(self, name: str) -> str:
        return f"{self.R}/backbones/{name}"

    def stand_in(self, paper_backbone: str) -> str:
        return sc.stand_in(self.config, paper_backbone)

    def paper_backbone(self, actual: str) -> str:
        """The paper backbone a stand-in replaces at this scale (recipes are keyed by paper backbones)."""
        for paper_name, stand_in in self.S["backbones"].items():
            if stand_in == actual:
                return paper_name
        return actual

    def cache_file(self, augmentation: str, seed: int, corpus: str | None = None) -> str:
        return f"{self.R}/augment/{corpus or self.corpus}/{augmentation}/seed{seed}.parquet"

    def cache_stats(self, augmentation: str, seed: int, corpus: str | None = None) -> str:
        return self.cache_file(augmentation, seed, corpus).replace(".parquet", ".json")

    # -- runs -----------------------------------------------------------------------------------------------
    def run_paper(self, paper: str) -> str:
        """The paper component of a run's path: the paper at paper scale (its recipes apply), else shared."""
        return paper if self.S["paper_recipes"] else SHARED_RUNS

    def run_spec(self, paper: str, backbone: str, method: str, seed: int) -> dict:
        """The resolved training spec of the run at results/runs/<scale>/<paper>/<backbone>/<method>/seed<S>
        (`paper` is a path component: a paper at paper scale, `shared` below it)."""
        valid = self.papers if self.S["paper_recipes"] else [SHARED_RUNS]
        if paper not in valid:
            raise ValueError(f"runs at scale '{self.scale}' live under "
                             f"{self.R}/runs/{self.scale}/{'|'.join(valid)}/, not under '{paper}'")
        return sc.train_spec(self.config, self.papers.get(paper), self.paper_backbone(backbone), method, int(seed))

    def spec_file(self, paper: str, backbone: str, method: str, seed: int) -> str:
        """The run's spec as a JSON file named by its digest, `<results>/specs/<digest>.json`, written the first
        time it is asked for. The train command reads it: one short argument on the console instead of a
        page of JSON per job, and a changed spec is a new file name, so Snakemake still retrains exactly the
        runs whose spec changed."""
        from .io import atomic_path

        spec = self.run_spec(paper, backbone, method, seed)
        path = Path(self.R) / "specs" / f"{sc.spec_digest(spec)}.json"
        if not path.exists():
            with atomic_path(path) as tmp:
                tmp.write_text(json.dumps(spec, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return str(path)

    def train_resources(self) -> dict:
        """GPUs, threads, memory (MB) and run time (minutes) of a training job at this scale."""
        return {**TRAIN_RESOURCES, **(self.S.get("train_resources") or {})}

    def train_launcher(self) -> tuple[str, int]:
        """(command, threads per process) of a training job: `python -m sentaug.cli`, or with more than one
        GPU `torchrun` with one process per GPU (data parallel, `sentaug.train.distributed`), the job's
        threads shared among them."""
        res = self.train_resources()
        if res["gpu"] > 1:
            return (f"torchrun --standalone --nproc_per_node {res['gpu']} -m sentaug.cli",
                    max(1, res["threads"] // res["gpu"]))
        return "python -m sentaug.cli", res["threads"]

    def run_dir(self, paper: str, backbone: str, method: str, seed: int) -> str:
        return f"{self.R}/runs/{self.scale}/{self.run_paper(paper)}/{backbone}/{method}/seed{seed}"

    def run_eval(self, paper: str, backbone: str, method: str, seed: int, suite: str = "sts") -> str:
        """A trained run's evaluation JSON under its own eval pooler (sts, or a suite)."""
        return f"{self.R}/eval/{self.scale}/{self.run_paper(paper)}/{backbone}/{method}/seed{seed}/{suite}.json"

    def run_eval_pooler(self, paper: str, backbone: str, method: str, seed: int, pooler: str) -> str:
        """A run's STS scores under another pooler than its own eval pooler (e.g. CLEAR Table 2's -mean rows)."""
        return f"{self.R}/eval/{self.scale}/{self.run_paper(paper)}/{backbone}/{method}/seed{seed}/sts.{pooler}.json"

    def pretrained_eval(self, backbone: str, pooler: str) -> str:
        return f"{self.R}/eval/pretrained/{self.origin}/{backbone}/{pooler}.json"

    def pretrained_suite_eval(self, backbone: str, suite: str, pooler: str, origin: str = "official") -> str:
        return f"{self.R}/eval/pretrained/{origin}/{backbone}/{suite}/{pooler}.json"

    def tokenization_effects_file(self, corpus: str | None = None) -> str:
        """CARDS Table 1 counts on `corpus` under the scale's RoBERTa stand-in tokenizer."""
        return f"{self.R}/analysis/tokenization_effects/{corpus or self.corpus}/{self.stand_in('roberta-base')}.json"

    # -- tables ---------------------------------------------------------------------------------------------
    def row_runs(self, paper: str, row: dict) -> list[tuple[str, str, str, int]]:
        """(paper, backbone, method, seed) of every run behind a table row, one per seed of the scale."""
        bb = self.stand_in(row["backbone"])
        return [(paper, bb, row["method"], s) for s in self.seeds]

    def row_sts_eval(self, paper: str, row: dict, seed: int) -> str:
        """The STS file of a table row's run: its eval pooler's sts.json unless the row names another `pooler`."""
        bb = self.stand_in(row["backbone"])
        pooler = row.get("pooler")
        if pooler and pooler != sc.train_spec(self.config, self.papers[paper], row["backbone"], row["method"],
                                              seed)["eval_pooler"]:
            return self.run_eval_pooler(paper, bb, row["method"], seed, pooler)
        return self.run_eval(paper, bb, row["method"], seed)

    def table_inputs(self, paper: str, table: str) -> dict[str, list[str]]:
        """Result files of each row of a paper table, keyed by row index (the report reads them in order)."""
        from .report.kinds import table_kind

        spec = self.papers[paper]["tables"][table]
        kind = table_kind(spec["kind"])
        return {str(i): kind.inputs(self, paper, row) for i, row in enumerate(sc.iter_rows(spec))}

    def table_meta(self) -> dict:
        return {"stand_ins": self.S["backbones"], "corpus": self.corpus, "seeds": len(self.seeds)}

    # -- figures --------------------------------------------------------------------------------------------
    def figure_points(self, paper: str, figure: str) -> list[list[dict]]:
        from .report.figures import figure_points

        return figure_points(self, paper, figure)

    def figure_targets(self, paper: str, figure: str) -> list[str]:
        """What Snakemake must build before the figure (result files, or the run folders holding them)."""
        return sorted({t for panel in self.figure_points(paper, figure) for p in panel for t in p["targets"]})

    def all_figures(self) -> list[str]:
        return [f"{self.R}/figures/{p}/{f}.pdf" for p, paper in self.papers.items() for f in paper.get("figures", {})]

    def all_tables(self) -> list[str]:
        return [f"{self.R}/tables/{p}/{t}.tex" for p, paper in self.papers.items() for t in paper.get("tables", {})]


def export_job_environment(src: Path, python: str) -> None:
    """Make jobs import this checkout's `src` and run `python` from the interpreter running Snakemake (e.g.
    .venv/bin/snakemake without an activated venv). Snakemake passes its environment to every job (also to
    SLURM jobs: sbatch --export=ALL); with --software-deployment-method conda the rule's environment is put in
    front of this PATH."""
    import os

    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))
    os.environ["PATH"] = os.pathsep.join([str(Path(python).parent), os.environ.get("PATH", "")])


def code_files(src: Path, *modules: str) -> list[str]:
    """The package modules a rule runs, as inputs: editing one reruns the jobs that depend on it.

    A folder stands for every file in it (Python modules and their data files)."""
    files = []
    for m in modules:
        path = Path(src) / "sentaug" / m
        if path.is_dir():
            files += sorted(str(f) for f in path.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
        else:
            files.append(str(path))
    return files
