"""SDA's rules on a Chinese parse (sentaug.augment.sda_zh), on hand-built spaCy Docs (words, heads, labels and
tags of the zh_core_web_* scheme; no Chinese pipeline needed). Every expected sentence is written out by
hand from the rule's description."""
import random

import pandas as pd
import pytest
from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from sentaug.augment import sda_zh
from sentaug.augment.sda_zh import (AFFIRMATIVE_AUXILIARIES, affirmative_auxiliary_zh, double_negation_zh,
                                    punctuation_insertion_zh)


def doc(tokens: str):
    """'word/tag/dep/head ...' (head: index of the head word; a ROOT points at itself)."""
    parts = [t.split("/") for t in tokens.split()]
    return Doc(Vocab(), words=[p[0] for p in parts], spaces=[False] * len(parts), tags=[p[1] for p in parts],
               deps=[p[2] for p in parts], heads=[int(p[3]) for p in parts])


# 我 能 去 北京 。 -- "I can go to Beijing."
CAN_GO = "我/PN/nsubj/2 能/VV/aux:modal/2 去/VV/ROOT/2 北京/NR/dobj/2 。/PU/punct/2"
# 他 是 学生 -- "He is a student." (copula 是, nominal predicate as ROOT)
IS_STUDENT = "他/PN/nsubj/2 是/VC/cop/2 学生/NN/ROOT/2"
# 我 不 去 -- "I do not go."
NOT_GO = "我/PN/nsubj/2 不/AD/neg/2 去/VV/ROOT/2"
# 他 会 有 钱 -- "He will have money." (有: VE)
WILL_HAVE = "他/PN/nsubj/2 会/VV/aux:modal/2 有/VE/ROOT/2 钱/NN/dobj/2"
# 他 有 钱 -- "He has money."
HAS = "他/PN/nsubj/1 有/VE/ROOT/1 钱/NN/dobj/1"
# 我 知道 他 来 了 -- "I know he has come." (clausal complement)
KNOW = "我/PN/nsubj/1 知道/VV/ROOT/1 他/PN/nsubj/3 来/VV/ccomp/1 了/AS/aux:asp/3"
# 我们 ， 你们 。 -- a pause mark inside, an end mark
PAUSES = "我们/PN/nsubj/0 ，/PU/punct/0 你们/PN/conj/0 。/PU/punct/0"


class Fixed(random.Random):
    """A generator whose random() is fixed (the subject rule's comma-or-quotes coin)."""

    def __init__(self, value: float):
        super().__init__(0)
        self.value = value

    def random(self):
        return self.value


@pytest.mark.parametrize("tokens,expected", [
    (CAN_GO, "我不能不去北京。"),          # '不' before the modal, then before the root verb: "I cannot not go"
    (IS_STUDENT, "并非他不是学生"),          # '不' before the copula, '并非' in front of a nominal predicate
    (WILL_HAVE, "他不会没有钱"),             # 有 takes '没', not '不'
    (NOT_GO, "我不去"),                    # delete 不 (1), '不' before the root (2): Alg. 3 gives the original back
    (HAS, "他有钱"),                       # one negation possible only: unchanged
])
def test_double_negation(tokens, expected):
    assert double_negation_zh(doc(tokens), random.Random(0)) == expected


def test_affirmative_auxiliary_before_the_copula_or_the_bare_root_verb():
    for seed in range(4):
        aux = random.Random(seed).choice(AFFIRMATIVE_AUXILIARIES)      # drawn first, as in Alg. 2
        assert affirmative_auxiliary_zh(doc(IS_STUDENT), random.Random(seed)) == f"他{aux}是学生"
        assert affirmative_auxiliary_zh(doc(KNOW), random.Random(seed)) == f"我{aux}知道他来了"
    # a verb group of its own (modal, negation) is left alone, as the English rule does by default
    assert affirmative_auxiliary_zh(doc(CAN_GO), random.Random(0)) == "我能去北京。"
    assert affirmative_auxiliary_zh(doc(NOT_GO), random.Random(0)) == "我不去"


def test_punctuation_rules_one_by_one():
    rng = random.Random(0)
    assert sda_zh._pi_clause(doc(KNOW), rng) == "我知道，他来了"           # before the clausal complement
    assert sda_zh._pi_clause(doc(CAN_GO), rng) is None
    assert sda_zh._pi_subject(doc(CAN_GO), Fixed(0.2)) == "我，能去北京。"  # comma after the subject
    assert sda_zh._pi_subject(doc(CAN_GO), Fixed(0.7)) == "“我”能去北京。"  # or framed by quotes
    assert sda_zh._pi_duplicate(doc(PAUSES), rng) == "我们，，你们。"       # the first pause mark, not the last
    assert sda_zh._pi_duplicate(doc(CAN_GO), rng) is None                  # its only mark ends the sentence
    assert sda_zh._pi_end(doc(CAN_GO), rng) == "我能去北京！"
    assert sda_zh._pi_end(doc("好/VA/ROOT/0 ！/PU/punct/0"), rng) == "好！！"
    assert sda_zh._pi_end(doc(KNOW), rng) is None                          # no end mark: nothing to turn


def test_punctuation_insertion_modes():
    # first: Alg. 1's if-chain -> the clause rule applies first
    assert punctuation_insertion_zh(doc(KNOW), random.Random(0), mode="first") == "我知道，他来了"
    # random: one rule drawn uniformly with the line's generator (the same stream then flips the subject
    # rule's coin); unchanged when the drawn rule does not apply
    outcomes = set()
    for seed in range(12):
        r = random.Random(seed)
        rule = r.choice(sda_zh.PI_RULES)
        expected = rule(doc(CAN_GO), r) or "我能去北京。"
        assert punctuation_insertion_zh(doc(CAN_GO), random.Random(seed), mode="random") == expected
        outcomes.add(expected)
    assert {"我能去北京！", "我能去北京。"} <= outcomes and outcomes & {"我，能去北京。", "“我”能去北京。"}


def test_rules_run_through_the_registry_and_the_cache(tmp_path, shipped_config):
    """The zh augmentations are declared (config `sda_*_zh`, language zh) and build a cache from a parse."""
    from sentaug import config as sc
    from sentaug.augment import registry
    from sentaug.augment.cache import build_cache
    from sentaug.augment.parse import ATTRS

    config = shipped_config
    assert sc.augmentation_call(config, "sda_dn_zh", tmp_path) == ("double_negation_zh", {}, [])
    assert sc.augmentation_language(config, "sda_dn_zh") == "zh"
    assert {"punctuation_insertion_zh", "affirmative_auxiliary_zh", "double_negation_zh"} <= set(registry.names())
    docs = [doc(CAN_GO), doc(HAS), doc(IS_STUDENT)]
    (tmp_path / "zh.txt").write_text("".join(d.text + "\n" for d in docs), encoding="utf-8")
    db = DocBin(attrs=ATTRS, store_user_data=True)
    for d in docs:
        d.user_data["flag"] = ""
        db.add(d)
    db.to_disk(tmp_path / "zh.spacy")
    stats = build_cache("double_negation_zh", tmp_path / "zh.txt", tmp_path / "dn.parquet", seed=1,
                        parse=tmp_path / "zh.spacy")
    table = pd.read_parquet(tmp_path / "dn.parquet")
    assert table.augmented.tolist() == ["我不能不去北京。", "他有钱", "并非他不是学生"]
    assert table.changed.tolist() == [True, False, True] and stats["n_changed"] == 2
