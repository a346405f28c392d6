"""What a support bundle must not carry: environment values, secrets in arguments, annotations and logs.

:func:`redact_document` rewrites a captured document (a List of API objects)
and :func:`redact_text` one line of a log or an Event, replacing what is
redacted by ``<redacted>``. Exactly these are redacted:

1. the ``value`` of every environment variable (each ``{"name": ..., "value": ...}``
   entry of an ``env`` list, anywhere: containers, init containers, the
   ClusterPolicy's per-operand ``env``); ``valueFrom`` stays (it names a
   Secret or ConfigMap key, not its content);
2. the ``kubectl.kubernetes.io/last-applied-configuration`` annotation (it
   repeats the whole object, env values included);
3. the ``data`` and ``stringData`` values of any Secret (the capture reads no
   Secret; this holds if a merged file brings one);
4. in every other string (arguments, commands, annotations, labels, log lines,
   Event messages): bearer tokens (``Bearer <token>``), JSON Web Tokens
   (``eyJ...``), NGC, GitHub, GitLab, Slack and AWS access keys by their
   prefixes, and the value of anything shaped ``<name>=<value>`` or
   ``<name>: <value>`` whose name contains token, password, passwd, secret,
   apikey, api_key or credential; in argument lists, the element after a flag
   with such a name (``--token abc``).

Names of things (variables, keys, flags) stay, so a reader still sees what was there.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

__all__ = ["REDACTED", "Redactor"]

REDACTED = "<redacted>"
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_SECRET_NAME = r"[A-Za-z0-9_.\-]*(?:token|password|passwd|secret|api[_-]?key|apikey|credential)[A-Za-z0-9_.\-]*"
_PATTERNS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("bearer", re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9\-._~+/]+=*"), r"\1 " + REDACTED),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"), REDACTED),
    (
        "access-key",
        re.compile(
            r"\b(?:nvapi-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
            r"|glpat-[A-Za-z0-9_-]{16,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})"
        ),
        REDACTED,
    ),
    (
        "secret-value",
        re.compile(r"(?i)(" + _SECRET_NAME + r"""["']?\s*[=:]\s*["']?)(?!<redacted>)([^\s"',;&]+)"""),
        r"\1" + REDACTED,
    ),
)
_SECRET_FLAG = re.compile(r"(?i)^--?" + _SECRET_NAME + "$")


class Redactor:
    """Redacts documents and lines, counting what it redacted by rule (for the bundle's ``redaction.txt``)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def redact_text(self, text: str) -> str:
        for name, pattern, replacement in _PATTERNS:
            text, n = pattern.subn(replacement, text)
            self.counts[name] += n
        return text

    def redact_document(self, doc: Any) -> Any:
        """A copy of ``doc`` (JSON) with the rules above applied."""
        return self._walk(doc, "")

    def _walk(self, value: Any, key: str) -> Any:
        if isinstance(value, str):
            return self.redact_text(value)
        if isinstance(value, list):
            if key == "env":
                return [self._env(item) for item in value]
            if key in ("args", "command"):
                return self._argv(value)
            return [self._walk(item, "") for item in value]
        if isinstance(value, dict):
            if value.get("kind") == "Secret":
                value = {**value}
                for part in ("data", "stringData"):
                    if isinstance(value.get(part), dict):
                        self.counts["secret-data"] += len(value[part])
                        value[part] = {k: REDACTED for k in value[part]}
            out = {}
            for k, v in value.items():
                if k == _LAST_APPLIED and isinstance(v, str):
                    self.counts["last-applied"] += 1
                    out[k] = REDACTED
                else:
                    out[k] = self._walk(v, k)
            return out
        return value

    def _env(self, item: Any) -> Any:
        if isinstance(item, dict) and isinstance(item.get("value"), str):
            self.counts["env-value"] += 1
            return {**{k: self._walk(v, k) for k, v in item.items() if k != "value"}, "value": REDACTED}
        return self._walk(item, "")

    def _argv(self, argv: list[Any]) -> list[Any]:
        out: list[Any] = []
        after_flag = False
        for item in argv:
            if after_flag and isinstance(item, str) and not item.startswith("-"):
                self.counts["secret-argument"] += 1
                out.append(REDACTED)
            else:
                out.append(self._walk(item, ""))
            after_flag = isinstance(item, str) and bool(_SECRET_FLAG.match(item))
        return out

    def report(self) -> str:
        """What was redacted, one line per rule with its count (the rules: this module's docstring)."""
        lines = ["redacted by gpulabel snapshot --bundle (rules: gpulabel/cluster/redact.py):"]
        for rule in ("env-value", "last-applied", "secret-data", "secret-argument", *(p[0] for p in _PATTERNS)):
            lines.append(f"  {rule}: {self.counts[rule]}")
        return "\n".join(lines) + "\n"
