"""AugCSE's NumericToWord (NL-Augmenter's ``numeric_to_word``): numbers written in words.

NL-Augmenter reads the line word by word (split at whitespace) and sends each word with a digit through a
chain of recognisers, the first that fits deciding how the word is written; the words are joined back with
single spaces (so tabs and double spaces become one space). The chain, in its order:

power of ten after "x"/"×" ("10−4" -> "ten power minus four"); a short range ("5-14" -> "five to fourteen");
a day number next to a month name ("25 December" -> "twenty-fifth of December"); a full date ("2020/01/02"
-> "the second of january twenty twenty", month/day/year tried before day/month/year); a month and year
("2020/01"); "911" digit by digit; a leading minus; a year (1001-2089 whose digits other than 0 are at least
three different characters: "1871" -> "eighteen seventy-one", but "2020" -> "two thousand and twenty");
a plain number, with a comma before three digits a thousands separator and otherwise a decimal comma
("12,65" -> "twelve point six five"); a time ("5:10" -> "ten past five am", "9:45" -> "quarter to ten am",
"23:00" -> "eleven o'clock pm"); cents ("2¢"); an amount with a currency symbol or code ("$.2" -> "two dollar
cents", "300.2USD" -> "three hundred point two united states dollar"); a phone number; "*123#"; a long number
(7+ digits, digit by digit); digits with dashes; a number glued to a suffix ("5th" -> "fifth", "20%" ->
"twenty %"); a glued range ("20-30F"); an equation ("p=0.005" -> "p = zero point zero zero five"); "e(...)";
brackets; "+56"; a fraction ("4/6" -> "four over six", "1/2" -> "a half"); "$6.75bn" amounts.

Numbers are written as the num2words library (0.5.x, English) writes them, which NL-Augmenter calls: "one
hundred and one", "twelve thousand, two hundred and thirty-five" (a comma before a group of hundreds),
"two point eight" for "2.80" (trailing zeros dropped), "minus forty-two"; years as "eighteen seventy-one",
"nineteen oh-five", "twenty-one hundred". The rules are written here; num2words is not used.

A word on which a recogniser fails (a number too large, a malformed amount) is kept as it is, as AugCSE's
copy of the transformation does (it wraps each word in try/except). Phone numbers: NL-Augmenter validates
them with Google's libphonenumber (the phonenumbers package), not a dependency here; a word with "+" among
its first two characters and 8 to 15 digits, otherwise only brackets, dashes, dots, slashes, is taken for
one instead.
"""
from __future__ import annotations

import calendar
import datetime
import re
import string
import time
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from ..registry import register
from . import data
from .common import FAMILY

# --------------------------------------------------------------------------------------------------
# English numbers, num2words' conventions
# --------------------------------------------------------------------------------------------------
_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
         "sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = ("thousand million billion trillion quadrillion quintillion sextillion septillion octillion nonillion "
           "decillion").split()


def cardinal(n: int) -> str:
    """English cardinal of a non-negative integer: "and" after hundreds and before a last group under a
    hundred, ", " before a last group of a hundred or more ("one thousand, one hundred")."""
    if n < 0:
        return "minus " + cardinal(-n)
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("-" + _ONES[n % 10] if n % 10 else "")
    if n < 1000:
        return _ONES[n // 100] + " hundred" + (" and " + cardinal(n % 100) if n % 100 else "")
    for k in range(len(_SCALES), 0, -1):
        scale = 1000 ** k
        if n >= scale:
            if n // scale >= 1000:
                raise OverflowError(f"{n} is too large to write in words")
            high, rest = divmod(n, scale)
            text = cardinal(high) + " " + _SCALES[k - 1]
            if not rest:
                return text
            return text + (" and " if rest < 100 else ", ") + cardinal(rest)
    raise AssertionError(n)


_ORDINAL_WORDS = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
                  "nine": "ninth", "twelve": "twelfth"}


def ordinal(n: int) -> str:
    """ "twenty-first", "one hundredth", "fortieth"."""
    words = cardinal(n)
    head, sep, last = words.rpartition(" ")
    h2, sep2, last = last.rpartition("-")
    if last in _ORDINAL_WORDS:
        last = _ORDINAL_WORDS[last]
    else:
        last = (last[:-1] + "ie" if last.endswith("y") else last) + "th"
    return head + sep + h2 + sep2 + last


def year(n: int) -> str:
    """A year read in pairs of digits ("nineteen ninety-one", "nineteen oh-five", "eleven hundred"); read as a
    cardinal when there is no first pair, the first pair ends in 0 with a second under ten ("two thousand
    and four"), or it has five digits or more."""
    high, low = divmod(n, 100)
    if high == 0 or (high % 10 == 0 and low < 10) or high >= 100:
        return cardinal(n)
    if low == 0:
        return cardinal(high) + " hundred"
    return cardinal(high) + (" oh-" + cardinal(low) if low < 10 else " " + cardinal(low))


def number(text: str) -> str:
    """A number written as a string ("-0.425", ".2", "12235") in words; trailing decimal zeros dropped
    ("2.80" -> "two point eight", "2.00" -> "two"). Raises ValueError on anything else."""
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"not a number: {text!r}") from None
    if not value.is_finite():
        raise ValueError(f"not a number: {text!r}")
    sign = "minus " if value < 0 else ""
    digits = format(abs(value), "f")
    whole, _, frac = digits.partition(".")
    frac = frac.rstrip("0")
    words = cardinal(int(whole))
    if frac:
        words += " point " + " ".join(_ONES[int(d)] for d in frac)
    return sign + words


def ordinal_of(text: str) -> str:
    return ordinal(int(Decimal(text)))


def _digits(text: str) -> str:
    return " ".join(_ONES[int(d)] for d in text)


# --------------------------------------------------------------------------------------------------
# Pieces of a word
# --------------------------------------------------------------------------------------------------
MONTHS = frozenset("january jan jan. february feb feb. march mar mar. april apr apr. may june jun jun. july jul "
                   "jul. august aug aug. september sep sep. sept sept. october oct oct. november nov nov. "
                   "december dec dec.".split())
_EQUATION_SIGNS = ("=", "<", "<=", "=>", ">", "!=", "**")
_TIME_WORDS = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen quarter sixteen "
               "seventeen eighteen nineteen twenty").split() + [f"twenty {w}" for w in _ONES[1:10]] + ["half"]


def _digit_bounds(x: str) -> tuple[int, int]:
    """Index of the first digit and one past the last (raises AttributeError without a digit, as the
    reference's regex lookups do)."""
    return re.search(r"\d", x).start(), len(x) - re.search(r"\d", x[::-1]).start()


@lru_cache(maxsize=1)
def _currencies() -> tuple[dict, dict]:
    return dict(data.pairs("currency_symbols.tsv")), dict(data.pairs("currency_codes.tsv"))


def _parse_date(x: str, formats) -> datetime.datetime | None:
    for fmt in formats:
        try:
            return datetime.datetime.strptime(x, fmt)
        except ValueError:
            continue
    return None


def _full_date(x: str):
    return _parse_date(re.sub("[.:/]", "-", x), ("%m-%d-%Y", "%d-%m-%Y", "%Y-%m-%d", "%m-%d-%y", "%d-%m-%y",
                                                 "%y-%m-%d"))


def _month_year(x: str):
    return _parse_date(x, ("%Y/%m", "%y/%m", "%m/%Y", "%m/%y"))


def _is_time(x: str) -> bool:
    for fmt in ("%H:%M", "%H.%M"):
        try:
            time.strptime(x, fmt)
            return True
        except ValueError:
            continue
    return False


def time_words(x: str) -> str:
    """"5:10" -> "ten past five am", "11:30" -> "half past eleven am", "9:45" -> "quarter to ten am"; hours
    over 12 are pm (NL-Augmenter's table of minute words, "twenty nine" unhyphenated)."""
    sep = "".join(c for c in x if not c.isdigit())
    hours, minutes = (int(p) for p in x.split(sep)[:2])
    half = "am"
    if hours > 12:
        hours, half = hours - 12, "pm"
    if minutes == 0:
        return f"{_TIME_WORDS[hours - 1]} o'clock {half}"
    if minutes < 31:
        return f"{_TIME_WORDS[minutes - 1]} past {_TIME_WORDS[hours - 1]} {half}"
    return f"{_TIME_WORDS[60 - minutes - 1]} to {_TIME_WORDS[hours]} {half}"


def _is_year(x: str) -> bool:
    b, e = _digit_bounds(x)
    core = x[b:e]
    if not (all(c in string.punctuation for c in x[e:]) and all(c in string.punctuation for c in x[:b])
            and core.isnumeric() and len(core) <= 4 and 1001 <= int(core) <= 2089 and str(int(core)) == core):
        return False
    return bool(re.match(r".*([1-3][0-9]{3})", x)) and len(set(x) - {"0"}) >= 3


def _year_words(x: str) -> str:
    b, e = _digit_bounds(x)
    return x[:b] + year(int(x[b:e])).replace(",", "") + x[e:]


def _plain_number(x: str) -> str:
    """A number with separators: a last comma followed by exactly three digits separates thousands (all
    commas dropped), any other last comma is a decimal comma."""
    if "," in x:
        last = x.rindex(",")
        run = 0
        for c in x[last + 1:]:
            if not c.isnumeric():
                break
            run += 1
        x = x.replace(",", "") if run == 3 else x[:last] + "." + x[last + 1:]
    return number(x).replace(",", "")


def _is_currency(x: str) -> bool:
    symbols, codes = _currencies()
    b, e = _digit_bounds(x)
    if "." not in x and "," not in x:
        front, back = x[:b - 1], x[e:]         # [:b - 1]: the character before the digits is not looked at
    else:
        front, back = x[:b], x[e:]
        if front:
            front = front[:-1] if front[-1] in ".," else front
        else:
            back = back[:-1] if back[-1] in ".," else back
    if front in symbols or front in codes:
        other = x[b:][e - b:]
    elif back in symbols or back in codes:
        other = x[e:]
    else:
        return False
    return other in symbols or other in codes or not other


def _cents_of(number_text: str, currency: str) -> str | None:
    """ ".2" -> "two <currency> cents" (the reference writes only the cents of an amount under one); None when
    the amount has a whole part. A zero amount has no words in the reference: it raises, as does an amount
    without a point where the reference looks for one (a symbol before the number)."""
    if number_text[number_text.index(".") + 1:] and not number_text[:number_text.index(".")]:
        cents = number_text[number_text.index(".") + 1:]
        if int(cents) > 1:
            return f"{number(cents)} {currency} cents"
        if int(cents) == 1:
            return f"{number(cents)} {currency} cent"
        raise ValueError("zero cents")
    return None


def _currency_words(x: str) -> str:
    symbols, codes = _currencies()
    b, e = _digit_bounds(x)
    front, back = re.sub("[.]", "", x[:b]), x[e:]
    if front in symbols or front in codes:
        name = (symbols.get(front) or codes[front]).lower()
        if "." in x:
            amount = re.sub("[^.0-9]", "", x[b - 1:])
            return _cents_of(amount, name) or f"{number(amount)} {name}"
        return f"{number(re.sub('[^.0-9]', '', x[b:]))} {name}"
    name = (symbols.get(back) or codes[back]).lower()
    amount = re.sub("[^.0-9]", "", x[:e])
    return ("." in amount and _cents_of(amount, name)) or f"{number(amount)} {name}"


def _is_cents(x, prev, nxt) -> bool:
    return (("¢" in x or x[-1] == "c") and x[-2].isnumeric() and re.sub("[¢c,.]", "", x).isnumeric()
            and prev != "(" and nxt != ")")


def _is_phone(x: str) -> bool:
    plus = x.find("+")
    n = sum(c.isdigit() for c in x)
    return plus in (0, 1) and 8 <= n <= 15 and all(c.isdigit() or c in "+()-./ " for c in x)


def _phone_words(x: str) -> str:
    plus = "plus " if "+" in x and x.index("+") in (0, 1) else ""
    return plus + _digits(re.sub("[^0-9]", "", x))


def _is_glued(x: str) -> bool:
    """A number glued to a suffix: "5th", "20%", "3x", "30-day"."""
    b, e = _digit_bounds(x)
    core, rest = x[b:e], x[e:]
    return (bool(re.search(r"^\d*[.,]?\d*$", core)) and (rest in ("st", "nd", "rd", "th", "%")
                                                          or not re.search(r"\d", rest)) and x[0].isnumeric())


def _glued_words(x: str) -> str:
    b, e = _digit_bounds(x)
    core, rest = x[b:e], x[e:]
    if rest in ("st", "nd", "rd", "th"):
        return ordinal_of(core)
    return number(core) + (" " + rest if rest else "")


def _is_glued_range(x: str) -> bool:
    b, e = _digit_bounds(x)
    return (bool(re.search(r"^\d*[-]?\d*$", x[b:e])) and len(x[e:]) > 0 and not re.search(r"\d", x[e:])
            and x[0].isnumeric())


def _range_words(x: str) -> str:
    b, e = _digit_bounds(x)
    core = x[b:e]
    low, high = core[:core.index("-")], core[core.index("-") + 1:]
    return f"{number(low)} to {number(high)} {x[e:]}"


def _is_short_range(x: str) -> bool:
    dash = x.find("-")
    if not (re.search(r"\d", x) and dash > -1 and len(x[:dash]) <= 3 and len(x[dash + 1:]) <= 3):
        return False
    b, e = _digit_bounds(x)
    return bool(re.search(r"^\d*[-]?\d*$", x[b:e])) and not x[e:] and x[0].isnumeric()


def _is_equation(x: str) -> bool:
    return any(s in x and x.count(s) == 1 for s in _EQUATION_SIGNS)


def _equation_words(x: str) -> str:
    """The reference's choice of sign: with one sign found past the first character, that sign; with several,
    the sign at the list position equal to the largest character offset found (an accident of its code that
    holds for "<=": offsets of "<" and "<=" coincide); with none past the first character, a failure."""
    offsets = [x.find(s) for s in _EQUATION_SIGNS]
    found = [o > 0 for o in offsets]
    if sum(found) > 1:
        sign = _EQUATION_SIGNS[max(offsets)]
    elif sum(found) == 1:
        sign = _EQUATION_SIGNS[found.index(True)]
    else:
        raise ValueError("no sign past the first character")
    at = x.index(sign)
    left, right = x[:at], x[at + len(sign):]
    b, e = _digit_bounds(right)
    right = recognize(right[b:e], "", "") + " " + recognize(right[e:], "", "")
    return recognize(left, "", "") + " " + sign + " " + right


def _fraction_words(x: str) -> str:
    num, den = x[:x.find("/")], x[x.find("/") + 1:]
    named = {("1", "2"): "a half", ("1", "3"): "a third", ("2", "3"): "two third", ("1", "4"): "a quarter",
             ("2", "4"): "two quarter", ("3", "4"): "three quarter"}
    return named.get((num, den)) or f"{number(num)} over {number(den)}"


def _m_bn_words(x: str) -> str:
    """"$6.75bn.,business" -> "six point seven five bn. dollar business": the amount's words, the unit, and
    the amount's last word (its currency) moved after the unit."""
    _, e = _digit_bounds(x)
    words = recognize(x[:e], "", "").split()
    unit, *following = x[e:].split(",")
    return " ".join(words[:-1] + [unit] + words[-1:] + following)


def _beside_bracket(x: str) -> bool:
    return x[-1] in ")]}" or x[-2] in ")]}"


def _in_brackets(x: str) -> bool:
    return (x[0], x[-1]) in (("(", ")"), ("[", "]"), ("{", "}"), ("<", ">"))


# --------------------------------------------------------------------------------------------------
# The chain
# --------------------------------------------------------------------------------------------------
def recognize(word: str, prev: str, nxt: str) -> str:
    """NL-Augmenter's reading of one word (module docstring), given its neighbours."""
    if word[:2] == "10" and prev in ("x", "×"):
        rest = word[2:]
        rest = "-" + rest[1:] if rest[0] == "−" else rest
        return "ten power " + number(rest)
    if _is_short_range(word):
        return _range_words(word)[:-1]
    if (prev.lower() in MONTHS or nxt.lower() in MONTHS) and word.isnumeric() and int(word) <= 31:
        return ordinal_of(word) + ("" if prev.lower() in MONTHS else " of")
    if not re.search(r"\d", word):
        return word
    full, partial = _full_date(word), _month_year(word)
    if full is not None:
        return f"the {ordinal(full.day)} of {calendar.month_name[full.month].lower()} {_year_words(str(full.year))}"
    if partial is not None:
        return f"{calendar.month_name[partial.month].lower()} {_year_words(str(partial.year))}"
    if word == "911":
        return _digits(word)
    if word[0] == "-":
        return "minus " + recognize(word[1:], " ", " ")
    if _is_year(word):
        return _year_words(word)
    if word.replace(",", "").replace(".", "").isnumeric() and word[-1].isnumeric():
        return _plain_number(word)
    if _is_time(word):
        return time_words(word)
    if _is_cents(word, prev, nxt):
        b, e = _digit_bounds(word)
        return number(word[b:e]) + " cents"
    if _is_currency(word):
        return _currency_words(word)
    if _is_phone(word):
        return _phone_words(word)
    if word[0] in "*#" and word[-1] in "*#":
        return word[0] + " " + _phone_words(word) + " " + word[-1]
    bare = word[1:] if word[0] == "+" else word
    if len(bare) >= 7 and bare.isnumeric():
        return ("plus " if word[0] == "+" else "") + _digits(bare)
    if not re.sub("[0-9-]", "", word) and len(word) > 8:
        return " ".join(_ONES[int(c)] if c.isnumeric() else c for c in word)
    if _is_glued(word):
        return _glued_words(word)
    if _is_glued_range(word):
        return _range_words(word)
    if _is_equation(word):
        return _equation_words(word)
    if word[:2] == "e(":
        _, e = _digit_bounds(word)
        return "e ( " + recognize(word[2:e], " ", " ") + " " + word[e:]
    if _in_brackets(word):
        return word[0] + recognize(word[1:-1], " ", " ") + word[-1]
    if _beside_bracket(word):
        _, e = _digit_bounds(word)
        return recognize(word[:e], " ", " ") + " " + word[e:]
    if word[0] == "(" and _is_glued(word[1:]):
        return "( " + _glued_words(word[1:])
    if word[0] == "+" and len(word[1:]) <= 3 and word[1:].isnumeric():
        return "plus " + number(word[1:])
    slash = word.find("/")
    if len(word[:slash]) <= 2 and len(word[slash + 1:]) <= 2 and slash > -1:
        return _fraction_words(word)
    if word[-1] == "m" or "bn" in word:
        return _m_bn_words(word)
    return word


@register("NumericToWord", family=FAMILY, needs_parse=False,
          description="AugCSE A.2 (NL-Augmenter): numbers in words, word by word: cardinals and decimals "
                      "('12,65' -> 'twelve point six five'), years, dates, times ('5:10' -> 'ten past five am'), "
                      "currencies, percentages, phone numbers, ranges, equations; words re-joined by spaces")
def numeric_to_word(text, rng) -> str:
    words = text.split()
    out = []
    for i, w in enumerate(words):
        prev = words[i - 1] if i > 0 else " "
        nxt = words[i + 1] if i < len(words) - 1 else " "
        try:
            out.append(recognize(w, prev, nxt))
        except Exception:                  # noqa: BLE001 - AugCSE's copy keeps any word it fails on
            out.append(w)
    return " ".join(out)
