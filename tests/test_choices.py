"""A name that is not a valid choice is answered with the closest valid ones first (sentaug.choices); the
Snakemake-facing code answers with the message alone (tests/test_faults.py runs the real commands)."""
import pytest

from sentaug.choices import SHOWN, Answer, UnknownName, answered, closest_first, did_you_mean, unknown
from sentaug.config import ConfigError

SDA = ["table2", "table3", "table4", "table5", "table6", "table7"]


def test_the_closest_names_come_first_by_difflibs_ratio_then_the_others_as_given():
    # ratio 2M/T over both lengths: 'tabel4' ~ 'table4' matches "tab", "e", "4" in order... M = 5: 10/12 = 0.83;
    # ~ 'table2' M = 4 ("tab", "e" or "l"): 8/12 = 0.67 >= 0.6, as every other table: a tie kept in its given order
    assert closest_first("tabel4", SDA) == ["table4", "table2", "table3", "table5", "table6", "table7"]
    # 'cardz' ~ 'cards' 8/10 = 0.8; ~ 'cards_r_top' 8/16 = 0.5 and 'simcse' 2/11: not close, left in place
    assert closest_first("cardz", ["simcse", "cards_r_top", "cards", "vascl"]) == \
        ["cards", "simcse", "cards_r_top", "vascl"]
    assert closest_first("SDA", ["vascl", "sda"]) == ["sda", "vascl"]          # case does not count
    assert did_you_mean("huge", ["demo", "small", "paper", "gpu"]) is None      # 'gpu' ~ 'huge': 2 * 1 / 7
    assert closest_first("x", ["b", "a", "b"]) == ["b", "a"]                    # each name once


def test_the_message_names_the_closest_and_cuts_a_long_list_with_where_to_see_it():
    assert unknown("table", "tabel4", SDA, " of paper 'sda'") == \
        "unknown table 'tabel4' of paper 'sda' (did you mean 'table4'?); valid: " + ", ".join(
            ["table4", "table2", "table3", "table5", "table6", "table7"])
    names = [f"m{i:02d}" for i in range(SHOWN + 5)]
    assert unknown("method", "zz", names, full_list="sentaug list methods") == \
        f"unknown method 'zz'; valid: {', '.join(names[:SHOWN])}, ... (5 more: sentaug list methods)"
    assert unknown("figure", "figure1", {}, " of paper 'clear'") == \
        "unknown figure 'figure1' of paper 'clear': there are none"
    error = UnknownName("scale", "huge", ["demo", "small", "paper", "gpu"])
    assert isinstance(error, ValueError) and str(error) == "unknown scale 'huge'; valid: demo, small, paper, gpu"


def test_answered_turns_a_users_mistake_into_its_message_alone_and_leaves_bugs_alone():
    @answered()
    def table_files(paper, table):        # as an input function of the Snakefile
        if paper != "sda":
            raise UnknownName("paper", paper, ["sda", "cards"])
        if table == "broken":
            raise KeyError(table)           # a bug: Snakemake shows it with its traceback
        return [f"{paper}/{table}.json"]

    assert table_files("sda", "table4") == ["sda/table4.json"]
    with pytest.raises(Answer) as answer:
        table_files("SDA", "table4")
    # a SystemExit: past Snakemake's `except Exception`, printed as its message by Python, without a traceback
    assert isinstance(answer.value, SystemExit) and not isinstance(answer.value, Exception)
    assert answer.value.code == answer.value.message == "unknown paper 'SDA' (did you mean 'sda'?); valid: sda, cards"
    assert answer.value.__suppress_context__
    with pytest.raises(KeyError):
        table_files("sda", "broken")
    with pytest.raises(Answer, match="config key 'scale': unknown scale 'huge'"):
        with answered():
            raise ConfigError("config key 'scale': unknown scale 'huge'; valid: demo, small, paper, gpu")
