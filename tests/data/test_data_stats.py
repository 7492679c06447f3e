"""Data statistics (SDA Table 2, VaSCL Table 4): counts by hand on small files, the published numbers on the real
files, the table cells read from the JSON, and the rule that writes it in the DAG."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sentaug.data.stats import clustering_stats, data_stats_cli, sts_stats
from sentaug.report.tables import render_table

ROOT = Path(__file__).resolve().parents[2]


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture()
def sts_root(tmp_path):
    """Every STS year with one topic of 3 pairs (STS15 and STS16: one unscored), STS-B, SICK and CNSD."""
    for year in ("STS12", "STS13", "STS14", "STS15", "STS16"):
        folder = tmp_path / "sts" / f"{year}-en-test"
        write(folder / "STS.input.t.txt", "a b\tc d\ne f\tg h\ni j\tk l\n")
        write(folder / "STS.gs.t.txt", "1.0\n\n2.0\n" if year in ("STS15", "STS16") else "1.0\n3.0\n2.0\n")
    for split, n in {"train": 4, "dev": 2, "test": 3}.items():
        write(tmp_path / f"sts/STSBenchmark/sts-{split}.csv",
              "".join(f"main-news\tf\t2012\t{i:04d}\t3.0\ta\tb\n" for i in range(n)))
    for name, n in {"train": 5, "trial": 1, "test_annotated": 2}.items():
        write(tmp_path / f"sick/SICK_{name}.txt", "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tx\n"
              + "".join(f"{i}\tA\tB\t4.0\tNEUTRAL\n" for i in range(n)))
    for split, n in {"train": 3, "dev": 2, "test": 1}.items():
        write(tmp_path / f"cnsd/cnsd-sts-{split}.txt", "".join(f"{i}||甲||乙||3\n" for i in range(n)))
    return tmp_path


def test_sts_pairs_per_split_by_hand(sts_root):
    stats = sts_stats(sts_root)
    assert stats["STS12"] == {"train": 0, "dev": 0, "test": 3}
    assert stats["STS15"]["test"] == 2                     # the unscored pair is not evaluated, not counted
    assert stats["STSBenchmark"] == {"train": 4, "dev": 2, "test": 3}
    assert stats["SICKRelatedness"] == {"train": 5, "dev": 1, "test": 2}   # header lines not counted
    assert stats["CNSD"] == {"train": 3, "dev": 2, "test": 1}


def test_clustering_statistics_by_hand(tmp_path):
    from sentaug.data.clustering import DATASETS

    for name, file in DATASETS.items():
        write(tmp_path / "clustering" / file, "text,label\none two,a\nthree four five six,a\n"
                                                  '"seven, eight",b\nnine,a\nten eleven,c\n')
    stats = clustering_stats(tmp_path)
    # 5 texts of 2, 4, 2, 1, 2 words; classes a (3), b (1), c (1)
    assert stats["AgNews"] == {"N": 5, "mean_words": 11 / 5, "classes": 3, "imbalance": 3.0}
    out = data_stats_cli("clustering", tmp_path, tmp_path / "stats.json")
    assert json.loads((tmp_path / "stats.json").read_text())["Tweet"] == out["Tweet"] == stats["Tweet"]
    with pytest.raises(ValueError, match="unknown statistic 'words'"):
        data_stats_cli("words", tmp_path, tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


@pytest.mark.mirror
def test_real_sts_statistics_are_sdas_table_2(mirror):
    """SDA Table 2's English columns exactly; the Chinese column is CNSD's real sizes (the paper rounds)."""
    stats = sts_stats(mirror)
    assert [stats[y]["test"] for y in ("STS12", "STS13", "STS14", "STS15", "STS16")] == [3108, 1500, 3750, 3000, 1186]
    assert stats["STSBenchmark"] == {"train": 5749, "dev": 1500, "test": 1379}
    assert stats["SICKRelatedness"] == {"train": 4500, "dev": 500, "test": 4927}
    assert stats["CNSD"] == {"train": 5231, "dev": 1458, "test": 1361}


@pytest.mark.mirror
def test_real_clustering_statistics_round_to_vascls_table_4(mirror):
    stats = clustering_stats(mirror)
    published = {"AgNews": (8.0, 23, 4, 1), "SearchSnippets": (12.3, 18, 8, 7), "StackOverflow": (20.0, 8, 20, 1),
                 "Biomedical": (20.0, 13, 20, 1), "GoogleNews-TS": (11.1, 28, 152, 143)}
    for name, (n_k, words, classes, imn) in published.items():
        s = stats[name]
        assert (round(s["N"] / 1000, 1), round(s["mean_words"]), s["classes"], round(s["imbalance"])) == \
            (n_k, words, classes, imn), name
    # Tweet: 2.5K texts, 89 classes, ImN 249 as published; 8.56 mean words, which VaSCL prints as 8
    tweet = stats["Tweet"]
    assert (tweet["N"], tweet["classes"], tweet["imbalance"]) == (2472, 89, 249.0)
    assert 8 < tweet["mean_words"] < 9


def test_table_cells_come_from_the_statistics(tmp_path, sts_root):
    data_stats_cli("sts", sts_root, tmp_path / "sts.json")
    inputs = json.dumps({"rows": {str(i): [str(tmp_path / "sts.json")] for i in range(3)}})
    render_table(str(ROOT / "papers/sda.yaml"), "table2", inputs, str(tmp_path / "t2.tex"), "demo")
    import pandas as pd

    csv = pd.read_csv(tmp_path / "t2.csv").set_index(["row", "column"])
    assert csv.loc[("test", "STS15"), "reproduced"] == 2 and csv.loc[("test", "STS15"), "paper"] == 3000
    assert csv.loc[("train", "SICKRelatedness"), "reproduced"] == 5
    assert csv.loc[("dev", "CNSD"), "reproduced"] == 2 and csv.loc[("dev", "CNSD"), "diff"] == 2 - 1500


def test_dry_run_resolves_the_statistics_tables(tmp_path):
    """`snakemake -n` for SDA Table 2 and VaSCL Table 4 at demo scale: one data_stats job each, reading the
    demo data folders, and the tables read its JSON."""
    results = tmp_path / "results"
    targets = [f"{results}/tables/sda/table2.tex", f"{results}/tables/vascl/table4.tex"]
    run = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--nolock", *targets,
                          "--config", f"results={results}", "scale=demo"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    out = run.stdout
    assert f"data-stats sts --data {results}/data/demo --out {results}/analysis/data_stats/demo/sts.json" in out
    assert f"data-stats clustering --data {results}/data/demo --out " \
           f"{results}/analysis/data_stats/demo/clustering.json" in out
    assert f"download cnsd --origin demo --out {results}/data/demo" in out
    assert f'"0": ["{results}/analysis/data_stats/demo/sts.json"]' in out
