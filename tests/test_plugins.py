"""Augmentations from outside the package (sentaug.augment.registry): installed plugins found by their entry point,
modules named in the config, the example plugin's own test cases, and the errors that name what went wrong. Each
fake plugin is a module and a `*.dist-info` folder (what pip installs) in a temporary folder on sys.path."""
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

import sentaug.config as sc
from sentaug.augment import registry
from sentaug.augment.cache import build_cache
from sentaug.augment.cases import check_cases
from sentaug.choices import SHOWN
from sentaug.snakemake_hooks import augmentation_module, plugin_module

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "negation"
GROUP = "group sentaug.augmentations"

SHOUT = '''
    from sentaug.augment.registry import Param, register


    @register("shout", family="test plugin", needs_parse=False, description="upper-cases the line",
              marks=Param(1, "exclamation marks"))
    def shout(text, rng, marks=1):
        return text.upper() + "!" * marks
'''


@pytest.fixture()
def site(tmp_path, monkeypatch):
    registry.names()                                  # the built-in families, imported once for good
    yield from plugin_site(tmp_path, monkeypatch, registry, ("plug", "sentaug_negation"))


def plugin_site(tmp_path, monkeypatch, registry, modules: tuple[str, ...]):
    """A folder on sys.path to install plugins into, and a `registry` (module) that forgets them afterwards: its
    registrations, and the imported modules whose names start with one of `modules`."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry._PLUGINS, "loaded", False)   # the next lookup reads the entry points again
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    before = set(sys.modules)
    yield folder
    for name in set(sys.modules) - before:
        if name.startswith(modules):
            del sys.modules[name]


def install(site: Path, dist: str, entry_points: dict, modules: dict, group: str = registry.ENTRY_POINT_GROUP):
    """What `pip install` leaves: the modules and a dist-info folder declaring their entry points in `group`."""
    for name, code in modules.items():
        (site / f"{name}.py").write_text(textwrap.dedent(code))
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in entry_points.items()))
    importlib.invalidate_caches()


def corpus(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def test_an_installed_plugin_is_found_by_its_entry_point_and_cached_like_a_family(site, tmp_path):
    install(site, "plug-shout", {"shout": "plug_shout"}, {"plug_shout": SHOUT})
    aug = registry.get("shout")
    assert aug.origin == f"entry point 'shout = plug_shout' of plug-shout 1.0, {GROUP}"
    assert f"shout  (plugin: plug_shout.shout (entry point 'shout = plug_shout'" in registry.describe()
    # what the augment rule digests (the plugin's own file) and passes to the job (--module)
    assert (augmentation_module("shout"), plugin_module("shout")) == (str(site / "plug_shout.py"), "plug_shout")
    assert (augmentation_module("crop"), plugin_module("crop")) == ("augment/baselines.py", None)
    lines = ["The cat is on the mat.", "", "Rain."]                 # the empty line is flagged, never augmented
    out = tmp_path / "shout.parquet"
    stats = build_cache("shout", corpus(tmp_path, lines), out, seed=1, params={"marks": 2})
    cache = pd.read_parquet(out)
    assert list(cache["augmented"]) == ["THE CAT IS ON THE MAT.!!", "", "RAIN.!!"]
    assert list(cache["changed"]) == [True, False, True]
    assert (stats["n_changed"], stats["family"], stats["params"]) == (2, "test plugin", {"marks": 2})


def test_a_plugin_that_fails_to_import_names_its_module_and_entry_point(site):
    install(site, "plug-broken", {"broken": "plug_broken"}, {"plug_broken": "import nltk_extra_that_is_not_there\n"})
    with pytest.raises(registry.PluginError) as raised:
        registry.names()
    assert str(raised.value) == (
        f"augmentation plugin 'plug_broken' (entry point 'broken = plug_broken' of plug-broken 1.0, {GROUP}) failed "
        f"to import: ModuleNotFoundError: No module named 'nltk_extra_that_is_not_there' ({site}/plug_broken.py, "
        f"line 1)")
    # a module the config names that does not exist: no plugin line to point at
    with pytest.raises(registry.PluginError, match=r"^augmentation plugin 'plug_missing' \(config key "
                                                   r"augment.modules\) failed to import: ModuleNotFoundError: No "
                                                   r"module named 'plug_missing'$"):
        registry.load_modules(["plug_missing"])


def test_the_command_line_reports_a_plugin_that_fails_to_import_in_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "sentaug.cli", "augment", "--list", "--module", "plug_missing"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr == ("sentaug augment: error: augmentation plugin 'plug_missing' (sentaug augment --module) "
                           "failed to import: ModuleNotFoundError: No module named 'plug_missing'\n")


def test_two_plugins_registering_one_name_is_an_error_naming_both(site):
    install(site, "plug-a", {"a": "plug_a"}, {"plug_a": SHOUT})
    install(site, "plug-b", {"b": "plug_b"}, {"plug_b": SHOUT})
    with pytest.raises(registry.PluginError) as raised:
        registry.names()
    message = str(raised.value)
    assert (f"augmentation 'shout' is registered twice: by plug_a.shout (entry point 'a = plug_a' of plug-a 1.0, "
            f"{GROUP}) and by plug_b.shout (entry point 'b = plug_b' of plug-b 1.0, {GROUP})") in message
    assert message.startswith("augmentation plugin 'plug_b' (entry point 'b = plug_b'")
    assert message.endswith(f"({site}/plug_b.py, line 5)")       # the second @register


def test_a_plugin_reusing_a_built_in_name_is_an_error_naming_both(site):
    (site / "plug_c.py").write_text(textwrap.dedent(SHOUT).replace('"shout"', '"punctuation_insertion"'))
    with pytest.raises(registry.PluginError, match=r"augmentation 'punctuation_insertion' is registered twice: by "
                                                   r"sentaug\.augment\.sda\.punctuation_insertion \(sentaug\) and by "
                                                   r"plug_c\.shout \(config key augment\.modules\)"):
        registry.load_modules(["plug_c"])


BAD = '''
    from sentaug.augment.registry import register


    @register("returns_none", family="bad", needs_parse=False, description="None for the river line")
    def returns_none(text, rng):
        return None if "river" in text else text


    @register("anchor_missing", family="bad", needs_parse=False, description="an anchored op returning a str",
              anchored=True)
    def anchor_missing(text, rng):
        return text


    @register("batch_short", family="bad", needs_parse=False, description="one output too few", batched=True)
    def batch_short(texts, rng):
        return texts[:-1]
'''


@pytest.mark.parametrize("name, workers, message", [
    ("returns_none", 1, r"augmentation 'returns_none' \(plug_bad\.returns_none \(config key augment\.modules\)\) "
                        r"returned NoneType None for corpus line 2 \('The river is wide\.'\); it must return a str"),
    # the same from a spawned worker, which imports the config's module itself
    ("returns_none", 2, r"returned NoneType None for corpus line 2 \('The river is wide\.'\); it must return a str"),
    ("anchor_missing", 1, r"augmentation 'anchor_missing' .* returned str 'The cat sat\.' for corpus line 1 "
                          r"\('The cat sat\.'\); it must return an \(anchor, augmented\) pair of str"),
    ("batch_short", 1, r"augmentation 'batch_short' .* returned list \[.*\] for the 3 lines from corpus line 1: a "
                       r"batched augmentation returns a list with one output per line"),
])
def test_an_augmentation_returning_what_a_cache_cannot_hold_names_itself_and_the_line(site, tmp_path, name, workers,
                                                                                      message):
    (site / "plug_bad.py").write_text(textwrap.dedent(BAD))
    registry.load_modules(["plug_bad"])
    out = tmp_path / "bad.parquet"
    with pytest.raises(ValueError, match=message):
        build_cache(name, corpus(tmp_path, ["The cat sat.", "The river is wide.", "Birds sing."]), out, seed=1,
                    workers=workers)
    assert not out.exists() and not out.with_suffix(".json").exists()      # nothing half-written


def test_a_method_naming_an_unknown_augmentation_lists_the_declared_ones(cfg):
    cfg["methods"]["mine"] = {"positive": {"source": "cache", "augmentation": "negaton"}}
    with pytest.raises(sc.ConfigError) as raised:
        sc.validate(cfg)
    message = str(raised.value)
    # no declared name is within difflib's 0.6 of 'negaton': the first SHOWN declared ones, then where the rest are
    shown = list(cfg["augmentations"])[:SHOWN]
    assert message == (f"config key 'methods.mine.positive.augmentation': unknown augmentation 'negaton'; valid: "
                       f"{', '.join(shown)}, ... ({len(cfg['augmentations']) - SHOWN} more: "
                       "sentaug list augmentations)")


def test_an_augmentation_whose_op_no_module_registers_lists_the_registered_ones(cfg):
    cfg["augmentations"]["mine"] = {"op": "no_plugin_registers_this"}
    with pytest.raises(sc.ConfigError) as raised:
        sc.validate(cfg)
    names = registry.names()
    assert str(raised.value) == ("config key 'augmentations.mine.op': unknown augmentation "
                                 f"'no_plugin_registers_this'; valid: {', '.join(names[:SHOWN])}, ... "
                                 f"({len(names) - SHOWN} more: sentaug augment --list)")
    assert "punctuation_insertion" in registry.names()


def test_the_example_plugin_passes_its_own_test_cases_and_a_wrong_case_is_reported(site, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    cases = EXAMPLE / "sentaug_negation" / "test.json"
    assert check_cases(cases, modules=["sentaug_negation.negation"]) == []
    wrong = json.loads(cases.read_text())
    wrong["test_cases"][0]["outputs"] = [{"sentence": "The cat is never on the mat."}]
    (tmp_path / "test.json").write_text(json.dumps(wrong))
    assert check_cases(tmp_path / "test.json") == [
        f"{tmp_path / 'test.json'} case 1 (negation, 'The cat is on the mat.'): expected "
        "{'sentence': 'The cat is never on the mat.'}, got 'The cat is not on the mat.'"]


def test_a_module_the_config_names_is_imported_by_the_command_line_and_its_workers(tmp_path):
    """`sentaug augment NAME --module M` in a fresh process, with two spawned workers, as the augment rule runs a
    config's module (`augment.modules`)."""
    lines = ["The cat is on the mat.", "Is it raining today?", "The museum was not open.", "Visitors can't stay."]
    out = tmp_path / "negation.parquet"
    env = {**os.environ, "PYTHONPATH": f"{EXAMPLE}:{ROOT / 'src'}"}
    proc = subprocess.run([sys.executable, "-m", "sentaug.cli", "augment", "negation", "--module",
                           "sentaug_negation.negation", "--corpus", str(corpus(tmp_path, lines)), "--seed", "1",
                           "--workers", "2", "--out", str(out)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    cache = pd.read_parquet(out)
    assert list(cache["augmented"]) == ["The cat is not on the mat.", "Is it raining today?",
                                        "The museum was open.", "Visitors can stay."]
    assert json.loads(out.with_suffix(".json").read_text())["n_changed"] == 3


def test_the_workflow_refuses_the_example_before_any_job_when_its_plugin_is_missing():
    if importlib.util.find_spec("sentaug_negation") is not None:
        pytest.skip("the example plugin is installed here (docs/extending.md)")
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--configfile", str(EXAMPLE / "negation.yaml")],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    # answered in one line, the closest registered names first (difflib: 'double_negation' is within 0.6)
    assert "config key 'augmentations.negation.op': unknown augmentation 'negation' (did you mean " in out
    assert "Traceback" not in out and 'File "' not in out


def test_the_examples_own_tests_pass_in_a_process_of_their_own():
    """The tests beside each example plugin (a hand-computed loss, NL-Augmenter-style cases, a suite's hand-computed
    scores), as its author runs them: `pytest examples/<name>`. Apart from this session: importing a plugin
    registers its parts for the whole process, which the built-in registry tests must not see."""
    for example, tests in (("alignment_uniformity", 3), ("negation", 1), ("stsb_retrieval", 2)):
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               str(ROOT / "examples" / example)], cwd=ROOT, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert f"{tests} passed" in proc.stdout
