"""AugCSE's augmentations (sentaug.augment.augcse) on hand-picked sentences. Expected outputs are written by hand
from the rules of the code AugCSE ran (NL-Augmenter's transformations, AugCSE's nlpaug wrappers), quirks
included, and from the paper's examples; WordNet facts are read from the WordNet reader directly; the random
ones are checked by properties (counts, pools, determinism, seeds). NL-Augmenter's own test cases are run in
tests/augment/test_conformance.py."""
from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from sentaug.augment import registry
from sentaug.augment.augcse import data as D
from sentaug.augment.augcse import numbers as N
from sentaug.augment.augcse import random_words as R
from sentaug.augment.augcse.common import past_tense, third_person

PAPER_NAMES = ("SentenceAdjectivesAntonymsSwitch SentenceAuxiliaryNegationRemoval ReplaceHypernyms ReplaceHyponyms "
               "SentenceSubjectObjectSwitch CityNamesTransformation AntonymSubstitute ColorTransformation "
               "Summarization SentenceReordering TenseTransformation RandomDeletion RandomCrop RandomSwap "
               "RandomWordAugmentation RandomWordEmbAugmentation RandomContextualWordAugmentation YodaPerturbation "
               "ContractionExpansions DiscourseMarkerSubstitution GenderSwap GeoNamesTransformation NumericToWord "
               "SynonymSubstitution DiverseParaphrase Casual2Formal").split()


@pytest.fixture(scope="module")
def wn():
    from sentaug.augment import wordnet

    try:
        return wordnet.wordnet()
    except wordnet.WordNetMissing as e:
        pytest.skip(str(e))


def run(nlp, name, text, seed=0, **params):
    aug = registry.get(name)
    x = nlp(text) if aug.needs_parse else text
    return aug(x, random.Random(seed), **params)


def test_all_paper_augmentations_registered():
    listing = registry.describe()
    for name in PAPER_NAMES:
        assert registry.get(name).family == "augcse"
        assert f"  {name}" in listing
    assert len([n for n in registry.names() if registry.get(n).family == "augcse"]) == len(PAPER_NAMES) == 26


# -- deterministic rules: exact expected outputs ------------------------------------------------------
@pytest.mark.parametrize("name, text, params, expected", [
    ("SentenceAdjectivesAntonymsSwitch", "He is a good man.", {}, "He is a bad man."),
    ("SentenceAdjectivesAntonymsSwitch", "Amanda's mother was very beautiful.", {}, "Amanda's mother was very ugly."),
    ("SentenceAuxiliaryNegationRemoval", "He is not happy.", {}, "He is happy."),
    ("SentenceAuxiliaryNegationRemoval", "You cannot stop now.", {}, "You can stop now."),     # "can" + "not"
    ("SentenceAuxiliaryNegationRemoval", "They do not know.", {}, "They know."),             # "do" goes too
    ("SentenceAuxiliaryNegationRemoval", "It isn't late.", {}, "It is late."),               # the clitic's space
    # no case change of pronouns, the moved subject keeps its capital, the first letter is capitalised
    ("SentenceSubjectObjectSwitch", "He saw her at the station.", {}, "Her saw He at the station."),
    ("SentenceSubjectObjectSwitch", "The dog chased the cat.", {}, "The cat chased The dog."),
    ("Summarization", "Stillwater is not a 2010 American live-action/animated dark fantasy adventure film.", {},
     "Stillwater !is film"),                                          # the paper's own example
    ("Summarization", "Birds.", {}, ""),                              # nothing found: the empty string
    ("SentenceReordering", "I like it. It is great.", {}, "It is great. I like it."),
    ("TenseTransformation", "He walks to school every day.", {"to": "past"}, "He walked to school every day."),
    ("TenseTransformation", "She went home.", {"to": "present"}, "She goes home."),
    ("TenseTransformation", "I go to the park.", {"to": "future"}, "I will go to the park."),
    ("TenseTransformation", "I will go to the park.", {"to": "past"}, "I went to the park."),  # "will" dropped
    # tenseflow counts no pronoun as plural ("they is"), and conjugates a base form after a modal ("can't stopped")
    ("TenseTransformation", "I was tired and they were happy.", {"to": "present"}, "I am tired and they is happy."),
    ("TenseTransformation", "We can't stop.", {"to": "past"}, "We can't stopped."),
    ("YodaPerturbation", "You still have much to learn.", {}, "Much to learn, you still have."),  # paper's example
    ("YodaPerturbation", "You must find the treasure", {}, "Find the treasure, you must"),
    ("ContractionExpansions", "He often doesn't come to school.", {}, "He often does not come to school."),
    ("ContractionExpansions", "Don't worry, I'm fine.", {}, "Do not worry, I am fine."),
    ("ContractionExpansions", "I am sure it is fine.", {}, "I'm sure it's fine."),
    ("ContractionExpansions", "It can't be.", {}, "It cannot be."),
    ("GenderSwap", "The king gave his daughter a gift.", {}, "The queen gave her son a gift."),
    ("GenderSwap", "She told him about herself.", {}, "He told him about herself."),   # only the listed words
    ("AntonymSubstitute", "Steve is able to recommend good movies quickly.", {},          # 3 flips: odd, applied
     "Steve is unable to recommend bad movies slowly."),
    ("AntonymSubstitute", "It is useful to keep the right answer in mind.", {},
     "It is useful to keep the right answer in mind."),                                   # 2 flips: even, kept
    ("AntonymSubstitute", "It is useful to keep the right answer in mind.", {"parity": "even"},
     "It is useless to keep the incorrect answer in mind."),
    ("NumericToWord", "3 cats", {}, "three cats"),
    ("NumericToWord", "Tom bought 3 apples and paid $10.", {}, "Tom bought three apples and paid $10."),
    ("NumericToWord", "It fell 13% from 1871 to 1872.", {},
     "It fell thirteen % from eighteen seventy-one to eighteen seventy-two."),
    ("NumericToWord", "The 21st of 1,234,567 is 3.14 at 10:30.", {},
     "The twenty-first of one million two hundred and thirty-four thousand five hundred and sixty-seven is "
     "three point one four at 10:30."),                     # "10:30." is no time (the full stop) and stays
    ("NumericToWord", "2 + 2 = 4", {}, "two + two = four"),
    ("NumericToWord", "It is 12:45 and 0:15", {}, "It is quarter to thirteen am and quarter past half am"),  # its table
    ("CityNamesTransformation", "Birds fly south.", {}, "Birds fly south ."),           # tokens joined, as there
    ("ColorTransformation", "He entered the room.", {"match": "word"}, "He entered the room."),
])
def test_rule_outputs(nlp, wn, name, text, params, expected):
    assert run(nlp, name, text, **params) == expected


@pytest.mark.parametrize("name, text, params", [
    ("SentenceAdjectivesAntonymsSwitch", "The cat sat on the mat.", {}),
    ("SentenceAuxiliaryNegationRemoval", "He is happy.", {}),
    ("SentenceAuxiliaryNegationRemoval", "Not everyone came.", {}),      # negation not after an auxiliary
    ("SentenceAuxiliaryNegationRemoval", "I didn't go there.", {}),      # "did" is not in NL-Augmenter's list
    ("SentenceAuxiliaryNegationRemoval", "You can't stop now.", {}),     # "ca" + "n't" is not "can"
    ("SentenceSubjectObjectSwitch", "He slept.", {}),
    ("SentenceReordering", "A single sentence, however long it is.", {}),  # single sentence: unchanged
    ("YodaPerturbation", "Rain.", {}),
    ("ContractionExpansions", "Birds fly south.", {}),
    ("ColorTransformation", "Birds fly south.", {}),
    ("CityNamesTransformation", "Birds fly south.", {"spacing": "original"}),
    ("GeoNamesTransformation", "Birds fly south.", {}),
    ("DiscourseMarkerSubstitution", "Birds fly south.", {}),
    ("DiscourseMarkerSubstitution", "He walked as a result.", {}),      # several-word markers are never found
    ("NumericToWord", "Birds fly south.", {}),
    ("GenderSwap", "Birds fly south.", {}),
    ("AntonymSubstitute", "Birds fly south.", {}),
    ("ReplaceHyponyms", "Quickly!", {}),
    ("RandomDeletion", "Hello", {}),                                      # one token: nothing to delete
])
def test_unchanged_when_nothing_applies(nlp, wn, name, text, params):
    assert run(nlp, name, text, **params) == text


# -- rules with random choices: the result is one of the allowed ones --------------------------------
def test_color_city_discourse_choices(nlp):
    colors = D.colors()
    assert len(colors) == 147 and "misty rose" in colors and "dark golden rod" in colors   # NL-Augmenter's names
    outs = {run(nlp, "ColorTransformation", "The car is red.", seed=s) for s in range(8)}
    assert len(outs) > 1
    for o in outs:
        assert o.startswith("The car is ") and o.endswith(".") and o[len("The car is "):-1] in colors
    # NL-Augmenter's substring search also finds a colour inside a word (its behaviour, kept by default)
    o = run(nlp, "ColorTransformation", "He entered the room.", seed=1)
    assert o.startswith("He ente") and o.endswith(" the room.") and o[len("He ente"):-len(" the room.")] in colors
    scarce = set(D.scarce_cities())
    for seed in range(4):
        o = run(nlp, "CityNamesTransformation", "She moved from London to a farm.", seed=seed)
        assert o.startswith("She moved from ") and o.endswith(" to a farm .")
        assert o[len("She moved from "):-len(" to a farm .")] in scarce
    outs = {run(nlp, "DiscourseMarkerSubstitution", "I stayed home because it rained.", seed=s) for s in range(8)}
    assert outs == {"I stayed home since it rained.", "I stayed home inasmuch as it rained."}


def test_geonames_variants(nlp):
    """Countries (GeoNames countryInfo) and capitals: every variant drawn is one NL-Augmenter's patterns make,
    written here by hand from countryInfo's row for Japan (capital Tokyo, continent AS)."""
    outs = {run(nlp, "GeoNamesTransformation", "She lives in Tokyo.", seed=s) for s in range(12)}
    assert outs == {"She lives in Tokyo, a city in Japan, .", "She lives in Tokyo, a city in Asia, .",
                    "She lives in Tokyo, the capital of Japan, ."}
    outs = {run(nlp, "GeoNamesTransformation", "Japan is an island country", seed=s) for s in range(40)}
    assert "Japan, a country in Asia, is an island country" in outs
    assert "Japan (JP/JPN), is an island country" in outs
    assert "Japan, whose capital city is Tokyo, is an island country" in outs
    assert all(o.startswith("Japan") and o.endswith(", is an island country") for o in outs)


def test_wordnet_replacements(nlp, wn):
    """One noun is replaced, by a hypernym (any ancestor) or a hyponym (up to three steps down)."""
    def closure(word, down, depth):
        frontier, out = wn.synsets(word, "n"), set()
        for _ in range(depth):
            frontier = [r for s in frontier for r in (s.hyponyms() + s.instance_hyponyms() if down
                                                      else s.hypernyms() + s.instance_hypernyms())]
            out |= {l.name() for s in frontier for l in s.lemmas() if "_" not in l.name()}
        return out

    hyper, hypo = closure("dog", False, 30), closure("dog", True, 3)
    assert "entity" in hyper and "canine" in hyper and "poodle" in hypo
    for seed in range(4):
        o = run(nlp, "ReplaceHypernyms", "The dog barked.", seed=seed)
        assert o.startswith("The ") and o.endswith(" barked.") and o[4:-8] in hyper
        o = run(nlp, "ReplaceHyponyms", "The dog barked.", seed=seed)
        assert o[4:-8] in hypo
    two = "The dog chased the cat."
    for seed in range(6):           # exactly one of the two nouns changes
        o = run(nlp, "ReplaceHyponyms", two, seed=seed)
        assert sum(a != b for a, b in zip(two.split(), o.split())) == 1 and len(o.split()) == 5


def test_synonym_substitution_uses_synset_head_words(nlp, wn):
    """NL-Augmenter's candidates: the first word of each synset's name for the token's POS (so "stopped" ->
    "stop" or "end", uninflected; "hold_on" -> "hold on"); with prob=1 every token with a candidate changes."""
    def heads(word, pos):
        return {s.name().split(".")[0].replace("_", " ") for s in wn.synsets(word, pos)} - {word}

    allowed = {f"The {a} {b}." for a in heads("automobile", "n") for b in heads("stopped", "v")}
    outs = {run(nlp, "SynonymSubstitution", "The automobile stopped.", seed=s, prob=1.0) for s in range(8)}
    assert outs <= allowed and len(outs) > 1
    assert run(nlp, "SynonymSubstitution", "The automobile stopped.", seed=5, prob=0.0) == "The automobile stopped."


# -- random word operations (AugCSE's nlpaug RandomWordAug settings) --------------------------------
TEN = "one two three four five six seven eight nine ten"


def _is_subsequence(small, big):
    it = iter(big)
    return all(w in it for w in small)


def test_random_word_counts_follow_nlpaug():
    """nlpaug touches ceil(aug_p * n) tokens, clipped to [aug_min, aug_max]; AugCSE: delete and crop 0.6,
    swap 0.1, the mixed one 0.15, aug_max 30."""
    assert R.aug_count(10, 0.6, 1, 30) == 6 and R.aug_count(7, 0.3, 1, 10) == 3 and R.aug_count(3, 0.1, 1, 30) == 1
    assert R.aug_count(100, 0.6, 1, 30) == 30
    words = TEN.split()
    for seed in range(6):
        d = run(None, "RandomDeletion", TEN, seed=seed).split()
        assert _is_subsequence(d, words)                                   # ceil(0.6 * 10) = 6 deleted, but
        assert len(d) == 4 or (len(d) == 5 and d[0] == "two")               # nlpaug re-writes token 1 when 0 goes
        c = run(None, "RandomCrop", TEN, seed=seed).split()                 # one run of 6 (wrapping when leftward)
        removed = {i for i, w in enumerate(words) if w not in c}
        runs = [{(st + k) % 10 for k in range(6)} for st in range(10)]
        assert any(removed == r or (0 in r and removed == r - {1}) for r in runs), c
        s = run(None, "RandomSwap", TEN, seed=seed).split()                 # ceil(0.1 * 10) = 1 swap
        assert sorted(s) == sorted(words) and sum(a != b for a, b in zip(s, words)) == 2
    assert run(None, "RandomDeletion", "Hello world, friend.", seed=0, aug_p=0.01) in {
        "World, friend.", "Hello, friend.", "Hello world,."}                 # punctuation is never chosen
    assert R.nlpaug_tokens("It's fine-tuned (really)!") == ["It", "'", "s", "fine", "-", "tuned", "(", "really", ")",
                                                            "!"]


def test_random_word_ops_match_nlpaug_counts_on_real_sentences():
    """Against nlpaug itself (AugCSE's library, installed): for each sentence, the number of tokens nlpaug's
    RandomWordAug deletes equals ours (the draws differ: nlpaug uses Python's global generator)."""
    import nlpaug.augmenter.word as naw

    random.seed(0)
    aug = naw.RandomWordAug(action="delete", aug_p=0.6, aug_max=30)
    for text in ["The cat sat on the mat, quietly.", "Alice in Wonderland is a 2010 American film",
                 "A B", "Well... it's 3 p.m. now!"]:
        theirs = aug.augment(text)
        theirs = theirs[0] if isinstance(theirs, list) else theirs
        ours = run(None, "RandomDeletion", text, seed=1)
        assert len(R.nlpaug_tokens(ours)) == len(R.nlpaug_tokens(theirs)), (text, ours, theirs)


@pytest.mark.parametrize("name", ["RandomDeletion", "RandomCrop", "RandomSwap", "RandomWordAugmentation",
                                  "ColorTransformation", "GenderSwap", "SynonymSubstitution"])
def test_deterministic_for_a_seed_and_varies_across_seeds(nlp, wn, name):
    text = "Mary said the red car and the blue boat are good and fast, and John agreed with her."
    first = [run(nlp, name, text, seed=s) for s in range(6)]
    again = [run(nlp, name, text, seed=s) for s in range(6)]
    assert first == again
    assert len(set(first)) > 1


# -- model-based substitutes --------------------------------------------------------------------------
def test_word_embedding_neighbours(minilm_path):
    from sklearn.metrics.pairwise import cosine_similarity
    from transformers import AutoModel, AutoTokenizer

    text = "The happy child walked home."
    o = run(None, "RandomWordEmbAugmentation", text, seed=0, model=minilm_path, aug_p=1.0, top_k=5)
    assert o != text and len(o.split()) == len(text.split())
    tok, net = AutoTokenizer.from_pretrained(minilm_path), AutoModel.from_pretrained(minilm_path)
    vocab = tok.get_vocab()
    whole = [w for w in vocab if w.isalpha() and w.isascii() and len(w) > 1]
    emb = net.get_input_embeddings().weight.detach().numpy()
    for a, b in zip(text[:-1].split(), o[:-1].split()):
        if a != b:
            sims = cosine_similarity(emb[[vocab[a.lower()]]], emb[[vocab[w] for w in whole]])[0]
            top = {whole[i] for i in np.argsort(-sims)[:6]} - {a.lower()}
            assert b.lower() in top, (a, b)


def _tokenizer(path: str):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path)


def test_contextual_word_augmentation(tiny_mlm):
    path, tok = tiny_mlm, _tokenizer(tiny_mlm)
    text = "The quick brown fox jumps over the lazy dog."
    outs = [run(None, "RandomContextualWordAugmentation", text, seed=s, model=path) for s in range(3)]
    assert outs == [run(None, "RandomContextualWordAugmentation", text, seed=s, model=path) for s in range(3)]
    vocab = tok.get_vocab()
    for o in outs:
        diff = [(a, b) for a, b in zip(text.split(), o.split()) if a != b]
        assert 1 <= len(diff) <= 3 and len(o.split()) == 9     # int(0.3 * 9) = 2 words, at least 1 changed
        assert all(b.strip(".").lower() in vocab for _, b in diff)


def test_contextual_word_augmentation_of_a_checkpoint_without_its_head_is_reproducible(tiny_mlm, tmp_path):
    """The demo's masked LM is a random stand-in saved without an MLM head: the head the augmentation loads it
    with is new each time, and must be the same whatever torch's generator holds (a new process seeds it at
    random)."""
    import torch
    from transformers import BertModel

    from sentaug.augment.augcse import random_words

    path, tok = tiny_mlm, _tokenizer(tiny_mlm)
    headless = tmp_path / "headless"
    BertModel.from_pretrained(path).save_pretrained(headless)
    tok.save_pretrained(headless)
    lines = ["The quick brown fox jumps over the lazy dog.", "Quiet rivers flow north past seven green hills."]
    outs = []
    for state in (1, 2):
        random_words._mlm.cache_clear()
        torch.manual_seed(state)
        outs.append(registry.get("RandomContextualWordAugmentation").fn(lines, random.Random(0), model=str(headless)))
    random_words._mlm.cache_clear()
    assert outs[0] == outs[1] and outs[0] != lines


def test_contextual_word_batch_equals_one_line_at_a_time(tiny_mlm):
    """With top_k=1 and every content word masked, nothing is random: a padded batch must give each line
    what it gives alone, and the first substitution is the full model's argmax at the mask."""
    import torch
    from transformers import AutoModelForMaskedLM

    path, tok = tiny_mlm, _tokenizer(tiny_mlm)
    aug = registry.get("RandomContextualWordAugmentation")
    lines = ["Quiet rivers flow north.", "The old mill stands near seven tall green hills by the town."]
    kw = dict(model=path, top_k=1, aug_p=1.0, aug_max=100)
    both = aug.fn(lines, random.Random(0), **kw)
    assert both == [aug.fn([ln], random.Random(5), **kw)[0] for ln in lines]
    net = AutoModelForMaskedLM.from_pretrained(path).eval()
    enc = tok(f"{tok.mask_token} rivers flow north.", return_tensors="pt")
    with torch.no_grad():
        logits = net(**enc).logits[0, 1]
    vocab_inv = {i: w for w, i in tok.get_vocab().items()}
    first = next(vocab_inv[i] for i in logits.argsort(descending=True).tolist()
                 if vocab_inv[i].isalpha() and vocab_inv[i] != "quiet")
    assert both[0].split()[0] == first.capitalize()


def test_batched_cache_is_the_same_for_any_worker_count(tiny_mlm, tmp_path, monkeypatch):
    """Batched augmentations draw from one generator per fixed chunk: caches do not depend on workers."""
    import pandas as pd

    from sentaug.augment import parse
    from sentaug.augment.cache import build_cache

    monkeypatch.setattr(parse, "CHUNK", 3)
    path = tiny_mlm
    lines = [f"Line number {w} has several more words in it" for w in "one two three four five six seven".split()]
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(lines) + "\n")
    frames = []
    for w in (1, 2):
        build_cache("RandomContextualWordAugmentation", corpus, tmp_path / f"w{w}.parquet", seed=4,
                    params={"model": path}, workers=w)
        frames.append(pd.read_parquet(tmp_path / f"w{w}.parquet")["augmented"].tolist())
    assert frames[0] == frames[1]
    aug = registry.get("RandomContextualWordAugmentation")
    assert frames[0][3:6] == aug.fn(lines[3:6], random.Random("4:chunk3"), model=path)    # the second chunk


@pytest.mark.parametrize("name", ["RandomContextualWordAugmentation", "DiverseParaphrase", "Casual2Formal"])
def test_model_based_fail_clearly_without_a_model(name, tmp_path):
    aug = registry.get(name)
    with pytest.raises(ValueError, match="--param model=PATH"):
        aug("Hello there friend.", random.Random(0))
    with pytest.raises(ValueError, match="cannot load"):
        aug("Hello there friend.", random.Random(0), model=str(tmp_path / "missing"))


# -- caches: bad input kept and flagged --------------------------------------------------------------
@pytest.mark.parametrize("name, expected0", [("SentenceAuxiliaryNegationRemoval", "He is not happy."),
                                             ("NumericToWord", "I have 2 dogs.")])
def test_cache_with_bad_lines(nlp, tmp_path, name, expected0):
    from sentaug.augment.cache import build_cache

    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"He is not happy.\n\nbad \xff bytes 5\nI have 2 dogs.\nNothing applies here\n")
    out = tmp_path / "a.parquet"
    stats = build_cache(name, corpus, out, seed=1)
    df = pd.read_parquet(out)
    assert list(df.flag) == ["", "empty", "invalid_utf8", "", ""]
    want = {"SentenceAuxiliaryNegationRemoval": ["He is happy.", "", df.original[2], "I have 2 dogs.",
                                                 "Nothing applies here"],
            "NumericToWord": ["He is not happy.", "", df.original[2], "I have two dogs.", "Nothing applies here"]}
    assert list(df.augmented) == want[name]
    assert stats["n_changed"] == 1 and list(df.changed) == [a != b for a, b in zip(df.original, df.augmented)]
    assert not list(tmp_path.glob("*.tmp*"))


def test_number_words_against_hand_values():
    """num2words' English conventions (what NL-Augmenter calls), written by hand."""
    assert N.cardinal(0) == "zero" and N.cardinal(40) == "forty"
    assert N.cardinal(101) == "one hundred and one"
    assert N.cardinal(2_000_005) == "two million and five"
    assert N.cardinal(1100) == "one thousand, one hundred"
    assert N.cardinal(12235) == "twelve thousand, two hundred and thirty-five"
    assert N.ordinal(12) == "twelfth" and N.ordinal(90) == "ninetieth" and N.ordinal(101) == "one hundred and first"
    assert N.year(1905) == "nineteen oh-five" and N.year(1900) == "nineteen hundred"
    assert N.year(1100) == "eleven hundred"
    assert N.year(2004) == "two thousand and four" and N.year(2010) == "twenty ten"
    assert N.number("2.80") == "two point eight" and N.number("2.00") == "two" and N.number(".2") == "zero point two"
    assert N.number("-0.77") == "minus zero point seven seven"
    assert N.time_words("5:10") == "ten past five am" and N.time_words("9:45") == "quarter to ten am"
    assert N.time_words("23:00") == "eleven o'clock pm" and N.time_words("11:30") == "half past eleven am"
    with pytest.raises(OverflowError):
        N.cardinal(10 ** 40)
    assert past_tense("stop") == "stopped" and past_tense("carry") == "carried"
    assert third_person("watch") == "watches" and third_person("fly") == "flies"


def test_seq2seq_augmentations_with_a_local_model(tmp_path, minilm_path):
    """A tiny random BART with MiniLM's WordPiece tokenizer stands in for the translation and Styleformer
    models. Expectations are decoded independently, one line at a time: DiverseParaphrase's output is one of
    the back-translation beams of the forward translation (greedy: the model's setting); Casual2Formal's is the
    best beam. A batch of lines of different lengths (padding) gives what each line gives alone."""
    import torch
    from transformers import AutoTokenizer, BartConfig, BartForConditionalGeneration

    tok = AutoTokenizer.from_pretrained(minilm_path)
    torch.manual_seed(0)
    cfg = BartConfig(vocab_size=tok.vocab_size, d_model=16, encoder_layers=1, decoder_layers=1,
                     encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
                     max_position_embeddings=160, pad_token_id=tok.pad_token_id, bos_token_id=tok.cls_token_id,
                     eos_token_id=tok.sep_token_id, decoder_start_token_id=tok.cls_token_id)
    net = BartForConditionalGeneration(cfg).eval()
    net.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)

    def beams(text, k, steps):
        enc = tok(text, return_tensors="pt")
        enc = {key: enc[key] for key in ("input_ids", "attention_mask")}
        with torch.no_grad():
            ids = net.generate(**enc, num_beams=k, num_return_sequences=k, max_new_tokens=steps)
        return [c.strip() for c in tok.batch_decode(ids, skip_special_tokens=True)]

    assert net.generation_config.num_beams in (None, 1)   # the forward translation's own setting: greedy

    texts = ["the weather is nice today.", "a much longer sentence about the weather in the north of england ."]
    allowed = {t: (set(beams(beams(t, 1, 8)[0], 5, 8)) - {t, ""}) or {t} for t in texts}
    for text in texts:
        assert run(None, "DiverseParaphrase", text, seed=3, model=str(tmp_path), max_new_tokens=8) in allowed[text]
        best = beams("transfer Casual to Formal: " + text, 5, 8)[0]
        assert run(None, "Casual2Formal", text, model=str(tmp_path), max_new_tokens=8) == (best or text)
    for name in ("DiverseParaphrase", "Casual2Formal"):
        aug = registry.get(name)
        kw = dict(model=str(tmp_path), max_new_tokens=8)
        batch = aug.fn(texts, random.Random(5), **aug.resolve(kw))
        assert batch == aug.fn(texts, random.Random(5), **aug.resolve(kw))            # same seed, same output
        if name == "Casual2Formal":   # no draw: the batch is exactly the lines one at a time
            assert batch == [run(None, name, t, **kw) for t in texts]
        else:
            assert all(out in allowed[t] for t, out in zip(texts, batch))
