"""NL-Augmenter's own word lists, read from package data (``resources/wordlists/nlaugmenter``; each file's
header names its source file and commit; see ``resources/wordlists/SOURCES.md``)."""
from __future__ import annotations

from functools import lru_cache
from importlib import resources


def _path(name: str):
    path = resources.files("sentaug") / "resources" / "wordlists" / "nlaugmenter" / name
    if not path.is_file():
        raise FileNotFoundError(f"word list {path} is missing from the sentaug package")
    return path


@lru_cache(maxsize=None)
def lines(name: str) -> tuple[str, ...]:
    """The non-empty, non-comment lines of a list, in order."""
    return tuple(ln for ln in _path(name).read_text(encoding="utf-8").splitlines() if ln and not ln.startswith("#"))


@lru_cache(maxsize=None)
def pairs(name: str) -> tuple[tuple[str, str], ...]:
    return tuple(tuple(ln.split("\t", 1)) for ln in lines(name))


def colors() -> tuple[str, ...]:
    """ColorTransformation's 147 colour names ("alice blue", ..., "darkorange", ...), in NL-Augmenter's order."""
    return lines("colors.txt")


def populous_cities() -> tuple[str, ...]:
    return lines("populous_cities.txt")


def scarce_cities() -> tuple[str, ...]:
    return lines("scarce_cities.txt")


@lru_cache(maxsize=1)
def marker_classes() -> dict[str, str]:
    """Discourse marker (without its trailing comma) -> PDTB sense."""
    return {m.rstrip(","): c for m, c in pairs("discourse_markers.tsv")}


@lru_cache(maxsize=1)
def countries() -> dict[str, dict]:
    """GeoNames countryInfo rows by ISO code: name, capital, population, continent, neighbours, languages."""
    out = {}
    for ln in lines("countryInfo.txt"):
        f = ln.split("\t")
        out[f[0]] = {"iso": f[0], "iso3": f[1], "name": f[4], "capital": f[5], "population": f[7],
                     "continent": f[8], "neighbours": [n for n in f[17].split(",") if n] if len(f) > 17 else [],
                     "languages": f[15].split(",")}
    return out


@lru_cache(maxsize=1)
def language_names() -> dict[str, str]:
    """Locale code ("ro", "ar-dz") and its language part ("ar") -> language name ("Arabic"), from the locale
    table NL-Augmenter ships, read as it reads it (a later row overwrites an earlier one)."""
    out = {}
    for ln in lines("locales.txt")[1:]:
        f = ln.split("\t")
        if len(f) > 2:
            language = f[0].split("-")[0].strip()
            out[f[2]] = language
            out[f[2].split("-")[0].strip()] = language
    return out
