"""Pre-tokenized batches against the tokenizer itself: the same input_ids and attention_mask, bit for bit."""
import json

import numpy as np
import pandas as pd
import pytest
import torch
from transformers import AutoTokenizer

from sentaug.models.tokens import BatchTokenizer, TokenTable, pad, tokenizer_fingerprint
from sentaug.workflow import parse_token_key, token_key
from tests.train.test_train import setup  # noqa: F401  (the fixture of the training test below)

TEXTS = [
    "the river flows north .",
    "",                                                          # only the special tokens
    "a",
    "Unbelievably long sentence " * 20,                          # truncated to max_length
    "Café déjà-vu naïve — “quoted” 東京 emoji 🙂 done",             # accents, CJK, symbols, an emoji
    "the river flows north .",                                   # a duplicate
    "she [DEL] the violin [DEL]",                                # CLEAR's deletion token
    "   leading and trailing spaces   ",
    "UPPER lower MiXeD Case 1901 3.14",
]


@pytest.fixture(params=["wordpiece", "bpe"])
def tokenizer(request, minilm_path):
    from sentaug.models.backbones import resolve_tokenizer

    path = minilm_path if request.param == "wordpiece" else resolve_tokenizer("bundled:demo-bpe")
    return AutoTokenizer.from_pretrained(path)


def reference(tokenizer, texts, max_length):
    """What the trainer did before: the tokenizer on the whole batch, padded to its longest text."""
    return tokenizer(texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt")


def assert_same(got, ref):
    for key in ("input_ids", "attention_mask"):
        assert got[key].dtype == ref[key].dtype == torch.int64, key
        assert torch.equal(got[key], ref[key]), key


@pytest.mark.parametrize("max_length", [32, 8])
def test_table_lookups_misses_and_mixtures_equal_the_tokenizer_on_the_batch(tokenizer, max_length):
    table = TokenTable.build(tokenizer, TEXTS[:5], max_length)      # some texts in the table, some not
    batcher = BatchTokenizer(tokenizer, max_length, [table])
    fresh = BatchTokenizer(tokenizer, max_length)                   # no table: every text tokenized now
    rng = np.random.default_rng(0)
    for size in (1, 2, 5, len(TEXTS)):
        batch = [TEXTS[i] for i in rng.permutation(len(TEXTS))[:size]]
        ref = reference(tokenizer, batch, max_length)
        assert_same(batcher.encode(batch), ref)
        assert_same(fresh.encode(batch), ref)
    assert batcher.hits > 0 and batcher.misses > 0 and fresh.hits == 0
    # truncated to max_length; padded to the batch's longest text, not to max_length
    assert batcher.encode([TEXTS[3], "a"])["input_ids"].shape == (2, max_length)
    short = ["a", "the river"]
    longest = max(len(tokenizer(t)["input_ids"]) for t in short)
    assert longest < max_length and batcher.encode(short)["input_ids"].shape == (2, longest)


def test_left_padding_and_added_tokens_follow_the_tokenizer(minilm_path):
    tok = AutoTokenizer.from_pretrained(minilm_path)
    tok.add_tokens(["[DEL]"])
    tok.padding_side = "left"
    table = TokenTable.build(tok, TEXTS, 32)
    ref = reference(tok, TEXTS, 32)
    assert_same(BatchTokenizer(tok, 32, [table]).encode(TEXTS), ref)
    del_id = tok.convert_tokens_to_ids("[DEL]")
    assert (ref["input_ids"] == del_id).sum() == 2 and ref["attention_mask"][:, 0].min() == 0   # left-padded


def test_pad_by_hand():
    ids, mask = pad([[5, 6, 7], [5], []], pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [5, 0, 0], [0, 0, 0]]
    assert mask.tolist() == [[1, 1, 1], [1, 0, 0], [0, 0, 0]]
    ids, mask = pad([[5, 6, 7], [5]], pad_id=9, side="left")
    assert ids.tolist() == [[5, 6, 7], [9, 9, 5]] and mask.tolist() == [[1, 1, 1], [0, 0, 1]]
    assert pad([], pad_id=0)[0].shape == (0, 0)


def test_fingerprint_ignores_calls_but_sees_added_tokens_and_sides(minilm_path):
    tok = AutoTokenizer.from_pretrained(minilm_path)
    before = tokenizer_fingerprint(tok)
    tok(["x " * 100], truncation=True, max_length=8, padding="max_length")   # changes the backend's state
    assert tokenizer_fingerprint(tok) == before
    assert tokenizer_fingerprint(AutoTokenizer.from_pretrained(minilm_path)) == before
    tok.add_tokens(["[DEL]"])
    assert tokenizer_fingerprint(tok) != before
    other = AutoTokenizer.from_pretrained(minilm_path)
    other.padding_side = "left"
    assert tokenizer_fingerprint(other) != before


def test_token_file_round_trip_and_refusals(tmp_path, minilm_path):
    tok = AutoTokenizer.from_pretrained(minilm_path)
    table = TokenTable.build(tok, TEXTS, 32, source="x")
    table.save(tmp_path / "t.npz")
    loaded = TokenTable.load(tmp_path / "t.npz")
    assert loaded.texts == list(dict.fromkeys(TEXTS)) and loaded.ids.dtype == np.uint16   # 30,522 < 65,536
    for i, text in enumerate(loaded.texts):
        assert loaded.row(i).tolist() == tok(text, truncation=True, max_length=32)["input_ids"]
    assert loaded.meta["source"] == "x" and loaded.meta["n_texts"] == len(set(TEXTS))
    assert [p.name for p in tmp_path.iterdir()] == ["t.npz"]                             # nothing half-written
    with pytest.raises(ValueError, match="t.npz was truncated to 32 tokens, this run uses max_seq_length 16"):
        BatchTokenizer(tok, 16, [loaded])
    tok.add_tokens(["[DEL]"])
    with pytest.raises(ValueError, match="t.npz was written for another tokenizer"):
        BatchTokenizer(tok, 32, [loaded])
    (tmp_path / "bad.npz").write_bytes(b"")
    with pytest.raises(ValueError, match=r"token file .*bad.npz is damaged \(EOFError"):
        TokenTable.load(tmp_path / "bad.npz")
    np.savez(tmp_path / "other.npz", ids=np.zeros(1))
    with pytest.raises(ValueError, match=r"other.npz is damaged \(ValueError: not a token file \(missing meta"):
        TokenTable.load(tmp_path / "other.npz")


def test_token_keys_name_the_length_and_added_tokens():
    assert token_key(32) == "len32" and token_key(32, ["[DEL]"]) == "len32-added-del"
    assert parse_token_key("len32-added-del", ["[DEL]", "[X]"]) == (32, ["[DEL]"])
    assert parse_token_key("len64", []) == (64, [])
    with pytest.raises(ValueError, match="no declared add_tokens entry reads 'foo'"):
        parse_token_key("len32-added-foo", ["[DEL]"])


def test_tokenize_cli_on_a_corpus_and_a_cache(tmp_path, minilm_path):
    from sentaug.cli import main

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("first line here\n\nsecond [DEL] line\n", encoding="utf-8")
    cache = tmp_path / "cache.parquet"
    pd.DataFrame({"original": ["a", "b"], "augmented": ["x [DEL] y", "b"], "changed": [True, False],
                  "flag": ["", ""]}).to_parquet(cache)
    assert main(["tokenize", "--texts", str(corpus), "--backbone", minilm_path, "--max-length", "32",
                 "--add-tokens", "[DEL]", "--out", str(tmp_path / "c.npz")]) == 0
    assert main(["tokenize", "--texts", str(cache), "--backbone", minilm_path, "--max-length", "32",
                 "--out", str(tmp_path / "a.npz")]) == 0
    tok = AutoTokenizer.from_pretrained(minilm_path)
    a = TokenTable.load(tmp_path / "a.npz")
    assert a.texts == ["x [DEL] y", "b"] and a.meta["fingerprint"] == tokenizer_fingerprint(tok)
    tok.add_tokens(["[DEL]"])
    c = TokenTable.load(tmp_path / "c.npz")
    assert c.texts == ["first line here", "", "second [DEL] line"]
    assert c.row(2).tolist() == tok("second [DEL] line")["input_ids"]
    assert json.loads(json.dumps(c.meta))["add_tokens"] == ["[DEL]"]
    assert main(["tokenize", "--texts", str(tmp_path / "nope.txt"), "--backbone", minilm_path, "--max-length",
                 "32", "--out", str(tmp_path / "n.npz")]) == 2


def test_paper_scale_runs_read_the_token_files_of_their_corpus_and_caches(tmp_path):
    """`snakemake -n` at paper scale: each run's --tokens are the token files of its corpus and caches under
    its backbone and added tokens, built by the tokenize rules (written out by hand below)."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    r = tmp_path / "results"
    runs = [f"{r}/runs/paper/clear/roberta-base/clear_subs/seed42",
            f"{r}/runs/paper/sda/bert-base-uncased/sda_pi/seed42",
            f"{r}/runs/paper/cards/bert-base-uncased/cards/seed42"]
    run = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--nolock", *runs, "--config",
                          f"results={r}", "scale=paper"], cwd=root, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    tokens = {m[2]: m[1].split() for m in re.finditer(r"--tokens (.*?) --backbone \S+ --dev-data \S+ --out (\S+)",
                                                         run.stdout)}
    t = f"{r}/tokens/wiki1m"
    assert tokens == {
        runs[0]: [f"{t}/roberta-base/len32-added-del/corpus.npz",
                  f"{t}/roberta-base/len32-added-del/clear_subs/seed42.npz",
                  f"{t}/roberta-base/len32-added-del/clear_subs/seed142.npz"],
        runs[1]: [f"{t}/bert-base-uncased/len32/corpus.npz", f"{t}/bert-base-uncased/len32/sda_pi/seed42.npz"],
        runs[2]: [f"{t}/bert-base-uncased/len32/corpus.npz"]}     # CARDS: the retrieval pool is in the corpus
    assert f"--add-tokens '[DEL]' --out {t}/roberta-base/len32-added-del/corpus.npz" in run.stdout


def test_training_from_token_files_equals_training_from_text(setup, minilm_path):
    """The same run with and without token files of its corpus and cache: identical weights and log, and
    with them no training text is tokenized during the run."""
    from safetensors.torch import load_file

    from sentaug.models.tokens import build_token_file
    from sentaug.train.trainer import train
    from tests.train.test_train import spec, write_backbone

    root, corpus, cache = setup
    backbone = write_backbone(root / "bb", minilm_path, dropout=0.1)
    s = spec(max_steps=3, batch_size=4, eval_steps=3)
    tokens = [str(root / "corpus.npz"), str(root / "cache.npz")]
    build_token_file(corpus, backbone, 32, tokens[0], progress=False)
    build_token_file(cache, backbone, 32, tokens[1], progress=False)
    plain = train(s, corpus, cache, backbone, str(root / "data"), str(root / "plain"))
    looked_up = train(s, corpus, cache, backbone, str(root / "data"), str(root / "tokens"), tokens=tokens)
    a, b = load_file(str(root / "plain/model.safetensors")), load_file(str(root / "tokens/model.safetensors"))
    assert all(torch.equal(a[k], b[k]) for k in a)
    strip = lambda run: [{k: v for k, v in json.loads(r).items() if k != "elapsed_s"}
                         for r in (root / run / "train_log.jsonl").read_text().splitlines()]
    assert strip("plain") == strip("tokens")
    assert plain["token_lookups"] == {"from_files": 0, "tokenized": 3 * 8}          # anchors + positives
    assert looked_up["token_lookups"] == {"from_files": 3 * 8, "tokenized": 0}


@pytest.mark.parametrize("max_length", [32, 6])
def test_token_level_cache_entries_are_mapped_as_the_trainer_maps_them(tokenizer, max_length):
    """CARDS Table 5's caches hold token sequences (TOKENS_PREFIX + tokens): their token file must hold the ids
    the trainer's encode_mixed gives them (tokens as they stand, framed), not the ids of the prefixed string."""
    from sentaug.models.token_sequences import TOKENS_PREFIX
    from sentaug.train.method import encode_mixed

    tokens = tokenizer.tokenize("the river flows north .")
    texts = [TOKENS_PREFIX + " ".join(tokens), "a plain text", TOKENS_PREFIX + " ".join(reversed(tokens))]
    table = TokenTable.build(tokenizer, texts, max_length)
    assert_same(BatchTokenizer(tokenizer, max_length, [table]).encode(texts),
                encode_mixed(tokenizer, texts, max_length))
    # by hand: the first entry is exactly the text's own encoding
    assert BatchTokenizer(tokenizer, max_length, [table]).encode(texts[:1])["input_ids"][0].tolist() == \
        tokenizer("the river flows north .", truncation=True, max_length=max_length)["input_ids"]


@pytest.mark.parametrize("max_length", [32, 8])
def test_texts_drawn_per_step_are_assembled_from_their_words_as_the_tokenizer_encodes_them(tokenizer, max_length):
    """CARDS's switch-case positives are not in any token file: they are assembled from their words' ids
    (WordPieces), which must give the tokenizer's own ids, truncation included; texts of other forms (double
    spaces, tabs, leading spaces) are tokenized whole."""
    import random

    from sentaug.augment.cards import switch_case

    corpus = [t for t in TEXTS if t.strip()] + ["The Quick brown Fox jumps over the lazy Dog , again !"] * 2
    table = TokenTable.build(tokenizer, corpus, max_length)
    batcher = BatchTokenizer(tokenizer, max_length, [table])
    assert batcher.pieces is not None                      # the sample agreed: words are assembled
    drawn = [switch_case(t, random.Random(i), p=0.5) for i, t in enumerate(corpus)]
    drawn += ["a  doublespaced", "tab\there", " leadingspace", "UPPER CASE WORDS Only"]
    assert_same(batcher.encode(drawn), reference(tokenizer, drawn, max_length))
    assert batcher.encode(drawn, width=40)["input_ids"].shape == (len(drawn), 40)
    seen = {*batcher.pieces.first, *batcher.pieces.later}
    assert {"doublespaced", "tab\there", "leadingspace"}.isdisjoint(seen)      # never assembled: tokenized whole
    assert {"Quick", "quick"} & set(batcher.pieces.later)                         # assembled from its words


def test_word_assembly_is_off_for_a_tokenizer_whose_pre_tokens_span_spaces(tmp_path):
    """A tokenizer that groups two words into one pre-token (not a real one's behaviour) fails the check on the
    table's sample: every text it does not hold is then tokenized whole, still equal to the tokenizer."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, "[PAD]": 1, "a b": 2, "c d": 3, "a": 4, "b": 5, "c": 6, "d": 7}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex(r"\S+ \S+|\S+"), behavior="isolated")
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]")
    table = TokenTable.build(tok, ["a b", "c d", "a b c d"], 8)
    batcher = BatchTokenizer(tok, 8, [table])
    assert batcher.pieces is None
    texts = ["c d a b", "a b"]
    assert_same(batcher.encode(texts), reference(tok, texts, 8))
    assert batcher.encode(texts)["input_ids"][0].tolist() == [3, 0, 2]     # "c d", the space ([UNK]), "a b"
