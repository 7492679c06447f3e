"""The test scale (`make test-real`, CI): small's stand-ins on slices of the real data. Its data root is the sliced
origin, every table and figure resolves there, and each caption names the slices its numbers were computed on."""
import os
import subprocess
import sys
from pathlib import Path

import sentaug.config as sc
from sentaug.report.tables import scale_note
from sentaug.workflow import Workflow

ROOT = Path(__file__).resolve().parents[2]


def at_test_scale() -> Workflow:
    return Workflow({**sc.load_yaml(str(ROOT / "config.yaml")), "scale": "test"}, results="R")


def test_the_test_scale_reads_slices_of_the_official_data():
    w = at_test_scale()
    assert w.origin == "official-test" and w.paths.data_folder("sts") == "R/data/official-test/sts"
    assert w.paths.corpus_file() == "R/data/official/wiki/wiki1m_head1k.txt"        # a pinned corpus, not a slice
    assert w.paths.data_slice("intent") == {"per_class": 21, "classes": 2} and w.paths.data_slice("nli/simcse") is None
    gpu = Workflow({**sc.load_yaml(str(ROOT / "config.yaml")), "scale": "gpu"}, results="R")    # no slices
    assert gpu.origin == "official" and gpu.slices == {} and "slices" not in gpu.table_meta("sda", "table4")
    assert w.seeds == [1] and w.evaluations.glue_max_steps() == 4
    assert "--iterations 100" in w.evaluations.suite_args("intent")


def test_each_caption_names_the_slices_its_table_reads():
    w = at_test_scale()
    meta = w.table_meta("sda", "table2")          # data statistics: counted from the slices, not the paper's files
    assert meta["slices"][0] == "sts: 8 evenly spaced scored pairs of each file"
    note = scale_note("test", meta)
    assert "as the paper's" not in note and "slices of the official data files, the rest of each left out" in note
    glue = w.table_meta("cards", "table6")
    assert glue["slices"] == ["glue/CoLA, glue/SST-2, glue/MRPC, glue/RTE, glue/STS-B: 32 evenly spaced rows of "
                              "each file"]
    assert "glue/MNLI/train.tsv" in glue["unbuilt_reason"]
    nli = w.table_meta("augcse", "table2")        # runs trained on NLI triplets: their premises' slices
    assert any(s.startswith("nli/snli_senteval: the first 3 rows of the 30 largest premises") for s in nli["slices"])
    assert w.figure_meta("cards", "figure2")["slices"][0].startswith("sts: ")
    assert w.leaderboard_meta("bert-base-uncased")["slices"]


def test_every_target_of_the_test_scale_resolves(tmp_path):
    """The whole DAG of `make test-real` (every table, figure, leaderboard and report page) resolves: each data
    folder it reads is cut by rule slice_data from a download."""
    out = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--quiet", "rules", "--config", "scale=test",
                          f"results={tmp_path}/results"], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "SENTAUG_MIRROR": str(tmp_path)})
    assert out.returncode == 0, out.stderr[-3000:]
    counts = {line.split()[0]: int(line.split()[1]) for line in out.stdout.splitlines()
              if len(line.split()) == 2 and line.split()[1].isdigit()}
    assert counts["table"] == 34 and counts["figure"] == 13 and counts["leaderboard"] == 2
    assert counts["slice_data"] == 13 and counts["download_data"] == 11
