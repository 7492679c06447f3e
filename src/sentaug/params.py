"""A declared setting (`Param`): of an augmentation (`sentaug.augment.registry`) and of a method's part
(`sentaug.parts`), which declare theirs the same way; here, below both, so that neither imports the other for it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Param:
    """A declared setting: its default, what it does, and what values it takes (`choices`; numbers between
    `minimum` and `maximum`, inclusive). Its type is its default's (`type` where the default is None). A
    `required` one has no default: it must be given (a method part's, e.g. a cached source's augmentation)."""
    default: Any
    help: str = ""
    choices: tuple | None = None
    minimum: float | None = None
    maximum: float | None = None
    type: type | None = None
    required: bool = False

    def check(self, value, what: str):
        """`value` as this setting takes it (an int where a float is expected becomes one); ValueError naming
        `what` (e.g. "augmentation 'x': parameter 'p'") when its type, choice or range is wrong."""
        if value is None and self.default is None:     # an optional setting left unset
            return value
        expected = self.type or (type(self.default) if self.default is not None else None)
        if expected is not None and not isinstance(value, expected):
            # int where a float is expected is fine (JSON `1` for `1.0`); anything else is an error
            if expected is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            else:
                raise ValueError(f"{what} expects {expected.__name__}, got {value!r}")
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"{what} must be one of {list(self.choices)}, got {value!r}")
        low, high = self.minimum, self.maximum
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = (f"lie in [{low}, {high}]" if low is not None and high is not None else
                      f"be at least {low}" if low is not None else f"be at most {high}")
            raise ValueError(f"{what} must {bounds}, got {value!r}")
        return value
