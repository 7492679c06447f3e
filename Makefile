# Convenience targets; the README gives the same commands.
.PHONY: setup test test-all demo report
setup:
	scripts/setup.sh
test:
	.venv/bin/python -m pytest -q
demo:
	.venv/bin/snakemake results/tables/sda/table4.tex --cores all
# Snakemake's report of what was built (every table and figure, one category per paper): opens offline.
report:
	.venv/bin/snakemake --report results/report.html
