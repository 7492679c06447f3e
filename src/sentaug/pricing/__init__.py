"""What the workflow's jobs cost on a GPU, before launch: `sentaug cost` and the runtimes jobs ask a cluster for.

Its modules: `step_times` (a device's measured step-time table and how unmeasured settings are extrapolated),
`calibration` (a table from the GPU benchmarks' JSON files: `python -m sentaug.pricing.calibration`),
`datasheet` (a table for a GPU nobody measured, calibrated from datasheet rates), `freshness` (whether a figure
still times the code that runs), `cost` (one job's projection from a table and the work's sizes), `prices` (how
each kind of job on a GPU is priced, by what sentaug.workflow.jobs says it does), `runtime` (what a job asks a
cluster for as its runtime), `bill` (the bill of a DAG: `sentaug cost`) and `report_data` (the bill as the
report's front page reads it). It stands above sentaug.workflow: it reads the workflow's DAG, jobs and paths, and
the workflow imports nothing of it (the rules ask `runtime` for their runtimes, rules/common.smk).
"""
