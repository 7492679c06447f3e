"""CARDS switch-case (v1 exact count, v2 rate), Table 1 classification, Table 5 variants."""
import os
import random
from pathlib import Path

import pytest

from sentaug.augment import cards, tokenization_effects
from sentaug.models.token_sequences import decode_tokens

MODELS = Path(os.environ.get("SENTAUG_MODEL_MIRROR") or Path(__file__).resolve().parents[3] / "shared" / "models")
WORDS = [f"word{chr(97 + i)}" for i in range(20)]          # 20 switchable lowercase words


def flipped_positions(before: str, after: str) -> list[int]:
    a, b = before.split(), after.split()
    assert len(a) == len(b)
    return [i for i, (x, y) in enumerate(zip(a, b)) if x != y]


@pytest.mark.parametrize("p,expected", [(0.1, 2), (0.26, 5), (0.01, 1), (1.0, 20)])
def test_v1_switches_exactly_max1_round_pn_words(p, expected):
    text = " ".join(WORDS)
    for seed in range(5):
        out = cards.switch_case(text, random.Random(seed), p=p, version="v1")
        pos = flipped_positions(text, out)
        assert len(pos) == expected
        for i in pos:   # only the first letter's case changes
            assert out.split()[i] == WORDS[i][0].upper() + WORDS[i][1:]


def test_v1_flips_every_letter_initial_token_and_keeps_spacing():
    """The collator's rule (data/text_augmentation.py): tokens split at spaces only ("apple\t--" is one),
    a token is eligible when its first character is a letter (str.isalpha: "éclair" too, not "12" or "(")."""
    text = "12 ( Zoo  apple\t--  éclair 3.5"
    assert cards.switch_case(text, random.Random(0), p=1.0, version="v1") == "12 ( zoo  Apple\t--  Éclair 3.5"


def test_v1_count_is_over_every_token():
    """max(1, round(p * n)) with n counting every token: 10 numbers + 20 words at p = 0.1 give 3 switches
    (counting only the 20 words would give 2)."""
    text = " ".join(["7"] * 10 + WORDS)
    for seed in range(5):
        assert len(flipped_positions(text, cards.switch_case(text, random.Random(seed), p=0.1, version="v1"))) == 3
    # more switches than eligible words: every eligible word, once
    assert cards.switch_case("1 2 3 4 abc", random.Random(0), p=1.0, version="v1") == "1 2 3 4 Abc"


@pytest.mark.parametrize("text, expected", [
    ("Straße Ωmega ÉPIC, Zoë.", "straße ωmega éPIC, zoë."),        # any script, punctuation glued
    ("ßtest", "SStest"),                                            # str.upper: one letter becomes two
    ("中文 o'Neil l'été 3rd 'quoted", "中文 O'Neil L'été 3rd 'quoted"),  # no case: left as it is; "3rd", "'q": no
])
def test_flip_as_the_collator_does(text, expected):
    assert cards.switch_case(text, random.Random(0), p=1.0, version="v2") == expected


def test_a_caseless_letter_uses_up_a_v1_switch():
    # two tokens, p = 0.5: one switch, spent on "中文" or on "abc" (the collator counts both as switched)
    outs = {cards.switch_case("中文 abc", random.Random(s), p=0.5, version="v1") for s in range(20)}
    assert outs == {"中文 abc", "中文 Abc"}


def test_collator_text_is_what_decode_gives_back():
    assert cards.collator_text("He said  , \" hi \" . It 's done ") == "He said, \" hi \". It's done"
    assert cards.switch_case("a  b .", random.Random(0), p=1.0, version="v2", normalize="collator") == "A B."


def test_v2_rate_is_p_per_word():
    words = WORDS * 100                                # 2,000 words
    text = " ".join(words)
    rng = random.Random(7)
    flipped = sum(len(flipped_positions(text, cards.switch_case(text, rng, p=0.1, version="v2"))) for _ in range(5))
    share = flipped / (5 * len(words))
    sd = (0.1 * 0.9 / (5 * len(words))) ** 0.5          # binomial standard deviation
    assert abs(share - 0.1) < 4 * sd
    # v2 may leave a line unchanged: P(no flip in 3 words at p=0.1) = 0.729
    unchanged = sum(cards.switch_case("aa bb cc", rng, 0.1, "v2") == "aa bb cc" for _ in range(4000)) / 4000
    assert abs(unchanged - 0.729) < 0.03


def test_bad_parameters_raise():
    with pytest.raises(ValueError, match="version"):
        cards.switch_case("a b", random.Random(0), 0.1, "v3")
    with pytest.raises(ValueError, match="p must be"):
        cards.switch_case("a b", random.Random(0), 1.5, "v1")


@pytest.mark.parametrize("before,after,effect", [
    (("natural", "istic"), ("Natural", "istic"), "substitution"),   # CARDS Table 1 examples
    (("Chart", "ing"), ("chart", "ing"), "substitution"),
    (("interpret",), ("Inter", "pret"), "division"),
    (("Neigh", "bor"), ("ne", "igh", "bor"), "division"),
    (("recomm", "ended"), ("Recommended",), "fusion"),
    (("Ser", "ious"), ("serious",), "fusion"),
    (("urg", "ency"), ("Ur", "gency"), "regrouping"),
    (("O", "ng", "oing"), ("ongo", "ing"), "regrouping"),
    (("apple",), ("apple",), "unchanged"),
])
def test_table1_classification_on_hand_made_tokenizations(before, after, effect):
    assert cards.classify(before, after) == effect


needs_roberta = pytest.mark.skipif(not (MODELS / "roberta-base-tokenizer").is_dir(),
                                   reason="needs ../shared/models/roberta-base-tokenizer")


@pytest.fixture()
def roberta(monkeypatch):
    monkeypatch.setenv("SENTAUG_MODEL_MIRROR", str(MODELS))
    return "mirror:roberta-base-tokenizer"


@needs_roberta
def test_table1_examples_under_the_real_roberta_tokenizer(roberta):
    wt = cards.word_tokenizer(roberta)
    assert wt.tokens("interpret", True) == ("interpret",)
    assert wt.tokens("Interpret", True) == ("Inter", "pret")          # the paper's own example
    assert tokenization_effects.word_effect(wt, "interpret", True) == "division"
    assert tokenization_effects.word_effect(wt, "recommended", True) == "fusion"     # recomm-ended -> Recommended
    assert tokenization_effects.word_effect(wt, "naturalistic", False) == "substitution"


@needs_roberta
def test_tokenization_effects_counts_every_switchable_word(roberta):
    # In its sentence: 'interpret' line-initial: division; ' recommended' -> ' Recommended' are single tokens:
    # substitution. Isolated (CARDS Table 1): 'recommended' is recomm-ended -> Recommended: fusion.
    # '1999' is not switchable; the empty line contributes nothing.
    result = tokenization_effects.tokenization_effects(["interpret recommended 1999", ""], roberta, context="sentence")
    assert result["switched_words"] == 2
    assert result["counts"]["division/lower_to_upper"] == 1
    assert result["counts"]["substitution/lower_to_upper"] == 1
    assert result["percent"]["division/lower_to_upper"] == 50.0
    isolated = tokenization_effects.tokenization_effects(["interpret recommended 1999", ""], roberta)
    assert isolated["counts"]["division/lower_to_upper"] == 1 and isolated["counts"]["fusion/lower_to_upper"] == 1
    assert isolated["percent"]["fusion/lower_to_upper"] == 50.0


@needs_roberta
def test_bpe_with_no_dropout_reproduces_the_tokenizer_and_full_dropout_gives_bytes(roberta):
    wt = cards.word_tokenizer(roberta)
    text = "The Naturalistic interpretation of photosynthesis, reconsidered in 1999!"
    ours = [t for j, w in enumerate(text.split()) for piece in wt.pieces(w, j == 0) for t in wt.bpe(piece)]
    assert ours == wt.tok.tokenize(text)                              # reference: the tokenizers library
    assert cards.bpe_dropout(text, random.Random(0), p=0.0, tokenizer=roberta) == text
    tokens = decode_tokens(cards.bpe_dropout(text, random.Random(0), p=1.0, tokenizer=roberta))
    assert "".join(tokens) == "".join(wt.tok.tokenize(text))          # same bytes ...
    assert all(len(t) == 1 for t in tokens)                           # ... no merge applied


@needs_roberta
def test_retokenize_keeps_case_but_takes_the_switched_segmentation(roberta):
    out = cards.retokenize("interpret the text", random.Random(0), p=1.0, version="v2", tokenizer=roberta)
    tokens = decode_tokens(out)
    assert tokens == ["inter", "pret", "Ġthe", "Ġtext"]              # 'interpret' -> 'inter' + 'pret'
    wt = cards.word_tokenizer(roberta)
    assert wt.tok.convert_tokens_to_string(tokens) == "interpret the text"
    assert wt.tok.unk_token_id not in wt.tok.convert_tokens_to_ids(tokens)


@needs_roberta
def test_substitution_only_leaves_division_words_alone(roberta):
    out = cards.switch_case_substitution("interpret the naturalistic", random.Random(0), p=1.0, version="v2",
                                         tokenizer=roberta)
    assert out == "interpret The Naturalistic"                     # 'interpret' would divide: not switched


def test_registered_with_parameters():
    from sentaug.augment import registry

    aug = registry.get("switch_case")
    assert aug.family == "cards" and aug.resolve({}) == {"p": 0.05, "version": "v1", "normalize": "none"}
    assert aug("alpha beta gamma delta", random.Random(3), p=0.5) == cards.switch_case(
        "alpha beta gamma delta", random.Random(3), 0.5, "v1")


def test_retokenize_when_the_space_is_a_token_of_its_own():
    # the bundled demo BPE splits ' Can' into 'Ġ' + 'C' + 'an': the letter to restore is in the second token
    from sentaug.models.backbones import resolve_tokenizer

    ref = resolve_tokenizer("bundled:demo-bpe")
    wt = cards.word_tokenizer(ref)
    assert wt.tokens("Can", False) == ("Ġ", "C", "an")
    assert wt.tokens("can", False) != ("Ġ", "c", "an") and "c" in wt.vocab
    assert tokenization_effects.word_effect(wt, "can", False) in ("division", "regrouping")
    tokens = decode_tokens(cards.retokenize("42 can", random.Random(0), p=1.0, version="v2", tokenizer=ref,
                                                  context="sentence"))
    assert tokens == list(wt.tokens("42", True)) + ["Ġ", "c", "an"]
