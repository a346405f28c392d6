"""No process-global caches in src, and every exception gpulabel defines derives from gpulabel.errors.

A cache that outlives its run (a module-level dict filled by a function, an
``lru_cache``) makes a long-running controller grow and lets one run's data
leak into the next; caches belong to the object of one run (e.g. DraEvaluator).
Both rules are checked on the real source, and each on a planted bad module,
so a checker that stopped finding anything would fail here.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import textwrap
import types
from pathlib import Path

import gpulabel
from gpulabel.errors import GpulabelError

SRC = Path(gpulabel.__file__).parent
_MEMO_DECORATORS = {"lru_cache", "cache"}
_MUTATORS = {"setdefault", "append", "update", "add", "clear", "pop", "extend", "insert", "remove", "discard"}
_CONTAINERS = {"dict", "list", "set", "defaultdict", "OrderedDict", "Counter", "deque"}
# Lazily built constants, not caches of any run's data: they hold no cluster object.
ALLOWED = {
    "k8s/dra/cel.py: _Envs._instance": "the CEL environments: function declarations, built once per process",
    "k8s/clusterautoscaler.py: use_decoder changes the module-level _DECODERS": (
        "the YAML decoder of CA's status ConfigMap, a function the cluster layer registers once at import"
    ),
}


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        return _name(node.func)
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def global_state(source: str, where: str) -> list[str]:
    """Memoizing decorators, module-level containers that functions change, and class attributes set at run time."""
    tree = ast.parse(source)
    found = []
    containers = set()
    for stmt in tree.body:
        targets = (
            stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
        )
        value = getattr(stmt, "value", None)
        mutable = isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)) or (
            isinstance(value, ast.Call) and _name(value) in _CONTAINERS
        )
        if mutable:
            containers |= {t.id for t in targets if isinstance(t, ast.Name)}
    classes = {c.name for c in ast.walk(tree) if isinstance(c, ast.ClassDef)}
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for deco in fn.decorator_list:
            if _name(deco) in _MEMO_DECORATORS:
                found.append(f"{where}: {fn.name} is memoized process-wide (@{_name(deco)})")
        for node in ast.walk(fn):
            if isinstance(node, ast.Global):
                found.extend(f"{where}: {fn.name} rebinds the module global {n}" for n in node.names)
            target = None
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                for t in node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]:
                    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                        target = t.value.id
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
                        owner = t.value.id
                        if owner == "cls" or owner in classes:
                            cls = next(
                                c.name for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and fn in ast.walk(c)
                            )
                            key = f"{where}: {owner if owner != 'cls' else cls}.{t.attr}"
                            found.append(f"{key} is class state set at run time")
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in _MUTATORS
                and isinstance(node.func.value, ast.Name)
            ):
                target = node.func.value.id
            if target in containers:
                found.append(f"{where}: {fn.name} changes the module-level {target}")
    return sorted({f for f in found if not any(f.startswith(a) for a in ALLOWED)})


def test_src_has_no_process_global_caches() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        found += global_state(path.read_text(), str(path.relative_to(SRC)))
    assert found == []


def test_the_checker_finds_planted_caches() -> None:
    planted = textwrap.dedent(
        """
        import functools
        _SEEN: dict[str, int] = {}
        _ORDER = []
        CONSTANT = {"a": 1}

        @functools.lru_cache(maxsize=8)
        def parse(text):
            return len(text)

        def remember(key):
            _SEEN[key] = 1
            _ORDER.append(key)
            return CONSTANT["a"]

        class Env:
            made = None

            @classmethod
            def get(cls):
                cls.made = cls.made or object()
                return cls.made
        """
    )
    assert global_state(planted, "m.py") == [
        "m.py: Env.made is class state set at run time",
        "m.py: parse is memoized process-wide (@lru_cache)",
        "m.py: remember changes the module-level _ORDER",
        "m.py: remember changes the module-level _SEEN",
    ]


def foreign_exceptions(module: types.ModuleType) -> list[str]:
    """The exception classes ``module`` defines that do not derive from :class:`GpulabelError`."""
    return [
        f"{module.__name__}.{name}"
        for name, obj in vars(module).items()
        if inspect.isclass(obj)
        and issubclass(obj, BaseException)
        and obj.__module__ == module.__name__
        and not issubclass(obj, GpulabelError)
    ]


def test_every_exception_class_derives_from_gpulabel_errors() -> None:
    foreign = []
    for info in pkgutil.walk_packages(gpulabel.__path__, "gpulabel."):
        if info.name != "gpulabel.__main__":  # that one runs the CLI
            foreign += foreign_exceptions(importlib.import_module(info.name))
    assert foreign == []


def test_the_exception_check_finds_a_planted_one() -> None:
    planted = types.ModuleType("planted")
    exec(
        "class ParseError(ValueError): pass\nclass Fine(__import__('gpulabel.errors').errors.InputError): pass",
        planted.__dict__,
    )
    assert foreign_exceptions(planted) == ["planted.ParseError"]
