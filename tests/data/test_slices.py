"""Data slices (the test scale: sentaug.data.slices): whole lines, headers kept, aligned files cut alike, grouped sets
keep whole classes / premises; and the real files' slices read by the real readers (marked `mirror`)."""
import json
from pathlib import Path

import pytest

from sentaug.data.slices import SliceError, describe, even_rows, slice_cli, slice_folder


def write(root: Path, rel: str, text: str, mode: str = "w") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


def test_even_rows_spread_over_the_file_in_order():
    assert even_rows(10, 3) == [0, 3, 6]
    assert even_rows(5, 5) == even_rows(5, 9) == [0, 1, 2, 3, 4]
    rows = even_rows(1000, 12)
    assert len(set(rows)) == 12 and rows == sorted(rows) and rows[-1] >= 900


def test_aligned_files_are_cut_at_the_same_rows_and_headers_kept(tmp_path):
    src = tmp_path / "src"
    write(src, "sts/STS12-en-test/STS.input.t.txt", "".join(f"a{i}\tb{i}\n" for i in range(10)))
    write(src, "sts/STS12-en-test/STS.gs.t.txt", "".join(f"{i % 5}.0\n" if i != 3 else "\n" for i in range(10)))
    write(src, "sick/SICK_trial.txt", "pair_ID\tsentence_A\n" + "".join(f"{i}\tx{i}\r\n" for i in range(8)))
    write(src, "sts/.snakemake_timestamp", "")
    done = slice_folder(src, tmp_path / "out", "sts", {"rows": 4})
    out = tmp_path / "out"
    inputs = (out / "sts/STS12-en-test/STS.input.t.txt").read_text().splitlines()
    golds = (out / "sts/STS12-en-test/STS.gs.t.txt").read_text().splitlines()
    # line 3 has no gold score (an unscored pair, dropped by the reader): no row; 4 of the 9 scored ones are kept
    assert inputs == ["a0\tb0", "a2\tb2", "a5\tb5", "a7\tb7"] and golds == ["0.0", "2.0", "0.0", "2.0"]
    assert done["sts/STS12-en-test/STS.gs.t.txt"] == [4, 10] and not (out / "sts/.snakemake_timestamp").exists()
    write(src, "sts/STS16-en-test/STS.input.u.txt", "".join(f"a{i}\tb{i}\n" for i in range(10)))
    write(src, "sts/STS16-en-test/STS.gs.u.txt", "".join("1.0\n" if i in (8, 9) else "\n" for i in range(10)))
    slice_folder(src, out, "sts", {"rows": 4})
    assert (out / "sts/STS16-en-test/STS.input.u.txt").read_text().splitlines() == ["a8\tb8", "a9\tb9"]
    slice_folder(src, out, "sick", 2)
    sick = (out / "sick/SICK_trial.txt").read_bytes()
    assert sick == b"pair_ID\tsentence_A\n0\tx0\r\n4\tx4\r\n"      # header, CRLF endings: byte for byte
    assert json.loads((out / "sick.slice.json").read_text())["files"]["sick/SICK_trial.txt"] == [2, 8]


def test_per_file_override_and_aligned_files_of_different_lengths(tmp_path):
    src = tmp_path / "src"
    write(src, "sts/STSBenchmark/sts-dev.csv", "".join(f"r{i}\n" for i in range(50)))
    write(src, "sts/STSBenchmark/sts-test.csv", "".join(f"r{i}\n" for i in range(50)))
    slice_folder(src, tmp_path / "out", "sts", {"rows": 2, "files": {"sts/STSBenchmark/sts-dev.csv": 10}})
    assert len((tmp_path / "out/sts/STSBenchmark/sts-dev.csv").read_text().splitlines()) == 10
    assert len((tmp_path / "out/sts/STSBenchmark/sts-test.csv").read_text().splitlines()) == 2
    write(src, "nli/snli_senteval/s1.dev", "a\nb\n")
    write(src, "nli/snli_senteval/s2.dev", "a\n")
    write(src, "nli/snli_senteval/labels.dev", "x\ny\n")
    with pytest.raises(SliceError, match="aligned files differ in length"):
        slice_folder(src, tmp_path / "out2", "nli/snli_senteval", 1)


def test_per_class_keeps_the_largest_classes_alike_in_every_split(tmp_path):
    src = tmp_path / "src"
    base = "intent/toy/fewshot_intent_format"
    train = ["a"] * 5 + ["b"] * 3 + ["c"] * 4
    for split, labels in {"train": train, "valid": ["c", "b", "a", "c"], "test": ["b", "c", "a"]}.items():
        write(src, f"{base}/{split}/label", "".join(f"{y}\n" for y in labels))
        write(src, f"{base}/{split}/seq.in", "".join(f"{split} {i} {y}\n" for i, y in enumerate(labels)))
    slice_folder(src, tmp_path / "out", "intent", {"per_class": 2, "classes": 2})
    out = tmp_path / "out" / base
    assert (out / "train/label").read_text().split() == ["a", "a", "c", "c"]      # a (5) and c (4) of train
    assert (out / "valid/label").read_text().split() == ["c", "a", "c"]
    assert (out / "test/seq.in").read_text().splitlines() == ["test 1 c", "test 2 a"]
    write(src, "clustering/toy.csv", "text,label\n" + "".join(f'"t, {i}",{i % 3}\n' for i in range(9)))
    slice_folder(src, tmp_path / "out", "clustering", {"per_class": 1})
    assert (tmp_path / "out/clustering/toy.csv").read_text().splitlines() == ["text,label", '"t, 0",0', '"t, 1",1',
                                                                             '"t, 2",2']


def test_nli_pairs_keep_whole_premises(tmp_path):
    src = tmp_path / "src"
    premises = ["p1", "p2", "p1", "p3", "p2", "p1"]
    write(src, "nli/snli_senteval/s1.test", "".join(f"{p}\n" for p in premises))
    write(src, "nli/snli_senteval/s2.test", "".join(f"h{i}\n" for i in range(6)))
    write(src, "nli/snli_senteval/labels.test", "".join(f"{y}\n" for y in "ecnece"))
    slice_folder(src, tmp_path / "out", "nli/snli_senteval", {"per_class": 3, "classes": 1})
    assert (tmp_path / "out/nli/snli_senteval/s1.test").read_text().split() == ["p1", "p1", "p1"]
    assert (tmp_path / "out/nli/snli_senteval/s2.test").read_text().split() == ["h0", "h2", "h5"]
    rows = [{"uid": str(i), "context": c, "hypothesis": "h", "label": "e"} for i, c in enumerate("xyxzx")]
    write(src, "nli/anli/R1/dev.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    write(src, "nli/anli/README.txt", "about\n")
    slice_folder(src, tmp_path / "out", "nli/anli", {"per_class": 2, "classes": 1})
    kept = [json.loads(x)["uid"] for x in (tmp_path / "out/nli/anli/R1/dev.jsonl").read_text().splitlines()]
    assert kept == ["0", "2"] and (tmp_path / "out/nli/anli/README.txt").read_text() == "about\n"


def test_bad_slices_and_undeclared_labels_are_errors(tmp_path):
    for bad in ("12", 0, {"rows": 2, "per_class": 1}, {"row": 2}, True):
        with pytest.raises(SliceError):
            slice_folder(tmp_path, tmp_path / "out", "x", bad)
    write(tmp_path / "src", "transfer/MR/rt-polarity.pos", "a\nb\n")
    with pytest.raises(SliceError, match="no declared label"):
        slice_folder(tmp_path / "src", tmp_path / "out", "transfer", {"per_class": 1})
    assert describe("nli/anli", {"per_class": 5, "classes": 15}) == \
        "nli/anli: the first 5 rows of the 15 largest premises in each file"


def test_cli_writes_atomically_and_copies_an_undeclared_folder_whole(tmp_path, capsys):
    src = tmp_path / "src"
    write(src, "transfer/MR/rt-polarity.pos", "".join(f"s{i}\n" for i in range(20)))
    slice_cli("transfer", str(src), str(tmp_path / "out"), "5")
    assert len((tmp_path / "out/transfer/MR/rt-polarity.pos").read_text().splitlines()) == 5
    slice_cli("transfer", str(src), str(tmp_path / "out"), "null")
    assert len((tmp_path / "out/transfer/MR/rt-polarity.pos").read_text().splitlines()) == 20
    assert "copied transfer whole" in capsys.readouterr().out
    assert [p.name for p in (tmp_path / "out").iterdir() if p.name.startswith(".")] == []


# --- the real files (../shared/data): what the test scale's slices give every reader ----------------------------

def neighbourhood_ks() -> list[int]:
    """The top-K values `sentaug evaluate analysis` scores by default (what the workflow runs)."""
    from sentaug.cli import build_parser

    args = build_parser().parse_args(["evaluate", "analysis", "--model", "m", "--pooler", "avg", "--data", "d",
                                      "--out", "o"])
    return args.k


def _test_scale_slices() -> dict:
    from sentaug.config import load_yaml

    return load_yaml(str(Path(__file__).resolve().parents[2] / "config.yaml"))["scales"]["test"]["slices"]


@pytest.fixture(scope="module")
def sliced(mirror, tmp_path_factory):
    """The test scale's slices of the official folders, installed from the mirror with their pins (as rules
    download_* and slice_data do)."""
    from sentaug.data.download import fetch

    installed, out = tmp_path_factory.mktemp("official"), tmp_path_factory.mktemp("sliced")
    slices = _test_scale_slices()
    for name in ["senteval", *[f for f in slices if f not in ("sts", "sick")]]:
        fetch(name, installed, mirror=str(mirror))
    for folder, spec in slices.items():
        slice_folder(installed, out, folder, spec)
    return out


@pytest.mark.mirror
def test_real_slices_are_read_by_the_readers(sliced):
    from sentaug.data.clustering import DATASETS, load_clustering
    from sentaug.data.cnsd import read_cnsd_split
    from sentaug.data.glue import read_glue
    from sentaug.data.senteval import STS_YEARS, read_split, read_sts_year, task_folder
    from sentaug.data.transfer import TASKS, load_transfer

    for year in STS_YEARS:
        assert all(len(p.gold) > 0 for p in read_sts_year(task_folder(sliced, year)).values())
    assert len(read_split(sliced, "STSBenchmark", "dev").gold) == 8
    assert len(read_split(sliced, "SICKRelatedness", "test").gold) == 8      # SICK test: CRLF, a header
    transfer = load_transfer(sliced, TASKS)
    assert set(transfer) == set(TASKS)
    clusters = load_clustering(sliced)
    assert set(clusters) == set(DATASETS) and all(c.n_classes >= 2 for c in clusters.values())
    # the analyses' top-K neighbourhoods on StackOverflow (VaSCL Fig. 2) need more rows than their largest K
    assert len(clusters["StackOverflow"].texts) > max(neighbourhood_ks())
    for task in ("CoLA", "SST-2", "MRPC", "RTE", "STS-B"):           # MRPC's BOM, CoLA without a header
        for split in ("train", "dev"):
            assert len(read_glue(sliced / "glue" / task, split, task=task).labels) == 32
    assert len(read_cnsd_split(sliced, "test").gold) == 24


@pytest.mark.mirror
def test_real_intent_slices_give_every_few_shot_split(sliced):
    from sentaug.data.intent import DATASETS, load_intent
    from sentaug.evaluate.intent import KS, N_SPLITS, fewshot_split

    sets = load_intent(sliced)
    assert set(sets) == set(DATASETS)
    for name, data in sets.items():
        assert len(data.classes) == 2, name         # ATIS keeps its two largest (>= 40 pool examples each)
        for k in KS:
            for split in range(N_SPLITS):
                train, val = fewshot_split(data.pool.labels, data.classes, k, split)
                assert len(train) == 2 * k


@pytest.mark.mirror
def test_real_nli_slices_still_form_triplets(sliced, tmp_path):
    from sentaug.data.triplets import build_triplets

    for name in ("snli", "anli_devtest"):
        assert len(build_triplets(sliced, name)) >= 10, name
