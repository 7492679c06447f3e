"""SDA's released augmentation code (Zhudongsheng75/SDA, ``run_augmentation.py`` and
``augmentation_tools/{PI,MV,DN}.py``), as variants of the paper's rules in `sentaug.augment.sda`.

The released scripts differ from the paper's Algorithms 1-3 (which `sda` follows) in ways that change how
many sentences are augmented and how (SDA Table 3 reports the paper's shares):

* **Tokenised text.** A sentence is parsed by spaCy and written back as its tokens joined by single spaces
  ("It 's a test ."); the anchor of a training pair is that tokenised sentence too (``[raw, positive]`` in
  ``run_augmentation.py``), not the line as written. These operations are ``anchored``: they return
  ``(anchor, positive)``, the cache stores the anchor, and the trainer uses it.
* **PI** (``aug_pi``): one of two rules drawn, the other tried when it changes nothing, and a fallback that
  always applies: quotes around the whole sentence, or its final mark replaced by / a mark appended from
  ", . ; !" (the draw may put back the same mark). The subject rule fires only when the root's FIRST child is
  its subject, and marks the span of the subject's direct children (found by their first occurrence in the
  sentence's text); the clause rule puts " ," before the first child of the first clause-like token
  (acl/advcl/ccomp/csubj/csubjpass/relcl/xcomp).
* **AA** (``aug_mv``): a verb rule or an adjective rule drawn, the other tried when it changes nothing; the
  verb rule stops at the first auxiliary (changing it only when it is literally am/are/be/is/was/were) or at
  the root; the adjective rule puts one adverb ("extremely", "quite", ...) before every adjective. Its word
  lists differ from the paper's ("have no choice but", "cannot but", "can't avoid to", "should", ...).
* **DN** (``aug_dn``): every "no"/"not"/"n't" is deleted (the word after a deleted one is skipped, as the
  released loop deletes while iterating); then "not" goes after each auxiliary and the root until two
  negations are counted; with one, a negation template ("It isn't that", "There is no way that", ...) is
  put in front.

Draws come from the line's ``rng`` in the order the released code makes them from Python's global generator
(which it seeds once, 2023, and shares between four worker processes, so its own draws are not
reproducible line by line).
"""
from __future__ import annotations

from .registry import register

PUNCTUATION = (",", ".", ";", "!")
CLAUSE_DEPS = ("acl", "advcl", "ccomp", "csubj", "csubjpass", "relcl", "xcomp")
BE_VERBS = ("am", "is", "are", "was", "were", "be")
AFFIRM_VERBS = ("must", "have to", "have no choice but", "cannot but", "can't avoid to", "can't help but", "should",
                "need to", "ought to")
AFFIRM_ADVERBS = ("extremely", "quite", "very", "particularly", "especially", "absolutely", "totally", "really",
                  "remarkably")
NEGATIONS = ("no", "not", "n't")
NEGATION_TEMPLATES = ("It isn't that", "The fact is not that", "It is not true that", "It is not the truth that",
                      "Not that", "There is no way that", "There is no chance that", "It is impossible that",
                      "It can't be that")
NEGATABLE = ("am", "is", "was", "are", "were", "can", "could", "will", "would", "shall", "should", "may", "must",
             "might")


def sentence_tokens(doc):
    """The Doc's tokens without leading and trailing whitespace tokens (the released script strips the line
    before parsing it)."""
    toks = list(doc)
    while toks and toks[0].is_space:
        toks.pop(0)
    while toks and toks[-1].is_space:
        toks.pop()
    return toks


def tokenised(doc) -> str:
    """The anchor of the released code: spaCy's tokens joined by single spaces."""
    return " ".join(t.text for t in sentence_tokens(doc))


def one_rule_then_the_other(rng, rules, raw: str) -> str:
    """The released PI.py's and MV.py's choice: one of two rules (called with no arguments) drawn uniformly,
    the other where the first leaves the tokenised text `raw` as it was."""
    p = rng.choice((0, 1))
    out = rules[p]()
    return rules[1 - p]() if out == raw else out


# --------------------------------------------------------------------------------------------------
# Punctuation insertion (PI.py)
# --------------------------------------------------------------------------------------------------
def _pi_subject(toks, rng) -> str:
    words = [t.text for t in toks]
    deps = [t.dep_ for t in toks]
    if "ROOT" in deps:
        children = list(toks[deps.index("ROOT")].children)
        if children and children[0].dep_ in ("nsubj", "nsubjpass"):
            subj = children[0]
            # first occurrences of the words' texts, as the released code looks them up
            at = [words.index(c.text) for c in subj.children] + [words.index(subj.text)]
            lo, hi = min(at), max(at)
            if rng.random() < 0.5:
                words[lo] = "' " + words[lo]
                words[hi] = words[hi] + " '"
            else:
                words[hi] += " ,"
    return " ".join(words)


def _pi_clause(toks, rng) -> str:
    words = [t.text for t in toks]
    deps = [t.dep_ for t in toks]
    for dep in deps:
        if dep in CLAUSE_DEPS:
            children = list(toks[deps.index(dep)].children)
            if not children:
                break
            at = words.index(children[0].text)
            if at - 1 >= 0:
                words[at - 1] += " ,"
                break
    return " ".join(words)


def _pi_tail(toks, rng) -> str:
    words = [t.text for t in toks]
    if rng.choice((0, 1)):
        words = ["'"] + words + ["'"]
    elif words and words[-1] in PUNCTUATION:
        words[-1] = rng.choice(PUNCTUATION)
    else:
        words.append(rng.choice(PUNCTUATION))
    return " ".join(words)


@register("punctuation_insertion_official_code", family="sda", needs_parse=True, anchored=True,
          description="SDA's released PI (augmentation_tools/PI.py): subject quotes/comma or a comma before a "
                      "clause, else quotes around the sentence or a final mark; text and anchor tokenised")
def punctuation_insertion_official(doc, rng) -> tuple[str, str]:
    toks, raw = sentence_tokens(doc), tokenised(doc)
    if not toks:
        return raw, raw
    out = one_rule_then_the_other(rng, (lambda: _pi_subject(toks, rng), lambda: _pi_clause(toks, rng)), raw)
    if out == raw:
        out = _pi_tail(toks, rng)
    return raw, out


# --------------------------------------------------------------------------------------------------
# Affirmative auxiliary (MV.py)
# --------------------------------------------------------------------------------------------------
def _aa_verb(toks, word: str) -> str:
    words = [t.text for t in toks]
    for i, t in enumerate(toks):
        if t.dep_ in ("aux", "auxpass"):
            if words[i] in ("am", "are", "be"):
                words[i] = word + " be"
            elif words[i] == "is":
                words[i] = word.replace("have", "has") + " be"
            elif words[i] in ("was", "were"):
                words[i] = word.replace("have", "had") + " be"
            break
        if t.dep_ == "ROOT":
            if words[i].lower() in BE_VERBS:
                words[i] = word + " be"
            elif t.tag_ == "VBP":
                words[i] = f"{word} {t.lemma_}"
            elif t.tag_ == "VBZ":
                words[i] = f"{word.replace('have', 'has')} {t.lemma_}"
            elif t.tag_ == "VBD":
                words[i] = f"{word.replace('have', 'had')} {t.lemma_}"
            break
    return " ".join(words)


def _aa_adjective(toks, word: str) -> str:
    return " ".join(f"{word} {t.text}" if t.pos_ == "ADJ" else t.text for t in toks)


@register("affirmative_auxiliary_official_code", family="sda", needs_parse=True, anchored=True,
          description="SDA's released AA (augmentation_tools/MV.py): an affirmative verb before the first auxiliary "
                      "or the root, or an adverb before every adjective; text and anchor tokenised")
def affirmative_auxiliary_official(doc, rng) -> tuple[str, str]:
    toks, raw = sentence_tokens(doc), tokenised(doc)
    # the word is drawn when its rule is tried, as MV.py does
    return raw, one_rule_then_the_other(rng, (lambda: _aa_verb(toks, rng.choice(AFFIRM_VERBS)),
                                              lambda: _aa_adjective(toks, rng.choice(AFFIRM_ADVERBS))), raw)


# --------------------------------------------------------------------------------------------------
# Double negation (DN.py)
# --------------------------------------------------------------------------------------------------
@register("double_negation_official_code", family="sda", needs_parse=True, anchored=True,
          description="SDA's released DN (augmentation_tools/DN.py): negations deleted, 'not' added after "
                      "auxiliaries/the root until two are counted, else a negation template in front; tokenised")
def double_negation_official(doc, rng) -> tuple[str, str]:
    toks, raw = sentence_tokens(doc), tokenised(doc)
    words = [t.text for t in toks]
    deps = [t.dep_ for t in toks]
    tags = [t.tag_ for t in toks]
    lemmas = [t.lemma_ for t in toks]
    count = 0
    i = 0
    while i < len(words):           # deleting while stepping on: the word after a deleted one is not looked at
        if words[i] in NEGATIONS:
            del words[i], deps[i], tags[i], lemmas[i]
            count += 1
        i += 1
    for i, dep in enumerate(deps):
        if count == 2:
            break
        if dep in ("aux", "auxpass"):
            words[i] += " not"
            count += 1
        elif dep == "ROOT":
            if words[i].lower() in NEGATABLE:
                words[i] += " not"
            elif tags[i] in ("VBP", "VBZ", "VBD"):
                words[i] = {"VBP": "do", "VBZ": "does", "VBD": "did"}[tags[i]] + " not " + lemmas[i]
            else:
                continue
            count += 1
    if count == 1:
        words = [rng.choice(NEGATION_TEMPLATES)] + words
    return raw, " ".join(words)
