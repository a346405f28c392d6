"""Field errors as the API server prints them: ``field.Error`` and ``errors.NewInvalid``.

Upstream: ``k8s.io/apimachinery/pkg/util/validation/field/errors.go`` (the
constructors ``Required``, ``Invalid``, ``Forbidden``, ``NotSupported`` and
``(*Error).ErrorBody``)
and ``pkg/util/errors/errors.go`` (``aggregate.Error``), at v0.37.2.

``ErrorBody`` prints the bad value by its Go type: a plain ``string`` with
``%q``; ``bool`` and numbers with ``%v``; anything else (a named string type
such as ``TolerationOperator``, a slice, ``nil``) as ``json.Marshal`` writes it.
A Python ``str`` is taken as a plain Go string; wrap a value in :class:`Named`
when the Go field has a named string type, so it prints as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from gpulabel.k8s.gostr import go_quote

__all__ = [
    "Named",
    "aggregate",
    "bad_value",
    "duplicate",
    "forbidden",
    "go_json",
    "invalid",
    "not_supported",
    "required",
]


class Named(str):
    """A Go value of a named string type (``v1.TolerationOperator``...): printed as JSON, not ``%q``."""

    __slots__ = ()


_HTML_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def go_json(value: object) -> str:
    """``json.Marshal``: compact, HTML characters and U+2028/U+2029 escaped, bad UTF-8 as U+FFFD."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)  # Go sorts map keys
    out = []
    for ch in text:
        code = ord(ch)
        if ch in _HTML_ESCAPES:
            out.append(_HTML_ESCAPES[ch])
        elif 0xD800 <= code <= 0xDFFF:  # an undecodable byte carried as a surrogate escape
            out.append("\ufffd")
        else:
            out.append(ch)
    return "".join(out)


def bad_value(value: object) -> str:
    """How ``ErrorBody`` prints a bad value of this Go type."""
    if isinstance(value, Named):
        return go_json(str(value))
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return go_json(value)


def _error(path: str, kind: str, detail: str) -> str:
    return f"{path}: {kind}: {detail}" if detail else f"{path}: {kind}"


def required(path: str, detail: str = "") -> str:
    """``field.Required``."""
    return _error(path, "Required value", detail)


def forbidden(path: str, detail: str) -> str:
    """``field.Forbidden``."""
    return _error(path, "Forbidden", detail)


def invalid(path: str, value: object, detail: str) -> str:
    """``field.Invalid``."""
    return _error(path, "Invalid value: " + bad_value(value), detail)


def not_supported(path: str, value: object, valid: Sequence[str]) -> str:
    """``field.NotSupported``: the supported values each quoted with ``strconv.Quote``."""
    detail = "supported values: " + ", ".join(go_quote(v) for v in valid) if valid else ""
    return _error(path, "Unsupported value: " + bad_value(value), detail)


def duplicate(path: str, value: object) -> str:
    """``field.Duplicate``."""
    return _error(path, "Duplicate value: " + bad_value(value), "")


def aggregate(errors: Iterable[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message as is, several in ``[a, b]``, repeats dropped."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
