# The two commands of the README. Both set the environment up on first use (scripts/setup.sh, when .venv is
# missing) and work on a fresh clone with no mirror: the demo scale reads only the bundled demo data.
#
#   make demo     every declared table and figure at demo scale (Snakemake's default target `all`), then the
#                 report (results/report.html)
#   make test     the tests; `make test FAST=1` leaves out the slow ones (marker `slow`: the workflow builds
#                 through Snakemake, minutes each) for a quick check while working. CI runs them all.
#
#   make small    every declared table and figure at small scale (real data: downloads, or SENTAUG_MIRROR) into
#                 results/small (SMALL_RESULTS), apart from the demo's results/: about 2.5 hours on 2 cores
#   make test-real  every table, figure and leaderboard and the report at the `test` scale (small's stand-ins on
#                 slices of the real data, a few steps, one seed) into results/test (TEST_RESULTS), from the
#                 downloads or SENTAUG_MIRROR: minutes; CI runs it beside the tests (docs/scales.md)
#
# Generated pages of docs/ (never edited by hand): make docs-cli (docs/cli.md, from the parser), make docs-results
# (docs/results.md, from the small-scale tables in results/small; SMALL_RESULTS=... for another folder),
# make docs-results-demo (docs/results-demo.md, from the demo's tables in results/; RESULTS=...) and make
# docs-fidelity (docs/fidelity.md, paper scale's settings against the authors' code).
#
# Variables: CORES (default all), SNAKEFLAGS (extra Snakemake flags, e.g. --config scale=small),
# PYTEST_ARGS (e.g. tests/data/test_download.py -q), REPORT (the report's file, default results/report.html).
# To add a step to `make demo` (a report, a leaderboard), write a .PHONY target for it and append its name to
# DEMO_STEPS (DEMO_STEPS += demo-report); the steps run one after the other, in the order listed.

VENV        := .venv
PYTHON      := $(VENV)/bin/python
SNAKEMAKE   := $(VENV)/bin/snakemake
CORES       ?= all
SNAKEFLAGS  ?=
PYTEST_ARGS ?=
FAST        ?=
RESULTS     ?= results
SMALL_RESULTS ?= results/small
TEST_RESULTS ?= results/test
REPORT      ?= results/report.html
DEMO_STEPS  := demo-build report

# This checkout's package, also when the environment was installed from another checkout.
export PYTHONPATH := $(CURDIR)/src$(if $(PYTHONPATH),:$(PYTHONPATH))

.PHONY: setup test test-real demo demo-build small dry-run-paper benchmark-workflow report docs-cli \
        docs-results docs-results-demo docs-fidelity

$(PYTHON):
	scripts/setup.sh

setup:
	scripts/setup.sh

test: | $(PYTHON)
	$(PYTHON) -m pytest $(if $(FAST),-m "not slow") $(PYTEST_ARGS)

demo: | $(PYTHON)
	@for step in $(DEMO_STEPS); do $(MAKE) --no-print-directory $$step || exit 1; done

demo-build: | $(PYTHON)
	$(SNAKEMAKE) --cores $(CORES) $(SNAKEFLAGS)

small: | $(PYTHON)
	$(SNAKEMAKE) --cores $(CORES) --keep-going --config scale=small results=$(SMALL_RESULTS) $(SNAKEFLAGS)

# Every target of the test scale from the real data (--keep-going: a table whose data cannot be had fails with
# the file it lacks named in one line, and the others still build; make then fails), then its report.
test-real: | $(PYTHON)
	$(SNAKEMAKE) --cores $(CORES) --keep-going --config scale=test results=$(TEST_RESULTS) $(SNAKEFLAGS)
	$(MAKE) --no-print-directory report SNAKEFLAGS="--config scale=test results=$(TEST_RESULTS) $(SNAKEFLAGS)" \
	    REPORT=$(TEST_RESULTS)/report.html

# The whole paper-scale DAG, resolved but not run.
dry-run-paper: | $(PYTHON)
	$(SNAKEMAKE) -n --quiet all --config scale=paper $(SNAKEFLAGS)

# Measures the demo build and the paper-scale dry run against their budgets (benchmarks/workflow_budget.py).
benchmark-workflow: | $(PYTHON)
	$(PYTHON) benchmarks/workflow_budget.py

# Snakemake's report of whatever is built (each table, figure and leaderboard whose files exist, one category per
# paper): opens offline, after a full build or after one table alone. Its front page says what was built, what is
# not built yet (each with the command that builds it), how far each paper's tables are from its numbers, and
# the bill: the paper scale's projection beside what the build took. `sentaug cost` writes the bill as data (with
# SNAKEFLAGS' config); rule report_built renders the pages of what is built (only those: --rerun-triggers mtime
# keeps what is built as it was built), the front page and the bill's page; `snakemake --report` gathers them.
report: | $(PYTHON)
	$(PYTHON) -m sentaug.cli cost all --front-page --snakemake-args "$(SNAKEFLAGS)" > /dev/null
	$(SNAKEMAKE) report_built --cores $(CORES) --rerun-triggers mtime --forcerun report_front_page $(SNAKEFLAGS)
	$(SNAKEMAKE) --report $(REPORT) report_built $(SNAKEFLAGS)
	@echo "Report written: open $(abspath $(REPORT)) in a browser"

docs-cli: | $(PYTHON)
	$(PYTHON) -m sentaug.cli generate-docs cli --out docs/cli.md

docs-results: | $(PYTHON)
	$(PYTHON) -m sentaug.cli generate-docs results --results $(SMALL_RESULTS) --out docs/results.md

docs-results-demo: | $(PYTHON)
	$(PYTHON) -m sentaug.cli generate-docs results --results $(RESULTS) --out docs/results-demo.md

docs-fidelity: | $(PYTHON)
	$(PYTHON) -m sentaug.cli generate-docs fidelity --out docs/fidelity.md
