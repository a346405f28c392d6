"""What a support bundle must not carry: environment values, secrets in arguments, annotations and logs.

:func:`redact_document` rewrites a captured document (a List of API objects)
and :func:`redact_text` one line of a log or an Event, replacing what is
redacted by ``<redacted>``. Exactly these are redacted:

1. the ``value`` of every environment variable (each ``{"name": ..., "value": ...}``
   entry of an ``env`` list, anywhere: containers, init containers, the
   ClusterPolicy's per-operand ``env``); ``valueFrom`` stays (it names a
   Secret or ConfigMap key, not its content), and so does ``NVIDIA_VISIBLE_DEVICES``'s value (GPU
   indexes, UUIDs or ``all``: what ``unrequested`` reads, no secret);
2. the ``kubectl.kubernetes.io/last-applied-configuration`` annotation (it
   repeats the whole object, env values included);
3. the ``data`` and ``stringData`` values of any Secret (the capture reads no
   Secret; this holds if a merged file brings one);
4. the value of every annotation and label whose key names a secret
   (``example.com/password``, ``secret-token``: :func:`gpulabel.model.redaction.names_secret`);
5. in every other string (arguments, commands, annotations, labels, log lines,
   Event messages) the text rules of :mod:`gpulabel.model.redaction`: bearer
   tokens, JSON Web Tokens, access keys by their prefixes, a URL's userinfo
   password, the value after a secret-named flag inside a string (``sh -c
   '... --password X'``) and of ``<name>=<value>`` / ``<name>: <value>`` with a
   secret-named name; in argument lists, the element after a flag with such a
   name (``--token abc``).

Names of things (variables, keys, flags) stay, so a reader still sees what was there.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from gpulabel.model.redaction import REDACTED, SECRET_NAME, TEXT_RULES, names_secret, redact_text

__all__ = ["REDACTED", "Redactor"]

_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_SECRET_FLAG = re.compile(r"(?i)^--?" + SECRET_NAME + "$")
_KEYED = ("annotations", "labels")
# which GPUs a container sees: the unrequested check reads the value
_KEPT_ENV = ("NVIDIA_VISIBLE_DEVICES",)  # maps whose keys name what their values are


class Redactor:
    """Redacts documents and lines, counting what it redacted by rule (for the bundle's ``redaction.txt``)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def redact_text(self, text: str) -> str:
        return redact_text(text, self.counts)

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
            return {k: self._entry(k, v, key in _KEYED) for k, v in value.items()}
        return value

    def _entry(self, k: str, v: Any, keyed: bool) -> Any:
        if k == _LAST_APPLIED and isinstance(v, str):
            self.counts["last-applied"] += 1
            return REDACTED
        if keyed and isinstance(v, str) and names_secret(k):
            self.counts["secret-key-value"] += 1
            return REDACTED
        return self._walk(v, k)

    def _env(self, item: Any) -> Any:
        if isinstance(item, dict) and item.get("name") in _KEPT_ENV:
            return {k: self._walk(v, k) for k, v in item.items()}
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
        for rule in ("env-value", "last-applied", "secret-data", "secret-key-value", "secret-argument", *TEXT_RULES):
            lines.append(f"  {rule}: {self.counts[rule]}")
        return "\n".join(lines) + "\n"
