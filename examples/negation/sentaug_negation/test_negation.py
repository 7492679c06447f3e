"""The cases of test.json, beside the augmentation as NL-Augmenter keeps them: `pytest examples/negation`."""
from pathlib import Path

from sentaug.augment.cases import check_cases


def test_the_augmentation_gives_the_outputs_of_its_test_cases():
    assert check_cases(Path(__file__).with_name("test.json"), modules=["sentaug_negation.negation"]) == []
