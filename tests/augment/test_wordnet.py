"""Offline WordNet 3.0 (Debian files laid out by scripts/setup_wordnet.sh) and spaCy-served Penn tags.

Expected relations are WordNet 3.0 facts (checkable with the `wn` command of Debian's wordnet package or
any WordNet browser), not outputs of this code."""
from __future__ import annotations

import random
import subprocess

import numpy as np
import pytest

from sentaug.augment import wordnet as W


@pytest.fixture(scope="module")
def wn():
    try:
        return W.wordnet()
    except W.WordNetMissing as e:
        pytest.skip(str(e))


def test_reader_is_wordnet_30(wn):
    assert wn.get_version() == "3.0"
    # WordNet 3.0 has 82,115 noun synsets and 13,767 verb synsets (wnstats(7WN))
    assert sum(1 for _ in wn.all_synsets("v")) == 13767


@pytest.mark.parametrize("fn, word, pos, expected", [
    (W.antonyms, "good", "JJ", "bad"),
    (W.antonyms, "hot", "JJ", "cold"),
    (W.antonyms, "increase", "VB", "decrease"),
    (W.antonyms, "awful", "JJ", "good"),          # satellite adjective: via its head ("bad")
    (W.hypernyms, "dog", "NN", "canine"),
    (W.hypernyms, "car", "NN", "motor_vehicle"),  # multi-word: must NOT appear (checked below)
    (W.hyponyms, "tree", "NN", "oak"),
    (W.hyponyms, "dog", "NNS", "puppy"),
    (W.synonyms, "happy", "JJ", "glad"),
    (W.synonyms, "car", "NN", "automobile"),
])
def test_relations(wn, fn, word, pos, expected):
    got = fn(word, pos)
    if "_" in expected:
        assert expected not in got and all("_" not in w and " " not in w for w in got)
    else:
        assert expected in got
    assert word not in got


def test_pos_filters(wn):
    # "dog" as a verb (to follow) has no hypernym "canine"; a determiner tag gives nothing at all
    assert "canine" not in W.hypernyms("dog", "VB")
    assert W.synonyms("the", "DT") == []
    assert W.wordnet_pos("VBD") == "v" and W.wordnet_pos("JJS") == "a" and W.wordnet_pos("RB") == "r"
    assert W.wordnet_pos(None) is None


def test_lexnames_file_matches_man_page(wn):
    folder = W.find_wordnet()
    lines = (folder / "lexnames").read_text().splitlines()
    assert len(lines) == 45
    assert lines[3].split("\t") == ["03", "noun.Tops", "1"] and lines[44].split("\t") == ["44", "adj.ppl", "3"]
    assert (folder / "lexnames").read_text() == W.lexnames_text()
    # nltk uses lexnames for lexname(): dog.n.01 is in noun.animal
    assert wn.synset("dog.n.01").lexname() == "noun.animal"


def test_setup_script_writes_same_layout(tmp_path):
    """The shell script run on a copy of the source gives the files the Python fallback gives."""
    if not (W.DEBIAN_WORDNET / "index.sense").is_file():
        pytest.skip("Debian WordNet not installed")
    out = tmp_path / "nd"
    subprocess.run([str(W.REPO_ROOT / "scripts" / "setup_wordnet.sh")], check=True, capture_output=True,
                   env={"PATH": "/usr/bin:/bin", "SENTAUG_NLTK_DATA": str(out)})
    py = W.layout_from(W.DEBIAN_WORDNET, tmp_path / "py")
    for f in (*W.WORDNET_FILES, "lexnames"):
        assert (out / "corpora" / "wordnet" / f).read_bytes() == (py / f).read_bytes(), f


def test_missing_wordnet_is_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setenv("SENTAUG_NLTK_DATA", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(W, "REPO_ROOT", tmp_path)
    monkeypatch.setattr(W, "DEBIAN_WORDNET", tmp_path / "none")
    with pytest.raises(W.WordNetMissing, match="setup_wordnet.sh") as e:
        W.find_wordnet()
    assert "\n" not in str(e.value)
    (tmp_path / "src").mkdir()
    for f in W.WORDNET_FILES:
        if f != "index.sense":
            (tmp_path / "src" / f).write_text("x")
    with pytest.raises(W.WordNetMissing, match="no index.sense"):
        W.layout_from(tmp_path / "src", tmp_path / "x")
    assert not (tmp_path / "x" / "corpora" / "wordnet").exists()


def test_penn_tags_match_nltk_format():
    tags = W.penn_tags(["The", "cats", "ran", "quickly", "."])
    assert tags == [("The", "DT"), ("cats", "NNS"), ("ran", "VBD"), ("quickly", "RB"), (".", ".")]
    assert W.penn_tags("He is happy.") == [("He", "PRP"), ("is", "VBZ"), ("happy", "JJ"), (".", ".")]
    assert W.penn_tags([]) == []


def test_nlpaug_synonyms_offline(wn, monkeypatch):
    import nltk

    def no_download(*a, **k):
        raise AssertionError("nltk.download called")

    monkeypatch.setattr(nltk, "download", no_download)
    aug = W.nlpaug_synonym_aug(aug_p=1.0, aug_min=1, aug_max=1)
    random.seed(0)
    np.random.seed(0)
    out = aug.augment("The automobile is fast.")[0]
    # exactly one word replaced, by a WordNet synonym of it
    a, b = "The automobile is fast .".split(), out.replace(".", " .").split()
    diff = [(x, y) for x, y in zip(a, b) if x != y]
    assert len(a) == len(b) and len(diff) == 1
    old, new = diff[0]
    assert new.replace("_", " ").lower() in {l.name().replace("_", " ").lower()
                                             for s in wn.synsets(old) for l in s.lemmas()}


# ---------------------------------------------------------------- without apt: NLTK's wordnet.zip, pinned
def _nltk_style_zip(mirror):
    """A wordnet.zip laid out as nltk_data's (members wordnet/<file>), built from Debian's WordNet 3.0 files, at
    the mirror path sources.yaml names; returns its sha256."""
    import hashlib
    import zipfile

    zip_path = mirror / "wordnet" / "wordnet.zip"
    zip_path.parent.mkdir(parents=True)
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as z:
        for f in W.WORDNET_FILES:
            z.write(W.DEBIAN_WORDNET / f, f"wordnet/{f}")
        z.writestr("wordnet/lexnames", W.lexnames_text())
        z.writestr("wordnet/README", "not read")
    return hashlib.sha256(zip_path.read_bytes()).hexdigest()


@pytest.fixture
def wordnet_mirror(tmp_path):
    if not (W.DEBIAN_WORDNET / "index.sense").is_file():
        pytest.skip("Debian WordNet not installed (the stand-in zip is built from its files)")
    mirror = tmp_path / "mirror"
    return mirror, _nltk_style_zip(mirror)


def test_wordnet_zip_from_the_mirror_is_laid_out_for_nltk(wordnet_mirror, tmp_path, monkeypatch):
    """The download path (pin replaced by the stand-in zip's own hash): the layout nltk reads, the same bytes as
    the Debian path's, WordNet 3.0 as nltk sees it."""
    import copy

    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    from sentaug.data.download import fetch, load_sources

    mirror, digest = wordnet_mirror
    sources = copy.deepcopy(load_sources())
    assert [f.removeprefix("corpora/wordnet/") for f in sources["official"]["wordnet"]["files"]] == \
        [*W.WORDNET_FILES, "lexnames"]
    sources["official"]["wordnet"]["downloads"]["wordnet.zip"]["sha256"] = digest
    fetch("wordnet", tmp_path / "nd", mirror=str(mirror), sources=sources)
    debian = W.layout_from(W.DEBIAN_WORDNET, tmp_path / "debian")
    for f in (*W.WORDNET_FILES, "lexnames"):
        assert (tmp_path / "nd" / "corpora" / "wordnet" / f).read_bytes() == (debian / f).read_bytes(), f
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "nd"), *nltk.data.path])   # nltk reads only there
    reader = WordNetCorpusReader(str(tmp_path / "nd" / "corpora" / "wordnet"), None)
    assert reader.get_version() == "3.0" and reader.synset("dog.n.01").lexname() == "noun.animal"


def test_the_wordnet_pin_is_checked(wordnet_mirror, tmp_path):
    """The real pin rejects any other zip (here the stand-in), naming both hashes, and lays nothing out; the
    setup script's no-apt path goes through that pinned download and fails in one line that says what to do."""
    from sentaug.data.download import DownloadError, fetch, load_sources

    mirror, digest = wordnet_mirror
    pinned = load_sources()["official"]["wordnet"]["downloads"]["wordnet.zip"]["sha256"]
    assert pinned == "cbda5ea6eef7f36a97a43d4a75f85e07fccbb4f23657d27b4ccbc93e2646ab59"   # nltk_data's, published
    with pytest.raises(DownloadError, match=f"sha256 {digest} does not match the pinned {pinned}"):
        fetch("wordnet", tmp_path / "nd", mirror=str(mirror))
    assert not (tmp_path / "nd" / "corpora" / "wordnet").exists()
    import sys

    done = subprocess.run([str(W.REPO_ROOT / "scripts" / "setup_wordnet.sh")], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "WORDNET_FROM": "download", "PYTHON": sys.executable,
                               "SENTAUG_MIRROR": str(mirror), "SENTAUG_NLTK_DATA": str(tmp_path / "sh")})
    assert done.returncode == 1
    assert f"does not match the pinned {pinned}" in done.stderr and "SENTAUG_MIRROR" in done.stderr
    assert not (tmp_path / "sh" / "corpora" / "wordnet").exists()
