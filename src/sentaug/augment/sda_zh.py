"""SDA's three rules (Algorithms 1-3) on spaCy's Chinese parse, for SDA Table 5 (Chinese STS-B).

The paper applies its rules to Chinese ("the proposed SDA methods can be seamlessly generalized to another
language like Chinese") without giving the Chinese versions; these follow the English ones
(`sentaug.augment.sda`) rule for rule, written for the scheme of spaCy's Chinese pipelines (zh_core_web_*:
OntoNotes tags, Stanford's Chinese Universal Dependencies labels). The pipeline is configurable
(`spacy_model_zh` in config.yaml); the rules only read `dep_`, `tag_`, `head` and the token texts, so they can
be tested on hand-built Docs. What the scheme provides, and the rules use:

* tags: VV verb, VC copula 是, VE 有, VA predicative adjective, PU punctuation;
* labels: ROOT, nsubj/nsubjpass subjects, aux:modal (能, 会, 可以, 应该), cop (是 before a nominal
  predicate, which is then the ROOT), neg (不, 没, 没有), ccomp / advcl:loc clauses.

Chinese text has no spaces between words: an edit inserts or removes characters; a token's own trailing
whitespace (mixed-script text) is kept. Punctuation is full-width (，。！“”).

* PI: the English rules with Chinese marks: '，' before a clausal complement or locative adverbial clause
  (after it when the clause opens the sentence); '，' after the subject or the subject framed by “ ”; the
  first pause mark doubled; a final '。' (or other end mark) turned into '！', a final '！' doubled. One rule
  drawn uniformly (``mode=random``), as in English.
* AA: an affirmative auxiliary (`AFFIRMATIVE_AUXILIARIES`: 必须 "must", 一定 "certainly", 不得不 / 不能不
  "cannot but", 只好 "have no choice but to", 不禁 "cannot help") before the first copula 是, or before the
  ROOT verb when it has no modal auxiliary and no negation of its own (as the English rule leaves verb
  groups alone).
* DN: the first negation word is deleted (count 1); then, left to right until the count is 2: '不' before a
  modal auxiliary or copula, and at the ROOT '不' before a verb ('没' before 有: 不有 is not Chinese) or
  '并非' ("it is not the case that") at the front for a non-verbal predicate. "我能去" -> "我不能不去" ("I
  cannot not go"). Fewer than two negations: unchanged.
"""
from __future__ import annotations

from .registry import register
from .sda import (PI_MODE, TokenEdit, apply_a_rule, clause_comma_place, duplicate_first_pause, first_token,
                  last_token, negate_twice)

VERB_TAGS = frozenset({"VV", "VC", "VE", "VA"})
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})
# Clauses a comma may separate from the main clause: clausal complements ("我知道，他来了") and locative /
# temporal adverbial clauses ("他来的时候，..."). Not acl: a relative clause precedes its noun with 的 and
# takes no comma.
SUBORDINATE_DEPS = frozenset({"ccomp", "advcl:loc"})
NEGATION_WORDS = frozenset({"不", "没", "没有", "未", "别", "非"})
PAUSE_MARKS = frozenset({"，", "、", "；", "：", "。", "！", "？", ",", ";", ":", ".", "!", "?"})
END_MARKS = frozenset({"。", "！", "？", ".", "!", "?"})
QUOTES = ("“", "”")
AFFIRMATIVE_AUXILIARIES = ("必须", "一定", "不得不", "不能不", "只好", "不禁")


def _is_mark(tok) -> bool:
    return tok.tag_ == "PU" or tok.is_space


def _is_pause(tok) -> bool:
    return tok.tag_ == "PU" and tok.text in PAUSE_MARKS


def _root(doc):
    return next((t for t in doc if t.dep_ == "ROOT"), None)


# -- punctuation insertion ------------------------------------------------------------------------------
def _pi_clause(doc, rng):
    for t in doc:
        at = clause_comma_place(doc, t, _is_mark) if t.dep_ in SUBORDINATE_DEPS else None
        if at is not None:
            return TokenEdit(doc).append(at, "，").render()
    return None


def _pi_subject(doc, rng):
    root = _root(doc)
    subj = next((c for c in root.lefts if c.dep_ in SUBJECT_DEPS), None) if root is not None else None
    if subj is None:
        subj = next((t for t in doc if t.dep_ in SUBJECT_DEPS), None)
    if subj is None:
        return None
    s, e = subj.left_edge.i, subj.right_edge.i
    nxt = doc[e + 1] if e + 1 < len(doc) else None
    ed = TokenEdit(doc)
    if rng.random() < 0.5 and nxt is not None and not _is_mark(nxt) and not _is_mark(doc[e]):
        return ed.append(e, "，").render()
    ed.before[s] = QUOTES[0]
    ed.text[e] += QUOTES[1]
    return ed.render()


def _pi_duplicate(doc, rng):
    return duplicate_first_pause(doc, _is_pause)


def _pi_end(doc, rng):
    last = last_token(doc)
    if last < 0 or not (_is_pause(doc[last]) and doc[last].text in END_MARKS):
        return None
    e = TokenEdit(doc)
    e.text[last] = e.text[last] + "！" if doc[last].text in ("！", "!") else "！"
    return e.render()


PI_RULES = (_pi_clause, _pi_subject, _pi_duplicate, _pi_end)


@register("punctuation_insertion_zh", family="sda", needs_parse=True,
          description="SDA Alg. 1 on a Chinese parse: '，' at a clause / '，' or “ ” at the subject / a "
                      "duplicated mark / final '！'",
          mode=PI_MODE)
def punctuation_insertion_zh(doc, rng, mode: str = "random") -> str:
    return apply_a_rule(doc, rng, PI_RULES, mode)


# -- affirmative auxiliary ------------------------------------------------------------------------------
@register("affirmative_auxiliary_zh", family="sda", needs_parse=True,
          description="SDA Alg. 2 on a Chinese parse: an affirmative auxiliary (必须, 一定, 不得不, ...) before "
                      "the first copula 是 or before the main verb")
def affirmative_auxiliary_zh(doc, rng) -> str:
    aux = rng.choice(AFFIRMATIVE_AUXILIARIES)   # drawn first: the random stream does not depend on the parse
    for w in doc:
        if w.tag_ == "VC":                       # 是, as the English rule's be-verb
            e = TokenEdit(doc)
            e.before[w.i] = aux
            return e.render()
        if w.dep_ == "ROOT" and w.tag_ in VERB_TAGS:
            if any(c.dep_ in ("aux:modal", "neg") or c.text in NEGATION_WORDS for c in w.lefts):
                continue                         # a verb group of its own ("不能去"): left alone
            e = TokenEdit(doc)
            e.before[w.i] = aux
            return e.render()
    return doc.text


# -- double negation ------------------------------------------------------------------------------------
@register("double_negation_zh", family="sda", needs_parse=True,
          description="SDA Alg. 3 on a Chinese parse: remove a negation, then '不' before modal auxiliaries / "
                      "the copula / the main verb ('没' before 有), '并非' in front, until there are two")
def double_negation_zh(doc, rng) -> str:
    """Deterministic: `rng` is unused."""
    def negate(e: TokenEdit, w) -> bool:
        if w.dep_ in ("aux:modal", "cop"):
            e.before[w.i] = "不"
        elif w.dep_ == "ROOT":
            if w.tag_ in VERB_TAGS and w.text not in NEGATION_WORDS:
                e.before[w.i] = "没" if w.tag_ == "VE" else "不"
            else:                                # a nominal predicate, or a verb that is a negation (没有)
                e.before[first_token(doc)] = "并非" + e.before[first_token(doc)]
        else:
            return False
        return True

    e = TokenEdit(doc)
    neg = next((t for t in doc if t.dep_ == "neg" or (t.text in NEGATION_WORDS and t.tag_ == "AD")), None)
    if neg is not None:
        e.text[neg.i] = ""
    return negate_twice(doc, e, neg, negate)
