"""AugCSE's augmentations (sentaug.augment.augcse) on hand-picked sentences: expected outputs written by hand
from the paper's Appendix A.2 descriptions/examples, WordNet facts read from the WordNet reader directly,
properties (counts, determinism, seeds) for the random ones, and caches with bad lines."""
from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from sentaug.augment import augcse as A
from sentaug.augment import registry
from sentaug.augment.parse import SpacyModelMissing, load_nlp

PAPER_NAMES = ("SentenceAdjectivesAntonymsSwitch SentenceAuxiliaryNegationRemoval ReplaceHypernyms ReplaceHyponyms "
               "SentenceSubjectObjectSwitch CityNamesTransformation AntonymSubstitute ColorTransformation "
               "Summarization SentenceReordering TenseTransformation RandomDeletion RandomCrop RandomSwap "
               "RandomWordAugmentation RandomWordEmbAugmentation RandomContextualWordAugmentation YodaPerturbation "
               "ContractionExpansions DiscourseMarkerSubstitution GenderSwap GeoNamesTransformation NumericToWord "
               "SynonymSubstitution DiverseParaphrase Casual2Formal").split()


@pytest.fixture(scope="module")
def nlp():
    try:
        return load_nlp("en_core_web_sm")
    except SpacyModelMissing as e:
        pytest.skip(str(e))


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
@pytest.mark.parametrize("name, text, expected", [
    ("SentenceAdjectivesAntonymsSwitch", "He is a good man.", "He is a bad man."),
    ("SentenceAdjectivesAntonymsSwitch", "Amanda's mother was very beautiful.", "Amanda's mother was very ugly."),
    ("SentenceAuxiliaryNegationRemoval", "He is not happy.", "He is happy."),
    ("SentenceAuxiliaryNegationRemoval", "I didn't go there.", "I did go there."),
    ("SentenceAuxiliaryNegationRemoval", "You can't stop now.", "You can stop now."),
    ("SentenceSubjectObjectSwitch", "He saw her at the station.", "She saw him at the station."),
    ("SentenceSubjectObjectSwitch", "The dog chased the cat.", "The cat chased the dog."),
    ("Summarization", "Stillwater is not a 2010 American live-action/animated dark fantasy adventure film.",
     "Stillwater !is film"),                                          # the paper's own example
    ("SentenceReordering", "I like it. It is great.", "It is great. I like it."),
    ("TenseTransformation", "He walks to school every day.", "He walked to school every day."),
    ("TenseTransformation", "She went home.", "She goes home."),
    ("TenseTransformation", "I was tired and they were happy.", "I am tired and they are happy."),
    ("TenseTransformation", "We can't stop.", "We couldn't stop."),
    ("YodaPerturbation", "You still have much to learn.", "Much to learn, you still have."),  # paper's example
    ("ContractionExpansions", "He often doesn't come to school.", "He often does not come to school."),
    ("ContractionExpansions", "Don't worry, I'm fine.", "Do not worry, I am fine."),
    ("ContractionExpansions", "I am sure it is fine.", "I'm sure it's fine."),
    ("GenderSwap", "The king gave his daughter a gift.", "The queen gave her son a gift."),
    ("GenderSwap", "She told him about herself.", "He told her about himself."),
    ("GeoNamesTransformation", "John met Mary in France.",
     "John met Mary in France (a country in Europe whose capital is Paris)."),
    ("GeoNamesTransformation", "She lives in Tokyo.", "She lives in Tokyo (a city in Japan)."),
    ("NumericToWord", "3 cats", "three cats"),
    ("NumericToWord", "Tom bought 3 apples and paid $10.", "Tom bought three apples and paid ten dollars."),
    ("NumericToWord", "It fell 13% from 1871 to 1872.", "It fell thirteen percent from eighteen seventy-one to "
                                                         "eighteen seventy-two."),
    ("NumericToWord", "The 21st of 1,234,567 is 3.14 at 10:30.",
     "The twenty-first of one million two hundred thirty-four thousand five hundred sixty-seven is "
     "three point one four at ten thirty."),
    ("NumericToWord", "2 + 2 = 4", "two plus two equals four"),
])
def test_rule_outputs(nlp, wn, name, text, expected):
    assert run(nlp, name, text) == expected


@pytest.mark.parametrize("name, text", [
    ("SentenceAdjectivesAntonymsSwitch", "The cat sat on the mat."),
    ("SentenceAuxiliaryNegationRemoval", "He is happy."),
    ("SentenceAuxiliaryNegationRemoval", "Not everyone came."),      # negation not on an auxiliary
    ("SentenceSubjectObjectSwitch", "He slept."),
    ("SentenceReordering", "A single sentence, however long it is."),  # single sentence: unchanged
    ("YodaPerturbation", "It rained."),
    ("ContractionExpansions", "Birds fly south."),
    ("ColorTransformation", "Birds fly south."),
    ("CityNamesTransformation", "Birds fly south."),
    ("GeoNamesTransformation", "Birds fly south."),
    ("DiscourseMarkerSubstitution", "Birds fly south."),
    ("DiscourseMarkerSubstitution", "He walked instead."),     # 'instead' is alone in its PDTB sense
    ("NumericToWord", "Birds fly south."),
    ("GenderSwap", "Birds fly south."),
    ("AntonymSubstitute", "Birds fly south."),
    ("ReplaceHyponyms", "Quickly!"),
    ("SynonymSubstitution", "Oh, the."),
    ("RandomDeletion", "Hello"),                                      # one word: nothing to delete
])
def test_unchanged_when_nothing_applies(nlp, wn, name, text):
    assert run(nlp, name, text) == text


# -- rules with random choices: the result is one of the allowed ones --------------------------------
def test_color_city_discourse_choices(nlp):
    colors = {r[0] for r in A.wordlist("colors.txt")}
    assert len(colors) == 147                               # W3C CSS3 extended colour keywords
    outs = {run(nlp, "ColorTransformation", "The car is red.", seed=s) for s in range(6)}
    assert len(outs) > 1
    for o in outs:
        new = o[len("The car is "):-1]
        assert new in colors and new != "red"
    assert run(nlp, "ColorTransformation", "A dark sea green coat.", seed=1) != "A dark sea green coat."
    minor = {r[0] for r in A.wordlist("cities.tsv") if r[2] == "minor"}
    o = run(nlp, "CityNamesTransformation", "She moved from London to Paris.", seed=3)
    a, b = o[len("She moved from "):-1].split(" to ")
    assert a in minor and b in minor
    o = run(nlp, "DiscourseMarkerSubstitution", "I stayed home because it rained.", seed=2)
    assert o in ("I stayed home since it rained.", "I stayed home inasmuch as it rained.")


def test_wordnet_replacements(nlp, wn):
    hyper = {l.name() for s in wn.synsets("dog", "n") for h in s.hypernyms() + s.instance_hypernyms()
             for l in h.lemmas() if "_" not in l.name()}
    hypo = {l.name() for s in wn.synsets("dog", "n") for h in s.hyponyms() + s.instance_hyponyms()
            for l in h.lemmas() if "_" not in l.name()}
    for seed in range(4):
        o = run(nlp, "ReplaceHypernyms", "The dog barked.", seed=seed)
        assert o.startswith("The ") and o.endswith(" barked.") and o[4:-8] in hyper
        o = run(nlp, "ReplaceHyponyms", "The dog barked.", seed=seed)
        assert o[4:-8] in hypo
    # synonyms: every changed word shares a synset with the original (nouns here keep their number)
    text = "The automobile stopped near the big house."
    o = run(nlp, "SynonymSubstitution", text, seed=5, prob=1.0)
    changed = [(a, b) for a, b in zip(text[:-1].split(), o[:-1].split()) if a != b]
    assert changed and len(o.split()) == len(text.split())
    for a, b in changed:
        base = wn.morphy(a.lower()) or a.lower()
        forms = {b.lower(), wn.morphy(b.lower()) or b.lower()}        # "barricaded" -> "barricade"
        assert any(forms & {l.name().lower() for l in s.lemmas()} for s in wn.synsets(base)), (a, b)


def test_antonym_substitute_flips_an_odd_number(nlp, wn):
    text = "Steve is able to recommend good movies quickly."
    counts = set()
    for seed in range(12):
        o = run(nlp, "AntonymSubstitute", text, seed=seed)
        counts.add(sum(a != b for a, b in zip(text.split(), o.split())))
    assert counts <= {1, 3} and 1 in counts


# -- random word operations (nlpaug RandomWordAug semantics) -----------------------------------------
TEN = "one two three four five six seven eight nine ten"


def _is_subsequence(small, big):
    it = iter(big)
    return all(w in it for w in small)


def test_random_word_ops_counts():
    words = TEN.split()
    for seed in range(5):
        d = run(None, "RandomDeletion", TEN, seed=seed).split()
        assert len(d) == 7 and _is_subsequence(d, words)             # int(0.3 * 10) = 3 deleted
        c = run(None, "RandomCrop", TEN, seed=seed).split()
        assert len(c) == 7 and any(c == words[:i] + words[i + 3:] for i in range(8))
        s = run(None, "RandomSwap", TEN, seed=seed).split()
        assert sorted(s) == sorted(words)                            # a permutation of adjacent swaps
        assert sum(a != b for a, b in zip(s, words)) <= 6              # 3 swaps move at most 6 words
        w = run(None, "RandomWordAugmentation", TEN, seed=seed).split()
        assert len(w) in (7, 10)
    assert len(run(None, "RandomDeletion", TEN, aug_p=0.5).split()) == 5
    assert len(run(None, "RandomDeletion", TEN, aug_p=0.9, aug_max=2).split()) == 8


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


@pytest.fixture(scope="module")
def tiny_mlm(tmp_path_factory, minilm_path):
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    out = tmp_path_factory.mktemp("mlm")
    tok = AutoTokenizer.from_pretrained(minilm_path)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=128)
    BertForMaskedLM(cfg).save_pretrained(out)
    tok.save_pretrained(out)
    return str(out), tok


def test_contextual_word_augmentation(tiny_mlm):
    path, tok = tiny_mlm
    text = "The quick brown fox jumps over the lazy dog."
    outs = [run(None, "RandomContextualWordAugmentation", text, seed=s, model=path) for s in range(3)]
    assert outs == [run(None, "RandomContextualWordAugmentation", text, seed=s, model=path) for s in range(3)]
    vocab = tok.get_vocab()
    for o in outs:
        diff = [(a, b) for a, b in zip(text.split(), o.split()) if a != b]
        assert 1 <= len(diff) <= 3 and len(o.split()) == 9     # int(0.3 * 9) = 2 words, at least 1 changed
        assert all(b.strip(".").lower() in vocab for _, b in diff)


def test_contextual_word_batch_equals_one_line_at_a_time(tiny_mlm):
    """With top_k=1 and every content word masked, nothing is random: a padded batch must give each line
    what it gives alone, and the first substitution is the full model's argmax at the mask."""
    import torch
    from transformers import AutoModelForMaskedLM

    path, tok = tiny_mlm
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
    path, _ = tiny_mlm
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
    assert A.number_words(0) == "zero"
    assert A.number_words(40) == "forty"
    assert A.number_words(101) == "one hundred one"
    assert A.number_words(2_000_005) == "two million five"
    assert A.ordinal_words(12) == "twelfth" and A.ordinal_words(90) == "ninetieth"
    assert A.year_words(1905) == "nineteen oh five" and A.year_words(1900) == "nineteen hundred"
    assert A.past_tense("stop") == "stopped" and A.past_tense("carry") == "carried"
    assert A.third_person("watch") == "watches" and A.third_person("fly") == "flies"


def test_seq2seq_augmentations_with_a_local_model(tmp_path, minilm_path):
    """A tiny random BART with MiniLM's WordPiece tokenizer stands in for the translation and Styleformer
    models. Expectations are decoded independently, one line at a time: DiverseParaphrase's output is one of
    the back-translation beams of the forward translation (greedy: the model's setting); Casual2Formal's is the best beam. A batch of
    lines of different lengths (padding) gives what each line gives alone."""
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
