"""Negation: "The cat is on the mat." -> "The cat is not on the mat."

SNCSE (Wang et al., 2022) trains unsupervised SimCSE with each sentence's negation as a soft negative: it shares
almost every word with the sentence and means the opposite. This rule negates the first auxiliary verb after the
first word (a question's leading auxiliary is left alone): it inserts "not" after it, or, when the sentence is
negated there already, removes the negation. A line without an auxiliary comes back unchanged, and a method can
train on the changed lines only (`changed_only: true`).
"""
from sentaug.augment.registry import Param, register

AUXILIARIES = {"am", "is", "are", "was", "were", "can", "could", "will", "would", "shall", "should", "may", "might",
               "must"}
CONTRACTED = {"isn't": "is", "aren't": "are", "wasn't": "was", "weren't": "were", "can't": "can", "cannot": "can",
              "couldn't": "could", "won't": "will", "wouldn't": "would", "shouldn't": "should", "mustn't": "must"}


@register("negation", family="example: negation", needs_parse=False,
          description="negate the first auxiliary verb after the first word: add 'not', or remove the negation",
          remove=Param(True, "remove an existing negation ('was not', \"wasn't\"); false: leave such lines as they are"))
def negation(text: str, rng, remove: bool = True) -> str:
    # `rng` (the line's own random.Random) is unused: the rule is deterministic.
    words = text.split(" ")
    for i in range(1, len(words)):
        word = words[i].lower()
        negated = word in CONTRACTED or (word in AUXILIARIES and i + 1 < len(words) and words[i + 1].lower() == "not")
        if negated and not remove:
            return text
        if word in CONTRACTED:
            return " ".join(words[:i] + [CONTRACTED[word]] + words[i + 1:])
        if negated:
            return " ".join(words[:i + 1] + words[i + 2:])
        if word in AUXILIARIES:
            return " ".join(words[:i + 1] + ["not"] + words[i + 1:])
    return text
