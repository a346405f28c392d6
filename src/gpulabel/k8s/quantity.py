"""Kubernetes resource quantities: apimachinery's ``resource.ParseQuantity`` and ``Quantity.String()``.

The one parser gpulabel has (pod requests, node allocatable, DRA capacities and
CEL's ``quantity()``). It follows ``k8s.io/apimachinery/pkg/api/resource``
v0.37 step for step, and the API server settles it: tests/unit/test_quantity.py
checks a table of the answers kube-apiserver v1.37.2 gave for 397 strings
(accepted or refused, and the canonical form it stores), and
tests/cluster/test_quantity_cluster.py asks the server again. What the server does,
measured (see docs/decisions.md, "quantity parsing"):

- The scanner is more permissive than the regular expression its error names:
  ``"Gi"``, ``"m"``, ``"+"``, ``"-"``, ``"."``, ``"+."`` and ``"1.Gi"`` parse
  (as 0, 0, 0, 0, 0, 0 and 1Gi). Leading zeros and a ``+`` are kept in the
  stored form when the number is otherwise canonical (``"+1Ki"``, ``"0100m"``).
- A value finer than ``1n`` is rounded up, away from zero (``"0.1n"`` is ``1n``);
  a binary-suffixed value is capped at 2^63-1; decimal ones are not.
- The stored form is ``String()``: the string as given when Go judged it
  canonical, else the value with the largest suffix of its kind that keeps it
  whole (``"1.5Gi"`` -> ``"1536Mi"``, ``"1.5"`` -> ``"1500m"``); a decimal
  exponent beyond ``E`` has no suffix and is dropped (``"1000E"`` -> ``"1"``).
- A JSON string is trimmed of white space first (``UnmarshalJSON``), but of the raw
  bytes, so an escaped ``\\t`` stays: :func:`decode` is that path, :func:`parse` is
  ``ParseQuantity``. In a ResourceList (pod requests, node capacity) the server then
  rounds up to ``1m`` (:func:`resource_list_form`).

Values are exact: an integer count of nano-units (ParseQuantity never keeps
anything finer), so sums are exact and fast. Pure: no I/O, no caches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from gpulabel.errors import QuantityError

__all__ = [
    "NANOS",
    "Quantity",
    "QuantityError",
    "decode",
    "decode_nanos",
    "json_text",
    "parse",
    "parse_nanos",
    "parse_quantity",
    "resource_list_form",
]

NANOS = 10**9  # nano-units per unit

SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
FORMAT_WRONG = f"quantities must match the regular expression '{SPLIT_RE}'"
NUMERIC = "unable to parse numeric part of quantity"
SUFFIX = "unable to parse quantity's suffix"
# gpulabel's one refusal of its own: the API accepts these, but no real quantity comes near them and
# exact arithmetic on them would take unbounded time and memory.
LIMIT = 4000
TOO_BIG = f"gpulabel does not model quantities of more than {LIMIT} digits or exponents beyond 10^{LIMIT}"

DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT = "DecimalSI", "BinarySI", "DecimalExponent"

_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_NANOS: dict[str, int] = {s: 10 ** (9 + e) for s, e in _DECIMAL.items()}
_DECIMAL_SUFFIX = {e: s for s, e in _DECIMAL.items()}
_BINARY_SUFFIX = {e // 10: s for s, e in _BINARY.items()}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_EXPONENT = re.compile(r"[+-]?[0-9]+", re.ASCII)
_DIGITS = frozenset("0123456789")
_MAX_INT64 = (1 << 63) - 1
_MAX_INT64_FACTORS = 18  # decimal digits an int64 always holds
# unicode.IsSpace characters a JSON string may hold unescaped (below U+0020 it may not)
_JSON_RAW_SPACE = " \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"


@dataclass(frozen=True, slots=True)
class Quantity:
    """A parsed quantity: its exact value in nano-units, its format, and the string Go keeps (if any)."""

    nanos: int
    format: str = DECIMAL_SI
    text: str = ""  # the input, when ParseQuantity keeps it as the String() (it judged it canonical)
    scale: int | None = None  # the int64 amount's power of ten; None: Go holds it as an inf.Dec

    @property
    def value(self) -> Fraction:
        return Fraction(self.nanos, NANOS)

    def __str__(self) -> str:
        """``Quantity.String()``: the form the API server stores and returns."""
        return self.text or _canonical(self.nanos, self.format)

    def round_up(self, scale: int) -> Quantity:
        """``Quantity.RoundUp(scale)``: up (away from zero) to a multiple of 10^scale (``scale`` >= -9).

        The kept string survives only when Go's int64 amount already has that scale.
        """
        if self.scale is not None and self.scale >= scale:
            return self
        step = 10 ** (scale + 9)
        whole = -(-abs(self.nanos) // step) * step
        return Quantity(whole if self.nanos >= 0 else -whole, self.format, "", None if self.scale is None else scale)


def parse_quantity(text: str) -> Fraction:
    """The exact value of ``resource.ParseQuantity(text)`` (``"1500m"`` -> 3/2, ``"1Gi"`` -> 1073741824)."""
    return Fraction(parse_nanos(text), NANOS)


def parse_nanos(text: str) -> int:
    """``resource.ParseQuantity(text)`` in nano-units; raises :class:`QuantityError` with Go's message."""
    m = _COMMON.fullmatch(text)
    if m is not None:
        return _common(m)
    return parse(text).nanos


def json_text(text: str) -> str:
    """What ``Quantity.UnmarshalJSON`` hands ``ParseQuantity`` for the JSON string ``text``.

    It trims (``strings.TrimSpace``) the raw bytes between the quotes, unescaped: a tab or
    newline (JSON must escape them) is ``\\t`` to it, not space. Other white space a JSON
    string can carry raw is trimmed; gpulabel assumes it came raw (kubectl sends it so,
    except U+2028 and U+2029, which Go's encoder escapes).
    """
    return text.strip(_JSON_RAW_SPACE)


def decode(text: str) -> Quantity:
    """A quantity as the API server decodes it from a JSON string (``UnmarshalJSON``)."""
    return parse(json_text(text))


def decode_nanos(text: str) -> int:
    """:func:`decode` in nano-units."""
    m = _COMMON.fullmatch(text)
    if m is not None:
        return _common(m)
    return parse_nanos(json_text(text))


# The shapes nearly every real quantity has ("8", "110", "500m", "64Gi"), without the scanner.
_COMMON = re.compile(r"([0-9]{1,18})([numkMGTPE]|[KMGTPE]i)?", re.ASCII)


def _common(m: re.Match[str]) -> int:
    digits, suffix = m.groups()
    if suffix is None:
        return int(digits) * NANOS
    if len(suffix) == 1:
        return int(digits) * _DECIMAL_NANOS[suffix]
    return min(int(digits) << _BINARY[suffix], _MAX_INT64) * NANOS


def resource_list_form(text: str) -> str:
    """The form the API server stores for ``text`` in a ResourceList (a pod's requests, a node's capacity).

    ``SetDefaults_ResourceList`` rounds every value up to milli-units first, so
    ``"0.5m"`` is stored as ``"1m"`` and ``"1n"`` as ``"1m"``.
    """
    return str(decode(text).round_up(-3))


def _scan(text: str) -> tuple[bool, str, str, str, str]:
    """``parseQuantityString``: (positive, the numeric text, numerator, denominator, suffix)."""
    end = len(text)
    pos = 0
    positive = True
    if text[0] == "-":
        positive, pos = False, 1
    elif text[0] == "+":
        pos = 1
    while pos < end and text[pos] == "0":  # leading zeros
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos >= end:
        return positive, text, text[start:], "", ""
    num = text[start:pos] or "0"
    denom = ""
    if text[pos] == ".":
        pos += 1
        dstart = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[dstart:pos]
        if pos >= end:
            return positive, text, num, denom, ""
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(FORMAT_WRONG)
    return positive, value, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    """``suffixer.interpret``: (base, exponent, format)."""
    if suffix in _DECIMAL:
        return 10, _DECIMAL[suffix], DECIMAL_SI
    if suffix in _BINARY:
        return 2, _BINARY[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE" and _EXPONENT.fullmatch(suffix, 1):
        digits = suffix[1:].lstrip("+-").lstrip("0")
        exponent = int(suffix[1:]) if len(digits) <= 19 else 1 << 63
        if -(1 << 63) <= exponent < (1 << 63):  # strconv.ParseInt(.., 10, 64), then int32(..)
            exponent = (exponent + (1 << 31)) % (1 << 32) - (1 << 31)
            if abs(exponent) > LIMIT:
                raise QuantityError(TOO_BIG)
            return 10, exponent, DECIMAL_EXPONENT
    raise QuantityError(SUFFIX)


def parse(text: str) -> Quantity:
    """``resource.ParseQuantity(text)``: value, format, and the string kept as its ``String()``."""
    if not text:
        raise QuantityError(FORMAT_WRONG)
    if text == "0":
        return Quantity(0, DECIMAL_SI, "0", 0)
    positive, value, num, denom, suffix = _scan(text)
    if len(num) + len(denom) > LIMIT:
        raise QuantityError(TOO_BIG)
    base, exponent, fmt = _interpret(suffix)

    # Go takes an int64 fast path when the digits surely fit; only that path can keep the string.
    if fmt == BINARY_SI:
        fast = exponent >= 0 and not denom and 15 - len(num) - int(exponent * 3 / 10) - 1 >= 0
        scale = -len(denom)
    else:
        scale = exponent - len(denom)
        fast = _MAX_INT64_FACTORS - len(num) - len(denom) >= 0 and scale >= -9
    if fast:
        shifted = num + denom
        digits = int(shifted)
        if fmt == BINARY_SI:
            nanos = (digits << exponent) * NANOS
            keep = digits & 7 != 0
        else:
            nanos = digits * 10 ** (scale + 9)
            keep = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
        return Quantity(nanos if positive else -nanos, fmt, text if keep else "", scale)

    # The general path (inf.Dec): exact, rounded up to 1n away from zero, binary capped at 2^63-1.
    if not any(c in _DIGITS for c in value):
        raise QuantityError(NUMERIC)
    whole, _, frac = value.lstrip("+-").partition(".")
    exact = Fraction(int((whole.lstrip("0") + frac) or "0"), 10 ** len(frac)) * (Fraction(base) ** exponent)
    nanos_exact = exact * NANOS
    nanos = -(-nanos_exact.numerator // nanos_exact.denominator)  # ceil: exact is not negative
    if fmt == BINARY_SI and nanos > _MAX_INT64 * NANOS:
        nanos = _MAX_INT64 * NANOS
    if fmt == BINARY_SI and 0 < nanos < NANOS:
        fmt = DECIMAL_SI
    return Quantity(nanos if positive else -nanos, fmt)


def _canonical(nanos: int, fmt: str) -> str:
    """``CanonicalizeBytes``: the number and the suffix of the format that keeps it exact."""
    if nanos == 0:
        return "0"
    if fmt == BINARY_SI and (-1024 * NANOS < nanos < 1024 * NANOS or nanos % NANOS):
        fmt = DECIMAL_SI  # small or fractional binary amounts print as decimal
    if fmt == BINARY_SI:
        amount, times = _remove_factors(nanos // NANOS, 1024)
        return f"{amount}{_BINARY_SUFFIX.get(times, '')}"
    amount, times = _remove_factors(nanos, 10)
    exponent = times - 9
    shift = exponent % 3  # down to a multiple of 3
    amount, exponent = amount * 10**shift, exponent - shift
    if fmt == DECIMAL_EXPONENT:
        return f"{amount}e{exponent}" if exponent else str(amount)
    return f"{amount}{_DECIMAL_SUFFIX.get(exponent, '')}"  # beyond E: no suffix (Go's table has none)


def _remove_factors(value: int, base: int) -> tuple[int, int]:
    times = 0
    while value % base == 0 and value != 0:
        value //= base
        times += 1
    return value, times
