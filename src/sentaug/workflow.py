"""Where the workflow keeps every output, and which result files each table row reads.

The Snakefile builds one `Workflow` from the validated config and its rules ask it for paths; nothing here
runs a job. Keeping this in the package (not in `rules/*.smk`) lets tests resolve a table's inputs without
Snakemake and keeps the rules free of logic.

Runs are keyed by (scale, paper, backbone, method, seed). Only paper scale applies the papers' own training
recipes, so below it a method's run does not depend on the paper and every paper's tables share one run:
its paper component is `shared` (SimCSE is trained once per backbone and seed, not once per paper).
"""
from __future__ import annotations

from pathlib import Path

from . import config as sc

SHARED_RUNS = "shared"

# Downstream suites (`sentaug evaluate SUITE`, one JSON per model) and the data folders each reads under a
# data root.
SUITES = ["transfer", "clustering", "intent", "glue", "analysis", "cnsd"]
SUITE_DATA = {"transfer": ["transfer"], "clustering": ["clustering"], "intent": ["intent"], "glue": ["glue"],
              "analysis": ["sts", "clustering"], "cnsd": ["cnsd"]}
# Settings of `sentaug evaluate glue` a table row may give (`glue: {rdrop: 1.0, switch_case: 0.1}`, CARDS
# Table 6), as they appear in the result's path and on the command line.
GLUE_OPTIONS = {"rdrop": "--rdrop", "switch_case": "--switch-case"}


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

    def corpus_language(self, corpus: str) -> str:
        """zh for a corpus some scale names as its `corpus_zh` (SimCLUE), else en."""
        return "zh" if any(s.get("corpus_zh") == corpus for s in self.config["scales"].values()) else "en"

    def spacy_model(self, corpus: str) -> str:
        """The spaCy pipeline that parses `corpus` (config `spacy_model`, or `spacy_model_zh` for Chinese)."""
        if self.corpus_language(corpus) == "zh":
            return self.config.get("spacy_model_zh", "zh_core_web_sm")
        return self.config.get("spacy_model", "en_core_web_sm")

    def dev_data(self, spec: dict) -> str:
        """The data folder a run selects its checkpoint on: STS-B dev, or CNSD dev for a Chinese backbone."""
        return f"{self.data_root()}/{'cnsd' if spec.get('language') == 'zh' else 'sts'}"

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

    def run_eval_lowercase(self, paper: str, backbone: str, method: str, seed: int) -> str:
        """A run's STS scores with every sentence lower-cased (`evaluate sts --lowercase`, CARDS Table 4)."""
        return f"{self.R}/eval/{self.scale}/{self.run_paper(paper)}/{backbone}/{method}/seed{seed}/sts_lowercase.json"

    # -- GLUE fine-tuning ---------------------------------------------------------------------------------
    @property
    def glue_tasks(self) -> list[str]:
        """The GLUE tasks the scale fine-tunes on (`scales.<scale>.glue_tasks`; all eight when not given)."""
        from .data.glue import TASKS

        return list(self.S.get("glue_tasks") or TASKS)

    def suite_args(self, suite: str) -> str:
        """Extra command-line flags of `sentaug evaluate SUITE` at this scale."""
        if suite == "transfer":
            return f"--mode {'test' if self.scale == 'paper' else 'fast'}"
        if suite == "glue":
            steps = {"demo": " --max-steps 20", "small": " --max-steps 100"}.get(self.scale, "")
            return f"--tasks {' '.join(self.glue_tasks)}{steps}"
        if self.scale == "demo":   # a labelled subsample (purity is not comparable)
            return {"analysis": "--stackoverflow-limit 4000"}.get(suite, "")
        return ""

    def glue_unbuilt_reason(self) -> str | None:
        """Why a GLUE table has empty columns at this scale (None when it runs all eight tasks)."""
        from .data.glue import TASKS

        if set(TASKS) <= set(self.glue_tasks):
            return None
        return f"not in scales.{self.scale}.glue_tasks: their training sets are not available offline"

    @staticmethod
    def glue_options(options: dict | None) -> str:
        """The path component of a GLUE run with `options` ("rdrop=1.0~switch_case=0.1"), "" for none."""
        unknown = sorted(set(options or {}) - set(GLUE_OPTIONS))
        if unknown:
            raise ValueError(f"unknown GLUE setting '{unknown[0]}' (known: {', '.join(GLUE_OPTIONS)})")
        return "~".join(f"{k}={float(options[k])}" for k in GLUE_OPTIONS if k in (options or {}))

    @staticmethod
    def glue_option_args(options: str) -> str:
        """Command-line flags for a path component made by `glue_options`."""
        flags = []
        for item in filter(None, options.split("~")):
            key, _, value = item.partition("=")
            if key not in GLUE_OPTIONS:
                raise ValueError(f"unknown GLUE setting '{key}' in '{options}' (known: {', '.join(GLUE_OPTIONS)})")
            flags.append(f"{GLUE_OPTIONS[key]} {float(value)}")
        return " ".join(flags)

    def pretrained_glue_eval(self, backbone: str, pooler: str, options: dict | None = None, **origin) -> str:
        """GLUE fine-tuning of a pre-trained backbone, with R-drop / switch-case `options` when given."""
        return self.pretrained_suite_eval(backbone, "glue" + (f"~{self.glue_options(options)}" if options else ""),
                                          pooler, **origin)

    def tokenization_effects_file(self, corpus: str | None = None) -> str:
        """CARDS Table 1 counts on `corpus` under the scale's RoBERTa stand-in tokenizer."""
        return f"{self.R}/analysis/tokenization_effects/{corpus or self.corpus}/{self.stand_in('roberta-base')}.json"

    # -- tables ---------------------------------------------------------------------------------------------
    def row_runs(self, paper: str, row: dict) -> list[tuple[str, str, str, int]]:
        """(paper, backbone, method, seed) of every run behind a table row, one per seed of the scale."""
        bb = self.stand_in(row["backbone"])
        return [(paper, bb, row["method"], s) for s in self.seeds]

    def row_sts_eval(self, paper: str, row: dict, seed: int) -> str:
        """The STS file of a table row's run: its eval pooler's sts.json unless the row names another `pooler`,
        or `evaluation: lowercase` (sentences lower-cased, CARDS Table 4)."""
        bb = self.stand_in(row["backbone"])
        pooler = row.get("pooler")
        evaluation = row.get("evaluation")
        if evaluation is not None:
            if evaluation != "lowercase" or pooler:
                raise ValueError(f"table row '{row['label']}': evaluation '{evaluation}' is not 'lowercase' "
                                 f"or is combined with a pooler")
            return self.run_eval_lowercase(paper, bb, row["method"], seed)
        if pooler and pooler != sc.train_spec(self.config, self.papers[paper], row["backbone"], row["method"],
                                              seed)["eval_pooler"]:
            return self.run_eval_pooler(paper, bb, row["method"], seed, pooler)
        return self.run_eval(paper, bb, row["method"], seed)

    def table_inputs(self, paper: str, table: str) -> dict[str, list[str]]:
        """Result files of each row of a paper table, keyed by row index (the report reads them in order).
        A table that cannot be built at this scale (`missing_resources`) has none."""
        from .report.kinds import table_kind

        if self.missing_resources(paper, table):
            return {}
        spec = self.papers[paper]["tables"][table]
        kind = table_kind(spec["kind"])
        out = {}
        for i, row in enumerate(sc.iter_rows(spec)):
            files = kind.inputs(self, paper, row)
            if isinstance(files, dict):   # the columns read different files: "<row>/<column>"
                out.update({f"{i}/{spec['columns'][j]}": f for j, f in files.items()})
            else:
                out[str(i)] = files
        return out

    def table_meta(self, paper: str | None = None, table: str | None = None) -> dict:
        meta = {"stand_ins": self.S["backbones"], "corpus": self.corpus, "seeds": len(self.seeds)}
        if paper is not None and table is not None:
            missing = self.missing_resources(paper, table)
            if missing:
                meta["skipped"] = missing
            if self.papers[paper]["tables"][table]["kind"].startswith("glue") and self.glue_unbuilt_reason():
                meta["unbuilt_reason"] = self.glue_unbuilt_reason()
        return meta

    def missing_resources(self, paper: str, table: str) -> list[str]:
        """What a table declares it `requires` and this scale lacks offline, one message each (no quote marks:
        they travel through a shell command); [] when it can be built. At paper scale nothing is missing: every resource is fetched there (a failed fetch fails its
        job, naming the resource). Requirements (papers/<paper>.yaml, `requires:`):

            spacy_model: <config key>     a spaCy pipeline named by that config key must be installed
            corpus: <scale key>           the scale must name a corpus under that key (scales.<s>.corpus_zh)
            backbones: [<paper backbone>] the scale's stand-in must not need the Hugging Face hub
        """
        req = self.papers[paper]["tables"][table].get("requires") or {}
        if not req or self.S["paper_recipes"]:
            return []
        missing = []
        if "spacy_model" in req:
            from .augment.parse import spacy_model_installed

            name = self.config.get(req["spacy_model"])
            if not name:
                missing.append(f"no spaCy pipeline configured (config key {req['spacy_model']})")
            elif not spacy_model_installed(name):
                missing.append(f"spaCy pipeline {name} is not installed (config key {req['spacy_model']})")
        if "corpus" in req and not self.S.get(req["corpus"]):
            missing.append(f"no training corpus at this scale (config key scales.{self.scale}.{req['corpus']})")
        for bb in req.get("backbones", []):
            actual = self.stand_in(bb)
            if self.config["backbones"][actual]["source"] == "hub":
                missing.append(f"backbone {actual} needs the Hugging Face hub (no offline stand-in in "
                               f"scales.{self.scale}.backbones)")
        return missing

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
