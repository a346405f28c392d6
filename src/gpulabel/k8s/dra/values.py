"""The two value types Kubernetes adds to CEL for DRA: semantic versions and quantities.

``parse_semver`` follows ``github.com/blang/semver/v4.Parse`` (what the API
server uses for version attributes and CEL's ``semver()``), error messages
included; ``compare_semver`` is ``Version.Compare`` (build metadata ignored).
``parse_quantity`` is :mod:`gpulabel.k8s.quantity`'s (apimachinery's
``resource.ParseQuantity``): the value is exact (a fraction), compared as the
API's ``Quantity.Cmp`` does.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from gpulabel.errors import QuantityError, SemverError
from gpulabel.k8s.gostr import go_quote
from gpulabel.k8s.quantity import parse_quantity

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
_PLAIN = re.compile(r"(0|[1-9][0-9]{0,18})\.(0|[1-9][0-9]{0,18})\.(0|[1-9][0-9]{0,18})", re.ASCII)


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


def parse_semver(text: str) -> Version:
    """``semver.Parse(text)``; raises :class:`SemverError` with blang's message."""
    if (m := _PLAIN.fullmatch(text)) is not None:  # "550.54.15": most versions, without the general path
        return Version(int(m[1]), int(m[2]), int(m[3]), (), ())
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
