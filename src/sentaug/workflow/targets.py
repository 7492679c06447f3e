"""Which result files each target reads: the rows of every paper table (`table_inputs`), the panels of
every figure, the leaderboards' cells and the report pages, as declared in papers/*.yaml. A `Workflow` holds its
scale's paths, specs, evaluations and resources as members and adds these: the Snakefile expands its targets from
them."""
from __future__ import annotations

from functools import cached_property

from .. import config as sc
from ..choices import UnknownName
from .evaluations import Evaluations
from .paths import Paths
from .resources import JobResources
from .specs import LEADERBOARD, Specs, trains_on_triplets


class Workflow:
    """One scale's workflow: where every output lives (`paths`, a sentaug.workflow.paths.Paths), every run's resolved
    spec (`specs`, sentaug.workflow.specs.Specs), what each evaluation reads (`evaluations`,
    sentaug.workflow.evaluations.Evaluations), what each job asks for (`resources`,
    sentaug.workflow.resources.JobResources), and the targets of the papers' tables and figures, the leaderboards
    and the report pages. Its attributes `config`, `R` (the results folder), `scale`, `S` (the scale's settings),
    `origin`, `corpus`, `seeds`, `slices` and `papers` are its members' own."""

    def __init__(self, config: dict, results: str = "results", papers: dict | None = None):
        self.paths = Paths(config, results)
        self.specs = Specs(config, results, papers)
        self.evaluations = Evaluations(self.paths)
        self.resources = JobResources(config, self.paths.S)
        self.config, self.R, self.scale, self.S = config, results, self.paths.scale, self.paths.S
        self.origin, self.corpus, self.seeds, self.slices = (self.paths.origin, self.paths.corpus, self.paths.seeds,
                                                             self.paths.slices)
        self.papers = self.specs.papers

    # -- the papers' declarations (a target's wildcards name them) ------------------------------------------
    def table_spec(self, paper: str, table: str) -> dict:
        """`paper`'s declaration of `table`; an unknown paper or table is answered with the valid names."""
        return self._declared(paper, "table", table)

    def figure_spec(self, paper: str, figure: str) -> dict:
        """`paper`'s declaration of `figure`; an unknown paper or figure is answered with the valid names."""
        return self._declared(paper, "figure", figure)

    def _declared(self, paper: str, kind: str, name: str) -> dict:
        if paper not in self.papers:
            raise UnknownName("paper", paper, self.papers)
        declared = self.papers[paper].get(f"{kind}s") or {}
        if name not in declared:
            raise UnknownName(kind, name, declared, f" of paper '{paper}'")
        return declared[name]

    # -- every run the targets read -------------------------------------------------------------------------
    def trained_runs(self) -> list[tuple[str, str, str]]:
        """(path component, backbone, method) of every run the declared tables, figures and leaderboards read at
        this scale (from their inputs' paths): docs/fidelity.md's runs at paper scale."""
        import re

        files = set()
        for p, paper in self.papers.items():
            files |= {f for t in paper.get("tables", {}) for f in self.table_files(p, t)}
            files |= {f for fig in paper.get("figures", {}) for f in self.figure_targets(p, fig)}
        files |= {f for backbone in self.leaderboards.values() for f in self.leaderboard_targets(backbone)}
        components = self.specs.run_components()
        found = re.compile(rf"/{re.escape(self.scale)}/({'|'.join(map(re.escape, components))})/([^/]+)/([^/]+)/"
                           rf"(?:seed\d+|spec\.json|model_size\.json)")
        return sorted({m.groups() for f in files for m in [found.search(f)] if m})

    # -- tables ---------------------------------------------------------------------------------------------
    def row_sts_eval(self, paper: str, row: dict, seed: int) -> str:
        """The STS file of a table row's run: its eval pooler's sts.json unless the row names another `pooler`,
        or `evaluation: lowercase` (sentences lower-cased, CARDS Table 4)."""
        bb = self.specs.stand_in(row["backbone"])
        pooler = row.get("pooler")
        evaluation = row.get("evaluation")
        if evaluation is not None:
            if evaluation != "lowercase" or pooler:
                raise ValueError(f"table row '{row['label']}': evaluation '{evaluation}' is not 'lowercase' "
                                 f"or is combined with a pooler")
            return self.paths.run_eval_lowercase(paper, bb, row["method"], seed)
        if pooler and pooler != self.specs.train_spec(paper, row["backbone"], row["method"], seed)["eval_pooler"]:
            return self.paths.run_eval_pooler(paper, bb, row["method"], seed, pooler)
        return self.paths.run_eval(paper, bb, row["method"], seed)

    def table_inputs(self, paper: str, table: str) -> dict[str, list[str]]:
        """Result files of each row of a paper table, keyed by row index (the report reads them in order).
        A table that cannot be built at this scale (`missing_resources`) has none."""
        from ..report.kinds import table_kind

        if self.missing_resources(paper, table):
            return {}
        spec = self.table_spec(paper, table)
        kind = table_kind(spec["kind"])
        out = {}
        for i, row in enumerate(sc.iter_rows(spec)):
            # a row quoted from another paper trains with that paper's recipe (`recipe: simcse`), under its name
            files = kind.inputs(self, row.get("recipe") or paper, {**row, "columns": spec["columns"]})
            if isinstance(files, dict):   # the columns read different files: "<row>/<column>"
                out.update({f"{i}/{spec['columns'][j]}": f for j, f in files.items()})
            else:
                out[str(i)] = files
        return out

    def table_files(self, paper: str, table: str) -> list[str]:
        """Every result file of a table, flat (a row's per-seed entry is a file or {name: file})."""
        files = []
        for entries in self.table_inputs(paper, table).values():
            for entry in entries:
                files += list(entry.values()) if isinstance(entry, dict) else [entry]
        return list(dict.fromkeys(files))

    def scale_meta(self, backbones=None) -> dict:
        """What a caption says of the scale. A caption names what its numbers were computed with, not everything
        of the scale: given the paper backbones an output reads, only their stand-ins."""
        stand_ins = self.S["backbones"]
        if backbones is not None:
            stand_ins = {b: s for b, s in stand_ins.items() if b in backbones}
        return {"stand_ins": stand_ins, "corpus": self.corpus, "seeds": len(self.seeds), "data": self.origin,
                "compares_with_papers": self.S["compares_with_papers"]}

    def table_meta(self, paper: str, table: str) -> dict:
        from ..report.kinds import table_kind

        spec = self.table_spec(paper, table)
        kind = table_kind(spec["kind"])
        # The stand-ins of the backbones the table reads, and the corpora its rows' runs train on (or none).
        meta = self.scale_meta(kind.backbones(spec))
        missing = self.missing_resources(paper, table)
        if missing:
            meta["skipped"] = missing
        meta["corpus"] = self.rows_corpus(paper, spec) if kind.uses_corpus and not missing else None
        if self.slices and not missing:     # what the scale's slices of the data it reads keep (the rest is left out)
            meta["slices"] = self.paths.slice_notes(self.folders_read(self.table_files(paper, table)))
        unbuilt_reason = self.evaluations.glue_unbuilt_reason() if spec["kind"].startswith("glue") else None
        if unbuilt_reason:
            meta["unbuilt_reason"] = unbuilt_reason
        added = sc.added_rows(self.config, f"{paper}/{table}")
        if added:       # the renderer reads the paper's file: it adds these rows as load_paper did here
            meta["added_rows"] = added
        quoted = self.quoted_rows(spec)
        if quoted:
            meta["quoted"] = quoted
        return meta

    def quoted_rows(self, spec: dict) -> list[dict]:
        """The rows of a table quoted from another paper and trained with its recipe (`recipe: <name>`), grouped by
        that paper: [{"source": "SimCSE (Gao et al., 2021)", "rows": [label, ...]}]."""
        quoted: dict[str, list[str]] = {}
        for row in sc.iter_rows(spec):
            if row.get("recipe"):
                source = self.config["quoted_recipes"][row["recipe"]]["source"]
                quoted.setdefault(source, []).append(row["label"])
        return [{"source": source, "rows": rows} for source, rows in quoted.items()]

    def folders_read(self, files) -> list[str]:
        """The data folders behind result files: each evaluation's suite's (sentaug.evaluate.suites), STS-B dev's
        (`sts`) for a trained run, which selects its checkpoint there, and a data statistic's or triplet set's."""
        from ..data.stats import STATS_DATA
        from .evaluations import load_suites, pretrained_evaluation, run_evaluation

        load_suites(self.config)            # the configuration's plugin suites: names of evaluations too
        readers = {"run_eval": run_evaluation, "pretrained_eval": pretrained_evaluation}
        folders = []
        for f in map(str, files):
            for kind, evaluation in readers.items():
                fields = self.paths.matched(kind, f, last="evaluation")
                if fields:
                    folders += self.evaluations.suite_folders(evaluation(fields["evaluation"]).suite)
                    folders += ["sts"] if kind == "run_eval" else []
            fields = self.paths.matched("run", f)
            if fields:      # a run's own record (its STS-B dev scores) and what it trained on
                folders.append("sts")
                spec = self.specs.run_spec(fields["paper"], fields["backbone"], fields["method"], int(fields["seed"]))
                if trains_on_triplets(spec):
                    folders += [self.paths.nli_set_folder(n) for n in spec["corpus"].split(".as_")]
            fields = self.paths.matched("data_stats", f)
            if fields:
                folders += STATS_DATA.get(fields["what"], [])
            fields = self.paths.matched("triplets", f)
            if fields:
                folders += [self.paths.nli_set_folder(n) for n in fields["name"].split(".as_")]
        return list(dict.fromkeys(folders))

    def rows_corpus(self, paper: str, spec: dict) -> str:
        """What a table's trained rows learn from: the scale's corpus, and the NLI triplet sets of the rows whose
        positives are NLI pairs (AugCSE Tables 2 and 14), e.g. `wiki1m_head; NLI triplets: snli, anli_devtest`."""
        corpora, triplets = [], []
        for row in sc.iter_rows(spec):
            if "method" in row and "backbone" in row:
                run = self.specs.train_spec(row.get("recipe") or paper, row["backbone"], row["method"], self.seeds[0])
                (triplets if trains_on_triplets(run) else corpora).append(run["corpus"])
        if not corpora and not triplets:       # no trained row: what the table's analysis reads
            corpora = [self.corpus]
        parts = [", ".join(dict.fromkeys(corpora))] if corpora else []
        if triplets:
            parts.append("NLI triplets: " + ", ".join(t.replace(".as_", " sampled to the size of ")
                                                      for t in dict.fromkeys(triplets)))
        return "; ".join(parts)

    def missing_resources(self, paper: str, table: str) -> list[str]:
        """What a table declares it `requires` and this scale lacks offline, one message each (no quote marks:
        they travel through a shell command); [] when it can be built. At paper scale nothing is missing: every
        resource is fetched there (a failed fetch fails its job, naming the resource). Requirements
        (papers/<paper>.yaml, `requires:`):

            spacy_model: <config key>     a spaCy pipeline named by that config key must be installed
            corpus: <scale key>           the scale must name a corpus under that key (scales.<s>.corpus_zh)
            backbones: [<paper backbone>] the scale's stand-in must not need the Hugging Face hub
        """
        req = self.table_spec(paper, table).get("requires") or {}
        if not req or self.S["paper_recipes"]:
            return []
        missing = []
        if "spacy_model" in req:
            from ..augment.parse import spacy_model_installed

            name = self.config.get(req["spacy_model"])
            if not name:
                missing.append(f"no spaCy pipeline configured (config key {req['spacy_model']})")
            elif not spacy_model_installed(name):
                missing.append(f"spaCy pipeline {name} is not installed (config key {req['spacy_model']})")
        if "corpus" in req and not self.S.get(req["corpus"]):
            missing.append(f"no training corpus at this scale (config key scales.{self.scale}.{req['corpus']})")
        for bb in req.get("backbones", []):
            actual = self.specs.stand_in(bb)
            if self.config["backbones"][actual]["source"] == "hub":
                missing.append(f"backbone {actual} needs the Hugging Face hub (no offline stand-in in "
                               f"scales.{self.scale}.backbones)")
        return missing


    # -- figures --------------------------------------------------------------------------------------------
    def figure_meta(self, paper: str, figure: str) -> dict:
        """The meta of a figure: the stand-ins of the backbones its panels name, not all of the scale's."""
        from ..report.figures import figure_backbones

        meta = self.scale_meta(figure_backbones(self.figure_spec(paper, figure)))
        if self.slices:     # what the scale's slices of the data its points read keep
            meta["slices"] = self.paths.slice_notes(self.folders_read(self.figure_targets(paper, figure)))
        return meta

    def figure_points(self, paper: str, figure: str) -> list[list[dict]]:
        from ..report.figures import figure_points

        self.figure_spec(paper, figure)       # an unknown one is answered before any panel is resolved
        return figure_points(self, paper, figure)

    def figure_targets(self, paper: str, figure: str) -> list[str]:
        """What Snakemake must build before the figure (result files, or the run folders holding them)."""
        return sorted({t for panel in self.figure_points(paper, figure) for p in panel
                       for t in p.get("targets", p["files"])})

    def figure_output(self, paper: str, figure: str) -> str:
        """A paper figure's .pdf (its .png and .csv beside it)."""
        return self.paths.path("figure", paper=paper, figure=figure, ext="pdf")

    def all_figures(self) -> list[str]:
        return [self.figure_output(p, f) for p, paper in self.papers.items() for f in paper.get("figures", {})]

    def table_output(self, paper: str, table: str) -> str:
        """A paper table's .tex (its .csv beside it)."""
        return self.paths.path("table", paper=paper, table=table, ext="tex")

    def all_tables(self) -> list[str]:
        return [self.table_output(p, t) for p, paper in self.papers.items() for t in paper.get("tables", {})]

    # -- leaderboard ----------------------------------------------------------------------------------------
    @cached_property
    def leaderboard(self) -> dict | None:
        """papers/leaderboard.yaml, checked (None when the papers folder has none)."""
        from ..report.leaderboard import load_leaderboard

        return load_leaderboard(self.config)

    @property
    def leaderboards(self) -> dict[str, str]:
        """Board name -> its backbone (`sentaug.report.leaderboard.boards`); empty without a leaderboard file."""
        from ..report.leaderboard import boards

        return boards(self.leaderboard) if self.leaderboard is not None else {}

    def leaderboard_points(self, backbone: str) -> list[dict]:
        """The board on `backbone` (`board_points`)."""
        return self.board_points(self.leaderboard, backbone)

    def board_points(self, spec: dict, backbone: str) -> list[dict]:
        """The rows of a board (`spec`: the leaderboard's, or a comparison's) on `backbone`. Per row: per column
        and seed the result file (and the target that makes it), and each run's train_summary.json (training
        time). Runs live under the leaderboard's paper component (shared below paper scale, so seeds the tables
        also train are trained once). Then the reference rows: the backbone untrained, one result file per column
        and no seeds or runs."""
        from ..report.leaderboard import board_seeds
        from ..report.sources import metric_file, pretrained_metric_file

        bb = self.specs.stand_in(backbone)
        seeds = board_seeds(spec, self.scale)
        rows = []
        for row in spec["rows"]:
            cells = {}
            for column in spec["columns"]:
                pairs = [metric_file(self, LEADERBOARD, bb, row["method"], s, column["metric"]) for s in seeds]
                cells[column["metric"]] = {"files": [f for f, _ in pairs], "targets": [t for _, t in pairs]}
            runs = [self.paths.run_dir(LEADERBOARD, bb, row["method"], s) for s in seeds]
            rows.append({"label": row["label"], "method": row["method"], "seeds": seeds, "cells": cells,
                         "train": [f"{r}/train_summary.json" for r in runs], "runs": runs,
                         **({"added": True} if row.get("added") else {})})
        for ref in spec.get("references", []):
            cells = {}
            for column in spec["columns"]:
                f, t = pretrained_metric_file(self, bb, ref["pooler"], column["metric"])
                cells[column["metric"]] = {"files": [f], "targets": [t]}
            rows.append({"label": ref["label"], "method": None, "pooler": ref["pooler"], "seeds": [],
                         "cells": cells, "train": [], "runs": []})
        return rows

    def leaderboard_meta(self, backbone: str) -> dict:
        """The meta of the board on `backbone`: its own stand-in and its own seeds, not the scale's."""
        meta = self.scale_meta([backbone])
        from ..report.leaderboard import board_seeds

        meta["seeds"] = len(board_seeds(self.leaderboard, self.scale))
        if self.slices:
            meta["slices"] = self.paths.slice_notes(self.folders_read(self.leaderboard_targets(backbone)))
        return meta

    def leaderboard_targets(self, backbone: str) -> list[str]:
        return self.board_targets(self.leaderboard_points(backbone))

    @staticmethod
    def board_targets(rows: list[dict]) -> list[str]:
        """What Snakemake must build before a board: its rows' result files and runs."""
        return sorted({t for r in rows for c in r["cells"].values() for t in c["targets"]} | {t for r in rows
                                                                                            for t in r["runs"]})

    # -- comparisons (config key `comparisons`: the user's methods beside SimCSE and the papers' main methods) --
    @cached_property
    def comparisons(self) -> dict[str, dict]:
        """Comparison name -> its board spec (`sentaug.report.compare.comparison_spec`)."""
        from ..report.compare import comparison_spec

        return {name: comparison_spec(self.config, self.leaderboard, name) for name in self.config.get("comparisons")
                or {}}

    def comparison_points(self, name: str) -> list[dict]:
        spec = self.comparisons[name]
        return self.board_points(spec, spec["backbones"][0])

    def comparison_meta(self, name: str) -> dict:
        """As a board's meta: its backbone's stand-in and its own seeds."""
        spec = self.comparisons[name]
        from ..report.leaderboard import board_seeds

        return {**self.scale_meta(spec["backbones"]), "seeds": len(board_seeds(spec, self.scale))}

    def comparison_outputs(self) -> list[str]:
        return [self.paths.path("comparison", name=name, ext=ext) for name in self.comparisons
                for ext in ("tex", "csv", "md")]

    # -- report pages (the entries of `snakemake --report`) ---------------------------------------------------
    def report_pages(self, census: bool = False) -> dict[str, str]:
        """Every report page, keyed by the output it shows: each paper table and figure, the leaderboard, and with
        `census` the augmentation census (every declared augmentation: not part of `rule all`)."""
        pages = {}
        for p, paper in self.papers.items():
            for t in paper.get("tables", {}):
                pages[self.table_output(p, t)] = self.paths.path("table_page", paper=p, table=t)
            for f in paper.get("figures", {}):
                pages[self.figure_output(p, f)] = self.paths.path("figure_page", paper=p, figure=f)
        if census:
            pages[self.paths.path("census", ext="tex")] = self.paths.path("census_page")
        for board in self.leaderboards:
            pages[self.paths.path("board_table", board=board, ext="tex")] = self.paths.path("board_page", board=board)
        return pages

    def page_inputs(self) -> dict[str, tuple[list[str], "callable"]]:
        """Per report page: the files that show its output were built (a table's .tex and .csv; a figure's .pdf,
        .png and .csv; a leaderboard's .tex, .csv and figure), and a function giving the result files its rule
        also reads (the table's, figure's or board's inputs), resolved only when asked."""
        out = {}
        for p, paper in self.papers.items():
            for t in paper.get("tables", {}):
                tex = self.table_output(p, t)
                out[self.paths.path("table_page", paper=p, table=t)] = (
                    [tex, tex[:-4] + ".csv"], lambda p=p, t=t: self.table_files(p, t))
            for f in paper.get("figures", {}):
                pdf = self.figure_output(p, f)
                out[self.paths.path("figure_page", paper=p, figure=f)] = (
                    [pdf, pdf[:-4] + ".png", pdf[:-4] + ".csv"], lambda p=p, f=f: self.figure_targets(p, f))
        for board, backbone in self.leaderboards.items():
            out[self.paths.path("board_page", board=board)] = (
                [self.paths.path("board_table", board=board, ext=e) for e in ("tex", "csv")]
                + [self.paths.path("board_figure", board=board, ext="png")],
                lambda b=backbone: self.leaderboard_targets(b))
        return out

    def built_report_pages(self, existing_pages: bool = False) -> list[str]:
        """The report pages of what is built so far, so that a partial build has a report of what it holds (rule
        report_built): each table, figure and leaderboard whose files exist and whose page can be made from files
        that exist (nothing is built but pages: a table whose runs were deleted keeps the page it has). With
        `existing_pages`, the pages already written: what `snakemake --report` shows without building."""
        from pathlib import Path

        if existing_pages:
            return [page for page in self.page_inputs() if Path(page).is_file()]
        return [page for page, (shown, results) in self.page_inputs().items()
                if all(Path(f).is_file() for f in shown) and all(Path(f).exists() for f in results())]

    def leaderboard_outputs(self) -> list[str]:
        return [self.paths.path(pattern, board=board, ext=ext) for board in self.leaderboards
                for pattern, exts in (("board_table", ("tex", "csv", "md")), ("board_figure", ("pdf", "png")))
                for ext in exts]
