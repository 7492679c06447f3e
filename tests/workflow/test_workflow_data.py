"""Which data each suite reads at each scale (sentaug.workflow): the bundled demo data at demo scale, the official
sources above it, GLUE per task; and the memoised training specs the DAG's input functions ask for."""
from pathlib import Path


import sentaug.config as sc
from sentaug.evaluate import suites
from sentaug.workflow import Workflow, data_folders

ROOT = Path(__file__).resolve().parents[2]


def test_suites_read_the_scales_own_data(cfg):
    demo = Workflow({**cfg, "scale": "demo"}, results="R")
    small = Workflow({**cfg, "scale": "small"}, results="R")
    assert demo.evaluations.suite_data("transfer") == ["R/data/demo/transfer"]
    assert small.evaluations.suite_data("clustering") == ["R/data/official-small/clustering"]     # its slices
    # the analysis suite also reads SNLI pairs (VaSCL Figure 2b)
    assert demo.evaluations.suite_data("analysis") == ["R/data/demo/sts", "R/data/demo/clustering",
                                                        "R/data/demo/nli/snli_senteval"]
    assert demo.evaluations.suite_data("intent", origin="official") == ["R/data/official/intent"]
    assert demo.paths.pretrained_suite_eval("tiny-bert", "transfer", "avg") == \
        "R/eval/pretrained/demo/tiny-bert/transfer/avg.json"
    # GLUE: one folder per task; below paper scale only the tasks whose training sets are offline
    assert demo.evaluations.suite_data("glue") == [f"R/data/demo/glue/{t}" for t in
                                       ("CoLA", "SST-2", "MRPC", "RTE", "STS-B", "QQP", "QNLI", "MNLI")]
    assert small.evaluations.glue_tasks == ["CoLA", "SST-2", "MRPC", "RTE", "STS-B"]
    assert small.evaluations.suite_args("glue") == \
        "--tasks CoLA SST-2 MRPC RTE STS-B --max-steps 40 --train-batch-size 16 --max-seq-length 64"
    assert "--train-on-dev" not in demo.evaluations.suite_args("glue")
    # AugCSE Table 15's triplet sets reach the nli suite at every scale (the demo's other flags do not hide them)
    assert demo.evaluations.suite_args("nli") == "--set nli=snli --set anli=anli_devtest"
    assert demo.evaluations.suite_args("intent") == "--iterations 200" and small.evaluations.suite_args("intent") == "--iterations 300"
    paper = Workflow({**cfg, "scale": "paper"}, results="R")
    assert paper.evaluations.suite_args("transfer") == "--mode test"
    assert demo.evaluations.suite_args("transfer") == "--mode fast"
    assert paper.evaluations.suite_args("glue") == "--tasks CoLA SST-2 MRPC RTE STS-B QQP QNLI MNLI"


def test_every_suite_folder_is_a_data_source(cfg):
    """Each folder a suite reads is installed by one `sentaug download` (a rule's output), at every scale."""
    folders = set(data_folders()) | {"sts", "sick"}
    for scale in ("demo", "small", "paper"):
        wf = Workflow({**cfg, "scale": scale}, results="R")
        for suite in suites.names():
            for path in wf.evaluations.suite_data(suite):
                assert path.split("/", 3)[3] in folders, (scale, suite, path)
    assert {"transfer", "clustering", "intent", "cnsd", "nli/anli", "glue/MNLI"} <= set(data_folders())


def test_train_spec_is_memoised_and_returned_as_a_copy(cfg):
    wf = Workflow({**cfg, "scale": "demo"}, results="R")
    a = wf.specs.run_spec("shared", "tiny-roberta", "cards~positive.p=0.2", 1)
    assert a == sc.train_spec(cfg | {"scale": "demo"}, None, "roberta-base", "cards~positive.p=0.2", 1)
    a["positive"]["p"] = 0.9                      # a caller's edit must not leak into the next answer
    assert wf.specs.run_spec("shared", "tiny-roberta", "cards~positive.p=0.2", 1)["positive"]["p"] == 0.2
    assert len(wf.specs._specs) == 1


def test_the_command_line_fetches_the_sources_of_each_suites_folders():
    """`sentaug evaluate SUITE` without --data fetches the sources that install the folders each registered suite
    names (STS-B and SICK come in SentEval's archive, GLUE's tasks one source each)."""
    from sentaug.data.download import load_sources, source_names
    from sentaug.evaluate.cli import _source_of

    sources = load_sources()["official"]
    assert (_source_of("sts", sources), _source_of("sick", sources), _source_of("transfer", sources)) == \
        ("senteval", "senteval", "transfer")
    for suite in suites.names():
        for folder in suites.folders(suite):
            installed = {out for name in source_names(_source_of(folder, sources), "official")
                         for out in sources[name]["outputs"]}
            assert folder in installed or suite == "glue" and installed >= {"glue/CoLA", "glue/MNLI"}, (suite, folder)
