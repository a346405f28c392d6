"""Label keys and values: the API server's rules.

The validation functions mirror ``k8s.io/apimachinery`` (``IsLabelKey`` and
``IsLabelValue`` in ``pkg/api/validate/content/kube.go``) message for message,
so that what gpulabel says about a label is what the API server would say when
the label is written. Lengths are in bytes of UTF-8 and the character classes
are ASCII only: ``str.isalnum()`` accepts letters the server rejects.
"""

from __future__ import annotations

import re

from gpulabel.k8s import field

__all__ = [
    "LABEL_VALUE_MAX_LENGTH",
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "is_valid_key",
    "is_valid_value",
    "is_well_formed",
    "key_errors",
    "label_errors",
    "split_assignment",
    "value_errors",
]

LABEL_VALUE_MAX_LENGTH = 63
_NAME_MAX_LENGTH = 63
_PREFIX_MAX_LENGTH = 253

_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_VALUE_FMT = "(" + _NAME_FMT + ")?"
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"

# re.ASCII keeps [A-Za-z0-9] honest; fullmatch stands for Go's ^...$.
_NAME_RE = re.compile(_NAME_FMT, re.ASCII)
_VALUE_RE = re.compile(_VALUE_FMT, re.ASCII)
_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT, re.ASCII)
_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT, re.ASCII)

_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character"
)
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
    "characters, '-' or '.', and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    shown = "".join(("" if i == 0 else " or ") + f"'{e}', " for i, e in enumerate(examples))
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len_error(length: int, unit: str = "bytes") -> str:
    # content.MaxLenError says "bytes", util/validation.MaxLenError "characters"; both count bytes.
    return f"must be no more than {length} {unit}"


def _blen(s: str) -> int:
    return len(s.encode("utf-8", "surrogateescape"))


def dns1123_subdomain_errors(value: str, unit: str = "bytes") -> list[str]:
    """``IsDNS1123Subdomain``: ``unit`` is "bytes" (``api/validate/content``) or "characters" (``util/validation``)."""
    errs = []
    if _blen(value) > _PREFIX_MAX_LENGTH:
        errs.append(_max_len_error(_PREFIX_MAX_LENGTH, unit))
    if not _SUBDOMAIN_RE.fullmatch(value):
        errs.append(_regex_error(_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def dns1123_label_errors(value: str) -> list[str]:
    """``IsDNS1123Label`` (``util/validation``), as container names are checked."""
    errs = []
    if _blen(value) > _NAME_MAX_LENGTH:
        errs.append(_max_len_error(_NAME_MAX_LENGTH, "characters"))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _SUBDOMAIN_RE.fullmatch(value):
            errs.append("must not contain dots")  # a valid subdomain, length checked: only dots are wrong
        else:
            errs.append(_regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def key_errors(key: str) -> list[str]:
    """Every reason the API server gives for rejecting ``key``; empty if valid."""
    parts = key.split("/")
    errs: list[str] = []
    if len(parts) > 2:
        return [
            "a valid label key "
            + _regex_error(_KEY_MSG, _NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain_errors(prefix))
    if not name:
        errs.append("name part must be non-empty")
    elif _blen(name) > _NAME_MAX_LENGTH:
        errs.append("name part " + _max_len_error(_NAME_MAX_LENGTH))
    if not _NAME_RE.fullmatch(name):
        errs.append("name part " + _regex_error(_KEY_MSG, _NAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def value_errors(value: str) -> list[str]:
    """Every reason the API server gives for rejecting ``value``; empty if valid."""
    errs = []
    if _blen(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(_max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _VALUE_RE.fullmatch(value):
        errs.append(_regex_error(_VALUE_MSG, _VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_valid_key(key: str) -> bool:
    return not key_errors(key)


def is_valid_value(value: str) -> bool:
    return not value_errors(value)


def is_well_formed(value: str) -> bool:
    """Non-empty, only ``[A-Za-z0-9_.-]``, alphanumeric at both ends; length not checked."""
    return _NAME_RE.fullmatch(value) is not None


def label_errors(key: str, value: str, path: str = "metadata.labels") -> list[str]:
    """The field errors the API server prints for one label, in its order.

    Each entry reads as the server writes it after ``Node "x" is invalid:``,
    e.g. ``metadata.labels: Invalid value: "A B": a valid label must be ...``.
    """
    out = [field.invalid(path, key, m) for m in key_errors(key)]
    out.extend(field.invalid(path, value, m) for m in value_errors(value))
    return out


def split_assignment(text: str) -> tuple[str, str]:
    """Split ``KEY=VALUE`` on the first ``=``; a bare ``KEY`` has the empty value."""
    key, _, value = text.partition("=")
    return key, value
