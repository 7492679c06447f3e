"""Where the workflow keeps every output: data, caches, runs, evaluations and analyses (`PATTERNS`, `Paths`), and
the folder names of tokenizations (`token_key`). Nothing here runs a job or reads a paper's tables."""
from __future__ import annotations

import copy
import glob
import json
import re
from pathlib import Path

from .. import config as sc
from ..parts import NLI_TRIPLETS, compose

SHARED_RUNS = "shared"
LEADERBOARD = "leaderboard"    # the leaderboard's runs: no paper's recipe, at every scale

# Every output's path under the results folder {R}, written once. `Paths.path` fills the fields in (the inputs a
# job reads, the files a table reads); `Paths.pattern` leaves the fields it is not given as Snakemake wildcards, for
# a rule's `output:` (rules/*.smk). {scale} is the workflow's scale unless given.
PATTERNS = {
    # data (sentaug/data/sources.yaml: a folder per source) and what is derived from it
    "data_folder": "{R}/data/{origin}/{folder}",
    "corpus": "{R}/data/{origin}/wiki/{corpus}.txt",
    "data_stats": "{R}/analysis/data_stats/{origin}/{what}.json",
    "triplets": "{R}/nli/{origin}/{name}.csv",
    "triplets_stats": "{R}/nli/{origin}/{name}.json",
    # backbones, parses, augmentation caches, token files, retrieval indexes
    "backbone": "{R}/backbones/{backbone}",
    "parse": "{R}/parse/{corpus}.spacy",
    "cache": "{R}/augment/{corpus}/{augmentation}/seed{seed}.parquet",
    "cache_stats": "{R}/augment/{corpus}/{augmentation}/seed{seed}.json",
    "corpus_tokens": "{R}/tokens/{corpus}/{backbone}/{key}/corpus.npz",
    "cache_tokens": "{R}/tokens/{corpus}/{backbone}/{key}/{augmentation}/seed{seed}.npz",
    "index": "{R}/index/{corpus}/{backbone}/{pooler}/k{k}.npz",
    "index_meta": "{R}/index/{corpus}/{backbone}/{pooler}/k{k}.json",
    # runs: {paper} is a paper at paper scale, `shared` below it (Paths.run_paper)
    "spec": "{R}/specs/{digest}.json",
    "run": "{R}/runs/{scale}/{paper}/{backbone}/{method}/seed{seed}",
    "describe": "{R}/describe/{scale}/{paper}/{backbone}/{method}/{what}.json",
    # evaluations (sentaug.workflow.evaluations names them: `sts`, `sts.avg`, `transfer`, ...; `avg`,
    # `transfer/avg`, `glue~rdrop=1.0/avg` for a pre-trained backbone)
    "run_eval": "{R}/eval/{scale}/{paper}/{backbone}/{method}/seed{seed}/{evaluation}.json",
    "pretrained_eval": "{R}/eval/pretrained/{origin}/{backbone}/{evaluation}.json",
    # analyses behind tables and figures
    "tokenization_effects": "{R}/analysis/tokenization_effects/{corpus}/{backbone}.json",
    "token_pca": "{R}/analysis/token_pca/{corpus}/{backbone}.json",
    "pretrained_augmentation_analysis":
        "{R}/analysis/augmentations/{corpus}/{set}/pretrained/{backbone}/{pooler}.json",
    "run_augmentation_analysis":
        "{R}/analysis/augmentations/{corpus}/{set}/{scale}/{paper}/{backbone}/{method}/seed{seed}.json",
    "pretrained_projection":
        "{R}/analysis/projections/{corpus}/{augs}/{projection}-{sample}/pretrained/{backbone}/{pooler}.json",
    "run_projection":
        "{R}/analysis/projections/{corpus}/{augs}/{projection}-{sample}/{scale}/{paper}/{backbone}/{method}/"
        "seed{seed}.json",
    "census_embedding": "{R}/census/{corpus}/{augmentation}/seed{seed}.{backbone}.json",
    "conformance": "{R}/conformance/{spacy_model}.json",
    # tables, figures, leaderboards, comparisons and the report's pages
    "table": "{R}/tables/{paper}/{table}.{ext}",
    "figure": "{R}/figures/{paper}/{figure}.{ext}",
    "census": "{R}/tables/augmentations.{ext}",
    "board_table": "{R}/tables/{board}.{ext}",
    "board_figure": "{R}/figures/{board}.{ext}",
    "comparison": "{R}/tables/compare/{name}.{ext}",
    "table_page": "{R}/report/tables/{paper}/{table}.html",
    "figure_page": "{R}/report/figures/{paper}/{figure}.html",
    "census_page": "{R}/report/census.html",
    "board_page": "{R}/report/{board}.html",
    "front_page": "{R}/report/front.{scale}.rst",
    "bill_data": "{R}/report/bill.{scale}.json",
    "bill_page": "{R}/report/bill.{scale}.html",
}


class _Wildcards(dict):
    """Fields not given stay `{name}`: a Snakemake wildcard."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def data_folders() -> list[str]:
    """The data folders that one `sentaug download <folder>` each installs: the sources of
    sentaug/data/sources.yaml named after their folder (transfer, glue/CoLA, nli/anli, cnsd, ...)."""
    from ..data.download import load_sources

    return [name for name, src in load_sources()["official"].items() if src["outputs"] == [name]]


def trains_on_triplets(spec: dict) -> bool:
    """Whether a run's positive source gives NLI triplets (its `corpus` names a triplet file) or corpus lines."""
    return compose(spec).positive.examples == NLI_TRIPLETS


class Paths:
    """The paths of every output at one scale, and the resolved training spec of every run."""

    def __init__(self, config: dict, results: str = "results", papers: dict | None = None):
        self.config = config
        self.R = results
        self.scale = config["scale"]
        self.S = sc.scale_settings(config)
        # demo (bundled) or official (downloads / mirror); a scale with `slices:` reads official-<scale>, the
        # slices rule slice_data cuts from the official folders (sentaug.data.slices)
        self.slices = dict(self.S.get("slices") or {})
        self.origin = self.S["data"] + (f"-{self.scale}" if self.slices else "")
        self.corpus = self.S["corpus"]
        self.seeds = self.S["seeds"]
        self.compares_with_papers = self.S["compares_with_papers"]     # its numbers stand beside the papers'
        self.papers = papers if papers is not None else {n: sc.load_paper(config, n) for n in config["papers"]}
        self._specs: dict[tuple, dict] = {}   # train_spec per (paper, backbone, method, seed): asked per job

    def path(self, kind: str, /, **fields) -> str:
        """The path PATTERNS[kind] with every field given (a missing one is an error naming it)."""
        try:
            return PATTERNS[kind].format_map({"R": self.R, "scale": self.scale, **fields})
        except KeyError as e:
            raise ValueError(f"path '{kind}' ({PATTERNS.get(kind, 'no such pattern')}) needs the field {e}") from None

    def pattern(self, kind: str, /, **fields) -> str:
        """PATTERNS[kind] with the results folder, the scale and `fields` filled in, the other fields left as
        wildcards: a rule's output (`output: W.pattern("run")`)."""
        return PATTERNS[kind].format_map(_Wildcards({"R": self.R, "scale": self.scale, **fields}))

    def found(self, kind: str, /, **fields) -> list[dict[str, str]]:
        """The fields of every existing path of PATTERNS[kind] with `fields` given, the others (the scale too)
        taking any value: found("run", method="simcse") lists SimCSE's run folders at every scale."""
        given = {"R": self.R, **{k: str(v) for k, v in fields.items()}}
        parts = re.split(r"{(\w+)}", PATTERNS[kind])      # text, field, text, field, ..., text
        pattern = "".join(glob.escape(p) if i % 2 == 0 else glob.escape(given[p]) if p in given else "*"
                          for i, p in enumerate(parts))
        regex = re.compile("".join(re.escape(p) if i % 2 == 0 else re.escape(given[p]) if p in given
                                   else f"(?P<{p}>[^/]+)" for i, p in enumerate(parts)))
        return [m.groupdict() for m in map(regex.fullmatch, sorted(glob.glob(pattern))) if m]

    def matched(self, kind: str, path: str, last: str | None = None) -> dict[str, str] | None:
        """The fields of `path` as a path of PATTERNS[kind] (None if it is not one); field `last` may hold slashes."""
        parts = re.split(r"{(\w+)}", PATTERNS[kind])
        regex = "".join(re.escape(self.R) if p == "R" and i % 2 else re.escape(p) if i % 2 == 0 else
                        f"(?P<{p}>.+)" if p == last else f"(?P<{p}>[^/]+)" for i, p in enumerate(parts))
        m = re.fullmatch(regex, path)
        return m.groupdict() if m else None

    def folder(self, kind: str, /, **fields) -> str:
        """The folder holding every path of PATTERNS[kind] with `fields` given: the pattern up to the path component
        of its first other field (folder("backbone") is <results>/backbones)."""
        pattern = self.pattern(kind, **fields)
        return pattern[:pattern.rindex("/", 0, pattern.index("{"))] if "{" in pattern else pattern

    def train_spec(self, paper: str | None, paper_backbone: str, method: str, seed: int) -> dict:
        """sentaug.config.train_spec at this scale, memoised (a DAG's input functions ask for the same run's spec
        many times, and resolving a method variant validates it against the schema). Returns a copy."""
        key = (paper, paper_backbone, method, int(seed))
        if key not in self._specs:
            self._specs[key] = sc.train_spec(self.config, self.recipe_owner(paper), paper_backbone, method, int(seed))
        return copy.deepcopy(self._specs[key])

    def recipe_owner(self, paper: str | None) -> dict | None:
        """What a run's recipes come from: a paper's file, a quoted paper's recipe (config `quoted_recipes`, a row's
        `recipe: <name>`), or nothing (the leaderboard: the backbones' own settings)."""
        if not paper:
            return None
        return self.papers.get(paper) or (self.config.get("quoted_recipes") or {}).get(paper)

    # -- data ---------------------------------------------------------------------------------------------
    def data_root(self, origin: str | None = None) -> str:
        """The folder holding the data folders of `origin` (the scale's: demo or official)."""
        return self.folder("data_folder", origin=origin or self.origin)

    def corpus_file(self, corpus: str | None = None) -> str:
        from ..data.download import load_sources

        corpus = corpus or self.corpus
        origin = "demo" if corpus in load_sources()["demo"] else "official"
        return self.path("corpus", origin=origin, corpus=corpus)

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
        return self.data_folder("cnsd" if spec.get("language") == "zh" else "sts")

    def data_folder(self, folder: str, origin: str | None = None) -> str:
        """A data folder (a source of sentaug/data/sources.yaml: transfer, glue/CoLA, nli/anli, cnsd, ...)."""
        return self.path("data_folder", origin=origin or self.origin, folder=folder)

    def data_slice(self, folder: str):
        """How much of data folder `folder` the scale keeps (`scales.<scale>.slices`); None: all of it."""
        return self.slices.get(folder)

    def slice_notes(self, folders) -> list[str]:
        """What the scale's slices of `folders` keep, one phrase each (captions); [] at a scale without slices."""
        from ..data.slices import describe

        by_slice: dict[str, list[str]] = {}       # folders cut alike are named together
        for f in dict.fromkeys(folders):
            if f in self.slices:
                by_slice.setdefault(describe(f, self.slices[f]).split(": ", 1)[1], []).append(f)
        return [f"{', '.join(names)}: {text}" for text, names in by_slice.items()]

    def data_stats_file(self, what: str, origin: str | None = None) -> str:
        """`sentaug data-stats <what>` (sts, clustering) on the scale's data (SDA Table 2, VaSCL Table 4)."""
        return self.path("data_stats", origin=origin or self.origin, what=what)

    def data_stats_inputs(self, what: str, origin: str | None = None) -> list[str]:
        from ..data.stats import STATS_DATA

        return [self.data_folder(folder, origin) for folder in STATS_DATA[what]]

    # -- NLI triplets (the nli training source; sentaug.data.triplets) --------------------------------------
    @staticmethod
    def nli_set_folder(name: str) -> str:
        from ..data.triplets import SETS

        return SETS[name][0]

    def triplets_file(self, name: str) -> str:
        """`<set>` or `<set>.as_<set>` (sampled down to the second set's size) -> its CSV."""
        return self.path("triplets", origin=self.origin, name=name)

    def triplets_stats_file(self, name: str) -> str:
        """The statistics of a triplet file (its triplets' count `n`)."""
        return self.path("triplets_stats", origin=self.origin, name=name)

    def triplets_inputs(self, name: str) -> list[str]:
        """The data folders a triplet file is built from."""
        return sorted({self.data_folder(self.nli_set_folder(n)) for n in name.split(".as_")})

    def train_corpus(self, spec: dict) -> str:
        """What a run trains on: the NLI triplet file its positive source resolved (`spec["corpus"]`), else the
        corpus."""
        if trains_on_triplets(spec):
            return self.triplets_file(spec["corpus"])
        return self.corpus_file(spec["corpus"])

    # -- models and caches --------------------------------------------------------------------------------
    def backbone_dir(self, name: str) -> str:
        return self.path("backbone", backbone=name)

    def stand_in(self, paper_backbone: str) -> str:
        return sc.stand_in(self.config, paper_backbone)

    def paper_backbone(self, actual: str) -> str:
        """The paper backbone a stand-in replaces at this scale (recipes are keyed by paper backbones)."""
        for paper_name, stand_in in self.S["backbones"].items():
            if stand_in == actual:
                return paper_name
        return actual

    def parse_file(self, corpus: str) -> str:
        """The corpus parsed with spaCy, read by every parse-based augmentation."""
        return self.path("parse", corpus=corpus)

    def cache_file(self, augmentation: str, seed: int, corpus: str | None = None) -> str:
        return self.path("cache", corpus=corpus or self.corpus, augmentation=augmentation, seed=seed)

    def cache_stats(self, augmentation: str, seed: int, corpus: str | None = None) -> str:
        return self.path("cache_stats", corpus=corpus or self.corpus, augmentation=augmentation, seed=seed)

    def run_tokens(self, spec: dict, backbone: str) -> list[str]:
        """Token files of a run's fixed texts (its corpus, which holds the retrieval pool, and its caches) under
        `backbone`'s tokenizer, shared by every run with that tokenizer; none for NLI triplets (tokenized per
        batch)."""
        if trains_on_triplets(spec):
            return []
        fields = {"corpus": spec["corpus"], "backbone": backbone,
                  "key": token_key(spec["max_seq_length"], spec.get("add_tokens"))}
        return [self.path("corpus_tokens", **fields)] + [
            self.path("cache_tokens", **fields, augmentation=aug, seed=seed) for aug, seed in sc.method_caches(spec)]

    def index_file(self, spec: dict, backbone: str) -> str | None:
        """The retrieval index a run's parts read (CARDS' retrieved negatives; `sentaug.config.method_index`), None
        when they read none: built with the frozen backbone the run starts from, pooled as it evaluates."""
        index = sc.method_index(spec)
        if index is None:
            return None
        return self.path("index", corpus=spec["corpus"], backbone=backbone, pooler=spec["eval_pooler"], k=index["k"])

    # -- runs -----------------------------------------------------------------------------------------------
    def run_paper(self, paper: str) -> str:
        """The paper component of a run's path: the paper at paper scale (its recipes apply), else shared."""
        return paper if self.S["paper_recipes"] else SHARED_RUNS

    def run_spec(self, paper: str, backbone: str, method: str, seed: int) -> dict:
        """The resolved training spec of the run at results/runs/<scale>/<paper>/<backbone>/<method>/seed<S>
        (`paper` is a path component: a paper at paper scale, `shared` below it)."""
        valid = [*self.papers, LEADERBOARD, *(self.config.get("quoted_recipes") or {})] if self.S["paper_recipes"] \
            else [SHARED_RUNS]
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
        path = Path(self.path("spec", digest=sc.spec_digest(spec)))
        if not path.exists():
            with atomic_path(path) as tmp:
                tmp.write_text(json.dumps(spec, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return str(path)

    def run_dir(self, paper: str, backbone: str, method: str, seed: int) -> str:
        return self.path("run", paper=self.run_paper(paper), backbone=backbone, method=method, seed=seed)

    def report_front_page_file(self) -> str:
        """The report's front page with the bill (rule report_front_page, from report_bill_data_file)."""
        return self.path("front_page")

    def report_bill_data_file(self) -> str:
        """What the front page shows, as data (`sentaug cost all --front-page`, run by `make report`)."""
        return self.path("bill_data")

    def report_bill_page(self) -> str:
        """The bill's own report page: its full table (rule report_front_page)."""
        return self.path("bill_page")

    def report_bill_pages(self) -> list[str]:
        """The bill's page as a target of `all`: once `sentaug cost all --front-page` wrote the data it is rendered
        from (that command resolves the DAG, so it cannot be a job of it)."""
        return [self.report_bill_page()] if Path(self.report_bill_data_file()).is_file() else []

    def report_front_page(self, static: str) -> str:
        """The text of the report's front page: the one with this scale's bill when written, else `static`."""
        return self.report_front_page_file() if Path(self.report_front_page_file()).is_file() else static

    # -- evaluations (named as sentaug.workflow.evaluations reads them) ---------------------------------------
    def run_eval(self, paper: str, backbone: str, method: str, seed: int, suite: str = "sts") -> str:
        """A trained run's evaluation JSON under its own eval pooler (sts, or a suite)."""
        return self.path("run_eval", paper=self.run_paper(paper), backbone=backbone, method=method, seed=seed,
                         evaluation=suite)

    def run_eval_pooler(self, paper: str, backbone: str, method: str, seed: int, pooler: str) -> str:
        """A run's STS scores under another pooler than its own eval pooler (e.g. CLEAR Table 2's -mean rows)."""
        return self.run_eval(paper, backbone, method, seed, f"sts.{pooler}")

    def run_eval_lowercase(self, paper: str, backbone: str, method: str, seed: int) -> str:
        """A run's STS scores with every sentence lower-cased (`evaluate sts --lowercase`, CARDS Table 4)."""
        return self.run_eval(paper, backbone, method, seed, "sts_lowercase")

    def pretrained_eval(self, backbone: str, pooler: str) -> str:
        """A pre-trained backbone's STS scores under `pooler`."""
        return self.path("pretrained_eval", origin=self.origin, backbone=backbone, evaluation=pooler)

    def pretrained_suite_eval(self, backbone: str, suite: str, pooler: str, origin: str | None = None) -> str:
        return self.path("pretrained_eval", origin=origin or self.origin, backbone=backbone,
                         evaluation=f"{suite}/{pooler}")

    def describe_file(self, paper: str, backbone: str, method: str, what: str = "spec") -> str:
        """`sentaug describe <what>` of a run (its first seed): spec.json or model_size.json."""
        return self.path("describe", paper=self.run_paper(paper), backbone=backbone, method=method, what=what)

    # -- analyses behind tables and figures ------------------------------------------------------------------
    def tokenization_effects_file(self, corpus: str | None = None) -> str:
        """CARDS Table 1 counts on `corpus` under the scale's RoBERTa stand-in tokenizer."""
        return self.path("tokenization_effects", corpus=corpus or self.corpus,
                         backbone=self.stand_in("roberta-base"))

    def token_pca_file(self, backbone: str, corpus: str | None = None) -> str:
        """CARDS Figure 1's token-embedding PCA of `backbone` (an actual backbone), frequencies from `corpus`."""
        return self.path("token_pca", corpus=corpus or self.corpus, backbone=backbone)

    def census_embedding_file(self, augmentation: str, seed: int, backbone: str) -> str:
        """The census's cosines between the scale's corpus lines and their augmentation under `backbone`."""
        return self.path("census_embedding", corpus=self.corpus, augmentation=augmentation, seed=seed,
                         backbone=backbone)

    def conformance_file(self) -> str:
        """Every augmentation's agreement with the code its paper ran (`sentaug conformance`)."""
        return self.path("conformance", spacy_model=self.config["spacy_model"])

    def augmentation_set(self, name: str) -> list[str]:
        return sc.augmentation_set(self.config, name, self.scale)

    def augmentation_analysis_sample(self) -> int:
        """Changed rows per augmentation in an augmentation analysis (`scales.<scale>.augmentation_analysis_sample`)."""
        return self.S["augmentation_analysis_sample"]

    def hub_offline(self) -> bool:
        """Whether the augmentation analyses run with HF_HUB_OFFLINE=1 (`scales.<scale>.hub_offline`, default
        true)."""
        return self.S.get("hub_offline", True)

    def augmentation_analysis_caches(self, set_name: str) -> list[str]:
        """The caches an augmentation analysis reads: the set's augmentations, the first seed's cache, so that
        every model is measured on the same pairs."""
        return [self.cache_file(a, self.seeds[0]) for a in self.augmentation_set(set_name)]

    def pretrained_augmentation_analysis(self, set_name: str, backbone: str, pooler: str) -> str:
        """`sentaug evaluate analysis --tasks augmentations` over a set, for a pre-trained backbone."""
        return self.path("pretrained_augmentation_analysis", corpus=self.corpus, set=set_name, backbone=backbone,
                         pooler=pooler)

    def run_augmentation_analysis(self, set_name: str, paper: str, backbone: str, method: str, seed: int) -> str:
        """... for a trained run, under its eval pooler."""
        return self.path("run_augmentation_analysis", corpus=self.corpus, set=set_name,
                         paper=self.run_paper(paper), backbone=backbone, method=method, seed=seed)

    def projection_augmentations(self, name: str) -> list[str]:
        """A projection's augmentations: an augmentation set, or one augmentation by name."""
        if name in (self.config.get("augmentation_sets") or {}):
            return self.augmentation_set(name)
        if name in self.config["augmentations"]:
            return [name]
        raise sc.ConfigError(f"'{name}' is neither an augmentation set nor an augmentation")

    def projection_caches(self, name: str) -> list[str]:
        """The caches a projection reads: the first seed's cache of each of its augmentations."""
        return [self.cache_file(a, self.seeds[0]) for a in self.projection_augmentations(name)]

    def pretrained_projection(self, augmentations: str, method: str, sample: int, backbone: str,
                              pooler: str) -> str:
        """`sentaug project` output (originals and `augmentations`, first seed's caches) for a backbone."""
        return self.path("pretrained_projection", corpus=self.corpus, augs=augmentations, projection=method,
                         sample=sample, backbone=backbone, pooler=pooler)

    def run_projection(self, augmentations: str, method: str, sample: int, paper: str, backbone: str,
                       run_method: str, seed: int) -> str:
        """... for a trained run, under its eval pooler."""
        return self.path("run_projection", corpus=self.corpus, augs=augmentations, projection=method,
                         sample=sample, paper=self.run_paper(paper), backbone=backbone, method=run_method, seed=seed)


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
