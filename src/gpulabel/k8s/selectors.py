"""Label selectors as the API server parses them (``-l/--selector``, ``?labelSelector=``), message for message.

Mirrors ``k8s.io/apimachinery/pkg/labels`` ``Parse`` (docs/kubernetes-rules.md,
"Label selectors"): a lexer over bytes where ``= ! ( ) , > <`` are operator
characters and anything else up to whitespace is an identifier; ``in`` and
``notin`` are keywords except where a value is expected; requirements are
``[!]KEY``, ``KEY (=|==|!=) VALUE``, ``KEY (in|notin) (V,...)`` and
``KEY (>|<) INTEGER``, separated by commas; keys and values are validated with
the label rules of :mod:`gpulabel.k8s.labels`. Errors read exactly as the
server's (``unable to parse requirement: <nil>: Invalid value: "a b": ...``),
so a selector gpulabel refuses is one the server refuses with the same words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpulabel.k8s.gostr import go_quote
from gpulabel.k8s.labels import key_errors, value_errors
from gpulabel.k8s.nodeaffinity import parse_int64

__all__ = ["Requirement", "Selector", "parse_selector"]

_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_TOKENS = {")": "CLOSE", ",": "COMMA", "!": "NOT", "==": "EQEQ", "=": "EQ", ">": "GT", "in": "IN", "<": "LT",
           "!=": "NE", "notin": "NOTIN", "(": "OPEN"}  # fmt: skip
_BINARY = "in, notin, =, ==, !=, gt, lt"  # the order upstream lists its binary operators in
_OPS = {"IN": "in", "NOTIN": "notin", "EQ": "=", "EQEQ": "==", "NE": "!=", "GT": "gt", "LT": "lt"}


def _lex(text: str) -> list[tuple[str, str]]:
    """The tokens of ``text``: ``(kind, literal)`` pairs ending with ``("END", "")``."""
    items: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _WHITESPACE:
            i += 1
        if i >= n:
            items.append(("END", ""))
            return items
        if text[i] in _SPECIAL:
            # the longest run of operator characters that is still a token
            j, last = i, ""
            while j < n and text[j] in _SPECIAL and text[i : j + 1] in _TOKENS:
                last = text[i : j + 1]
                j += 1
            items.append((_TOKENS[last], last))
            i = j
        else:
            j = i
            while j < n and text[j] not in _SPECIAL and text[j] not in _WHITESPACE:
                j += 1
            word = text[i:j]
            items.append((_TOKENS.get(word, "ID") if word in ("in", "notin") else "ID", word))
            i = j


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str  # in, notin, =, ==, !=, gt, lt, exists, !
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        value = labels.get(self.key)
        op = self.operator
        if op in ("in", "=", "=="):
            return value is not None and value in self.values
        if op in ("notin", "!="):
            return value is None or value not in self.values
        if op == "exists":
            return value is not None
        if op == "!":
            return value is None
        if value is None:
            return False
        have, bound = parse_int64(value), parse_int64(self.values[0])
        if have is None or bound is None:
            return False
        return have > bound if op == "gt" else have < bound


@dataclass(frozen=True, slots=True)
class Selector:
    """Requirements ANDed; the empty selector matches everything."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)


class _Parser:
    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.pos = 0

    def peek(self, values: bool = True) -> tuple[str, str]:
        kind, lit = self.items[self.pos]
        return ("ID" if values and kind in ("IN", "NOTIN") else kind), lit

    def take(self, values: bool = True) -> tuple[str, str]:
        item = self.peek(values)
        self.pos += 1
        return item

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            kind, lit = self.peek()
            if kind == "END":
                return reqs
            if kind not in ("ID", "NOT"):
                raise ValueError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                reqs.append(self.requirement())
            except ValueError as err:
                raise ValueError(f"unable to parse requirement: {err}") from None
            kind, lit = self.take()
            if kind == "END":
                return reqs
            if kind != "COMMA":
                raise ValueError(f"found '{lit}', expected: ',' or 'end of string'")
            kind, lit = self.peek()
            if kind not in ("ID", "NOT"):
                raise ValueError(f"found '{lit}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        kind, key = self.take()
        negated = kind == "NOT"
        if negated:
            kind, key = self.take()
        if kind != "ID":
            raise ValueError(f"found '{key}', expected: identifier")
        errs = key_errors(key)
        if errs:
            raise ValueError(f"<nil>: Invalid value: {go_quote(key)}: {'; '.join(errs)}")
        if negated:
            return Requirement(key=key, operator="!")  # whatever follows must then be ',' or the end
        if self.peek()[0] in ("END", "COMMA"):
            return Requirement(key=key, operator="exists")
        op = self._operator()
        values = self._set() if op in ("in", "notin") else self._exact()
        problems: list[str] = []
        ordered = sorted(values)
        if op in ("gt", "lt"):
            problems.extend(
                f"values[{i}]: Invalid value: {go_quote(v)}: for 'Gt', 'Lt' operators, the value must be an integer"
                for i, v in enumerate(ordered)
                if parse_int64(v) is None
            )
        for i, v in enumerate(ordered):
            msgs = value_errors(v)
            if msgs:
                problems.append(f"values[{i}][{key}]: Invalid value: {go_quote(v)}: {'; '.join(msgs)}")
        problems = list(dict.fromkeys(problems))
        if problems:
            raise ValueError(problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]")
        return Requirement(key=key, operator=op, values=tuple(ordered))

    def _operator(self) -> str:
        kind, lit = self.take(values=False)
        if kind not in _OPS:
            raise ValueError(f"found '{lit}', expected: {_BINARY}")
        return _OPS[kind]

    def _set(self) -> set[str]:
        kind, lit = self.take()
        if kind != "OPEN":
            raise ValueError(f"found '{lit}' expected: '('")
        kind, lit = self.peek()
        if kind == "CLOSE":
            self.take()
            return {""}
        if kind not in ("ID", "COMMA"):
            raise ValueError(f"found '{lit}', expected: ',', ')' or identifier")
        values = self._identifiers()
        if self.take()[0] != "CLOSE":
            raise ValueError(f"found '{lit}', expected: ')'")
        return values

    def _identifiers(self) -> set[str]:
        values: set[str] = set()
        while True:
            kind, lit = self.take()
            if kind == "ID":
                values.add(lit)
                nxt, nlit = self.peek()
                if nxt == "COMMA":
                    continue
                if nxt == "CLOSE":
                    return values
                raise ValueError(f"found '{nlit}', expected: ',' or ')'")
            if kind == "COMMA":
                if not values:
                    values.add("")
                nxt = self.peek()[0]
                if nxt == "CLOSE":
                    values.add("")
                    return values
                if nxt == "COMMA":
                    values.add("")
                continue
            raise ValueError(f"found '{lit}', expected: ',', or identifier")

    def _exact(self) -> set[str]:
        if self.peek()[0] in ("END", "COMMA"):
            return {""}
        kind, lit = self.take()
        if kind == "ID":
            return {lit}
        raise ValueError(f"found '{lit}', expected: identifier")


def parse_selector(text: str) -> Selector:
    """Parse ``text`` as the API server does; a :class:`ValueError` carries the server's message."""
    return Selector(tuple(sorted(_Parser(text).parse(), key=lambda r: r.key)))
