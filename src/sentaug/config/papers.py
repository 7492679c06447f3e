"""The papers' tables (papers/<name>.yaml): loaded with the rows the configuration adds (`add_rows`) and
checked against the configuration (methods, augmentations, backbones, one reported value per column)."""
from __future__ import annotations

import copy
from pathlib import Path

from .validation import ConfigError, load_yaml
from .variants import method_config

STS_COLUMNS = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness", "avg"]

# A row that the configuration adds to a paper table or a leaderboard (config key `add_rows`: `<paper>/<table>` or
# `leaderboard`, every board) is marked in its label and by `added: true`: none of its numbers is a paper's.
ADDED_MARK = " †"
ADDED_NOTE = "† a row added by the configuration (config key {key}), not from the paper."


def added_rows(config: dict, target: str) -> list[dict]:
    """The rows config key `add_rows.<target>` adds, each marked (label + ADDED_MARK, `added: true`)."""
    return [{**row, "label": row["label"] + ADDED_MARK, "added": True}
            for row in (config.get("add_rows") or {}).get(target) or []]


def add_table_rows(table: dict, rows: list[dict], where: str) -> dict:
    """A paper table's declaration with the added `rows` (from `added_rows`; `where`: their config key) after its
    own, with no reported values. In a table of blocks a row names its block (`block: <title>`) and goes last in
    it, taking the block's backbone."""
    table = copy.deepcopy(table)
    titles = [b["title"] for b in table.get("blocks", [])]
    for row in rows:
        row = {**row, "paper": [None] * len(table["columns"])}
        block = row.pop("block", None)
        if titles and block not in titles:
            raise ConfigError(f"config key '{where}': row '{row['label']}' must name its block (block: one of "
                              f"{', '.join(repr(t) for t in titles)})")
        if not titles and block is not None:
            raise ConfigError(f"config key '{where}': row '{row['label']}' names a block, but the table has none")
        rows_of = table["blocks"][titles.index(block)]["rows"] if titles else table.setdefault("rows", [])
        rows_of.append(row)
    return table


def load_paper(config: dict, name: str) -> dict:
    """papers/<name>.yaml with the rows the configuration adds to its tables (`add_rows`), checked."""
    path = Path(config.get("papers_dir", "papers")) / f"{name}.yaml"
    if not path.exists():
        raise ConfigError(f"config key 'papers': no paper file {path}")
    paper = load_yaml(path)
    for target in config.get("add_rows") or {}:
        paper_name, _, tname = target.partition("/")
        if paper_name == name:
            if tname not in paper.get("tables", {}):
                raise ConfigError(f"config key 'add_rows.{target}': {path} has no table '{tname}'")
            paper["tables"][tname] = add_table_rows(paper["tables"][tname], added_rows(config, target),
                                                    f"add_rows.{target}")
    for backbone, recipe in (paper.get("recipes") or {}).items():
        if backbone not in config["backbones"]:
            raise ConfigError(f"{path}: recipes: unknown backbone '{backbone}'")
        for method in (recipe.get("methods") or {}):
            if method not in config["methods"]:
                raise ConfigError(f"{path}: recipes.{backbone}.methods: unknown method '{method}'")
    for tname, table in paper.get("tables", {}).items():
        ncols = len(table["columns"])
        for row in iter_rows(table):
            if len(row["paper"]) != ncols:
                raise ConfigError(f"{path}: table {tname} row '{row['label']}' has {len(row['paper'])} "
                                  f"reported values for {ncols} columns")
            if "method" in row:
                try:
                    method_config(config, row["method"])
                except ConfigError as e:
                    raise ConfigError(f"{path}: table {tname} row '{row['label']}': {e}") from None
            glue_recipe = (row.get("glue") or {}).get("recipe")
            if glue_recipe is not None and glue_recipe not in ((config.get("glue") or {}).get("recipes") or {}):
                raise ConfigError(f"{path}: table {tname} row '{row['label']}': unknown GLUE recipe '{glue_recipe}' "
                                  f"(config key glue.recipes)")
            if "recipe" in row and row["recipe"] not in (config.get("quoted_recipes") or {}):
                raise ConfigError(f"{path}: table {tname} row '{row['label']}': unknown recipe '{row['recipe']}' "
                                  f"(config key quoted_recipes: {', '.join(config.get('quoted_recipes') or {})})")
            augs = row.get("augmentation", [])
            augs = augs if isinstance(augs, list) else [augs]
            if isinstance(row.get("augmentation"), list) and len(augs) != ncols:
                raise ConfigError(f"{path}: table {tname} row '{row['label']}' names {len(augs)} augmentations "
                                  f"for {ncols} columns")
            for aug in augs:
                if aug not in config["augmentations"]:
                    raise ConfigError(f"{path}: table {tname} row '{row['label']}': unknown augmentation '{aug}'")
    return paper


def iter_rows(table: dict):
    """Rows of a table, with the block's backbone attached to each row of a block table."""
    for row in table.get("rows", []):
        yield row
    for block in table.get("blocks", []):
        for row in block["rows"]:
            yield {**row, "backbone": block["backbone"], "block": block["title"]}
