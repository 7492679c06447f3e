"""Readers of the GLUE, NLI (pairs, triplets, ANLI) and Chinese STS formats: hand-built files with known
contents and known defects, and the real files against the sizes and label counts their releases state
(../shared/data/*/PROVENANCE.md, GLUE's and ANLI's published split sizes)."""
import csv
import hashlib
import io
from collections import Counter
from pathlib import Path

import pytest

from sentaug.data.cnsd import read_cnsd, read_cnsd_split
from sentaug.data.glue import mrpc_split, read_glue
from sentaug.data.nli import NLIPair, NLITriplet, read_anli, read_nli_pairs, read_nli_triplets


def write(path: Path, text: str, encoding="utf-8") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding))
    return path


# -- GLUE ---------------------------------------------------------------------------------------------
STSB = ("index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore\n"
        '0\tmain-news\tf\t2012\t1\tnone\tnone\t"Quoted start, no end.\tA plain one.\t3.800\n'
        '1\tmain-news\tf\t2012\t2\tnone\tnone\tSecond "row\tends here"\t1.000\n'
        "2\tmain-news\tf\t2012\t3\tnone\tnone\tThird.\tThird!\t5.000\n")


def test_glue_tsv_is_read_with_quoting_off(tmp_path):
    write(tmp_path / "STS-B/train.tsv", STSB)
    split = read_glue(tmp_path / "STS-B", "train")
    # default csv quoting would join rows 1 and 2 at the unbalanced quotes; quoting off keeps 3 rows as written
    with open(tmp_path / "STS-B/train.tsv", newline="") as f:
        assert len(list(csv.reader(f, delimiter="\t"))) - 1 < 3
    assert split.text_a == ['"Quoted start, no end.', 'Second "row', "Third."]
    assert split.text_b == ["A plain one.", 'ends here"', "Third!"]
    assert split.labels.tolist() == [3.8, 1.0, 5.0]


def test_glue_headerless_cola_bom_mrpc_and_mnli_columns(tmp_path):
    write(tmp_path / "CoLA/dev.tsv", "gj04\t1\t\tThe sailors rode.\ngj04\t0\t*\tRode the.")  # no final newline
    cola = read_glue(tmp_path / "CoLA", "dev")
    assert cola.text_a == ["The sailors rode.", "Rode the."] and cola.text_b is None and cola.labels.tolist() == [1, 0]
    write(tmp_path / "MRPC/dev.tsv", "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\r\n1\t1\t2\tA .\tB .\r\n")
    mrpc = read_glue(tmp_path / "MRPC", "dev")
    assert (mrpc.text_a, mrpc.text_b, mrpc.labels.tolist()) == (["A ."], ["B ."], [1])
    header = "index\tpromptID\tpairID\tgenre\tsentence1\tsentence2\tlabel1\tgold_label"
    write(tmp_path / "MNLI/dev_matched.tsv", f"{header}\n0\t1\t1n\tgov\tP one\tH one\tneutral\tneutral\n"
                                             "1\t2\t2e\tgov\tP two\tH two\tentailment\tentailment\n")
    mnli = read_glue(tmp_path / "MNLI", "dev_matched")
    assert mnli.labels.tolist() == [2, 1]  # contradiction, entailment, neutral
    # the task can be named when the folder is not a GLUE task name
    write(tmp_path / "elsewhere/dev.tsv", "sentence\tlabel\nfine .\t1\n")
    assert read_glue(tmp_path / "elsewhere", "dev", task="SST-2").labels.tolist() == [1]


def test_glue_malformed_rows_name_file_and_line(tmp_path):
    write(tmp_path / "RTE/train.tsv", "index\tsentence1\tsentence2\tlabel\n0\ta\tb\tentailment\n1\tc\td\tmaybe\n")
    with pytest.raises(ValueError, match=r"RTE/train\.tsv:3: label 'maybe'"):
        read_glue(tmp_path / "RTE", "train")
    write(tmp_path / "SST-2/train.tsv", "sentence\tlabel\ngood .\t1\nno label here\n")
    with pytest.raises(ValueError, match=r"SST-2/train\.tsv:3: 1 tab-separated fields, expected at least 2"):
        read_glue(tmp_path / "SST-2", "train")
    write(tmp_path / "STS-B/dev.tsv", STSB.replace("5.000", "five"))
    with pytest.raises(ValueError, match=r"STS-B/dev\.tsv:4: score 'five' is not a number"):
        read_glue(tmp_path / "STS-B", "dev")
    write(tmp_path / "QNLI/dev.tsv", "index\tquestion\tlabel\n0\tq\tentailment\n")
    with pytest.raises(ValueError, match=r"QNLI/dev\.tsv: header lacks column\(s\) sentence"):
        read_glue(tmp_path / "QNLI", "dev")
    with pytest.raises(FileNotFoundError, match=r"CoLA/train\.tsv: GLUE CoLA train split not found"):
        read_glue(tmp_path / "CoLA", "train")
    with pytest.raises(ValueError, match="unknown GLUE task 'elsewhere'"):
        read_glue(tmp_path / "elsewhere", "dev")


def test_mrpc_split_follows_glue_script_by_hand():
    msr = ("\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\r\n"
           "1\t10\t11\tA .\tB .\r\n0\t12\t13\tC .\tD . \r\n1\t14\t15\tE .\tF .\r\n").encode()
    train, dev = mrpc_split(msr, b"12\t13\n")
    head = "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
    assert dev.decode() == head + "0\t12\t13\tC .\tD .\n"          # listed id pair, line stripped
    assert train.decode() == head + "1\t10\t11\tA .\tB .\n1\t14\t15\tE .\tF .\n"
    with pytest.raises(ValueError, match=r"msr_paraphrase_train\.txt:3: 4 tab-separated fields"):
        mrpc_split(b"h\n1\t2\t3\ta\tb\n1\t2\t3\ta\n", b"")


# Sizes and label counts of GLUE's files (GLUE's published split sizes; label counts from PROVENANCE.md)
GLUE_SIZES = {("CoLA", "train"): (8551, {1: 6023, 0: 2528}), ("CoLA", "dev"): (1043, None),
              ("RTE", "train"): (2490, {0: 1249, 1: 1241}), ("RTE", "dev"): (277, None),
              ("MRPC", "train"): (3668, {1: 2474, 0: 1194}), ("MRPC", "dev"): (408, {1: 279, 0: 129}),
              ("STS-B", "train"): (5749, None), ("STS-B", "dev"): (1500, None),
              ("SST-2", "train"): (67349, {1: 37569, 0: 29780}), ("SST-2", "dev.found"): (872, {1: 444, 0: 428}),
              ("QNLI", "dev"): (5463, {0: 2702, 1: 2761})}


@pytest.mark.mirror
def test_real_glue_files_have_their_published_sizes(mirror):
    for (task, split), (n, counts) in GLUE_SIZES.items():
        data = read_glue(mirror / "glue" / task, split)
        assert len(data.labels) == n, (task, split)
        if counts:
            assert dict(Counter(data.labels.tolist())) == counts, (task, split)


@pytest.mark.mirror
def test_mrpc_split_reproduces_glues_files(mirror):
    """GLUE's own MRPC dev.tsv (from SuperGen, byte-exact) comes out of SentEval's msr file + GLUE's dev ids."""
    msr = (mirror / "transfer/MRPC/msr_paraphrase_train.txt").read_bytes()
    train, dev = mrpc_split(msr, (mirror / "glue/MRPC/dev_ids.tsv").read_bytes())
    assert dev == (mirror / "glue/MRPC/dev.tsv").read_bytes()
    assert hashlib.sha256(train).hexdigest() == "69abcedee3cf738c6ce58d772e43e1b7cdf5b4edee4aceda459c0d9f4e5599f3"


# -- NLI pairs (SentEval layout) ----------------------------------------------------------------------
def snli(folder: Path, split: str, s1: str, s2: str, labels: str) -> Path:
    for name, text in (("s1", s1), ("s2", s2), ("labels", labels)):
        write(folder / f"{name}.{split}", text)
    return folder


def test_nli_pairs(tmp_path):
    snli(tmp_path, "dev", "A man sleeps . \nTwo  dogs run . \n", "A person rests . \nNo dogs . \n",
         "entailment\ncontradiction\n")
    assert read_nli_pairs(tmp_path, "dev") == [NLIPair("A man sleeps .", "A person rests .", "entailment"),
                                               NLIPair("Two dogs run .", "No dogs .", "contradiction")]
    snli(tmp_path, "test", "a\nb\n", "c\nd\n", "neutral\nunknown\n")
    with pytest.raises(ValueError, match=r"labels\.test:2: label 'unknown'"):
        read_nli_pairs(tmp_path, "test")
    snli(tmp_path, "test", "a\nb\n", "c\n \n", "neutral\nneutral\n")
    with pytest.raises(ValueError, match=r"s2\.test:2: empty sentence"):
        read_nli_pairs(tmp_path, "test")
    snli(tmp_path, "test", "a\nb\n", "c\n", "neutral\nneutral\n")
    with pytest.raises(ValueError, match=r"test files differ in length: s1\.test 2, s2\.test 1, labels\.test 2"):
        read_nli_pairs(tmp_path, "test")
    with pytest.raises(FileNotFoundError, match=r"s1\.train: file not found"):
        read_nli_pairs(tmp_path, "train")


@pytest.mark.mirror
def test_real_snli_pairs_have_the_gold_labelled_sizes(mirror):
    """SNLI 1.0 dev/test without the pairs that have no gold label (PROVENANCE.md; the SNLI paper's sizes)."""
    dev, test = (read_nli_pairs(mirror / "nli/snli_senteval", s) for s in ("dev", "test"))
    assert Counter(p.label for p in dev) == {"entailment": 3329, "neutral": 3235, "contradiction": 3278}
    assert Counter(p.label for p in test) == {"entailment": 3368, "neutral": 3219, "contradiction": 3237}
    assert test[0] == NLIPair("This church choir sings to the masses as they sing joyous songs from the book at "
                              "a church .", "The church has cracks in the ceiling .", "neutral")


# -- NLI triplets (SimCSE's nli_for_simcse.csv) --------------------------------------------------------
def test_nli_triplets(tmp_path):
    rows = [["sent0", "sent1", "hard_neg"], ["One, two.", 'He said "hi".', "Nobody spoke."],
            ["A line\nbreak inside.", "Positive.", "Negative."]]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    path = write(tmp_path / "nli_for_simcse.csv", buf.getvalue())
    assert read_nli_triplets(path) == [NLITriplet(*rows[1]), NLITriplet(*rows[2])]
    write(path, "sent0,sent1,hard_neg\na,b,c\nd,e\n")
    with pytest.raises(ValueError, match=r"nli_for_simcse\.csv:3: 2 fields, expected 3"):
        read_nli_triplets(path)
    write(path, 'sent0,sent1,hard_neg\na,b,c\n"quoted\n",e,\n')   # the row spans lines 3-4
    with pytest.raises(ValueError, match=r"nli_for_simcse\.csv:4: empty hard_neg"):
        read_nli_triplets(path)
    write(path, "premise,hypothesis,label\na,b,c\n")
    with pytest.raises(ValueError, match=r"nli_for_simcse\.csv:1: header is \['premise'"):
        read_nli_triplets(path)


# -- ANLI jsonl ---------------------------------------------------------------------------------------
def test_anli(tmp_path):
    good = ('{"uid": "u1", "context": "P1.", "hypothesis": "H1.", "label": "c", "reason": ""}\n'
            '{"uid": "u2", "context": "P2.", "hypothesis": "H2.", "label": "e"}\n')
    path = write(tmp_path / "R1/dev.jsonl", good)
    assert read_anli(path) == [NLIPair("P1.", "H1.", "contradiction"), NLIPair("P2.", "H2.", "entailment")]
    for bad, message in [('{"context": "P", "hypothesis": "H", "label": "x"}', "label 'x' is not one of e, n, c"),
                         ('{"context": "P", "label": "n"}', "no string field 'hypothesis'"),
                         ('{"context": "P", "hypothesis": "H", "label": "n"', "not a JSON object"),
                         ("[1, 2]", "not a JSON object"),
                         ("", "not a JSON object")]:
        write(path, good + bad + "\n")
        with pytest.raises(ValueError, match=rf"R1/dev\.jsonl:3: {message}"):
            read_anli(path)


@pytest.mark.mirror
def test_real_anli_has_the_published_sizes(mirror):
    """ANLI v1.0 dev/test: 1,000 / 1,000 / 1,200 per round, labels as PROVENANCE.md counts them."""
    sizes = {"R1": (334, 333, 333), "R2": (334, 333, 333), "R3": (402, 402, 396)}
    for rnd, (e, n, c) in sizes.items():
        for split in ("dev", "test"):
            counts = Counter(p.label for p in read_anli(mirror / f"nli/anli/{rnd}/{split}.jsonl"))
            assert counts == {"entailment": e, "neutral": n, "contradiction": c}, (rnd, split)


# -- Chinese STS-B (CNSD) -----------------------------------------------------------------------------
def test_cnsd(tmp_path):
    path = write(tmp_path / "cnsd-sts-dev.txt", "2012test-0000||一个男人在跳舞。||一个男人在跳舞。||5\n"
                                                "2012test-0002||一个小孩在骑马。||孩子在骑马。||4\n")
    pairs = read_cnsd(path)
    assert pairs.s1 == ["一个男人在跳舞。", "一个小孩在骑马。"] and pairs.s2[1] == "孩子在骑马。"
    assert pairs.gold.tolist() == [5.0, 4.0]
    for bad, message in [("x||a||b", "3 '||'-separated fields"), ("x||a||b||high", "score 'high' is not a number"),
                         ("x||a||b||7", "score '7' is outside 0-5"), ("x||||b||3", "empty sentence")]:
        write(path, "2012test-0000||甲||乙||5\n" + bad + "\n")
        with pytest.raises(ValueError, match=rf"cnsd-sts-dev\.txt:2: {message}"):
            read_cnsd(path)


@pytest.mark.mirror
def test_real_cnsd_sizes(mirror):
    """CNSD's Chinese STS-B: 5,231 / 1,458 / 1,361 pairs (PROVENANCE.md), integer scores 0-5."""
    for split, n in {"train": 5231, "dev": 1458, "test": 1361}.items():
        pairs = read_cnsd_split(mirror, split)
        assert len(pairs.gold) == n and set(pairs.gold.tolist()) == {0.0, 1.0, 2.0, 3.0, 4.0, 5.0}
