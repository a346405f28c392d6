"""The two value types Kubernetes adds to CEL for DRA: semantic versions and quantities.

``parse_semver`` follows ``github.com/blang/semver/v4.Parse`` (what the API
server uses for version attributes and CEL's ``semver()``), error messages
included; ``compare_semver`` is ``Version.Compare`` (build metadata ignored).
``parse_quantity`` follows apimachinery's ``resource.ParseQuantity``: the value
is exact (a fraction), compared as the API's ``Quantity.Cmp`` does.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any, NamedTuple

from gpulabel.k8s.gostr import go_quote

__all__ = [
    "QuantityError",
    "SemverError",
    "Version",
    "compare_semver",
    "parse_quantity",
    "parse_semver",
]

_NUMBERS = frozenset("0123456789")
_ALPHANUM = frozenset("-ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_UINT64_MAX = (1 << 64) - 1


class SemverError(ValueError):
    """A string that ``semver.Parse`` refuses; ``str()`` is blang's message."""


class QuantityError(ValueError):
    """A string that ``resource.ParseQuantity`` refuses; ``str()`` is apimachinery's message."""


class Version(NamedTuple):
    major: int
    minor: int
    patch: int
    pre: tuple[tuple[bool, int, str], ...]  # (is_number, number, text) per prerelease identifier
    build: tuple[str, ...]


def _uint(text: str) -> int:
    # strconv.ParseUint(text, 10, 64); containsOnly("") is true, so "" reaches here.
    if not text:
        raise SemverError('strconv.ParseUint: parsing "": invalid syntax')
    value = int(text)
    if value > _UINT64_MAX:
        raise SemverError(f"strconv.ParseUint: parsing {go_quote(text)}: value out of range")
    return value


def _number(text: str, what: str) -> int:
    if not _NUMBERS.issuperset(text):
        raise SemverError(f"Invalid character(s) found in {what} number {go_quote(text)}")
    if len(text) > 1 and text[0] == "0":
        raise SemverError(f"{what.capitalize()} number must not contain leading zeroes {go_quote(text)}")
    return _uint(text)


@lru_cache(maxsize=4096)
def parse_semver(text: str) -> Version:
    """``semver.Parse(text)``; raises :class:`SemverError` with blang's message."""
    if not text:
        raise SemverError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "major")
    minor = _number(parts[1], "minor")
    patch_text = parts[2]
    build: list[str] = []
    pre_texts: list[str] = []
    if "+" in patch_text:
        patch_text, _, rest = patch_text.partition("+")
        build = rest.split(".")
    if "-" in patch_text:
        patch_text, _, rest = patch_text.partition("-")
        pre_texts = rest.split(".")
    patch = _number(patch_text, "patch")
    pre = []
    for p in pre_texts:
        if not p:
            raise SemverError("Prerelease is empty")
        if _NUMBERS.issuperset(p):
            if len(p) > 1 and p[0] == "0":
                raise SemverError(f"Numeric PreRelease version must not contain leading zeroes {go_quote(p)}")
            pre.append((True, _uint(p), ""))
        elif _ALPHANUM.issuperset(p):
            pre.append((False, 0, p))
        else:
            raise SemverError(f"Invalid character(s) found in prerelease {go_quote(p)}")
    for b in build:
        if not b:
            raise SemverError("Build meta data is empty")
        if not _ALPHANUM.issuperset(b):
            raise SemverError(f"Invalid character(s) found in build meta data {go_quote(b)}")
    return Version(major, minor, patch, tuple(pre), tuple(build))


def _cmp(a: Any, b: Any) -> int:
    return int(a > b) - int(a < b)


def compare_semver(a: Version, b: Version) -> int:
    """``Version.Compare``: -1, 0 or 1; a version without prerelease is greater than one with."""
    head = _cmp(a[:3], b[:3])
    if head or (not a.pre and not b.pre):
        return head
    if not a.pre:
        return 1
    if not b.pre:
        return -1
    for (an, av, at), (bn, bv, bt) in zip(a.pre, b.pre, strict=False):
        if an != bn:
            return -1 if an else 1
        c = _cmp(av, bv) if an else _cmp(at, bt)
        if c:
            return c
    return _cmp(len(a.pre), len(b.pre))


_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")


@lru_cache(maxsize=4096)
def parse_quantity(text: str) -> Fraction:
    """``resource.ParseQuantity(text)`` as an exact value (rounded up to nano units, as the API does)."""
    if not text:
        raise QuantityError(_FORMAT)
    pos, end = 0, len(text)
    negative = text[0] == "-"
    if text[0] in "+-":
        pos = 1
    start = pos
    while pos < end and (text[pos] in _DIGITS):
        pos += 1
    num = text[start:pos]
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        dstart = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[dstart:pos]
    suffix = text[pos:]
    # the suffix: letters of eEinumkKMGTP, an optional sign, then digits only
    i = 0
    while i < len(suffix) and suffix[i] in _SUFFIX_CHARS:
        i += 1
    if i < len(suffix) and suffix[i] in "+-":
        i += 1
    if not _DIGITS.issuperset(suffix[i:]):
        raise QuantityError(_FORMAT)
    if not num and not denom and pos == start:
        # nothing numeric at all ("Gi", "+"): Go's parser treats it as 0 with that suffix
        num = "0"
    mantissa = Fraction(int(num or "0")) + (Fraction(int(denom), 10 ** len(denom)) if denom else 0)
    if suffix in _BINARY:
        value = mantissa * (1 << _BINARY[suffix])
    elif suffix in _DECIMAL:
        value = mantissa * Fraction(10) ** _DECIMAL[suffix]
    elif suffix[:1] in ("e", "E") and len(suffix) > 1 and _exponent(suffix[1:]) is not None:
        value = mantissa * Fraction(10) ** (_exponent(suffix[1:]) or 0)
    else:
        raise QuantityError("unable to parse quantity's suffix")
    nano = value * 1_000_000_000
    if nano.denominator != 1:  # the API rounds up to nano units
        value = Fraction(-((-nano.numerator) // nano.denominator), 1_000_000_000)
    return -value if negative else value


def _exponent(text: str) -> int | None:
    body = text[1:] if text[:1] in "+-" else text
    if not body or not _DIGITS.issuperset(body):
        return None
    return int(text)
