"""What a rule's jobs run, as one digest (`sentaug.snakemake_hooks.code_digest`, each rule's `code` parameter):
the modules found from the source must be those Python runs, a change in what the code does must change the
digest, and a comment, a docstring, a wrapped line or a newer file time must not. Then, on a copy of the package,
the workflow itself: a job reruns when the code it runs changes, and only then."""
import os
import shutil
import time
from pathlib import Path

from sentaug.snakemake_hooks import augmentation_module, code_digest, code_files, module_closure
from tests.workflow_runs import job_counts, snakemake

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"

# A package laid out like ours: lazy imports inside functions, relative imports of several levels, an
# `__init__.py` that imports a sibling, package data opened with importlib.resources, and one unrelated module.
TOY = {
    "__init__.py": '"""Toy."""\n',
    "a.py": ('"""Module a."""\nfrom . import c\n\n\ndef run(x):\n    """Doubles."""\n'
             '    from .b import words\n\n    return words(x) * 2\n'),
    "b.py": ('from importlib import resources\n\n\ndef words(name):\n'
             '    return (resources.files("sentaug") / "resources" / "words" / name).read_text()\n'),
    "c.py": "LIMIT = 3\n",
    "d.py": "import json\n\nUNRELATED = json.dumps(1)\n",
    "sub/__init__.py": "from . import e  # noqa: F401\n",
    "sub/e.py": "E = 1\n",
    "sub/f.py": "from .. import a\n\nF = a.run\n",
    "resources/words/x.txt": "alpha\n",
    "resources/other/y.txt": "beta\n",
}


def toy_package(tmp: Path) -> Path:
    src = tmp / "src"
    for name, text in TOY.items():
        path = src / "sentaug" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return src


def names(src: Path, files) -> list[str]:
    return sorted(str(Path(f).resolve().relative_to((src / "sentaug").resolve())) for f in files)


def test_the_closure_holds_what_python_runs_and_nothing_else(tmp_path):
    src = toy_package(tmp_path)
    # a: itself, its package's __init__, `from . import c`, the lazy `.b`, and the folder b opens
    assert names(src, module_closure(src / "sentaug/a.py")) == [
        "__init__.py", "a.py", "b.py", "c.py", "resources/words/x.txt"]
    # sub/f: the sub-package's __init__ (which imports e), and a two levels up with all it runs
    assert names(src, module_closure(src / "sentaug/sub/f.py")) == [
        "__init__.py", "a.py", "b.py", "c.py", "resources/words/x.txt", "sub/__init__.py", "sub/e.py", "sub/f.py"]
    assert names(src, code_files(src, "a.py", "d.py", skip=("resources/words",))) == [
        "__init__.py", "a.py", "b.py", "c.py", "d.py"]
    assert names(src, code_files(src, "resources")) == ["resources/other/y.txt", "resources/words/x.txt"]


def test_a_packages_lazy_attributes_are_not_what_importing_it_runs(tmp_path):
    """A module-level `__getattr__` of an `__init__.py` (PEP 562, how sentaug.evaluate offers its Python API) runs
    only when the package is asked for the attribute: a sibling module's closure leaves out what it imports, as
    Python does; the imports of the rest of the `__init__.py` stay."""
    import subprocess
    import sys

    src = toy_package(tmp_path)
    lazy = src / "sentaug" / "lazy"
    lazy.mkdir()
    (lazy / "__init__.py").write_text("from .. import c  # noqa: F401\n\n\ndef __getattr__(name):\n"
                                      "    from .api import thing\n\n    return thing\n")
    (lazy / "api.py").write_text("from .. import d\n\nthing = d.UNRELATED\n")
    (lazy / "g.py").write_text("G = 1\n")
    assert names(src, module_closure(lazy / "g.py")) == ["__init__.py", "c.py", "lazy/__init__.py", "lazy/g.py"]
    assert "d.py" in names(src, module_closure(lazy / "api.py"))
    loaded = subprocess.run([sys.executable, "-c", "import sys, sentaug.lazy.g; "
                             "print(sorted(m for m in sys.modules if m.startswith('sentaug.')))"],
                            env={**os.environ, "PYTHONPATH": str(src)}, capture_output=True, text=True, check=True)
    assert loaded.stdout.split() == ["['sentaug.c',", "'sentaug.lazy',", "'sentaug.lazy.g']"]


def edited(src: Path, name: str, edit) -> str:
    """The digest of `a.py`'s code after `edit` on one file of a fresh copy of the toy package."""
    copy = src.parent / f"copy{time.monotonic_ns()}" / "src"
    shutil.copytree(src, copy)
    path = copy / "sentaug" / name
    path.write_text(edit(path.read_text()))
    return code_digest(copy, "a.py")


def test_the_digest_follows_what_the_code_does_not_how_it_reads(tmp_path):
    src = toy_package(tmp_path)
    before = code_digest(src, "a.py")
    assert len(before) == 16 and before == edited(src, "d.py", lambda t: t)   # a copy: same content, same digest
    same = {
        "a comment": ("a.py", lambda t: t.replace("return words(x) * 2", "return words(x) * 2  # twice")),
        "a docstring": ("a.py", lambda t: t.replace("Doubles.", "Doubles its input, as the paper does.")),
        "a module docstring": ("a.py", lambda t: t.replace("Module a.", "Module a, reworded.")),
        "a wrapped line": ("b.py", lambda t: t.replace('/ "words" / name', '/ "words"\n            / name')),
        "a module it does not run": ("d.py", lambda t: t + "MORE = 2\n"),
        "data it does not open": ("resources/other/y.txt", lambda t: "gamma\n"),
    }
    for what, (name, edit) in same.items():
        assert edited(src, name, edit) == before, what
    changed = {
        "a constant": ("c.py", lambda t: "LIMIT = 4\n"),
        "an operator": ("a.py", lambda t: t.replace("* 2", "+ 2")),
        "a lazily imported module": ("b.py", lambda t: t.replace(".read_text()", ".read_text().strip()")),
        "the data it opens": ("resources/words/x.txt", lambda t: "alpha beta\n"),
        "an __init__ on the way": ("__init__.py", lambda t: t + "VERSION = 2\n"),
    }
    digests = {what: edited(src, name, edit) for what, (name, edit) in changed.items()}
    assert before not in digests.values() and len(set(digests.values())) == len(changed)


def test_our_rules_run_what_they_import_and_not_the_other_stages():
    def files(*entries, **kw):
        return set(names(SRC, code_files(SRC, *entries, **kw)))

    sts = files("evaluate/sts.py")
    # the modules the STS rules listed by hand before, all found
    assert {"evaluate/sts.py", "correlation.py", "data/senteval.py", "models/encoder.py",
            "models/poolers.py", "models/tokens.py"} <= sts
    # evaluation does not run the trainer, the objectives or CARDS's augmentations
    assert not {f for f in sts if f.startswith(("train/", "objectives/", "augment/cards", "augment/augcse"))}
    # the trainer runs its dev evaluation and the retrieval sampler; with the objectives' folder (the parts
    # registry imports its modules by name: the train rule names it) their parts and torch modules
    assert {"train/dev_score.py", "correlation.py", "index/sampling.py", "config/spec.py"} <= files("train/trainer.py")
    assert {"objectives/infonce/__init__.py", "objectives/infonce/module.py", "objectives/mlm/module.py",
            "parts/base.py"} <= files("train/trainer.py", "objectives")
    assert not {f for f in files("train/trainer.py") if f.startswith(("evaluate/", "report/"))}

    sda = files("augment/cache.py", augmentation_module("punctuation_insertion"))
    assert augmentation_module("punctuation_insertion") == "augment/sda.py"
    assert {"augment/sda.py", "augment/cache.py", "augment/parse.py", "data/corpus.py", "io.py"} <= sda
    assert not {f for f in sda if f.startswith(("augment/augcse", "augment/cards", "augment/clear", "resources/w"))}
    augcse = files("augment/cache.py", augmentation_module("AntonymSubstitute"))
    assert "resources/wordlists/names.tsv" in augcse and "augment/augcse/random_words.py" in augcse

    official = files("data/download.py", skip=("resources/demo",))
    assert "data/sources.yaml" in official and not {f for f in official if f.startswith("resources/demo")}
    assert "resources/demo/MANIFEST.sha256" in files("data/download.py")


# An augmentation plugin outside the package (docs/extending.md): its own package, importing sentaug's registry.
PLUGIN = {
    "myplug/__init__.py": '"""A plugin."""\n',
    "myplug/aug.py": ('"""Greets."""\nfrom sentaug.augment.registry import register\n\nfrom .words import WORDS\n\n\n'
                      '@register("greet", family="toy", needs_parse=False, description="greets")\n'
                      'def greet(text, rng):\n    return WORDS[0] + text\n'),
    "myplug/words.py": 'WORDS = ["hello "]\n',
    "myplug/other.py": "UNUSED = 1\n",
    "single.py": "from sentaug.augment import registry\n\nLIMIT = 2\n",
}


def plugin_copy(tmp: Path, edit=None) -> Path:
    """A fresh copy of the plugin in its own folder (digests are cached per file), with `edit` = (file, function)."""
    site = tmp / f"site{time.monotonic_ns()}"
    for name, text in PLUGIN.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(edit[1](text) if edit and edit[0] == name else text)
    return site


def test_a_plugins_digest_covers_its_package_and_what_it_runs_of_sentaug_wherever_it_is_installed(tmp_path):
    site = plugin_copy(tmp_path)
    files = code_files(SRC, "augment/cache.py", str(site / "myplug/aug.py"))
    ours = {str(Path(f).relative_to(site)) for f in files if Path(f).is_relative_to(site)}
    assert ours == {"myplug/__init__.py", "myplug/aug.py", "myplug/words.py"}         # not other.py
    assert {"augment/registry.py", "augment/cache.py"} <= set(names(SRC, [f for f in files
                                                                           if not Path(f).is_relative_to(site)]))
    single = code_files(SRC, str(site / "single.py"))                                 # a top-level module
    assert [f for f in single if Path(f).is_relative_to(site)] == [str(site / "single.py")]
    assert names(SRC, [f for f in single if not Path(f).is_relative_to(site)]) == [
        "__init__.py", "augment/__init__.py", "augment/registry.py", "params.py", "plugins.py"]    # Param: params.py

    def digest(edit=None) -> str:
        return code_digest(SRC, "augment/cache.py", str(plugin_copy(tmp_path, edit) / "myplug/aug.py"))

    before = digest()
    assert before == digest()                    # installed elsewhere: the same digest
    assert digest(("myplug/aug.py", lambda t: t.replace("Greets.", "Says hello.") + "# a comment\n")) == before
    assert digest(("myplug/other.py", lambda t: "UNUSED = 2\n")) == before
    changed = [digest(("myplug/words.py", lambda t: 'WORDS = ["hi "]\n')),
               digest(("myplug/aug.py", lambda t: t.replace("WORDS[0] + text", "text + WORDS[0]")))]
    assert before not in changed and changed[0] != changed[1]


def test_a_job_reruns_when_the_code_it_runs_changes_and_only_then(tmp_path):
    """SDA Table 2 at demo scale (download, data statistics, table) in a working directory whose package is a
    copy: after cosmetic edits, an edit elsewhere and a touch of every file nothing is planned; after a change
    in what the statistics code does, its job and the table are, and the downloads are not."""
    wd = tmp_path / "workdir"
    wd.mkdir()
    for name in ("Snakefile", "rules", "config.yaml", "papers", "profiles", "envs"):
        (wd / name).symlink_to(ROOT / name)
    shutil.copytree(SRC, wd / "src", ignore=shutil.ignore_patterns("__pycache__"))
    results = tmp_path / "results"
    args = (f"{results}/tables/sda/table2.tex", "--config", f"results={results}", "scale=demo")
    built = snakemake(*args, "--cores", "2", cwd=wd)
    assert built.returncode == 0, built.stderr[-3000:]
    built_counts = job_counts(built.stdout + built.stderr)
    assert built_counts.get("data_stats") == 1 and built_counts.get("table") == 1

    def planned() -> dict:
        run = snakemake(*args, "-n", cwd=wd)
        assert run.returncode == 0, run.stderr[-3000:]
        return job_counts(run.stdout)

    stats = wd / "src/sentaug/data/stats.py"
    text = stats.read_text()
    stats.write_text(text.replace('"""', '"""Reworded. ', 1) + "\n# a comment at the end\n")
    (wd / "src/sentaug/augment/sda.py").write_text((wd / "src/sentaug/augment/sda.py").read_text() + "X = 1\n")
    later = time.time() + 10
    for f in (wd / "src").rglob("*"):
        os.utime(f, (later, later))
    assert planned() == {}
    stats.write_text(text + "\nSTATS_VERSION = 2\n")
    assert planned() == {"data_stats": 1, "table": 1}
