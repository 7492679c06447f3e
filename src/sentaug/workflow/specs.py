"""The resolved training spec of every run at one scale (sentaug.config.train_spec, memoised), the recipes it comes
from, and the backbones that stand in for the papers' below paper scale. Nothing here names a path but the runs'
paper components: a paper at paper scale (its recipes apply), `shared` below it."""
from __future__ import annotations

import copy

from .. import config as sc
from ..parts import NLI_TRIPLETS, compose

SHARED_RUNS = "shared"
LEADERBOARD = "leaderboard"    # the leaderboard's runs: no paper's recipe, at every scale


def trains_on_triplets(spec: dict) -> bool:
    """Whether a run's positive source gives NLI triplets (its `corpus` names a triplet file) or corpus lines."""
    return compose(spec).positive.examples == NLI_TRIPLETS


class Specs:
    """The resolved training spec of every run at one scale (a part of `Workflow`)."""

    def __init__(self, config: dict, results: str = "results", papers: dict | None = None):
        self.config = config
        self.R = results
        self.scale = config["scale"]
        self.S = sc.scale_settings(config)
        self.papers = papers if papers is not None else {n: sc.load_paper(config, n) for n in config["papers"]}
        self._specs: dict[tuple, dict] = {}   # train_spec per (paper, backbone, method, seed): asked per job

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

    def run_components(self) -> list[str]:
        """The paper components of the runs' paths at this scale: every paper, the leaderboard and each quoted
        recipe at paper scale (their recipes apply), `shared` below it."""
        if not self.S["paper_recipes"]:
            return [SHARED_RUNS]
        return [*self.papers, LEADERBOARD, *(self.config.get("quoted_recipes") or {})]

    def run_spec(self, paper: str, backbone: str, method: str, seed: int) -> dict:
        """The resolved training spec of the run at results/runs/<scale>/<paper>/<backbone>/<method>/seed<S>
        (`paper` is a path component: a paper at paper scale, `shared` below it; `backbone` the actual one)."""
        valid = self.run_components()
        if paper not in valid:
            raise ValueError(f"runs at scale '{self.scale}' live under "
                             f"{self.R}/runs/{self.scale}/{'|'.join(valid)}/, not under '{paper}'")
        return self.train_spec(paper, self.paper_backbone(backbone), method, seed)

    def stand_in(self, paper_backbone: str) -> str:
        """The backbone that stands in for a paper's at this scale (`scales.<scale>.backbones`)."""
        return sc.stand_in(self.config, paper_backbone)

    def paper_backbone(self, actual: str) -> str:
        """The paper backbone a stand-in replaces at this scale (recipes are keyed by paper backbones)."""
        for paper_name, stand_in in self.S["backbones"].items():
            if stand_in == actual:
                return paper_name
        return actual
