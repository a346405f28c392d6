"""Vendor strings made into label values: gpulabel's rule and GPU Feature Discovery's."""

from __future__ import annotations

import re

from gpulabel.k8s.labels import LABEL_VALUE_MAX_LENGTH

__all__ = ["sanitize", "sanitize_gfd"]

_NOT_VALUE_CHAR = re.compile(r"[^A-Za-z0-9_.\-]", re.ASCII)
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def sanitize(text: str) -> str:
    """gpulabel's rule: a vendor string made into a valid label value.

    Every character outside ``[A-Za-z0-9_.-]`` becomes ``-``, the result is cut
    to 63 characters, then trimmed until both ends are alphanumeric. Cutting
    before trimming means a ``-`` left at position 63 by the cut is removed too.
    The result is always valid, and sanitising it again changes nothing.
    """
    out = _NOT_VALUE_CHAR.sub("-", text)[:LABEL_VALUE_MAX_LENGTH]
    start, end = 0, len(out)
    while start < end and out[start] not in _ALNUM:
        start += 1
    while end > start and out[end - 1] not in _ALNUM:
        end -= 1
    return out[start:end]


_GFD_DROP = re.compile(r"[^A-Za-z0-9\-_. ]", re.ASCII)
_GFD_SPACES = re.compile(r" +")


def sanitize_gfd(text: str, mig_profile: str = "", shared: bool = False) -> str:
    """What GPU Feature Discovery writes for a product name.

    GFD deletes characters outside ``[A-Za-z0-9-_. ]`` and turns each run of
    spaces into one ``-``; it neither truncates nor trims, so its result may
    still be an invalid label value (NFD then drops it). A MIG profile is
    appended as ``-MIG-<profile>``, and ``-SHARED`` marks a time-sliced GPU.
    """
    parts = [text]
    if mig_profile:
        parts += ["MIG", mig_profile]
    cleaned = [_GFD_SPACES.sub("-", _GFD_DROP.sub("", p)) for p in parts]
    if shared:
        cleaned.append("SHARED")
    return "-".join(cleaned)
