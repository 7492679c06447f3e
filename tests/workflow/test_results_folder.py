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


def _first_answer(stderr: str) -> tuple[int, str]:
    """(lines before it, the first line of ours): what a user reads first after Snakemake's few start-up lines."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    start = ("Using workflow specific profile", "Assuming unrestricted shared", "Building DAG of jobs",
             "Config file config.yaml is extended")
    before = [ln for ln in lines if ln.startswith(start)]
    return len(before), next(ln for ln in lines if not ln.startswith(start))


def test_a_table_without_its_paper_folder_is_answered_first_with_the_papers_paths():
    """`results/tables/table3.tex`, as a user types the mission's command: the papers' paths of that name, as the
    first line after Snakemake's three start-up lines (the profile keeps its banner quiet)."""
    asked = snakemake("results/tables/table3.tex", "-n", "--nolock")
    assert asked.returncode == 1
    before, first = _first_answer(asked.stderr)
    assert before <= 3 and "SNAKEMAKE" not in asked.stdout + asked.stderr      # no banner
    assert first == ("results/tables/table3.tex: a paper's table is under the paper's folder, "
                     "results/tables/<paper>/table3.tex; 5 papers declare table 'table3': results/tables/sda/table3.tex, "
                     "results/tables/cards/table3.tex, results/tables/vascl/table3.tex, "
                     "results/tables/augcse/table3.tex, results/tables/clear/table3.tex")
    figure = snakemake("results/figures/figure9.pdf", "-n", "--nolock")
    assert _first_answer(figure.stderr)[1].startswith(
        "results/figures/figure9.pdf: no paper declares a figure 'figure9' (did you mean 'figure2'?); a paper's "
        "figure is results/figures/<paper>/<figure>.pdf, e.g. results/figures/sda/figure2.pdf")
    assert "Traceback" not in asked.stderr + figure.stderr


def test_the_leaderboards_and_the_census_stay_their_own_rules():
    import re

    from sentaug.snakemake_hooks import misplaced_target_pattern

    pattern = misplaced_target_pattern(["leaderboard", "leaderboard-roberta-base", "augmentations"])
    for name in ("leaderboard.tex", "leaderboard-roberta-base.png", "augmentations.csv"):
        assert not re.match(pattern + r"\.", name), name
    assert re.fullmatch(pattern, "table3") and re.fullmatch(pattern, "leaderboards")
    board = snakemake("results/tables/leaderboard.md", "-n", "--nolock", "--quiet", "rules")
    assert board.returncode == 0, board.stderr[-2000:]
