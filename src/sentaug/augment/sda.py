"""SDA's three rule-based positives (Mao, Zhu et al.), on a cached spaCy parse.

Each rule is ``fn(doc, rng, **params) -> str`` and returns ``doc.text`` unchanged when it does not apply.
The augmented sentence is built by editing the ORIGINAL text token by token (spaCy keeps every token's
trailing whitespace), so anchor and positive share their spelling, spacing and tokenisation; nothing is
re-joined with spaces (SDA's released scripts use the space-joined spaCy tokens as the anchor instead, and
differ from the algorithms in other ways: `sentaug.augment.sda_official` reproduces them).

Choices made where the paper (Algorithms 1-3, Table 1) leaves room; each is explained where it is coded:

* PI: which dependencies mark a subordinate clause (`SUBORDINATE_DEPS`); the "noun subject" is spaCy's
  nominal subject (nsubj/nsubjpass: nouns and pronouns); straight double quotes frame it; which marks may
  be duplicated or turned into '!' (`PAUSE_TAGS`); how a rule is picked (``mode``, default one rule drawn
  uniformly, which is what reproduces Table 3).
* AA: the list of affirmative auxiliaries (`AFFIRMATIVE_AUXILIARIES`), inflected for agreement and tense;
  only finite verbs are rewritten by default (Table 3); ``verb_groups=True`` also rewrites verb groups
  with auxiliaries, replacing a modal as Table 1 does ("may transfer" -> "has to transfer").
* DN: negation words (`NEGATION_WORDS`); which tokens are auxiliaries (``copulas``); "do not" with
  do-support only for a root verb without auxiliaries, "Not" in front otherwise (Table 1: "Not A
  shareholder may not transfer ...").

Share of lines changed on the first 11,914 lines of wiki1m (en_core_web_sm 3.8.0, seed 1) against SDA
Table 3 (benchmarks/augment_throughput.py):
  punctuation_insertion  mode=random 62.93 % (Table 3: 62.61 %); mode=first/shuffle 89.90 %
  affirmative_auxiliary  default 79.64 % (Table 3: 77.91 %); verb_groups=true 86.1 %
  double_negation        default 44.25 % (Table 3: 46.66 %); copulas=false 41.6 %
"""
from __future__ import annotations

from ..params import Param
from .registry import register


# --------------------------------------------------------------------------------------------------
# Editing a Doc's text token by token
# --------------------------------------------------------------------------------------------------
class TokenEdit:
    """Edits of a Doc's tokens, rendered back with the doc's own whitespace (so untouched text is
    byte-identical to the original). `append` and `before` serve any language (the Chinese rules use them);
    `replace`, `append_word` and `delete` follow English capitalisation, clitics and spacing."""

    def __init__(self, doc):
        self.doc = doc
        self.text = [t.text for t in doc]
        self.ws = [t.whitespace_ for t in doc]
        self.before = [""] * len(doc)

    def replace(self, i: int, new: str) -> "TokenEdit":
        tok = self.doc[i]
        if i == first_token(self.doc) and tok.text[:1].isupper():
            new = new[:1].upper() + new[1:]            # "Is it ..." -> "Has to be it ..."
        if i > 0 and not self.ws[i - 1] and tok.text[:1] in "'\u2019":
            new = " " + new                            # clitic "'s"/"'re" -> " has to be"
        nxt = i + 1
        if nxt < len(self.doc) and not self.ws[i] and self.doc[nxt].lower_ in _NT:
            self.text[nxt], self.ws[i] = "not", " "    # "isn't" -> "has to be not", not "has to ben't"
        self.text[i] = new
        return self

    def append(self, i: int, s: str) -> "TokenEdit":
        self.text[i] += s
        return self

    def append_word(self, i: int, word: str) -> "TokenEdit":
        """Add a word after token i, with a space after it too if token i was glued to a following word."""
        self.text[i] += " " + word
        nxt = i + 1
        if not self.ws[i] and nxt < len(self.doc) and self.text[nxt] and not _is_mark(self.doc[nxt]):
            self.ws[i] = " "
        return self

    def delete(self, i: int) -> "TokenEdit":
        """Remove token i and one of the two spaces around it ("did not go" -> "did go",
        "didn't go" -> "did go", "No one came" -> "One came")."""
        if i == first_token(self.doc):
            self.ws[i] = ""
            nxt = i + 1
            if nxt < len(self.doc):
                self.text[nxt] = self.text[nxt][:1].upper() + self.text[nxt][1:]
        elif self.ws[i - 1]:
            self.ws[i] = ""
        self.text[i] = ""
        return self

    def render(self) -> str:
        return "".join(b + t + w for b, t, w in zip(self.before, self.text, self.ws))


_NT = ("n't", "n\u2019t")


def first_token(doc) -> int:
    """Index of the first non-whitespace token (0 for an all-space doc)."""
    return next((t.i for t in doc if not t.is_space), 0)


def last_token(doc) -> int:
    """Index of the last non-whitespace token (-1 for an all-space doc)."""
    return next((t.i for t in reversed(doc) if not t.is_space), -1)


# --------------------------------------------------------------------------------------------------
# Punctuation insertion (Algorithm 1)
# --------------------------------------------------------------------------------------------------
# Subordinate clauses in spaCy's (ClearNLP) English scheme: adverbial clauses, relative clauses, other
# clausal noun modifiers, clausal complements and clausal subjects. Not xcomp: an open complement
# ("wants to go") is no clause of its own and a comma before it is ungrammatical.
SUBORDINATE_DEPS = frozenset({"advcl", "relcl", "acl", "ccomp", "csubj", "csubjpass"})
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})
# Marks that may be duplicated (rule 3) or turned into '!' at the end (rule 4), by Penn tag: ',' comma;
# ':' colon, semicolon, dash, ellipsis; '.' sentence-final . ! ?. Hyphens (HYPH) inside words, brackets
# and quotes are left alone: doubling or replacing them breaks words or pairs.
PAUSE_TAGS = frozenset({",", ":", "."})
QUOTE = '"'  # the paper's quote characters are garbled in the PDF text; straight double quotes are used


def _is_mark(tok) -> bool:
    return tok.is_punct or tok.is_space


def _is_pause(tok) -> bool:
    return tok.is_punct and tok.tag_ in PAUSE_TAGS


def clause_comma_place(doc, clause, is_mark) -> int | None:
    """The token after which rule 1's comma goes for the subordinate clause headed by `clause`: the one before
    the clause, or the clause's last for a clause that opens the sentence; None where the clause spans the
    sentence or a mark (`is_mark`, in the parse's scheme) is already on either side."""
    start, end = clause.left_edge.i, clause.right_edge.i
    if start > first_token(doc):
        at = start - 1
    elif end + 1 <= last_token(doc):
        at = end
    else:
        return None
    return None if is_mark(doc[at]) or is_mark(doc[at + 1]) else at


def _pi_clause(doc, rng):
    """Rule 1: ',' between a subordinate clause and the main clause (at the clause's start; for a clause
    that opens the sentence, at its end). Skipped where a mark is already there."""
    for t in doc:
        if t.dep_ not in SUBORDINATE_DEPS or _is_mark(doc[t.left_edge.i]) or _is_mark(doc[t.right_edge.i]):
            continue
        at = clause_comma_place(doc, t, _is_mark)
        if at is None:
            continue
        e = TokenEdit(doc).append(at, ",")
        e.ws[at] = e.ws[at] or " "
        return e.render()
    return None


def _pi_subject(doc, rng):
    """Rule 2: ',' after the noun subject, or the subject framed by quotes (chance 1/2 each). The subject
    is the main verb's (first ROOT's) nominal subject, else the first non-relative-pronoun subject."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    subj = next((c for c in root.lefts if c.dep_ in SUBJECT_DEPS), None) if root is not None else None
    if subj is None:
        subj = next((t for t in doc if t.dep_ in SUBJECT_DEPS and t.tag_ not in ("WDT", "WP")), None)
    if subj is None:
        return None
    s, e = subj.left_edge.i, subj.right_edge.i
    while e > s and doc[e].is_space:        # spaCy hangs extra whitespace tokens on the previous word
        e -= 1
    nxt = next((t for t in doc[e + 1:] if not t.is_space), None)
    comma = rng.random() < 0.5
    # a comma needs a word after the subject, and no pause mark on either side of it
    if comma and nxt is not None and not _is_pause(doc[e]) and not nxt.is_punct:
        return TokenEdit(doc).append(e, ",").render()
    ed = TokenEdit(doc)
    ed.before[s] = QUOTE + ed.before[s]
    return ed.append(e, QUOTE).render()


def duplicate_first_pause(doc, is_pause):
    """Rule 3: duplicate the first pause mark that is not the sentence's last token ("a, b" -> "a,, b");
    `is_pause` says what a pause mark is in the parse's scheme."""
    for t in doc[:max(last_token(doc), 0)]:
        if is_pause(t):
            return TokenEdit(doc).append(t.i, t.text).render()
    return None


def _pi_duplicate(doc, rng):
    return duplicate_first_pause(doc, _is_pause)


def _pi_end(doc, rng):
    """Rule 4: a final mark becomes '!', a final '!' gets a second one."""
    last = last_token(doc)
    if last < 0 or not _is_pause(doc[last]):
        return None
    e = TokenEdit(doc)
    if doc[last].text == "!":
        return e.append(last, "!").render()
    e.text[last] = "!"
    return e.render()


PI_RULES = (_pi_clause, _pi_subject, _pi_duplicate, _pi_end)
# How Algorithm 1 picks its rule, in every language
PI_MODE = Param("random", "first: Alg. 1's if-chain (first rule that applies); random: one of the 4 rules drawn "
                          "uniformly, unchanged if it does not apply (the text's 'randomly select a rule'); "
                          "shuffle: rules tried in random order", choices=("first", "random", "shuffle"))


@register("punctuation_insertion", family="sda", needs_parse=True,
          description="SDA Alg. 1: ',' before a subordinate clause / ',' or quotes at the subject / "
                      "a duplicated mark / final '!'",
          mode=PI_MODE)
def punctuation_insertion(doc, rng, mode: str = "random") -> str:
    """Algorithm 1. The paper's text says a rule is selected at random "with a certain probability", while
    Algorithm 1 is an if-chain; the chain changes almost every sentence (rule 4 applies to nearly all), far
    above Table 3's 62.61 %. Drawing one rule uniformly and leaving the sentence unchanged when that rule
    does not apply reproduces Table 3's share (62.9 % vs 62.61 % on wiki1m's head), so it is the default."""
    return apply_a_rule(doc, rng, PI_RULES, mode)


def apply_a_rule(doc, rng, rules, mode: str) -> str:
    """The text as the first of `rules` that applies rewrites it (a rule returns None where it does not apply),
    trying them in the order `mode` says: first (as given), random (one drawn, alone), shuffle; else the text."""
    if mode == "first":
        order = rules
    elif mode == "random":
        order = (rng.choice(rules),)
    else:
        order = rng.sample(rules, len(rules))
    for rule in order:
        out = rule(doc, rng)
        if out is not None:
            return out
    return doc.text


# --------------------------------------------------------------------------------------------------
# Affirmative auxiliary (Algorithm 2)
# --------------------------------------------------------------------------------------------------
# (base, 3rd person singular present, past) forms. The paper names "have to", "can't but" and "can't help
# to" (sic, kept as written) and ends with "etc."; the rest are common auxiliaries of necessity/certainty
# that take a bare infinitive after them ("have no choice but to go", "cannot but admire").
AFFIRMATIVE_AUXILIARIES = (
    ("have to", "has to", "had to"),
    ("can't but", "can't but", "couldn't but"),
    ("can't help to", "can't help to", "couldn't help to"),
    ("can't help but", "can't help but", "couldn't help but"),
    ("cannot but", "cannot but", "could not but"),
    ("must", "must", "must"),
    ("have no choice but to", "has no choice but to", "had no choice but to"),
    ("need to", "needs to", "needed to"),
    ("ought to", "ought to", "ought to"),
)
_FINITE_TAGS = frozenset({"VBZ", "VBP", "VBD"})
_FINITE_BE_TAGS = _FINITE_TAGS   # is/'s, am/are/'m/'re, was/were


def _inflect(forms: tuple[str, str, str], tag: str) -> str:
    return forms[1] if tag == "VBZ" else forms[2] if tag == "VBD" else forms[0]


def _subject_tag(verb) -> str:
    """'VBZ' when the verb's subject is 3rd person singular (a replaced modal carries no agreement)."""
    subj = next((c for c in verb.children if c.dep_ in SUBJECT_DEPS or c.dep_ == "expl"), None)
    if subj is None or subj.lower_ in ("i", "you", "we", "they") or any(c.dep_ == "conj" for c in subj.children):
        return "VBP"
    if "Plur" in subj.morph.get("Number") or subj.tag_ in ("NNS", "NNPS"):
        return "VBP"
    return "VBZ"


@register("affirmative_auxiliary", family="sda", needs_parse=True,
          description="SDA Alg. 2: an affirmative auxiliary ('have to', 'can't but', ...) before the first "
                      "finite be-verb or the finite main verb",
          verb_groups=Param(False, "also rewrite a main verb that has auxiliaries, as Table 1 does ('may "
                                   "transfer' -> 'has to transfer'); raises the share from ~79 % to ~86 %"))
def affirmative_auxiliary(doc, rng, verb_groups: bool = False) -> str:
    """Algorithm 2: scan left to right; a finite be-verb becomes aux + "be" ("was" -> "had to be"); the ROOT
    verb becomes aux + its lemma ("began" -> "had to begin"), the auxiliary inflected for the replaced
    verb's person and tense. Non-finite be ("be", "been", "being") is skipped: "may have to be be" / "has
    have to been" are not English.

    A ROOT verb that is not itself finite (it has auxiliaries, or is a bare participle/infinitive) is left
    alone by default: "aux + lemma" in its place is ungrammatical ("may must transfer"), Table 3's 77.91 %
    is matched this way (78.9 % on wiki1m's head, against 86.1 % otherwise), and the authors' released
    script does the same (it stops at the first non-be auxiliary and rewrites only VBZ/VBP/VBD roots).
    With ``verb_groups=True`` such a verb group is rewritten at its first auxiliary, as Table 1 shows ("may
    transfer" -> "has to transfer"): a modal is replaced outright, do-support is dropped ("did go" -> "had
    to go"), perfect "have" keeps its base form ("has been sold" -> "has to have been sold"); a bare
    participle/infinitive takes the base form ("Born in" -> "Have to bear in").

    The auxiliary is drawn first (Alg. 2 line 1), so the line's random stream does not depend on the parse."""
    forms = rng.choice(AFFIRMATIVE_AUXILIARIES)
    for w in doc:
        if w.lemma_ == "be" and w.tag_ in _FINITE_BE_TAGS:
            return TokenEdit(doc).replace(w.i, _inflect(forms, w.tag_) + " be").render()
        if w.dep_ == "ROOT" and w.pos_ == "VERB":
            auxes = [c for c in w.lefts if c.dep_ in ("aux", "auxpass") and c.tag_ != "TO"]
            if not auxes and (verb_groups or w.tag_ in _FINITE_TAGS):
                return TokenEdit(doc).replace(w.i, f"{_inflect(forms, w.tag_)} {w.lemma_}").render()
            if not (auxes and verb_groups):
                continue   # a later be-verb may still apply (Alg. 2 goes on scanning)
            f = auxes[0]
            if f.tag_ == "MD":
                new = _inflect(forms, _subject_tag(w))
            elif f.lemma_ == "do":
                new = _inflect(forms, f.tag_)
            else:
                new = f"{_inflect(forms, f.tag_)} {f.lemma_}"
            return TokenEdit(doc).replace(f.i, new).render()
    return doc.text


# --------------------------------------------------------------------------------------------------
# Double negation (Algorithm 3)
# --------------------------------------------------------------------------------------------------
NEGATION_WORDS = frozenset({"not", "n't", "n\u2019t", "no", "never"})
AUX_DEPS = frozenset({"aux", "auxpass"})
_FINITE_OR_MD = _FINITE_TAGS | {"MD"}
_DO = {"VBZ": "does", "VBD": "did", "VBP": "do", "VB": "do"}
_CONTRACTED = {"ca": "can", "wo": "will", "sha": "shall"}   # "can't" is tokenised "ca" + "n't"


@register("double_negation", family="sda", needs_parse=True,
          description="SDA Alg. 3: remove a negation, then add 'not' after auxiliaries / 'do not' before "
                      "the main verb / 'Not' in front, until there are two; else unchanged",
          copulas=Param(True, "count finite be/modal verbs heading a subordinate clause as auxiliaries "
                              "(spaCy labels them by the clause, not 'aux'); false: dep aux/auxpass only"))
def double_negation(doc, rng, copulas: bool = True) -> str:
    """Algorithm 3: delete the first negation word (count 1); then, left to right until the count is 2,
    "not" after each auxiliary and, at the ROOT, "do not" + lemma (inflected: "does not"/"did not") when it
    is a verb standing alone, else "Not" at position 0. Fewer than two negations: the original is returned.

    * Auxiliaries: tokens labelled aux/auxpass (infinitival "to" included: spaCy labels it aux, and "to
      not go" is English) and, with ``copulas``, finite be-verbs/modals that head a subordinate clause
      ("while Alf was in India"): spaCy's scheme has no 'cop' label and gives them the clause's label,
      though they are auxiliaries where English puts "not". Wiki1m head: 41.6 % changed without, 45 % with
      (Table 3: 46.66 %).
    * A root verb that already has auxiliaries takes "Not" in front (its auxiliary got the first "not"):
      that is Table 1 ("Not A shareholder may not transfer ..."), whose first word keeps its capital.
    * A root be-verb/auxiliary ("is", existential "was") takes "not" after it: "did not be" is not English.
    * "can't"/"won't" lose "n't" as "can"/"will" (spaCy splits them "ca" + "n't").
    Deterministic: `rng` is unused."""
    def is_aux(w) -> bool:
        return w.dep_ in AUX_DEPS or (copulas and w.dep_ != "ROOT" and w.pos_ == "AUX" and w.tag_ in _FINITE_OR_MD)

    def negate(e: TokenEdit, w) -> bool:
        if is_aux(w):
            e.append_word(w.i, "not")
            return True
        if w.dep_ != "ROOT":
            return False
        has_aux = any(c.dep_ in AUX_DEPS for c in w.lefts)
        if w.pos_ == "VERB" and w.lemma_ != "be" and not has_aux and w.tag_ in _DO:
            e.replace(w.i, f"{_DO[w.tag_]} not {w.lemma_}")
        elif (w.pos_ == "AUX" or w.lemma_ == "be") and not has_aux:
            e.append_word(w.i, "not")
        else:
            i = first_token(doc)
            e.before[i] = "Not " + e.before[i]
        return True

    e = TokenEdit(doc)
    neg = next((t for t in doc if t.lower_ in NEGATION_WORDS or t.dep_ == "neg"), None)
    if neg is not None:
        prev = doc[neg.i - 1] if neg.i > 0 else None
        if neg.lower_ in _NT and prev is not None and prev.lower_ in _CONTRACTED:
            full = _CONTRACTED[prev.lower_]
            e.text[prev.i] = full.capitalize() if prev.text[:1].isupper() else full
        e.delete(neg.i)
    return negate_twice(doc, e, neg, negate)


def negate_twice(doc, e: TokenEdit, deleted, negate) -> str:
    """Algorithm 3's walk, in any language: the negation `deleted` (None: there was none) counts 1; then, left
    to right, `negate(e, token)` adds a negation where the token takes one (and says so) until there are two.
    The edited text, or the original where the sentence takes fewer than two."""
    count = 0 if deleted is None else 1
    for w in doc:
        if count == 2:
            break
        if deleted is None or w.i != deleted.i:
            count += negate(e, w)
    return e.render() if count == 2 else doc.text
