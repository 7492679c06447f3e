"""The leaderboards (papers/leaderboard.yaml): every method on the same backbone, corpus, steps and seeds, scored
on the same suites, with confidence intervals over seeds (`sentaug.report.stats`). One board per declared backbone.

Writes results/tables/<board>.csv (one record per method and column: the per-seed values, mean and 95 %
interval, paired difference to the baseline and its interval, the gain the method's paper reports for that
backbone), .tex and .md (the same numbers, one row per method), and results/figures/<board>.pdf/.png drawn from
those records: per column the paired difference to the baseline with its interval, the paper's reported gain
beside it, and the training time per run. <board> is `leaderboard` for the first backbone and
`leaderboard-<backbone>` for each other (`boards`).
"""
from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

from .. import config as sc
from ..choices import unknown
from ..intermediates import read_result
from ..io import atomic_path
from .sources import metric_value
from .stats import Interval, paired_difference, t_interval

TRAIN_TIME = "train.train_seconds"
# Wall time is shown as the median over seeds with its range: the runs share a machine with other jobs, and one
# run slowed by them would move a mean and widen its interval far beyond the method's own cost.
TIME_COLUMN = "Training time (s/run: median, range)"
MIN_SEEDS = 3
BOARD = "leaderboard"
ADDED_KEY = f"add_rows.{BOARD}"     # where the configuration adds rows to every board


def boards(spec: dict) -> dict[str, str]:
    """Board name -> backbone: `leaderboard` for the first declared backbone (the path every earlier build and the
    report know), `leaderboard-<backbone>` for each other."""
    first, *others = spec["backbones"]
    return {BOARD: first, **{f"{BOARD}-{b}": b for b in others}}


def leaderboard_path(config: dict) -> Path:
    return Path(config.get("papers_dir", "papers")) / "leaderboard.yaml"


def load_leaderboard(config: dict) -> dict | None:
    """papers/leaderboard.yaml with the rows the configuration adds to it (config key `add_rows.leaderboard`,
    marked), checked against the config (None when there is no such file)."""
    path = leaderboard_path(config)
    if not path.exists():
        if sc.added_rows(config, BOARD):
            raise sc.ConfigError(f"config key 'add_rows.{BOARD}': there is no leaderboard ({path})")
        return None
    spec = sc.load_yaml(path)
    if "backbone" in spec:    # the one-board form of earlier versions
        raise sc.ConfigError(f"{path}: 'backbone' is now 'backbones', one board per backbone: write "
                             f"backbones: [{spec['backbone']}]")
    for key in ("backbones", "baseline", "seeds", "columns", "rows"):
        if key not in spec:
            raise sc.ConfigError(f"{path}: missing key '{key}'")
    backbones = spec["backbones"]
    if not isinstance(backbones, list) or not backbones or len(set(backbones)) < len(backbones):
        raise sc.ConfigError(f"{path}: backbones: a list of distinct backbones, got {backbones!r}")
    for backbone in backbones:
        if backbone not in config["backbones"]:
            raise sc.ConfigError(f"{path}: backbones: unknown backbone '{backbone}'")
    check_seeds(config, spec["seeds"], f"{path}: seeds.{{scale}}")
    metrics = [c["metric"] for c in spec["columns"]]
    for metric in metrics:
        if "." not in metric:
            raise sc.ConfigError(f"{path}: columns: metric '{metric}' is not <result>.<key>")
    check_rows(config, spec["rows"], path)
    added = sc.added_rows(config, BOARD)
    check_rows(config, added, f"config key '{ADDED_KEY}'")
    spec["rows"] = spec["rows"] + added
    for row in spec["rows"]:
        for backbone, gains in (row.get("reported") or {}).items():
            if backbone not in backbones:
                raise sc.ConfigError(f"{path}: row '{row['label']}': reported: '{backbone}' is not one of the "
                                     f"board's backbones")
            unknown = set(gains) - set(metrics)
            if unknown:
                raise sc.ConfigError(f"{path}: row '{row['label']}': reported.{backbone}: '{sorted(unknown)[0]}' is "
                                     f"not a column")
    for ref in spec.get("references", []):
        if not isinstance(ref, dict) or {"label", "pooler"} - set(ref):
            raise sc.ConfigError(f"{path}: references: {ref!r} needs a label and a pooler")
    labels = [r["label"] for r in spec["rows"] + spec.get("references", [])]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise sc.ConfigError(f"{path}: label '{repeated[0]}' names two rows")
    if spec["baseline"] not in [r["method"] for r in spec["rows"]]:
        raise sc.ConfigError(f"{path}: baseline: '{spec['baseline']}' is not the method of any row")
    return spec


def check_seeds(config: dict, seeds: dict, where: str) -> None:
    """A board's seeds: a mapping of scales to at least MIN_SEEDS distinct seeds each (`where`: the key, with
    {scale} in it). A scale it does not list has no board there (`board_seeds` says so when one is asked for)."""
    if not isinstance(seeds, dict) or not seeds:
        raise sc.ConfigError(f"{where.format(scale='<scale>')}: seeds: a mapping of scale to seeds, got {seeds!r}")
    for scale, given in seeds.items():
        if scale not in config["scales"]:
            raise sc.ConfigError(f"{where.format(scale=scale)}: unknown scale (choose from {', '.join(config['scales'])})")
        if not isinstance(given, list) or len(set(given)) < MIN_SEEDS:
            raise sc.ConfigError(f"{where.format(scale=scale)}: a board needs at least {MIN_SEEDS} distinct seeds per "
                                 f"scale, got {given!r}")


def check_rows(config: dict, rows: list[dict], where) -> None:
    """A board's rows train declared methods (or variants of them); `where` (a file or config key) declares them."""
    for row in rows:
        try:
            sc.method_config(config, row["method"])
        except sc.ConfigError as e:
            raise sc.ConfigError(f"{where}: row '{row['label']}': {e}") from None


def _num(x: float) -> float | None:
    return None if x is None or math.isnan(x) else round(x, 4)


def leaderboard_records(spec: dict, rows: list[dict], scale: str, backbone: str,
                        partial: bool = False) -> list[dict]:
    """One record per (row, column) and per row for the training time, from the resolved rows
    (`Workflow.leaderboard_points`) of the board on `backbone`. A reference row (the untrained backbone) has one
    value per column and no training time; its Δ is that value minus each baseline seed, so its interval is the
    baseline's. With `partial`, a cell some of whose result files are not written yet is `pending` ("k/n" written)
    and has no statistics, nor has any Δ involving it (an interval over the seeds that happen to be done would
    change meaning as runs land)."""
    confidence = spec.get("confidence", 0.95)
    reported = {r["method"]: (r.get("reported") or {}).get(backbone, {}) for r in spec["rows"]}
    sources = {}    # (row, metric) -> its seeds, one file per seed, and how to read a value from a file
    for row in rows:
        for metric, cell in row["cells"].items():
            sources[row["label"], metric] = (row["seeds"] or [None], cell["files"],
                                             lambda f, metric=metric: metric_value(read_result(f), metric))
        sources[row["label"], TRAIN_TIME] = (row["seeds"], row["train"],
                                             lambda f: float(read_result(f)["train_seconds"]))
    values, pending = {}, {}    # per cell: {seed: value}, or None and "k/n" while it is pending
    for key, (seeds, paths, read) in sources.items():
        written = sum(Path(f).exists() for f in paths) if partial else len(paths)
        values[key] = {s: read(f) for s, f in zip(seeds, paths)} if written == len(paths) else None
        pending[key] = None if values[key] is not None else f"{written}/{len(paths)}"
    baseline = next(r["label"] for r in rows if r["method"] == spec["baseline"])
    columns = [(c["label"], c["metric"]) for c in spec["columns"]] + [(TIME_COLUMN, TRAIN_TIME)]
    records = []
    for row in rows:
        for label, metric in columns:
            by_seed = values[row["label"], metric]
            seen = list((by_seed or {}).values())
            # a reference row trains nothing: its training-time cell is empty
            own = t_interval(seen, confidence) if seen else Interval(math.nan, math.nan, 0)
            record = {"scale": scale, "backbone": backbone, "row": row["label"], "method": row["method"],
                      "pooler": row.get("pooler"), "column": label, "metric": metric, "n": own.n,
                      "seeds": " ".join(str(s) for s in row["seeds"]),
                      "values": " ".join(f"{v:.4f}" for v in seen),
                      "mean": _num(own.mean), "ci_low": _num(own.low), "ci_high": _num(own.high),
                      "ci_half_width": _num(own.half_width),
                      "median": _num(statistics.median(seen)) if seen else None,
                      "min": _num(min(seen)) if seen else None, "max": _num(max(seen)) if seen else None,
                      "diff": None, "diff_ci_low": None,
                      "diff_ci_high": None, "diff_ci_half_width": None,
                      "reported_gain": reported.get(row["method"], {}).get(metric),
                      "baseline": row["label"] == baseline, "reference": row["method"] is None}
            if partial:
                record["pending"] = pending[row["label"], metric]
            base = values[baseline, metric] if metric != TRAIN_TIME else None
            if row["label"] != baseline and by_seed is not None and base is not None:
                mine = by_seed if row["seeds"] else {s: by_seed[None] for s in base}
                diff = paired_difference(mine, base, confidence)
                record.update(diff=_num(diff.mean), diff_ci_low=_num(diff.low), diff_ci_high=_num(diff.high),
                              diff_ci_half_width=_num(diff.half_width))
            records.append(record)
    return records


def _pm(mean, half) -> str:
    if mean is None:
        return "--"
    return f"{mean:.2f}" + (f" ± {half:.2f}" if half is not None else "")


def _time(record: dict) -> str:
    """A training-time cell: the median over seeds and their range (a board has at least MIN_SEEDS)."""
    if record["median"] is None:
        return "--"
    return f"{record['median']:.1f} ({record['min']:.1f}–{record['max']:.1f})"


def _signed(mean, half) -> str:
    if mean is None:
        return ""
    return f"{mean:+.2f}" + (f" ± {half:.2f}" if half is not None else "")


def board_seeds(spec: dict, scale: str) -> list[int]:
    """The board's seeds at `scale`; an error naming the scale where the board lists none."""
    if scale not in spec["seeds"]:
        raise sc.ConfigError(f"{spec.get('title', 'the leaderboard')!r} has no seeds for scale '{scale}' (it lists "
                             f"{', '.join(spec['seeds'])}): add at least {MIN_SEEDS} to build it there")
    return spec["seeds"][scale]


def caption(spec: dict, scale: str, meta: dict, backbone: str, added_key: str | None = None) -> str:
    """The board's caption; `added_key`: the config key of the rows the configuration added (marked), if any."""
    stand_in = meta.get("stand_ins", {}).get(backbone, backbone)
    seeds = board_seeds(spec, scale)
    pct = round(100 * spec.get("confidence", 0.95))
    text = (f"{spec.get('title', 'Leaderboard')}. Backbone {stand_in}"
            + (f" (stand-in for {backbone})" if stand_in != backbone else "")
            + f", corpus {meta.get('corpus', '?')}, the scale's steps and batch, seeds "
              f"{', '.join(map(str, seeds))} for every method. Each cell: mean over seeds ± the half-width of its "
              f"{pct} % confidence interval (Student's t); Δ: the paired (per-seed) difference to "
              f"{spec['baseline']} ± its half-width; paper: the gain over SimCSE the method's paper reports for "
              f"{backbone} in its own tables (none where it has no {backbone} run).")
    text += (" Training time: each run's wall time, median over seeds (their range in brackets), as the runs "
             "share a machine with other jobs.")
    if spec.get("references"):
        text += (" No training: the backbone before any training step, pooled as named; its Δ is its value minus "
                 f"each {spec['baseline']} seed.")
    if added_key:
        text += " " + sc.ADDED_NOTE.format(key=added_key)
    if not meta.get("compares_with_papers"):
        slices = (f" (slices of the official data files, the rest of each left out: {'; '.join(meta['slices'])})"
                  if meta.get("slices") else "")
        text += (f" Built at scale '{scale}', below paper scale{slices}: compare the signs of Δ with the papers' "
                 f"gains, not the numbers.")
    return text


def added_key(rows: list[dict], key: str) -> str | None:
    """`key` when some of a board's resolved rows were added by the configuration, else None."""
    return key if any(r.get("added") for r in rows) else None


def _tex(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"), ("±", r"$\pm$"),
                 ("Δ", r"$\Delta$"), ("†", r"$^\dagger$")):
        text = text.replace(a, b)
    return text


def _table_cells(records: list[dict]) -> tuple[list[str], list[tuple[str, list[str], list[str]]]]:
    """Column labels, and per method its label, the mean ± CI cells and the Δ / paper cells."""
    columns = list(dict.fromkeys(r["column"] for r in records))
    rows = []
    for label in dict.fromkeys(r["row"] for r in records):
        cells = {r["column"]: r for r in records if r["row"] == label}
        first = [f"pending {cells[c]['pending']}" if cells[c].get("pending") else
                 _time(cells[c]) if cells[c]["metric"] == TRAIN_TIME else
                 _pm(cells[c]["mean"], cells[c]["ci_half_width"]) for c in columns]
        second = []
        for c in columns:
            r = cells[c]
            text = f"Δ {_signed(r['diff'], r['diff_ci_half_width'])}" if r["diff"] is not None else ""
            if r["reported_gain"] is not None:
                text += f" (paper {r['reported_gain']:+.2f})"
            second.append(text.strip())
        rows.append((label, first, second))
    return columns, rows


def render_markdown(spec: dict, records: list[dict], text: str, backbone: str) -> str:
    """The board as Markdown under its caption `text`."""
    columns, rows = _table_cells(records)
    lines = [f"# {spec.get('title', 'Leaderboard')}: {backbone}", "", text, "",
             "| Method | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for label, first, second in rows:
        cells = [f"{a}<br>{b}" if b else a for a, b in zip(first, second)]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def render_tex(records: list[dict], text: str, tex_label: str) -> str:
    """The board as a LaTeX table with its caption `text` and LaTeX label `tex_label`."""
    columns, rows = _table_cells(records)
    lines = [r"\begin{table}[t]", r"\centering", r"\small", r"\begin{tabular}{l" + "r" * len(columns) + "}",
             r"\toprule", " & ".join(["Method"] + [_tex(c) for c in columns]) + r" \\", r"\midrule"]
    for label, first, second in rows:
        lines.append(" & ".join([_tex(label)] + [_tex(c) for c in first]) + r" \\")
        if any(second):
            lines.append(" & ".join([""] + [r"{\footnotesize " + _tex(c) + "}" if c else "" for c in second]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{_tex(text)}}}",
              rf"\label{{{tex_label}}}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def draw(records: list[dict], spec: dict, text: str, out: Path) -> None:
    """Per column, the paired difference to the baseline with its interval (the paper's gain as a cross), and the
    training time per run, above the caption `text`; written to `out` (.pdf) and a .png beside it."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = list(dict.fromkeys(r["column"] for r in records))
    methods = [m for m in dict.fromkeys(r["row"] for r in records)]
    fig, axes = plt.subplots(1, len(columns), figsize=(3.4 * len(columns), 0.45 * len(methods) + 2.2), sharey=True,
                             squeeze=False)
    for ax, column in zip(axes[0], columns):
        rows = {r["row"]: r for r in records if r["column"] == column}
        time = rows[methods[0]]["metric"] == TRAIN_TIME
        for y, label in enumerate(methods):
            r = rows[label]
            value = r["median"] if time else r["diff"]
            if value is None:
                continue
            half = [[value - r["min"]], [r["max"] - value]] if time else r["diff_ci_half_width"]
            ax.errorbar(value, y, xerr=half, fmt="D" if r["reference"] else "o",
                        color="C7" if r["reference"] else "C0", capsize=3)
            if r["reported_gain"] is not None:
                ax.plot(r["reported_gain"], y, "x", color="C3", markersize=8)
        if not time:
            ax.axvline(0, color="black", linestyle="--", linewidth=1)
        ax.set_title(column, fontsize=9)
        ax.set_xlabel("seconds per run (median, range)" if time else f"Δ vs {spec['baseline']}", fontsize=8)
    axes[0][0].set_yticks(range(len(methods)), methods, fontsize=8)
    axes[0][0].set_ylim(len(methods) - 0.5, -0.5)
    handles = [plt.Line2D([], [], color="C0", marker="o", label="ours: mean, 95 % interval"),
               plt.Line2D([], [], color="C3", marker="x", linestyle="", label="the paper's reported gain")]
    if any(r["reference"] for r in records):
        handles.append(plt.Line2D([], [], color="C7", marker="D", label="no training"))
    fig.legend(handles=handles, loc="upper right", fontsize=7, ncol=len(handles))
    wrapped = textwrap.wrap(text, 150)
    fig.text(0.01, 0.005, "\n".join(wrapped), fontsize=7, va="bottom")
    fig.tight_layout(rect=(0, 0.03 + 0.035 * len(wrapped), 1, 0.93))
    with atomic_path(out.with_suffix(".png")) as tmp:
        fig.savefig(tmp, format="png", dpi=130)
    with atomic_path(out) as tmp:
        fig.savefig(tmp, format="pdf")
    plt.close(fig)


def board_progress(workflow, board: str) -> str:
    """The board named `board` from whichever of its result files exist now, as Markdown: a look at a board whose
    runs are still going (`sentaug report leaderboard-progress`). Writes nothing; the board is the build target."""
    if board not in workflow.leaderboards:
        raise sc.ConfigError(unknown("board", board, workflow.leaderboards))
    spec, backbone = workflow.leaderboard, workflow.leaderboards[board]
    records = leaderboard_records(spec, workflow.leaderboard_points(backbone), workflow.scale, backbone,
                                  partial=True)
    # A reference row trains nothing: its training-time cell waits for no file and is not counted.
    cells = [r for r in records if not (r["reference"] and r["metric"] == TRAIN_TIME)]
    done = sum(r["pending"] is None for r in cells)
    text = (f"In progress: {done} of {len(cells)} cells complete. A pending cell waits for the result files of "
            f"all its seeds (k/n written); Δ only between complete cells. "
            + caption(spec, workflow.scale, workflow.leaderboard_meta(backbone), backbone,
                      added_key(spec["rows"], ADDED_KEY)))
    return render_markdown(spec, records, text, backbone)


def render_leaderboard(spec_file: str, board: str, inputs: str, out: str, figure: str, scale: str) -> None:
    """CLI entry: `inputs` is {"rows": Workflow.leaderboard_points(backbone), "meta": {...}} for the board named
    `board`; writes `out` (.tex) with a .csv and .md beside it, and `figure` (.pdf) with a .png."""
    spec = sc.load_yaml(spec_file)
    backbone = boards(spec)[board]
    given = json.loads(inputs)
    records = leaderboard_records(spec, given["rows"], scale, backbone)
    text = caption(spec, scale, given.get("meta", {}), backbone, added_key(given["rows"], ADDED_KEY))
    draw(records, spec, text, Path(figure))
    write_board(spec, records, text, backbone, Path(out), f"tab:leaderboard-{backbone}")


def write_board(spec: dict, records: list[dict], text: str, backbone: str, out: Path, tex_label: str) -> None:
    """A board's records as `out` (.tex, LaTeX label `tex_label`) with a .csv and .md beside it, each atomically; the
    .tex last, as the rule's first output. Prints the Markdown."""
    import pandas as pd

    markdown = render_markdown(spec, records, text, backbone)
    with atomic_path(out.with_suffix(".csv")) as tmp:
        pd.DataFrame(records).to_csv(tmp, index=False)
    with atomic_path(out.with_suffix(".md")) as tmp:
        tmp.write_text(markdown, encoding="utf-8")
    with atomic_path(out) as tmp:
        tmp.write_text(render_tex(records, text, tex_label), encoding="utf-8")
    print(markdown)
