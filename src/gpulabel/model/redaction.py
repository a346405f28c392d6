"""What no evidence gpulabel shows or writes may carry: secrets in a line of text, and the keys that name one.

The rules for one string (a log line, an Event message, an argument, an
annotation's value), each replacing what it finds by ``<redacted>``:

- ``bearer``: ``Bearer <token>`` (and ``Authorization: Basic <credentials>``);
- ``jwt``: JSON Web Tokens (``eyJ...``);
- ``access-key``: NGC (``nvapi-``), GitHub, GitLab, Slack and AWS access keys, by their prefixes;
- ``url-password``: the password of a URL's userinfo (``https://admin:<redacted>@registry``);
- ``secret-flag``: the value after a flag whose name names a secret, inside one string
  (``sh -c 'install --password X'``, ``--token X``);
- ``secret-value``: the value of ``<name>=<value>`` or ``<name>: <value>`` whose name names a secret
  (quoted values whole).

A name names a secret when it contains token, password, passwd, passphrase, secret, apikey, api_key,
credential or private_key (:func:`names_secret`). Names of things stay, so a reader still sees what
was there. Redacting twice changes nothing. The same rules apply wherever evidence is shown (``check
-o wide``, ``explain``, JSON, the report, the monitor's Events: ``checks/explain/evidence.py``) and in a
support bundle (``cluster/redact.py``, which adds the rules for whole documents).
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = ["REDACTED", "SECRET_NAME", "TEXT_RULES", "names_secret", "redact_line", "redact_text"]

REDACTED = "<redacted>"
_WORD = r"(?:token|password|passwd|passphrase|secret|api[_-]?key|apikey|credential|private[_-]?key)"
SECRET_NAME = r"[A-Za-z0-9_.\-]*" + _WORD + r"[A-Za-z0-9_.\-]*"
_NAMES_SECRET = re.compile(r"(?i)" + _WORD)
# a value: quoted whole, or up to a space, quote, separator or shell operator
_VALUE = r"""(?!<redacted>)(?:"[^"\n]*"|'[^'\n]*'|[^\s"',;&|]+)"""


# (rule, pattern, keep): with ``keep`` the pattern's first group (the name) stays and the rest is redacted
_RULES: tuple[tuple[str, re.Pattern[str], bool], ...] = (
    ("bearer", re.compile(r"(?i)\b(authorization[\"']?[ \t]*[=:][ \t]*[\"']?basic[ \t]+)(?!<)\S+"), True),
    ("bearer", re.compile(r"(?i)\b(bearer[ \t]+)(?!<)[A-Za-z0-9\-._~+/]+=*"), True),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"), False),
    (
        "access-key",
        re.compile(
            r"\b(?:nvapi-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
            r"|glpat-[A-Za-z0-9_-]{16,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})"
        ),
        False,
    ),
    ("url-password", re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s/:@]+:)(?!<redacted>@)[^\s/@]+(?=@)"), True),
    ("secret-flag", re.compile(r"(?i)(?<![A-Za-z0-9_])(--?" + SECRET_NAME + r"[ \t]+)(?!-)" + _VALUE), True),
    ("secret-value", re.compile(r"(?i)(" + SECRET_NAME + r"""["']?(?:[ \t]*=[ \t]*|:[ \t]*))""" + _VALUE), True),
)
TEXT_RULES: tuple[str, ...] = tuple(dict.fromkeys(name for name, _, _ in _RULES))
# What each rule needs in the lowered text before it can match (a superset: "authorization", "bearer", "eyJ", the
# access keys' prefixes, "://", a secret's word): most text has none, and one search of it is ~30x cheaper than the
# rules (a scheduler message of 230 characters: 4.5 us against 150 us)
_MAY_HOLD = re.compile(
    r"authorization|bearer|eyj|nvapi-|gh[pousr]_|github_pat_|glpat-|xox[abpr]-|akia|://"
    r"|token|passw|passphrase|secret|api[_-]?key|credential|private[_-]?key"
)


def _redacted(m: re.Match[str], keep: bool) -> str:
    """The match with its value redacted; a quoted value keeps its quotes (``password="<redacted>"``)."""
    head = m.group(1) if keep else ""
    value = m.group(0)[len(head) :]
    if len(value) >= 2 and value[0] in "\"'" and value[-1] == value[0]:
        return head + value[0] + REDACTED + value[0]
    return head + REDACTED


def redact_text(text: str, counts: Counter[str] | None = None) -> str:
    """``text`` with every rule applied (``counts``: how many of each were redacted, by rule)."""
    if _MAY_HOLD.search(text.lower()) is None:
        return text
    for name, pattern, keep in _RULES:
        text, n = pattern.subn(lambda m, k=keep: _redacted(m, k), text)  # type: ignore[misc]
        if counts is not None and n:
            counts[name] += n
    return text


def redact_line(text: str) -> str:
    """One line of evidence as it may be shown: :func:`redact_text` without counting."""
    return redact_text(text)


def names_secret(key: str) -> bool:
    """Whether a key (an annotation's, a label's, a flag's) names a secret: ``example.com/password``,
    ``secret-token``; its value is then redacted whole."""
    return _NAMES_SECRET.search(key) is not None
