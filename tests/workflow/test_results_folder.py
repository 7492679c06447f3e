"""`--config results=DIR` moves every output under DIR (how two scales are kept apart: scale=small
results=results/small); a target asked for where it was before is answered with where it moved, in one line."""
import pytest

from sentaug.snakemake_hooks import moved_target_pattern
from tests.workflow_runs import isolated_workdir, snakemake


def test_a_target_left_under_results_gets_the_path_it_moved_to(tmp_path):
    wd = isolated_workdir(tmp_path)      # the dry run writes run specs under results/small/
    moved = snakemake("results/tables/sda/table4.tex", "-n", "--config", "results=results/small", cwd=wd)
    assert moved.returncode == 1
    last = moved.stderr.strip().splitlines()[-1]
    assert last == ("results/tables/sda/table4.tex: with --config results=results/small every output is under "
                    "results/small/: ask for results/small/tables/sda/table4.tex")
    assert "Traceback" not in moved.stderr and "Exception" not in moved.stderr
    there = snakemake("results/small/tables/sda/table4.tex", "-n", "--config", "results=results/small", cwd=wd)
    assert there.returncode == 0, there.stderr[-2000:]
    assert "table sda/table4" in there.stdout


@pytest.mark.parametrize("results, inside, outside", [
    ("results", None, None),
    ("results/", None, None),
    ("results/small", "other/x.tex", "small/tables/x.tex"),
    ("/tmp/elsewhere", "tables/x.tex", None),
])
def test_moved_pattern_leaves_the_new_folder_to_its_rules(results, inside, outside):
    import re

    pattern = moved_target_pattern(results)
    if inside is None:      # nothing moved: the rule matches no path
        assert not any(re.fullmatch(pattern, p) for p in ("tables/sda/table4.tex", "small/x.tex", "x"))
        return
    assert re.fullmatch(pattern, inside)
    if outside:
        assert not re.fullmatch(pattern, outside)
