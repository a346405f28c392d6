"""The subset of Go's text/template that NodeFeatureRule templates use, with ``missingkey=error``.

Supported: text, ``{{ pipeline }}``, trim markers ``{{-``/``-}}``, comments,
``if``/``else if``/``else``, ``range`` (with ``$v :=`` or ``$i, $v :=``, and
``else``), ``with``, variables, field chains on maps, parenthesised pipelines,
``|``, string/number/bool literals, Go's built-in functions (``index``,
``len``, ``eq`` ... ``ge``, ``and``, ``or``, ``not``, ``print``, ``printf``
with ``%s %d %v %q``) and the Sprig functions listed in :data:`SPRIG`. NFD
removes ``env``, ``expandenv`` and ``getHostByName`` (a parse error there);
any other Sprig function is reported as :class:`Unsupported`, a limit of
gpulabel, not an NFD error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from gpulabel.errors import TemplateError, Unsupported

__all__ = ["MAX_TEMPLATE", "SPRIG", "Template", "TemplateError", "Unsupported", "expand_map"]

MAX_TEMPLATE = 64 * 1024  # NFD v0.19 rejects larger templates


# ---------------------------------------------------------------------------- lexing

_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.S)
_TOKEN = re.compile(
    r"""\s*(?:
      (?P<str>"(?:[^"\\]|\\.)*") | (?P<raw>`[^`]*`) | (?P<num>-?[0-9]+(?:\.[0-9]+)?) |
      (?P<decl>:=) | (?P<assign>=) | (?P<pipe>\|) | (?P<lp>\() |
      (?P<rpfield>\)(?:\.[A-Za-z_][A-Za-z0-9_]*)+) | (?P<rp>\)) | (?P<comma>,) |
      (?P<field>(?:\.[A-Za-z_][A-Za-z0-9_]*)+|\.) |
      (?P<var>\$[A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*) |
      (?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
    )""",
    re.X | re.S,
)


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        if not text[pos:].strip():
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise TemplateError(f"unexpected {text[pos:].strip()[:10]!r} in command")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


# ---------------------------------------------------------------------------- parse tree


@dataclass
class _Text:
    text: str


@dataclass
class _Action:
    pipe: list[Any]  # tokens
    decl: list[str]
    assign: bool = False  # {{ $x = ... }} sets a declared variable; {{ $x := ... }} declares one


@dataclass
class _Block:
    kind: str  # if, range, with
    pipe: list[Any]
    decl: list[str]
    body: list[Any]
    other: list[Any]


def _split_decl(toks: list[tuple[str, str]], kind: str = "decl") -> tuple[list[str], list[tuple[str, str]]]:
    for i, (k, _) in enumerate(toks):
        if k == kind and all(kk in ("var", "comma") for kk, _ in toks[:i]):
            names = [v for kk, v in toks[:i] if kk == "var"]
            return names, toks[i + 1 :]
    return [], toks


def _parse(text: str) -> list[Any]:
    nodes: list[Any] = []
    stack: list[tuple[_Block, list[Any]]] = []
    cur = nodes
    pos = 0
    pending_trim = False
    for m in _ACTION.finditer(text):
        chunk = text[pos : m.start()]
        if pending_trim:
            chunk = chunk.lstrip()
        if m.group(1):
            chunk = chunk.rstrip()
        if chunk:
            cur.append(_Text(chunk))
        pending_trim = bool(m.group(3))
        pos = m.end()
        body = m.group(2).strip()
        if body.startswith("/*"):
            if not body.endswith("*/"):
                raise TemplateError("unclosed comment")
            continue
        toks = _tokens(body)
        if not toks:
            raise TemplateError("missing value for command")
        head = toks[0][1] if toks[0][0] == "ident" else ""
        if head in ("if", "range", "with"):
            decl, pipe = _split_decl(toks[1:])
            block = _Block(head, pipe, decl, [], [])
            cur.append(block)
            stack.append((block, cur))
            cur = block.body
        elif head == "else":
            if not stack:
                raise TemplateError("unexpected {{else}}")
            block, parent = stack[-1]
            if len(toks) > 1 and toks[1] == ("ident", "if"):
                inner = _Block("if", toks[2:], [], [], [])
                block.other = [inner]
                stack[-1] = (inner, parent)  # the chain shares one {{end}}
                cur = inner.body
            else:
                cur = block.other
        elif head == "end":
            if not stack:
                raise TemplateError("unexpected {{end}}")
            _, cur = stack.pop()
        elif head in ("define", "template", "block", "break", "continue"):
            raise Unsupported(f"{{{{{head}}}}} is not in gpulabel's template subset")
        else:
            decl, pipe = _split_decl(toks)
            assign = False
            if not decl:
                decl, pipe = _split_decl(toks, "assign")
                assign = bool(decl)
            if not pipe:
                raise TemplateError("missing value for command")
            cur.append(_Action(pipe, decl, assign))
    if stack:
        raise TemplateError(f"unexpected EOF: {{{{{stack[-1][0].kind}}}}} has no {{{{end}}}}")
    rest = text[pos:]
    if "{{" in rest:
        raise TemplateError("unclosed action")
    if pending_trim:
        rest = rest.lstrip()
    if rest:
        cur.append(_Text(rest))
    return nodes


# ---------------------------------------------------------------------------- values and functions


def _truth(v: Any) -> bool:
    if v is None or v is False:
        return False
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v != 0
    if isinstance(v, (str, list, tuple, dict)):
        return len(v) > 0
    return True


def _show(v: Any) -> str:
    if v is None:
        return "<no value>"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{_show(v[k])}" for k in sorted(v)) + "]"
    if isinstance(v, (list, tuple)):
        return "[" + " ".join(_show(x) for x in v) + "]"
    return str(v)


def _printf(fmt: str, *args: Any) -> str:
    it = iter(args)

    def one(m: re.Match[str]) -> str:
        verb = m.group(1)
        if verb == "%":
            return "%"
        try:
            a = next(it)
        except StopIteration:
            return f"%!{verb}(MISSING)"
        if verb == "q":
            return '"' + str(a).replace("\\", "\\\\").replace('"', '\\"') + '"'
        if verb == "d" and not (isinstance(a, int) and not isinstance(a, bool)):
            return f"%!d({type(a).__name__}={_show(a)})"
        return _show(a)

    return re.sub(r"%([sdvq%])", one, fmt)


def _zero(m: dict[Any, Any]) -> Any:
    """The zero value of a map's element type: NFD's elements are map[string]string, its data maps of maps."""
    sample = next(iter(m.values()), "")
    return (
        "" if isinstance(sample, str) else {} if isinstance(sample, dict) else [] if isinstance(sample, list) else None
    )


def _index(item: Any, *keys: Any) -> Any:
    for k in keys:
        if isinstance(item, dict):
            item = item[k] if k in item else _zero(item)  # the zero value of the map's element type
        elif isinstance(item, (list, tuple)):
            if not isinstance(k, int) or not 0 <= k < len(item):
                raise TemplateError(f"error calling index: index out of range: {k}")
            item = item[k]
        else:
            raise TemplateError(f"error calling index: can't index item of type {type(item).__name__}")
    return item


def _cmp(op: Callable[[Any, Any], bool]) -> Callable[..., bool]:
    def f(a: Any, *bs: Any) -> bool:
        if not bs:
            raise TemplateError("missing argument for comparison")
        return any(op(a, b) for b in bs) if op is _eq else all(op(a, b) for b in bs)

    return f


def _eq(a: Any, b: Any) -> bool:
    if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        raise TemplateError("error calling eq: incompatible types for comparison")
    return bool(a == b)


def _ordered(op: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def f(a: Any, b: Any) -> bool:
        if type(a) is not type(b) or isinstance(a, (dict, list, bool)) or a is None:
            raise TemplateError("incompatible types for comparison")
        return op(a, b)

    return f


def _atoi(s: Any) -> int:
    try:
        return int(str(s))
    except ValueError:
        return 0  # Sprig's atoi ignores the error


def _default(d: Any, *given: Any) -> Any:
    return given[0] if given and _truth(given[0]) else d


BUILTINS: dict[str, Callable[..., Any]] = {
    "index": _index,
    "len": lambda v: len(v),
    "eq": _cmp(_eq),
    "ne": _cmp(lambda a, b: not _eq(a, b)),
    "lt": _cmp(_ordered(lambda a, b: a < b)),
    "le": _cmp(_ordered(lambda a, b: a <= b)),
    "gt": _cmp(_ordered(lambda a, b: a > b)),
    "ge": _cmp(_ordered(lambda a, b: a >= b)),
    "not": lambda v: not _truth(v),
    "print": lambda *a: "".join(_show(x) for x in a),
    "println": lambda *a: " ".join(_show(x) for x in a) + "\n",
    "printf": _printf,
}

# The Sprig functions gpulabel implements (github.com/Masterminds/sprig v3 semantics).
SPRIG: dict[str, Callable[..., Any]] = {
    "lower": lambda s: str(s).lower(),
    "upper": lambda s: str(s).upper(),
    "trim": lambda s: str(s).strip(),
    "trimPrefix": lambda p, s: str(s).removeprefix(p),
    "trimSuffix": lambda p, s: str(s).removesuffix(p),
    "trimAll": lambda c, s: str(s).strip(c),
    "replace": lambda old, new, s: str(s).replace(old, new),
    "contains": lambda sub, s: sub in str(s),
    "hasPrefix": lambda p, s: str(s).startswith(p),
    "hasSuffix": lambda p, s: str(s).endswith(p),
    "quote": lambda *a: " ".join('"' + _show(x).replace("\\", "\\\\").replace('"', '\\"') + '"' for x in a),
    "squote": lambda *a: " ".join(f"'{_show(x)}'" for x in a),
    "default": _default,
    "toString": _show,
    "atoi": _atoi,
    "int": _atoi,
    "add": lambda *a: sum(_atoi(x) for x in a),
    "sub": lambda a, b: _atoi(a) - _atoi(b),
    "repeat": lambda n, s: str(s) * int(n),
    "nospace": lambda s: re.sub(r"\s", "", str(s)),
    "join": lambda sep, v: sep.join(_show(x) for x in v),
    "splitList": lambda sep, s: str(s).split(sep),
    "regexMatch": lambda p, s: re.search(p, str(s)) is not None,
    "regexReplaceAll": lambda p, s, r: re.sub(p, re.sub(r"\$\{?(\d+)\}?", r"\\\1", r), str(s)),
    "empty": lambda v: not _truth(v),
}
REMOVED = ("env", "expandenv", "getHostByName")  # NFD v0.19 drops these from Sprig: not defined


# ---------------------------------------------------------------------------- execution


class Template:
    """A parsed template; :meth:`execute` runs it on ``data`` (``missingkey=error``)."""

    def __init__(self, text: str) -> None:
        if len(text) > MAX_TEMPLATE:
            raise TemplateError(f"template is larger than {MAX_TEMPLATE} bytes")
        self.nodes = _parse(text)
        self._check_functions(self.nodes)

    def _check_functions(self, nodes: list[Any]) -> None:
        for n in nodes:
            toks = n.pipe if isinstance(n, (_Action, _Block)) else []
            for kind, val in toks:
                if kind == "ident" and val not in ("true", "false", "nil", "and", "or"):
                    if val in REMOVED or (val not in BUILTINS and val not in SPRIG and not _sprig_name(val)):
                        raise TemplateError(f'function "{val}" not defined')
                    if val not in BUILTINS and val not in SPRIG:
                        raise Unsupported(f'Sprig function "{val}" is not implemented by gpulabel')
            if isinstance(n, _Block):
                self._check_functions(n.body)
                self._check_functions(n.other)

    def execute(self, data: Any) -> str:
        out: list[str] = []
        self._run(self.nodes, data, [("$", [data])], out)
        return "".join(out)

    def _run(self, nodes: list[Any], dot: Any, scope: Scope, out: list[str]) -> None:
        scope = list(scope)
        for n in nodes:
            if isinstance(n, _Text):
                out.append(n.text)
            elif isinstance(n, _Action):
                v = self._pipe(n.pipe, dot, scope)
                if n.assign:
                    _cell(scope, n.decl[0])[0] = v
                elif n.decl:
                    scope.append((n.decl[0], [v]))
                else:
                    out.append(_show(v))
            elif n.kind == "if":
                self._run(n.body if _truth(self._pipe(n.pipe, dot, scope)) else n.other, dot, scope, out)
            elif n.kind == "with":
                v = self._pipe(n.pipe, dot, scope)
                if _truth(v):
                    self._run(n.body, v, [*scope, (n.decl[0], [v])] if n.decl else scope, out)
                else:
                    self._run(n.other, dot, scope, out)
            else:
                v = self._pipe(n.pipe, dot, scope)
                items: list[tuple[Any, Any]]
                if v is None:
                    items = []
                elif isinstance(v, dict):
                    items = [(k, v[k]) for k in sorted(v)]
                elif isinstance(v, (list, tuple)):
                    items = list(enumerate(v))
                elif isinstance(v, int) and not isinstance(v, bool):
                    items = [(i, i) for i in range(v)]
                else:
                    raise TemplateError(f"range can't iterate over {_show(v)}")
                if not items:
                    self._run(n.other, dot, scope, out)
                for k, item in items:
                    inner = list(scope)
                    if len(n.decl) == 1:
                        inner.append((n.decl[0], [item]))
                    elif len(n.decl) == 2:
                        inner += [(n.decl[0], [k]), (n.decl[1], [item])]
                    self._run(n.body, item, inner, out)

    def _pipe(self, toks: list[tuple[str, str]], dot: Any, scope: Scope) -> Any:
        cmds: list[list[tuple[str, str]]] = [[]]
        depth = 0
        for t in toks:
            if t[0] == "pipe" and depth == 0:
                cmds.append([])
                continue
            depth += t[0] == "lp"
            depth -= t[0] in ("rp", "rpfield")
            cmds[-1].append(t)
        value: Any = _NOTHING
        for cmd in cmds:
            if not cmd:
                raise TemplateError("missing command in pipeline")
            value = self._command(cmd, dot, scope, value)
        return value

    def _command(self, cmd: list[tuple[str, str]], dot: Any, scope: Scope, piped: Any) -> Any:
        args: list[Any] = []
        i = 0
        while i < len(cmd):
            kind, val = cmd[i]
            if kind == "lp":
                depth, j = 1, i + 1
                while j < len(cmd) and depth:
                    depth += cmd[j][0] == "lp"
                    depth -= cmd[j][0] in ("rp", "rpfield")
                    j += 1
                if depth:
                    raise TemplateError("unclosed left paren")
                value = self._pipe(cmd[i + 1 : j - 1], dot, scope)
                if cmd[j - 1][0] == "rpfield":  # (pipeline).Field.Chain
                    value = self._fields(value, cmd[j - 1][1].split(".")[1:])
                args.append(("value", value))
                i = j
                continue
            args.append((kind, val))
            i += 1
        head_kind, head = args[0]
        if head_kind == "ident" and head not in ("true", "false", "nil"):
            vals = [self._operand(a, dot, scope) for a in args[1:]]
            if piped is not _NOTHING:
                vals.append(piped)
            if head in ("and", "or"):
                result: Any = vals[0] if vals else None
                for v in vals:
                    result = v
                    if _truth(v) != (head == "and"):
                        break
                return result
            fn = BUILTINS.get(head) or SPRIG[head]
            try:
                return fn(*vals)
            except TemplateError:
                raise
            except (TypeError, ValueError, KeyError, re.error) as err:
                raise TemplateError(f"error calling {head}: {err}") from None
        if len(args) > 1 or piped is not _NOTHING:
            raise TemplateError(f"can't give argument to non-function {head}")
        return self._operand(args[0], dot, scope)

    def _operand(self, arg: tuple[str, Any], dot: Any, scope: Scope) -> Any:
        kind, val = arg
        if kind == "value":
            return val
        if kind == "str":
            return bytes(val[1:-1], "utf-8").decode("unicode_escape")
        if kind == "raw":
            return val[1:-1]
        if kind == "num":
            return float(val) if "." in val else int(val)
        if kind == "ident":
            return {"true": True, "false": False, "nil": None}.get(val)
        if kind == "field":
            return dot if val == "." else self._fields(dot, val.split(".")[1:])
        if kind == "var":
            name, *fields = val.split(".")
            return self._fields(_cell(scope, name)[0], fields)
        raise TemplateError(f"unexpected {val!r} in operand")

    @staticmethod
    def _fields(v: Any, names: list[str]) -> Any:
        for name in names:
            if isinstance(v, Mapping):
                if name not in v:
                    raise TemplateError(f'map has no entry for key "{name}"')
                v = v[name]
            elif v is None:
                raise TemplateError(f"nil pointer evaluating .{name}")
            else:
                raise TemplateError(f"can't evaluate field {name} in type {type(v).__name__}")
        return v


_NOTHING = object()
Scope = list[tuple[str, list[Any]]]  # variables, innermost last; each value in a cell so "=" can set it


def _cell(scope: Scope, name: str) -> list[Any]:
    for n, cell in reversed(scope):
        if n == name:
            return cell
    raise TemplateError(f"undefined variable: {name}")


# Sprig v3's function names that gpulabel does not implement (a subset of the list; the
# rest are reported as not defined, as Go would for a typo).
_SPRIG_OTHERS = frozenset(
    " ".join(
        (
            "abbrev abbrevboth adler32sum ago append b32dec b32enc b64dec b64enc base bcrypt buildCustomCert",
            "camelcase cat ceil chunk clean coalesce compact concat date dateInZone dateModify date_in_zone",
            "date_modify decryptAES deepCopy deepEqual derivePassword dict dig dir div duration durationRound",
            "encryptAES ext fail first float64 floor fromJson genCA genPrivateKey genSelfSignedCert genSignedCert",
            "get has hasKey htmlDate htmlDateInZone indent initial initials int64 isAbs kebabcase keys kindIs",
            "kindOf last list lower max maxf merge mergeOverwrite min minf mod mul mustAppend mustRegexFind",
            "mustRegexFindAll mustRegexMatch mustRegexReplaceAll mustRegexSplit mustToJson nindent now omit",
            "osBase osClean osDir osExt osIsAbs pick pluck plural prepend quote randAlpha randAlphaNum randAscii",
            "randBytes randInt randNumeric regexFind regexFindAll regexQuoteMeta regexReplaceAllLiteral",
            "regexSplit rest reverse round semver semverCompare set sha1sum sha256sum shuffle snakecase sortAlpha",
            "split splitn squote substr swapcase ternary title toDate toJson toPrettyJson toRawJson toStrings",
            "trunc tuple typeIs typeIsLike typeOf uniq unixEpoch unset until untilStep untitle urlJoin urlParse",
            "uuidv4 values without wrap wrapWith",
        )
    ).split()
)


def _sprig_name(name: str) -> bool:
    return name in _SPRIG_OTHERS


def expand_map(text: str, data: Any) -> dict[str, str]:
    """NFD's ``ExpandMap``: execute, then one ``key=value`` per non-empty trimmed line (split at the first ``=``)."""
    out: dict[str, str] = {}
    for line in Template(text).execute(data).split("\n"):  # once per distinct feature set (master.Memo)
        line = line.strip()
        if not line:
            continue
        key, eq, value = line.partition("=")
        if not eq:
            raise TemplateError(f"missing value in expanded template line {line!r}, (format must be '<key>=<value>')")
        out[key] = value
    return out
