"""Small deterministic slices of installed data folders (the `test` scale: every table from real inputs in minutes).

A scale that declares `slices:` (config.yaml, `scales.<scale>.slices`: data folder -> how much of it to keep) reads
its data from `<results>/data/official-<scale>/`, which rule `slice_data` cuts from the installed, pin-checked
official folder `<results>/data/official/`. The cut files keep their layout, header and encoding byte for byte
(whole lines, in file order), so the readers read a slice as they read the full file: nothing here is known to a
reader, and the slice of a folder is declared once, in the configuration.

A folder's slice is one of:

    <N>                           every file cut to N rows, evenly spaced over the file (rows i * n // N)
    {rows: N, files: {<glob>: M}} the same, M rows for the files matching a glob (e.g. STS-B's dev split)
    {per_class: M, classes: C}    grouped sets (clustering, intent: a class; NLI: a premise): the first M rows
                                  of each group, in file order, of the C largest groups (all when C is not given)

A row is a line after the file's header lines (`HEADERS`); files that hold one example across several files
(an STS topic's sentences and scores, an intent split's utterances and labels, SentEval's SNLI s1/s2/labels) are
cut at the same rows (`ALIGNED`), and an STS pair without a gold score is no row (`SCORED_BY`). A per_class
slice of a file whose classes are not declared (`LABELS`) is an error naming the file.
"""
from __future__ import annotations

import csv
import fnmatch
import json
import os
import re
import shutil
from collections import Counter
from pathlib import Path

# Lines before the first row, by path glob relative to the data root (first match wins; default 0).
HEADERS = (
    ("glue/CoLA/*.tsv", 0),            # CoLA's train/dev have no header line (GLUE's layout)
    ("glue/*/*.tsv", 1),
    ("sick/*.txt", 1),
    ("transfer/MRPC/*.txt", 1),
    ("clustering/*.csv", 1),
)
# Files cut at the same rows: a regular expression on the path relative to the data root whose match, with the
# named group `part` replaced by each of `parts`, names the group's files.
ALIGNED = (
    (r"sts/STS1\d-en-test/STS\.(?P<part>input|gs)\..+\.txt", ("input", "gs")),
    (r"intent/.+/(?P<part>seq\.in|label)", ("seq.in", "label")),
    (r"nli/snli_senteval/(?P<part>s1|s2|labels)\.\w+", ("s1", "s2", "labels")),
)
# Aligned files whose row is only a row where this part's line is not blank: an STS topic's pairs without a gold
# score are not scored (the reader drops them, as SentEval does), and STS15-16 topics are mostly such lines (STS16
# postediting: 3,043 of 3,287), so evenly spaced lines would keep almost no scored pair.
SCORED_BY = {"sts/STS1": "gs"}
# Files that are not data rows and are copied whole.
WHOLE = ("*/README*", "*/PROVENANCE*", "*.md")
# Grouped sets (per_class): where a row's class is. `csv_column`: the named column of a CSV; `json_field`: a field
# of a JSON line; `sub`: the line of the aligned file whose path is this one's with the regular expression
# replaced. `unit` (levels up from the file): the folder whose files share one choice of classes (an intent set's
# train/valid/test splits keep the same classes, chosen by its `first` split's counts). NLI pairs are grouped by
# premise: a premise is a "class", so that a slice keeps whole premises (their entailment and contradiction
# together: the triplets of sentaug.data.triplets need both).
LABELS = (
    ("clustering/*.csv", {"csv_column": "label"}),
    ("intent/*/seq.in", {"sub": (r"[^/]+$", "label"), "unit": 2, "first": "train"}),
    ("intent/*/label", {"sub": (r"[^/]+$", "label"), "unit": 2, "first": "train"}),
    ("nli/snli_senteval/*", {"sub": (r"/(?:s1|s2|labels)\.(\w+)$", r"/s1.\1")}),
    ("nli/anli/*.jsonl", {"json_field": "context"}),
)


class SliceError(ValueError):
    pass


def _match(rel: str, table):
    for pattern, value in table:
        if fnmatch.fnmatchcase(rel, pattern):
            return value
    return None


def header_lines(rel: str) -> int:
    return _match(rel, HEADERS) or 0


def _lines(path: Path) -> list[bytes]:
    """The file's lines with their terminators, as bytes (a slice is whole lines of the file, byte for byte)."""
    return path.read_bytes().splitlines(keepends=True)


def even_rows(n: int, keep: int) -> list[int]:
    """`keep` row indices spread evenly over `n` rows (all of them when keep >= n), in order."""
    if keep >= n:
        return list(range(n))
    return [i * n // keep for i in range(keep)]


def normalise(spec) -> dict:
    """A folder's slice as a mapping: an int N is {rows: N}."""
    if isinstance(spec, bool) or not isinstance(spec, (int, dict)):
        raise SliceError(f"a slice is a number of rows or a mapping, not {spec!r}")
    spec = {"rows": spec} if isinstance(spec, int) else dict(spec)
    unknown = set(spec) - {"rows", "files", "per_class", "classes"}
    if unknown:
        raise SliceError(f"unknown slice key(s) {sorted(unknown)} (known: rows, files, per_class, classes)")
    if ("rows" in spec) == ("per_class" in spec):
        raise SliceError(f"a slice gives either rows or per_class: {spec}")
    for key in ("rows", "per_class", "classes"):
        if key in spec and (not isinstance(spec[key], int) or spec[key] < 1):
            raise SliceError(f"slice key {key} must be a positive integer, not {spec[key]!r}")
    return spec


def describe(folder: str, spec) -> str:
    """What a slice keeps, in words (captions: what it leaves out is the rest of each file)."""
    spec = normalise(spec)
    if "per_class" in spec:
        noun = "premises" if folder.startswith("nli/") else "classes"
        groups = f"the {spec['classes']} largest {noun}" if "classes" in spec else f"every one of its {noun}"
        return f"{folder}: the first {spec['per_class']} rows of {groups} in each file"
    rows = "scored pairs" if folder == "sts" else "rows"         # an unscored STS pair is no row (SCORED_BY)
    text = f"{folder}: {spec['rows']} evenly spaced {rows} of each file"
    for pattern, rows in (spec.get("files") or {}).items():
        text += f" ({rows} of {pattern})"
    return text


def _aligned(rel: str) -> list[str] | None:
    for regex, parts in ALIGNED:
        m = re.fullmatch(regex, rel)
        if m:
            a, b = m.span("part")
            return [rel[:a] + p + rel[b:] for p in parts]
    return None


def _rows_for(rel: str, spec: dict) -> int:
    for pattern, rows in (spec.get("files") or {}).items():
        if fnmatch.fnmatchcase(rel, pattern):
            return rows
    return spec["rows"]


def _labels(src_root: Path, rel: str, lines: list[bytes], header: int) -> list[str]:
    how = _match(rel, LABELS)
    if how is None:
        raise SliceError(f"{rel}: per_class slice of a file with no declared label (sentaug.data.slices.LABELS)")
    if "csv_column" in how:
        text = [line.decode("utf-8") for line in lines]
        head = next(csv.reader([text[0]])) if header else None
        if head is None or how["csv_column"] not in head:
            raise SliceError(f"{rel}: no column {how['csv_column']!r} in its header")
        col = head.index(how["csv_column"])
        return [next(csv.reader([t]))[col].strip() for t in text[header:]]
    if "json_field" in how:
        return [str(json.loads(line)[how["json_field"]]) for line in lines[header:]]
    label_file = src_root / re.sub(how["sub"][0], how["sub"][1], rel)
    return [line.decode("utf-8").strip() for line in _lines(label_file)[header:]]


def _class_rows(labels: list[str], per_class: int, classes: set[str] | None) -> list[int]:
    seen: Counter = Counter()
    rows = []
    for i, y in enumerate(labels):
        if (classes is None or y in classes) and seen[y] < per_class:
            seen[y] += 1
            rows.append(i)
    return rows


def _chosen_classes(src_root: Path, rel: str, spec: dict, chosen: dict) -> set[str] | None:
    """The classes a per_class slice keeps for this file: None (all), or the `classes` largest of its unit's
    first file (ties by name), remembered per unit in `chosen`."""
    if "classes" not in spec:
        return None
    how = _match(rel, LABELS) or {}
    parts = rel.split("/")
    unit = "/".join(parts[:-how["unit"]]) if how.get("unit") else rel
    if unit not in chosen:
        first = re.sub(how["sub"][0], how["sub"][1], f"{unit}/{how['first']}/x") if how.get("unit") else rel
        lines = _lines(src_root / first)
        counts = Counter(_labels(src_root, first, lines, header_lines(first)))
        chosen[unit] = set(sorted(counts, key=lambda c: (-counts[c], c))[:spec["classes"]])
    return chosen[unit]


def slice_folder(src_root: str | os.PathLike, out_root: str | os.PathLike, folder: str, spec) -> dict:
    """Cut every file of `<src_root>/<folder>` into `<out_root>/<folder>` by `spec` (see the module); returns
    {relative path: [rows kept, rows in the file]} (also written beside the folder as `<folder>.slice.json`)."""
    spec = normalise(spec)
    src_root, out_root = Path(src_root), Path(out_root)
    base = src_root / folder
    if not base.is_dir():
        raise FileNotFoundError(f"{base}: data folder not found")
    files = sorted(p.relative_to(src_root).as_posix() for p in base.rglob("*")     # not Snakemake's timestamps
                   if p.is_file() and not p.name.startswith("."))
    done: dict[str, list[int]] = {}
    chosen: dict[str, set[str]] = {}
    for rel in files:
        if rel in done:
            continue
        target = out_root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if any(fnmatch.fnmatchcase(rel, w) for w in WHOLE):
            shutil.copyfile(src_root / rel, target)
            continue
        group = _aligned(rel) or [rel]
        missing = [g for g in group if g not in files]
        if missing:
            raise SliceError(f"{rel}: its aligned file {missing[0]} is missing from {src_root}")
        header = header_lines(rel)
        contents = {g: _lines(src_root / g) for g in group}
        sizes = {g: len(c) for g, c in contents.items()}
        if len(set(sizes.values())) != 1:
            raise SliceError(f"aligned files differ in length: " + ", ".join(f"{g} {n}" for g, n in sizes.items()))
        n = sizes[rel] - header
        if n < 0:
            raise SliceError(f"{rel}: fewer lines than its {header} header line(s)")
        if "per_class" in spec:
            rows = _class_rows(_labels(src_root, rel, contents[rel], header), spec["per_class"],
                               _chosen_classes(src_root, rel, spec, chosen))
        else:
            key = next((part for prefix, part in SCORED_BY.items() if rel.startswith(prefix)), None)
            keyed = next((g for g in group if key and re.search(rf"(^|[./]){re.escape(key)}[./]", g)), None)
            scored = ([i for i in range(n) if contents[keyed][header + i].strip()] if keyed else list(range(n)))
            rows = [scored[i] for i in even_rows(len(scored), _rows_for(rel, spec))]
        for g, lines in contents.items():
            out = out_root / g
            out.parent.mkdir(parents=True, exist_ok=True)
            body = lines[:header] + [lines[header + i] for i in rows]
            if body and not body[-1].endswith((b"\n", b"\r")) and lines[-1].endswith((b"\n", b"\r")):
                body[-1] += b"\n"
            out.write_bytes(b"".join(body))
            done[g] = [len(rows), n]
    summary = out_root / f"{folder}.slice.json"
    summary.parent.mkdir(parents=True, exist_ok=True)
    summary.write_text(json.dumps({"folder": folder, "slice": spec, "files": done}, indent=1, sort_keys=True) + "\n",
                       encoding="utf-8")
    return done


def slice_cli(folder: str, src_root: str, out_root: str, spec: str) -> None:
    """`sentaug data-slice`: cut one installed data folder into a slice (atomically: a staging folder renamed into
    place, so an interrupted cut leaves nothing at the target)."""
    import tempfile

    out_root_p = Path(out_root)
    out_root_p.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".slice.{folder.replace('/', '_')}.", dir=out_root_p))
    try:
        parsed = json.loads(spec)
        if parsed is None:      # a folder the scale declares no slice of: the whole folder
            shutil.copytree(Path(src_root) / folder, stage / folder,
                            ignore=lambda _, names: [n for n in names if n.startswith(".")])
            done = None
        else:
            done = slice_folder(src_root, stage, folder, parsed)
        target = out_root_p / folder
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            shutil.rmtree(target)
        os.replace(stage / folder, target)
        if done is None:
            print(f"copied {folder} whole (no slice declared)")
            return
        os.replace(stage / f"{folder}.slice.json", out_root_p / f"{folder}.slice.json")
        kept = sum(k for k, _ in done.values())
        total = sum(n for _, n in done.values())
        print(f"sliced {folder}: {kept} of {total} rows in {len(done)} files")
    finally:
        shutil.rmtree(stage, ignore_errors=True)
