"""The evaluation suites (`sentaug evaluate SUITE`) and the data folders each reads, written once: the command line
fetches those folders when no --data is given (sentaug.evaluate.cli), the workflow makes them a job's inputs
(sentaug.workflow.Paths.suite_data), and the report has a table kind per suite (sentaug.report.kinds). Importing
this module imports nothing else.

A folder is an output of a source of src/sentaug/data/sources.yaml, under a data root (`results/data/<origin>`
in the workflow, `sentaug.evaluate.cli.data_home()` on the command line).
"""
from __future__ import annotations

SUITES: dict[str, tuple[str, ...]] = {
    "sts": ("sts", "sick"),            # STS12-16, STS-B and SICK-R by SimCSE's SentEval protocol
    "transfer": ("transfer",),
    "clustering": ("clustering",),
    "intent": ("intent",),
    "glue": ("glue",),                 # one folder per task fine-tuned on: glue/<TASK>
    "analysis": ("sts", "clustering", "nli/snli_senteval"),
    "cnsd": ("cnsd",),
    "nli": ("nli/anli",),              # and the folders of the triplet sets its isomorphism part reads (--set)
    "cola": ("glue/CoLA",),
}
