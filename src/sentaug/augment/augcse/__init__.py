"""AugCSE's augmentations (its Table 3 / Appendix A.2), family ``augcse``, under the paper's names.

AugCSE took them from NL-Augmenter (GEM-benchmark/NL-Augmenter) and wrapped a few of nlpaug's; each operation
here reproduces the behaviour of the code AugCSE ran (its copy of NL-Augmenter in PootieT/AugCSE, with the
settings it used), written for this project from reading that code (none of it is run or copied). Where
ours cannot or does not follow it, the operation's docstring says so, and the NL-Augmenter test cases that
still fail are listed with their reason in ``resources/reference/known_failures.yaml``
(`sentaug.augment.conformance` measures the agreement).

Modules, by the paper's three columns:

* `meaning` (meaning alteration): SentenceAdjectivesAntonymsSwitch, SentenceAuxiliaryNegationRemoval,
  ReplaceHypernyms, ReplaceHyponyms, SentenceSubjectObjectSwitch, CityNamesTransformation, AntonymSubstitute;
* `possible` (possible meaning alteration, rule-based): ColorTransformation, Summarization, SentenceReordering,
  TenseTransformation; `random_words`: RandomDeletion, RandomCrop, RandomSwap, RandomWordAugmentation,
  RandomWordEmbAugmentation, RandomContextualWordAugmentation; `seq2seq`: DiverseParaphrase;
* `preserving` (highly meaning preserving): YodaPerturbation, ContractionExpansions,
  DiscourseMarkerSubstitution, GenderSwap, GeoNamesTransformation, SynonymSubstitution; `numbers`:
  NumericToWord; `seq2seq`: Casual2Formal.

Conventions (see `sentaug.augment.registry`): ``fn(x, rng, **params) -> str`` where ``x`` is the cached
spaCy Doc of the line (``needs_parse=True``) or its text; randomness only from ``rng`` (a ``random.Random``
private to the line; NL-Augmenter re-seeds a fixed seed on every call instead, so every line of it draws the
same stream). An operation returns the text unchanged when nothing applies, and never raises on a line's
content. NL-Augmenter's own word lists are package data (``resources/wordlists/nlaugmenter``, `data`).
"""
from . import meaning, numbers, possible, preserving, random_words, seq2seq  # noqa: F401  (registers them)
from .common import past_tense, third_person, wordlist  # noqa: F401
