"""A method's parts as registered building blocks (sentaug.parts): what the built-in ones declare, the checks that
name the setting and the valid choices, parts from plugins (found by their entry point or named in the config),
the errors that name a bad plugin's module and part, and the example objective (examples/alignment_uniformity)
trained through the trainer against a hand computation."""
import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from transformers import AutoModel, AutoTokenizer

import sentaug.config as sc
from sentaug import parts
from sentaug.catalog import part_rows
from sentaug.parts import registry
from sentaug.snakemake_hooks import part_plugin_modules, plugin_file
from sentaug.train.trainer import batch_order, train
from tests.train.test_hard_negatives import nll
from tests.train.test_methods_train import CONFIG, CORPUS, setup, spec_for  # noqa: F401 (setup: a fixture)
from tests.test_plugins import install as install_plugin
from tests.test_plugins import plugin_site

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "alignment_uniformity"
GROUP = "group sentaug.parts"



def test_each_module_of_the_objectives_folder_registers_its_parts_found_by_the_folder_alone():
    """A built-in contrastive loss or objective is a module or package of src/sentaug/objectives, imported because
    it is there (no list names them), and the parts of no other sentaug module are of those kinds."""
    import pkgutil

    found = {m.name for m in pkgutil.iter_modules([str(registry.OBJECTIVES)])}
    assert found == {"discriminator", "infonce", "mlm", "virtual_augmentation"}
    built_in = {kind: [parts.get(kind, n) for n in parts.names(kind)] for kind in ("contrastive", "objective")}
    owners = {kind: {c.__module__ for c in classes if c.origin == "sentaug"} for kind, classes in built_in.items()}
    assert owners == {"contrastive": {"sentaug.objectives.infonce"},
                      "objective": {f"sentaug.objectives.{m}" for m in ("discriminator", "mlm", "virtual_augmentation")}}


def test_every_part_is_registered_without_importing_torch():
    """The workflow imports every part to check a configuration; torch waits for the trainer (the reason an
    objective's torch module is a module of its own beside its part)."""
    code = ("import sys; from sentaug import parts; parts.method_schema(); "
            "print(sorted(parts.names('objective')), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src")}).stdout
    assert out.strip() == "['discriminator', 'mlm', 'virtual_augmentation'] False"

def test_the_built_in_parts_and_what_each_method_reads():
    assert {kind: parts.names(kind) for kind in parts.KINDS} == {
        "positive": ["augmented_view", "cache", "dropout", "nli", "switch_case", "two_views"],
        "negatives": ["cache", "in_batch", "nli", "retrieved"],
        "contrastive": ["infonce", "none", "nt_xent"],
        "objective": ["discriminator", "mlm", "virtual_augmentation"]}
    spec = sc.train_spec(CONFIG, None, "bert-base-uncased", "clear_subs_del_word", 7, scale="demo")
    assert sc.method_caches(spec) == [("clear_subs_del_word", 7), ("clear_subs_del_word", 107)]  # two seeds
    spec = sc.train_spec(CONFIG, None, "bert-base-uncased", "augcse_single_negative", 7, scale="demo")
    assert sc.method_caches(spec) == [("RandomSwap", 7)] and sc.method_index(spec) is None
    spec = sc.train_spec(CONFIG, None, "bert-base-uncased", "cards", 7, scale="demo")
    assert sc.method_caches(spec) == [] and sc.method_index(spec) == {"k": 64}
    # the positive's caches, the augmented view's, then the negative source's: the order --positives takes
    method = {"positive": {"source": "cache", "augmentation": "a"}, "augmented_view": ["b", "c"],
              "negatives": {"source": "cache", "augmentation": "d"}, "method": "m", "seed": 1}
    assert sc.method_caches(method) == [("a", 1), ("b", 1), ("c", 1), ("d", 1)]
    assert parts.augmentation_references(method) == [("positive.augmentation", "a"), ("negatives.augmentation", "d"),
                                                     ("augmented_view", "b"), ("augmented_view", "c")]


def test_the_short_forms_are_expanded_in_one_place():
    assert parts.declared("negatives", "in_batch") == {"source": "in_batch"}
    assert parts.declared("negatives", None) == {"source": "in_batch"}           # not declared: the default
    assert parts.declared("contrastive", None) == {"name": "infonce"}
    c = parts.compose({"method": "m", "positive": {"source": "dropout"}, "contrastive": "nt_xent"})
    assert (c.negatives.name, c.contrastive.name, c.objectives) == ("in_batch", "nt_xent", [])
    assert c.contrastive.settings == {}
    # the training spec records the mapping; a variant may set a setting below the short form
    cfg = {**CONFIG, "methods": {**CONFIG["methods"], "short": {"positive": {"source": "dropout"},
                                                                "negatives": "in_batch"}}}
    assert sc.train_spec(cfg, None, "bert-base-uncased", "short", 1, scale="demo")["negatives"] == \
        {"source": "in_batch"}
    assert sc.method_config(cfg, "short~negatives.source=retrieved~negatives.k=8")["negatives"] == \
        {"source": "retrieved", "k": 8}
    with pytest.raises(sc.ConfigError, match=r"'head.size' goes below a value"):
        sc.method_config(cfg, "augcse~head.size=3")


@pytest.mark.parametrize("method, message", [
    ({"positive": {"source": "dropout", "changed_only": True}},
     r"method 'm': positive.changed_only does not apply to source 'dropout' \(changed_only needs positive source "
     r"'cache'\)"),
    ({"positive": {"source": "dropout", "colour": "red"}},
     r"positive.colour does not apply to source 'dropout' \(positive source 'dropout' takes: no settings\)"),
    ({"positive": {"source": "switch_case", "p": 1.5}}, r"positive.p must lie in \[0, 1\], got 1.5"),
    ({"positive": {"source": "switch_case", "version": "v3"}}, r"positive.version must be one of \['v1', 'v2'\]"),
    ({"positive": {"source": "dropout"}, "negatives": {"source": "retrieved", "k": "many"}},
     r"negatives.k expects int, got 'many'"),
    ({"positive": {"source": "dropout"}, "objectives": [{"name": "mlm", "weight": "heavy"}]},
     r"objectives.mlm.weight expects float, got 'heavy'"),
    ({"positive": {"source": "mixup"}}, r"unknown positive source 'mixup'; registered: augmented_view, cache, "
                                        r"dropout, nli, switch_case, two_views"),
    ({"positive": {"source": "dropout"}, "objectives": [{"weight": 1}]},
     r"method 'm': objectives.0 names no name \(discriminator, mlm, virtual_augmentation\)"),
])
def test_a_bad_setting_names_the_method_the_key_and_the_choices(method, message):
    with pytest.raises(ValueError, match=message):
        parts.compose({"method": "m", **method})


@pytest.mark.parametrize("method, message", [
    ({"positive": {"source": "dropout"}, "negatives": {"source": "retrieved"}, "contrastive": "nt_xent"},
     r"retrieved negatives need a contrastive loss that takes extra negatives \(infonce\), not 'nt_xent'"),
    ({"positive": {"source": "dropout"}, "negatives": {"source": "nli"}},
     r"nli negatives need NLI triplets; positive source 'dropout' gives corpus lines"),
    ({"positive": {"source": "nli"}, "negatives": {"source": "cache", "augmentation": "a"}},
     r"cache negatives need corpus lines; positive source 'nli' gives NLI triplets"),
    ({"positive": {"source": "nli"}, "augmented_view": ["a"]}, r"augmented_view needs corpus lines"),
    ({"positive": {"source": "dropout"}, "objectives": [{"name": "discriminator"}]},
     r"the discriminator needs augmented_view"),
    ({"positive": {"source": "augmented_view"}}, r"positive source 'augmented_view' needs augmented_view"),
    ({"positive": {"source": "dropout"}, "contrastive": "none"}, r"contrastive none needs an objective"),
])
def test_parts_that_do_not_go_together_are_refused(method, message):
    with pytest.raises(ValueError, match=message):
        parts.compose({"method": "m", **method})


def test_the_config_schema_asks_the_registry(cfg):
    cfg["methods"]["mine"] = {"positive": {"source": "dropout"}, "objectives": [{"name": "mlmm"}]}
    # named as what it is (an objective), the closest registered one first (sentaug.choices)
    with pytest.raises(sc.ConfigError, match=r"^config key 'methods.mine.objectives.0.name': unknown objective 'mlmm' "
                                             r"\(did you mean 'mlm'\?\); valid: mlm, discriminator, "
                                             r"virtual_augmentation$"):
        sc.validate(cfg)
    cfg["methods"]["mine"] = {"positive": {"source": "dropout"}, "negatives": "in_bach"}     # the short form
    with pytest.raises(sc.ConfigError, match=r"^config key 'methods.mine.negatives': unknown negative source "
                                             r"'in_bach' \(did you mean 'in_batch'\?\)"):
        sc.validate(cfg)
    cfg["methods"]["mine"] = {"positive": {"source": "cache", "augmentation": "sda_pi", "p": 0.1}}
    with pytest.raises(sc.ConfigError, match=r"'methods\.mine\.positive\.p': unknown setting 'p' of "
                                             r"'methods\.mine\.positive'; valid: source, augmentation"):
        sc.validate(cfg)
    cfg["methods"]["mine"] = {"positive": {"source": "dropout"}, "negatives": {"source": "cache"}}
    with pytest.raises(sc.ConfigError, match=r"'methods.mine.negatives': 'augmentation' is a required property"):
        sc.validate(cfg)
    # Snakemake checks the file's outline, then check_references the parts (the Snakefile's two steps)
    with pytest.raises(sc.ConfigError, match=r"'methods.mine.negatives': 'augmentation' is a required property"):
        sc.check_references(cfg)


# -- plugins ---------------------------------------------------------------------------------------------------------
PLUG = '''
    from sentaug.parts import Objective, Param, register


    @register("mean_norm", description="the mean norm of the anchors' projections",
              power=Param(1.0, "a power of the norm", minimum=0))
    class MeanNorm(Objective):
        needs_views = True

        def compute(self, step):
            return step.z[step.blocks["anchors"]].norm(dim=-1).pow(self.settings["power"]).mean(), {}
'''


@pytest.fixture()
def site(tmp_path, monkeypatch):
    parts.names("objective")                          # the built-in parts, imported once for good
    yield from plugin_site(tmp_path, monkeypatch, registry, ("plug", "sentaug_alignment_uniformity"))


def install(site: Path, dist: str, entry_points: dict, modules: dict) -> None:
    install_plugin(site, dist, entry_points, modules, group=registry.ENTRY_POINT_GROUP)


def test_an_installed_plugin_is_found_by_its_entry_point_and_planned_like_a_built_in_part(site, cfg):
    install(site, "plug-norm", {"mean_norm": "plug_norm"}, {"plug_norm": PLUG})
    cls = parts.get("objective", "mean_norm")
    assert cls.origin == f"entry point 'mean_norm = plug_norm' of plug-norm 1.0, {GROUP}"
    listed = {row["name"]: row for row in part_rows(SimpleNamespace(config={}))}       # sentaug list parts
    assert listed["mean_norm"]["what"].startswith("objective; plugin plug_norm; the mean norm of the anchors'")
    assert listed["mean_norm"]["path"] == "objectives: [{name: mean_norm}]"
    method = {"method": "m", "seed": 1, "positive": {"source": "dropout"},
              "objectives": [{"name": "mean_norm", "power": 2}]}
    assert part_plugin_modules(method) == ["plug_norm"] and plugin_file("plug_norm") == str(site / "plug_norm.py")
    assert part_plugin_modules({**method, "objectives": [{"name": "mlm"}]}) == []
    assert parts.compose(method).objectives[0].settings == {"weight": 1.0, "power": 2.0}
    # the schema knows it: its settings are checked with the key
    cfg["methods"]["m"] = {"positive": {"source": "dropout"}, "objectives": [{"name": "mean_norm", "power": -1}]}
    with pytest.raises(sc.ConfigError, match=r"'methods.m.objectives.0.power': -1 is less than the minimum of 0"):
        sc.validate(cfg)


def test_a_module_the_config_names_registers_its_parts(site, cfg):
    (site / "plug_named.py").write_text(textwrap.dedent(PLUG))
    cfg["methods"]["m"] = {"positive": {"source": "dropout"}, "objectives": [{"name": "mean_norm"}]}
    with pytest.raises(sc.ConfigError, match=r"'methods.m.objectives.0.name': unknown objective 'mean_norm'; valid: "
                                             r"discriminator, mlm, virtual_augmentation$"):
        sc.validate(cfg)
    cfg["parts"] = {"modules": ["plug_named"]}
    sc.validate(cfg)
    assert parts.get("objective", "mean_norm").origin == "config key parts.modules"


BAD = {
    "not_a_part": ('''
        from sentaug.parts import register


        @register("plain", description="a function")
        def plain(step):
            return None
     ''', r"method part 'plain' \(plug_bad.plain \(config key parts.modules\)\): a part is a class derived from one "
          r"of PositiveSource, NegativeSource, ContrastiveLoss, Objective \(sentaug.parts\) \(.*plug_bad.py, line 5\)"),
    "no_compute": ('''
        from sentaug.parts import Objective, register


        @register("lazy", description="no loss")
        class Lazy(Objective):
            pass
     ''', r"objective 'lazy' \(plug_bad.Lazy \(config key parts.modules\)\) has no compute\(step\): the loss it adds"),
    "not_a_param": ('''
        from sentaug.parts import Objective, register


        @register("loose", description="a bare setting", power=2)
        class Loose(Objective):
            def compute(self, step):
                return None, {}
     ''', r"objective 'loose' \(plug_bad.Loose .*\): setting 'power' is not a Param"),
    "built_in_name": ('''
        from sentaug.parts import Objective, register


        @register("mlm", description="another mlm")
        class Mine(Objective):
            def compute(self, step):
                return None, {}
     ''', r"objective 'mlm' is registered twice: by sentaug.objectives.mlm.MaskedLMObjective \(sentaug\) and by "
          r"plug_bad.Mine \(config key parts.modules\)"),
    "raises": ("import torch_extra_that_is_not_there\n",
               r"ModuleNotFoundError: No module named 'torch_extra_that_is_not_there' \(.*plug_bad.py, line 1\)"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_plugin_is_an_error_naming_its_module_and_part(site, case):
    code, message = BAD[case]
    (site / "plug_bad.py").write_text(textwrap.dedent(code))
    with pytest.raises(parts.registry.PluginError) as raised:
        parts.load_modules(["plug_bad"])
    assert str(raised.value).startswith("method part plugin 'plug_bad' (config key parts.modules) failed to import: ")
    assert raised.match(message)


def test_a_compute_that_returns_no_loss_tensor_is_named_at_the_first_step(setup, site):
    root, corpus, backbone = setup
    (site / "plug_half.py").write_text(textwrap.dedent('''
        from sentaug.parts import Objective, register


        @register("half", description="a number, not a loss tensor")
        class Half(Objective):
            def compute(self, step):
                return 0.5, {}
    '''))
    parts.load_modules(["plug_half"])
    spec = spec_for("simcse", max_steps=1, batch_size=4, objectives=[{"name": "half"}])
    with pytest.raises(TypeError, match=r"^objective 'half' \(plug_half.Half \(config key parts.modules\)\): compute "
                                        r"returned float and dict; it must return \(a 0-dim loss tensor or None"):
        train(spec, corpus, None, backbone, str(root / "data"), str(root / "run"))


def test_a_plugin_entry_point_that_fails_to_import_names_its_distribution(site):
    install(site, "plug-broken", {"broken": "plug_broken"}, {"plug_broken": "raise RuntimeError('no GPU here')\n"})
    with pytest.raises(parts.registry.PluginError) as raised:
        parts.names("objective")
    assert str(raised.value) == (f"method part plugin 'plug_broken' (entry point 'broken = plug_broken' of plug-broken "
                                 f"1.0, {GROUP}) failed to import: RuntimeError: no GPU here ({site}/plug_broken.py, "
                                 f"line 1)")


def test_the_bill_prices_a_plugin_part_as_simcse_and_says_so(site):
    from sentaug.pricing import cost
    from sentaug.pricing.step_times import StepTimes
    from tests.pricing.test_cost import TABLE

    install(site, "plug-norm", {"mean_norm": "plug_norm"}, {"plug_norm": PLUG})
    times = StepTimes("test", json.loads(json.dumps(TABLE)))
    spec = {"method": "m", "seed": 1, "positive": {"source": "dropout"}, "negatives": {"source": "retrieved"},
            "objectives": [{"name": "mean_norm"}]}
    ratio, basis = cost.method_overhead(times, spec, "bert-base/64")
    assert ratio == pytest.approx(1.2)        # the retrieved negatives' measured overhead; the plugin's: none
    assert basis == ["a hard negative: overhead of hard_negative (bert-base/64) x1.200",
                     "mean_norm: no overhead measured, counted as SimCSE"]


# -- the example objective ------------------------------------------------------------------------------------------
def _uniformity(x: torch.Tensor, t: float = 2.0) -> float:
    """log mean_{i<j} exp(-t ||x_i - x_j||^2) of the normalised rows, pair by pair."""
    x = torch.nn.functional.normalize(x.double(), dim=-1)
    terms = [math.exp(-t * float((x[i] - x[j]).pow(2).sum())) for i in range(len(x)) for j in range(i + 1, len(x))]
    return math.log(sum(terms) / len(terms))


@pytest.mark.parametrize("contrastive, weight", [("none", 1.0), ("infonce", 0.1)])
def test_the_example_objective_trains_and_its_first_loss_is_the_hand_computed_one(setup, site, contrastive, weight):
    """One step of the example's two methods, dropout off: the two views of a sentence coincide (alignment 0) and
    the loss is the uniformity of the batch's mean-pooled vectors, alone or weighted beside InfoNCE. (Mean
    pooling: the random backbone's [CLS] vectors lie too close together, 1e-5 apart, for float32 to tell.)"""
    root, corpus, backbone = setup
    sys.path.insert(0, str(EXAMPLE))
    try:
        parts.load_modules(["sentaug_alignment_uniformity.loss"])
    finally:
        sys.path.remove(str(EXAMPLE))
    spec = spec_for("simcse", max_steps=1, batch_size=4, pooler="avg", contrastive=contrastive,
                    objectives=[{"name": "alignment_uniformity", "weight": weight}])
    train(spec, corpus, None, backbone, str(root / "data"), str(root / "run"))
    logged = json.loads((root / "run/train_log.jsonl").read_text().splitlines()[0])
    idx = batch_order(len(CORPUS), 4, 3, 0)
    model, tok = AutoModel.from_pretrained(backbone), AutoTokenizer.from_pretrained(backbone)
    model.train()
    enc = tok([CORPUS[i] for i in idx] * 2, padding=True, truncation=True, max_length=32, return_tensors="pt")
    mask = enc["attention_mask"].unsqueeze(-1).float()
    with torch.no_grad():
        z = (model(**enc).last_hidden_state * mask).sum(1) / mask.sum(1)      # the mean over each text's tokens
    uniform = _uniformity(z[:4])
    assert logged["parts"]["alignment"] == pytest.approx(0.0, abs=1e-6)
    assert logged["parts"]["uniformity"] == pytest.approx(uniform, rel=1e-4)
    expected = weight * uniform
    if contrastive == "infonce":
        cos = torch.nn.functional.cosine_similarity
        expected += float(sum(nll(cos(z[i], z[4 + i], dim=0), [cos(z[i], z[4 + j], dim=0) for j in range(4) if j != i],
                                  0.05) for i in range(4)) / 4)
        assert logged["parts"]["contrastive"] == pytest.approx(expected - weight * uniform, rel=1e-4)
    assert logged["loss"] == pytest.approx(expected, rel=1e-4)


def test_the_example_plugins_own_tests_pass():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE)], cwd=ROOT,
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0 and "3 passed" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]


def test_the_workflow_passes_the_plugin_to_the_training_jobs_and_prices_it(tmp_path):
    """A dry run of the example's comparison: each run of its methods imports the plugin (--module), and the bill
    counts the objective as SimCSE's step, saying so."""
    (tmp_path / "modules.yaml").write_text("parts: {modules: [sentaug_alignment_uniformity.loss]}\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(EXAMPLE), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p",
                           str(tmp_path / "results/tables/compare/alignment_uniformity.md"), "--configfile",
                           str(EXAMPLE / "alignment_uniformity.yaml"), str(tmp_path / "modules.yaml"),
                           "--config", f"results={tmp_path / 'results'}"],
                          cwd=ROOT, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    commands = [line for line in proc.stdout.splitlines() if " train --spec " in line]
    ours = [c for c in commands if "/alignment_uniformity/seed" in c or "/simcse_alignment_uniformity/seed" in c]
    assert len(ours) == 6 and all("--module sentaug_alignment_uniformity.loss" in c for c in ours)
    assert not any("--module" in c for c in commands if c not in ours)     # the built-in methods' runs: none
