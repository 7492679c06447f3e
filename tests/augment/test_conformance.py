"""Agreement with the code the papers ran (sentaug.augment.conformance): NL-Augmenter's own test cases for every
augmentation AugCSE took from it, SDA's released augmentation code on sentences whose parse is recorded, and
CARDS's collator on sentences with apostrophes, digits and non-ASCII letters; one test per augmentation. Each
measures the agreement and asserts that the cases we do not reproduce are exactly those listed, with a
reason, in resources/reference/known_failures.yaml (so a regression, or a fix, shows up here)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sentaug.augment import conformance as C
from sentaug.augment.parse import SpacyModelMissing, load_nlp


@pytest.fixture(scope="module", autouse=True)
def _needs_spacy_and_wordnet():
    from sentaug.augment import wordnet

    try:
        load_nlp("en_core_web_sm")
        wordnet.wordnet()
    except (SpacyModelMissing, wordnet.WordNetMissing) as e:
        pytest.skip(str(e))


MODELS = Path(os.environ.get("SENTAUG_MODEL_MIRROR") or Path(__file__).resolve().parents[3] / "shared" / "models")
REPOSITORIES = {"nlaugmenter": "GEM-benchmark/NL-Augmenter", "sda_released.json": "Zhudongsheng75/SDA",
                "cards_collator.json": "alibaba/SimCSE-with-CARDS"}


def test_reference_files_name_their_source():
    for check in C.CHECKS:
        src = C.load_reference(check.reference)["source"]
        assert src["repository"] == REPOSITORIES[check.reference.split("/")[0]] and len(src["commit"]) == 40
        assert src["path"] and C.cases(check), check.op


@pytest.mark.parametrize("op", sorted({c.op for c in C.CHECKS}))
def test_agreement_with_reference(op, monkeypatch):
    if any(c.op == op and c.reference == "cards_collator.json" for c in C.CHECKS):
        if not (MODELS / "roberta-base-tokenizer").is_dir():
            pytest.skip("needs ../shared/models/roberta-base-tokenizer (CARDS's tokenizer-dependent cases)")
        monkeypatch.setenv("SENTAUG_MODEL_MIRROR", str(MODELS))
    result = C.evaluate(only={op})[op]
    failing = {f["input"] for f in result["failures"]}
    known = C.known_failures().get(op, {})
    assert failing == set(known), json.dumps(result["failures"], indent=1, ensure_ascii=False)
    assert all(known[f["input"]] for f in result["failures"])
    assert result["agree"] == result["n"] - len(known)
    assert result["agreement"] == round(100 * result["agree"] / result["n"], 2)


def test_known_failures_name_real_cases():
    inputs = {(c.op, case["input"]) for c in C.CHECKS for case in C.cases(c)}
    for op, cases in C.known_failures().items():
        for text in cases:
            assert (op, text) in inputs, (op, text)


def test_pool_checks_on_hand_made_outputs():
    """The pool tests themselves, on outputs written by hand."""
    assert C.in_pool("color", "The car is red.", "The car is misty rose.")
    assert not C.in_pool("color", "The car is red.", "The car is crimsonish.")
    assert not C.in_pool("color", "The car is red.", "The car is red.")
    assert C.in_pool("marker", "I stayed because it rained.", "I stayed since it rained.")
    assert not C.in_pool("marker", "I stayed because it rained.", "I stayed however it rained.")
    assert C.in_pool("deletion", "a b c d", "a c")
    assert not C.in_pool("deletion", "a b c d", "c a")
    assert C.in_pool("hyponym", "The dog barked.", "The poodle barked.")
    assert not C.in_pool("hyponym", "The dog barked.", "The cat barked.")
    assert C.same_targets("color", "red and blue", "tan and blue", "pink and blue")
    assert not C.same_targets("color", "red and blue", "tan and blue", "red and pink")


def test_conformance_cli_writes_json(tmp_path):
    out = tmp_path / "c.json"
    C.conformance_cli(str(out), only=["GenderSwap", "NumericToWord"])
    data = json.loads(out.read_text())
    assert set(data["augmentations"]) == {"GenderSwap", "NumericToWord"}
    entry = data["augmentations"]["NumericToWord"]
    assert data["spacy_model"] == "en_core_web_sm"
    assert entry["n"] == 80 and entry["agree"] == 80 and entry["agreement"] == 100.0
    assert entry["reference"].startswith("GEM-benchmark/NL-Augmenter:nlaugmenter/transformations/numeric_to_word")
