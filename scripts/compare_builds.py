"""Are two builds' numbers the same? `python scripts/compare_builds.py RESULTS_A RESULTS_B` compares every table and
figure CSV (pandas: the same cells, leaving out the provenance columns `built`, `machine`, `commit` and the rows of
a wall-clock metric, `*_seconds`) and every evaluation record under `eval/` (JSON: the same values, leaving out
when and how long: `seconds`, `evaluation_time`, `date`, ...). Used to show that a refactor changed no number
(`make demo` in two clean clones, before and after). Exit status 1 when anything differs."""
import json
import sys
from pathlib import Path

import pandas as pd

PROVENANCE = {"built", "machine", "commit"}
WHEN = PROVENANCE | {"seconds", "evaluation_time", "date", "written", "created"}


def same_csv(a: Path, b: Path) -> tuple[bool, int]:
    """(equal, numeric cells compared); unequal files of another layout compared byte for byte."""
    try:
        x, y = pd.read_csv(a), pd.read_csv(b)
    except pd.errors.ParserError:
        return a.read_bytes() == b.read_bytes(), 0
    if list(x.columns) != list(y.columns) or len(x) != len(y):
        return False, 0
    if "metric" in x.columns:
        keep = ~x["metric"].astype(str).str.endswith("_seconds").to_numpy()
        x, y = x[keep], y[keep]
    cols = [c for c in x.columns if c not in PROVENANCE]
    x, y = x[cols].reset_index(drop=True), y[cols].reset_index(drop=True)
    return x.equals(y), int(x.select_dtypes("number").notna().sum().sum())


def without_when(value):
    if isinstance(value, dict):
        return {k: without_when(v) for k, v in value.items() if k not in WHEN}
    if isinstance(value, list):
        return [without_when(v) for v in value]
    return value


def main(a: Path, b: Path) -> int:
    differ, cells, csvs = [], 0, 0
    for f in sorted([*a.glob("tables/**/*.csv"), *a.glob("figures/**/*.csv")]):
        rel = f.relative_to(a)
        equal, n = same_csv(f, b / rel) if (b / rel).is_file() else (False, 0)
        csvs, cells = csvs + 1, cells + n
        if not equal:
            differ.append(str(rel))
    records = 0
    for f in sorted(a.glob("eval/**/*.json")):
        rel = f.relative_to(a)
        records += 1
        if not ((b / rel).is_file() and without_when(json.loads(f.read_text()))
                == without_when(json.loads((b / rel).read_text()))):
            differ.append(str(rel))
    print(f"{csvs} table and figure CSVs ({cells} numeric cells) and {records} evaluation records compared: "
          f"{len(differ)} differ")
    for rel in differ[:20]:
        print(f"  differs: {rel}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
