# Convenience targets; the README gives the same commands.
.PHONY: setup test test-all demo
setup:
	scripts/setup.sh
test:
	.venv/bin/python -m pytest -q
demo:
	.venv/bin/snakemake results/tables/sda/table4.tex --cores all
