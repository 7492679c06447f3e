"""Where a long build's results are, said early: the first table it writes (an `onstart` hook)."""
from __future__ import annotations

import csv
import sys
import threading
import time
from pathlib import Path


def announce_first_table(tables: str, then: str, interval_s: float = 2.0) -> None:
    """Print the path of the first table this run writes (a table built at this scale, not one saying it is not),
    and what to open when the run is done (`then`): an `onstart` hook, so a long build says early where its
    results are. A daemon thread looks at the CSV files under `tables` every `interval_s` seconds."""
    folder = Path(tables)
    before = {p: p.stat().st_mtime_ns for p in folder.glob("**/*.csv")}

    def watch():
        while True:
            time.sleep(interval_s)
            for csv_file in sorted(folder.glob("**/*.csv")):
                try:
                    new = before.get(csv_file) != csv_file.stat().st_mtime_ns
                except FileNotFoundError:
                    continue
                if new and _table_built(csv_file):
                    tex = csv_file.with_suffix(".tex")
                    print(f"\nFirst table written: {tex if tex.exists() else csv_file} (numbers in "
                          f"{csv_file.name}); when the build is done: {then}\n", file=sys.stderr, flush=True)
                    return
                before[csv_file] = csv_file.stat().st_mtime_ns

    threading.Thread(target=watch, name="announce_first_table", daemon=True).start()


def _table_built(csv_file: Path) -> bool:
    """A table's CSV has a row built at this scale (a table not built here has only rows saying why: `skipped`)."""
    try:
        with csv_file.open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, csv.Error, UnicodeDecodeError):
        return False
    return any(not row.get("skipped") for row in rows)
