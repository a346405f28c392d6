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


def sanitize_gfd(text: str, mig_profile: str = "", shared: bool = False) -> str:
    """The product name GPU Feature Discovery writes, or ``""`` when it writes no product label.

    GFD's rule (NVIDIA/k8s-device-plugin ``internal/lm/resource.go``:
    ``getProductName`` and ``sanitise``): the parts are the product name and,
    for a MIG device, ``MIG`` and the profile; empty parts are left out; each
    part loses every character outside ``[A-Za-z0-9-_. ]``, is split into words
    on white space (``strings.Fields``) and the words are joined with ``-``, so
    leading, trailing and repeated spaces vanish; a part that had only spaces
    stays as an empty word. ``SHARED`` is appended for a time-sliced GPU that is
    not renamed, and the parts are joined with ``-``. With no part at all, GFD
    writes no product label. Nothing is truncated: the result may still be an
    invalid label value (over 63 characters, or not alphanumeric at an end), which
    NFD then refuses.
    """
    parts = [p for p in (text, *(("MIG", mig_profile) if mig_profile else ())) if p]
    if not parts:
        return ""
    words = [_fields_join(p) for p in parts]
    if shared:
        words.append("SHARED")
    return "-".join(words)


def _fields_join(part: str) -> str:
    # after the deletion only ' ' is left of white space, so strings.Fields is split() on spaces
    return "-".join(w for w in _GFD_DROP.sub("", part).split(" ") if w)
