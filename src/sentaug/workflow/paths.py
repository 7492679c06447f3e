"""Where the workflow keeps every output: data, caches, runs, evaluations and analyses (`Paths`), and
the folder names of tokenizations (`token_key`). Nothing here runs a job or reads a paper's tables."""
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from .. import config as sc

SHARED_RUNS = "shared"
LEADERBOARD = "leaderboard"    # the leaderboard's runs: no paper's recipe, at every scale

# Downstream suites (`sentaug evaluate SUITE`, one JSON per model) and the data folders each reads under a
# data root (the GLUE suite reads one folder per task of the scale: `glue/<TASK>`).
SUITES = ["transfer", "clustering", "intent", "glue", "analysis", "cnsd", "nli", "cola"]
SUITE_DATA = {"transfer": ["transfer"], "clustering": ["clustering"], "intent": ["intent"],
              "analysis": ["sts", "clustering", "nli/snli_senteval"], "cnsd": ["cnsd"], "cola": ["glue/CoLA"],
              "nli": ["nli/anli"]}   # + the folders of the scale's NLI triplet sets (Workflow.suite_data)
# Settings of `sentaug evaluate glue` a table row may give (`glue: {rdrop: 1.0, switch_case: 0.1}`, CARDS
# Table 6), as they appear in the result's path and on the command line.
GLUE_OPTIONS = {"rdrop": "--rdrop", "switch_case": "--switch-case"}
# Changed rows per augmentation in an augmentation analysis (VaSCL Fig. 3b averages 20,000 examples).
AUGMENTATION_ANALYSIS_SAMPLE = {"demo": 500, "small": 2000, "paper": 20000, "gpu": 2000}
# What a training job asks for unless `scales.<scale>.train_resources` says otherwise.
TRAIN_RESOURCES = {"gpu": 0, "threads": 2, "mem_mb": 4000, "runtime": 60}
# Threads of an evaluation or analysis job unless `scales.<scale>.eval_threads` says otherwise.
EVAL_THREADS = 2


def data_folders() -> list[str]:
    """The data folders that one `sentaug download <folder>` each installs: the sources of
    sentaug/data/sources.yaml named after their folder (transfer, glue/CoLA, nli/anli, cnsd, ...)."""
    from ..data.download import load_sources

    return [name for name, src in load_sources()["official"].items() if src["outputs"] == [name]]


class Paths:
    """The paths of every output at one scale, and the resolved training spec of every run."""

    def __init__(self, config: dict, results: str = "results", papers: dict | None = None):
        self.config = config
        self.R = results
        self.scale = config["scale"]
        self.S = sc.scale_settings(config)
        self.origin = self.S["data"]           # demo (bundled) or official (downloads / mirror)
        self.corpus = self.S["corpus"]
        self.seeds = self.S["seeds"]
        self.papers = papers if papers is not None else {n: sc.load_paper(config, n) for n in config["papers"]}
        self._specs: dict[tuple, dict] = {}   # train_spec per (paper, backbone, method, seed): asked per job

    def train_spec(self, paper: str | None, paper_backbone: str, method: str, seed: int) -> dict:
        """sentaug.config.train_spec at this scale, memoised (a DAG's input functions ask for the same run's spec
        many times, and resolving a method variant validates it against the schema). Returns a copy."""
        key = (paper, paper_backbone, method, int(seed))
        if key not in self._specs:
            self._specs[key] = sc.train_spec(self.config, self.papers.get(paper) if paper else None, paper_backbone,
                                             method, int(seed))
        return copy.deepcopy(self._specs[key])

    # -- data ---------------------------------------------------------------------------------------------
    def data_root(self, origin: str | None = None) -> str:
        return f"{self.R}/data/{origin or self.origin}"

    def corpus_file(self, corpus: str | None = None) -> str:
        from ..data.download import load_sources

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

    def data_folder(self, folder: str, origin: str | None = None) -> str:
        """A data folder (a source of sentaug/data/sources.yaml: transfer, glue/CoLA, nli/anli, cnsd, ...)."""
        return f"{self.data_root(origin)}/{folder}"

    def data_stats_file(self, what: str, origin: str | None = None) -> str:
        """`sentaug data-stats <what>` (sts, clustering) on the scale's data (SDA Table 2, VaSCL Table 4)."""
        return f"{self.R}/analysis/data_stats/{origin or self.origin}/{what}.json"

    def data_stats_inputs(self, what: str, origin: str | None = None) -> list[str]:
        from ..data.stats import STATS_DATA

        return [self.data_folder(folder, origin) for folder in STATS_DATA[what]]

    @property
    def glue_tasks(self) -> list[str]:
        """The GLUE tasks the scale fine-tunes on (`scales.<scale>.glue_tasks`; all eight when not given)."""
        from ..data.glue import TASKS

        return list(self.S.get("glue_tasks") or TASKS)

    def suite_data(self, suite: str, origin: str | None = None) -> list[str]:
        """The data folders a suite reads: the scale's own (bundled demo data at demo scale) unless `origin`."""
        folders = [f"glue/{t}" for t in self.glue_tasks] if suite == "glue" else list(SUITE_DATA[suite])
        if suite == "nli":      # the isomorphism part reads the scale's triplet sets (AugCSE Table 15)
            folders += [self.nli_set_folder(name) for name in self.S.get("nli_sets", {}).values()]
        return [self.data_folder(folder, origin) for folder in dict.fromkeys(folders)]

    def suite_args(self, suite: str) -> str:
        """Extra command-line flags of `sentaug evaluate SUITE` at this scale."""
        if suite == "transfer":
            return f"--mode {'test' if self.scale == 'paper' else 'fast'}"
        if suite == "glue":
            steps = {"demo": " --max-steps 20", "small": " --max-steps 100"}.get(self.scale, "")
            return f"--tasks {' '.join(self.glue_tasks)}{steps}"
        if suite == "nli":      # AugCSE Table 15: the scale's NLI triplet sets (nli: SNLI + MNLI, anli: ANLI)
            return " ".join(f"--set {k}={v}" for k, v in self.S.get("nli_sets", {}).items())
        if self.scale == "demo":   # seconds per model on the demo data; the numbers are not comparable anyway
            return {"analysis": "--stackoverflow-limit 4000", "intent": "--iterations 200"}.get(suite, "")
        return ""

    # -- NLI triplets (the nli training source; sentaug.data.triplets) --------------------------------------
    @staticmethod
    def nli_set_folder(name: str) -> str:
        from ..data.triplets import SETS

        return SETS[name][0]

    def triplets_file(self, name: str) -> str:
        """`<set>` or `<set>.as_<set>` (sampled down to the second set's size) -> its CSV."""
        return f"{self.R}/nli/{self.origin}/{name}.csv"

    def triplets_inputs(self, name: str) -> list[str]:
        """The data folders a triplet file is built from."""
        return sorted({f"{self.data_root()}/{self.nli_set_folder(n)}" for n in name.split(".as_")})

    def train_corpus(self, spec: dict) -> str:
        """What a run trains on: the NLI triplet file of the nli source, else the corpus."""
        if spec["positive"]["source"] == "nli":
            return self.triplets_file(spec["positive"]["triplets"])
        return self.corpus_file(spec["corpus"])

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
        valid = [*self.papers, LEADERBOARD] if self.S["paper_recipes"] else [SHARED_RUNS]
        if paper not in valid:
            raise ValueError(f"runs at scale '{self.scale}' live under "
                             f"{self.R}/runs/{self.scale}/{'|'.join(valid)}/, not under '{paper}'")
        return self.train_spec(paper, self.paper_backbone(backbone), method, seed)

    def spec_file(self, paper: str, backbone: str, method: str, seed: int) -> str:
        """The run's spec as a JSON file named by its digest, `<results>/specs/<digest>.json`, written the first
        time it is asked for. The train command reads it: one short argument on the console instead of a
        page of JSON per job, and a changed spec is a new file name, so Snakemake still retrains exactly the
        runs whose spec changed."""
        from ..io import atomic_path

        spec = self.run_spec(paper, backbone, method, seed)
        path = Path(self.R) / "specs" / f"{sc.spec_digest(spec)}.json"
        if not path.exists():
            with atomic_path(path) as tmp:
                tmp.write_text(json.dumps(spec, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return str(path)

    def train_resources(self) -> dict:
        """GPUs, threads, memory (MB) and run time (minutes) of a training job at this scale."""
        return {**TRAIN_RESOURCES, **(self.S.get("train_resources") or {})}

    def runs_per_gpu(self) -> int:
        """Training runs that share one GPU (`scales.<scale>.runs_per_gpu`, default 1): only with one GPU per run."""
        k = int(self.S.get("runs_per_gpu", 1))
        if k > 1 and self.train_resources()["gpu"] != 1:
            raise sc.ConfigError(f"scales.{self.scale}.runs_per_gpu is {k}: runs share a GPU only when each asks "
                                 f"for one (scales.{self.scale}.train_resources.gpu is "
                                 f"{self.train_resources()['gpu']})")
        return k

    def train_job_resources(self) -> dict:
        """A training job's resources but its runtime (`train_runtime`): its GPUs and memory, and with
        runs_per_gpu > 1 its share of a GPU. A group of runs_per_gpu such jobs goes to SLURM as one job
        (sentaug.snakemake_hooks.share_gpus), and a group adds its jobs' numeric resources up: they ask for
        the GPU as the string `gres` (all equal in a group, so taken once: one GPU for the group) instead of
        the number `gpu`. `gpu_runs`, one per job, is what a local run counts against runs_per_gpu x GPUs."""
        res = self.train_resources()
        out = {"mem_mb": res["mem_mb"]}
        if self.runs_per_gpu() > 1:
            return {**out, "gres": "gpu:1", "gpu_runs": 1}
        return {"gpu": res["gpu"], **out}

    def train_runtime(self, paper: str, backbone: str, method: str, seed: int) -> int:
        """Minutes a training job asks for: `scales.<scale>.train_resources.runtime` when given, else the run's
        projection on the scale's device (`scales.<scale>.step_times`) with a margin
        (sentaug.workflow.cost.train_runtime_minutes), else the default."""
        explicit = (self.S.get("train_resources") or {}).get("runtime")
        if explicit is not None or not self.S.get("step_times"):
            return self.train_resources()["runtime"]
        from .cost import project_run, train_runtime_minutes
        from .step_times import StepTimes

        if getattr(self, "_step_times", None) is None:
            self._step_times = StepTimes.load(self.S["step_times"])
        k = self.runs_per_gpu()
        projection = project_run(self, self.run_spec(paper, backbone, method, seed), self._step_times, self.config)
        return train_runtime_minutes(projection, k, self._step_times.sharing(k))

    def report_front_page_file(self) -> str:
        """The report's front page with the bill (rule report_front_page, from report_bill_data_file)."""
        return f"{self.R}/report/front.{self.scale}.rst"

    def report_bill_data_file(self) -> str:
        """What the front page shows, as data (`sentaug cost all --front-page`, run by `make report`)."""
        return f"{self.R}/report/bill.{self.scale}.json"

    def report_bill_page(self) -> str:
        """The bill's own report page: its full table (rule report_front_page)."""
        return f"{self.R}/report/bill.{self.scale}.html"

    def report_bill_pages(self) -> list[str]:
        """The bill's page as a target of `all`: once `sentaug cost all --front-page` wrote the data it is rendered
        from (that command resolves the DAG, so it cannot be a job of it)."""
        return [self.report_bill_page()] if Path(self.report_bill_data_file()).is_file() else []

    def report_front_page(self, static: str) -> str:
        """The text of the report's front page: the one with this scale's bill when written, else `static`."""
        return self.report_front_page_file() if Path(self.report_front_page_file()).is_file() else static

    def workers(self) -> int:
        """Worker processes of a parse, augmentation or index job: the scale's `workers`, else the top level's."""
        return self.S.get("workers", self.config.get("workers", 1))

    def eval_threads(self) -> int:
        """Threads of an evaluation or analysis job at this scale."""
        return self.S.get("eval_threads", EVAL_THREADS)

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

    def pretrained_suite_eval(self, backbone: str, suite: str, pooler: str, origin: str | None = None) -> str:
        return f"{self.R}/eval/pretrained/{origin or self.origin}/{backbone}/{suite}/{pooler}.json"

    def run_eval_lowercase(self, paper: str, backbone: str, method: str, seed: int) -> str:
        """A run's STS scores with every sentence lower-cased (`evaluate sts --lowercase`, CARDS Table 4)."""
        return f"{self.R}/eval/{self.scale}/{self.run_paper(paper)}/{backbone}/{method}/seed{seed}/sts_lowercase.json"

    # -- GLUE fine-tuning ---------------------------------------------------------------------------------
    def glue_unbuilt_reason(self) -> str | None:
        """Why a GLUE table has empty columns at this scale (None when it runs all eight tasks)."""
        from ..data.glue import TASKS

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

    def describe_file(self, paper: str, backbone: str, method: str, what: str = "spec") -> str:
        """`sentaug describe <what>` of a run (its first seed): spec.json or model_size.json."""
        return f"{self.R}/describe/{self.scale}/{self.run_paper(paper)}/{backbone}/{method}/{what}.json"

    def tokenization_effects_file(self, corpus: str | None = None) -> str:
        """CARDS Table 1 counts on `corpus` under the scale's RoBERTa stand-in tokenizer."""
        return f"{self.R}/analysis/tokenization_effects/{corpus or self.corpus}/{self.stand_in('roberta-base')}.json"

    def token_pca_file(self, backbone: str, corpus: str | None = None) -> str:
        """CARDS Figure 1's token-embedding PCA of `backbone` (an actual backbone), frequencies from `corpus`."""
        return f"{self.R}/analysis/token_pca/{corpus or self.corpus}/{backbone}.json"


    # -- analyses behind figures -----------------------------------------------------------------------------
    def augmentation_set(self, name: str) -> list[str]:
        return sc.augmentation_set(self.config, name, self.scale)

    def augmentation_analysis_sample(self) -> int:
        return AUGMENTATION_ANALYSIS_SAMPLE[self.scale]

    def augmentation_analysis_caches(self, set_name: str) -> list[str]:
        """The caches an augmentation analysis reads: the set's augmentations, the first seed's cache, so that
        every model is measured on the same pairs."""
        return [self.cache_file(a, self.seeds[0]) for a in self.augmentation_set(set_name)]

    def pretrained_augmentation_analysis(self, set_name: str, backbone: str, pooler: str) -> str:
        """`sentaug evaluate analysis --tasks augmentations` over a set, for a pre-trained backbone."""
        return f"{self.R}/analysis/augmentations/{self.corpus}/{set_name}/pretrained/{backbone}/{pooler}.json"

    def run_augmentation_analysis(self, set_name: str, paper: str, backbone: str, method: str, seed: int) -> str:
        """... for a trained run, under its eval pooler."""
        return (f"{self.R}/analysis/augmentations/{self.corpus}/{set_name}/{self.scale}/{self.run_paper(paper)}/"
                f"{backbone}/{method}/seed{seed}.json")

    def projection_augmentations(self, name: str) -> list[str]:
        """A projection's augmentations: an augmentation set, or one augmentation by name."""
        if name in (self.config.get("augmentation_sets") or {}):
            return self.augmentation_set(name)
        if name in self.config["augmentations"]:
            return [name]
        raise sc.ConfigError(f"'{name}' is neither an augmentation set nor an augmentation")

    def _projection_root(self, augmentations: str, method: str, sample: int) -> str:
        return f"{self.R}/analysis/projections/{self.corpus}/{augmentations}/{method}-{sample}"

    def pretrained_projection(self, augmentations: str, method: str, sample: int, backbone: str,
                              pooler: str) -> str:
        """`sentaug project` output (originals and `augmentations`, first seed's caches) for a backbone."""
        return f"{self._projection_root(augmentations, method, sample)}/pretrained/{backbone}/{pooler}.json"

    def run_projection(self, augmentations: str, method: str, sample: int, paper: str, backbone: str,
                       run_method: str, seed: int) -> str:
        """... for a trained run, under its eval pooler."""
        return (f"{self._projection_root(augmentations, method, sample)}/{self.scale}/{self.run_paper(paper)}/"
                f"{backbone}/{run_method}/seed{seed}.json")



def token_key(max_length: int, add_tokens=()) -> str:
    """The folder naming a tokenization under <results>/tokens/<corpus>/<backbone>/: `len32`, or
    `len32-added-del` with CLEAR's [DEL] added. Here, not in sentaug.models.tokens: the Snakefile names
    folders with it and must not import torch to do so (a second of every Snakemake start)."""
    key = f"len{max_length}"
    if add_tokens:
        key += "-added-" + "-".join(_slug(t) for t in add_tokens)
    return key


def parse_token_key(key: str, known_tokens) -> tuple[int, list[str]]:
    """(max_length, added tokens) of a `token_key`, the tokens looked up among `known_tokens`."""
    m = re.fullmatch(r"len(\d+)(?:-added-(.+))?", key)
    if not m:
        raise ValueError(f"token key '{key}' is not len<N> or len<N>-added-<tokens>")
    by_slug = {_slug(t): t for t in known_tokens}
    slugs = m.group(2).split("-") if m.group(2) else []
    for slug in slugs:
        if slug not in by_slug:
            raise ValueError(f"token key '{key}': no declared add_tokens entry reads '{slug}'")
    return int(m.group(1)), [by_slug[slug] for slug in slugs]


def _slug(token: str) -> str:
    slug = re.sub(r"[^0-9a-z]+", "", token.lower())
    if not slug:
        raise ValueError(f"added token {token!r} has no letters or digits to name its token files by")
    return slug
