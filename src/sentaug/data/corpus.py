"""Read a training corpus (one sentence per line) without ever failing half-way through it.

Bad-input policy (every line is kept, so line i of the corpus is row i of every cache built from it):

* line endings: the file is split on ``\\n`` only (never on the other characters ``str.splitlines``
  treats as breaks, such as U+2028 or form feeds, which do occur inside Wikipedia sentences); one
  trailing ``\\r`` is stripped (CRLF files); a final newline does not start an extra empty line; a
  UTF-8 byte-order mark at the start of the file is dropped.
* ``empty``: the line is empty or whitespace only. It is kept as it is.
* ``invalid_utf8``: the line's bytes are not valid UTF-8. It is decoded with U+FFFD replacement
  characters and kept.
* ``long``: the line has more than ``MAX_CHARS`` (2,000) characters. It is kept whole, but only its first
  ``MAX_CHARS`` characters are given to spaCy (`Line.parse_text`).
* ``""``: the line is fine.

A line has one flag; ``empty`` wins over ``invalid_utf8``, which wins over ``long``. Augmentations leave
flagged lines unchanged (see `sentaug.augment.cache`), so a bad line costs a wasted training pair at worst,
never a crash after hours of parsing.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

MAX_CHARS = 2000
FLAGS = ("", "empty", "invalid_utf8", "long")


@dataclass(frozen=True)
class Line:
    text: str   # the line as read (decoded, line ending stripped); kept whole even when long
    flag: str   # one of FLAGS

    @property
    def parse_text(self) -> str:
        """What spaCy gets: the text, truncated to MAX_CHARS characters for long lines."""
        return self.text[:MAX_CHARS] if self.flag == "long" else self.text


def decode_line(raw: bytes) -> Line:
    """Decode one line (without its ``\\n``) and flag it according to the policy above."""
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    try:
        text, flag = raw.decode("utf-8"), ""
    except UnicodeDecodeError:
        text, flag = raw.decode("utf-8", errors="replace"), "invalid_utf8"
    if not text.strip():
        flag = "empty"
    elif not flag and len(text) > MAX_CHARS:
        flag = "long"
    return Line(text, flag)


def read_corpus(path: str | os.PathLike) -> list[Line]:
    """All lines of `path` as `Line`s, in file order (see the module docstring for the policy)."""
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":   # the final newline ends the last line; it opens no new one
        raw_lines.pop()
    return [decode_line(r) for r in raw_lines]


def flag_counts(lines: list[Line]) -> dict[str, int]:
    """Number of lines per non-empty flag, e.g. {"empty": 2, "long": 1}."""
    out: dict[str, int] = {}
    for ln in lines:
        if ln.flag:
            out[ln.flag] = out.get(ln.flag, 0) + 1
    return out
