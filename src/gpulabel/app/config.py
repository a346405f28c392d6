"""The config file (``--config FILE``, or the first of the default locations); ``--baseline FILE`` is app/baseline.py.

The file is YAML (``docs/config.md``; schema ``docs/schema/gpulabel-config-v1.json``)::

    apiVersion: gpulabel/v1
    kind: Config
    ignore:                       # findings the team accepted, each with why
      - check: operands
        reason: unexpected
        nodes: example.com/pool=lab     # a node label selector, as -l takes
        namespace: ml                   # the pod's (or DaemonSet's) namespace
        pod: train-*                    # the pod's name, a shell pattern
        comment: the lab runs its own exporter
    severity:                     # "<check>/<reason>" or "<reason>" (every check) -> error | warning | info
      operands/unexpected: info
    thresholds:
      stuck-after: 45m
      operator-namespace: gpu-operator
    health:                       # the health check's inputs besides its defaults (checks/health/rules.py)
      conditions:                 # node condition type -> the status that means a problem (None: drop a default)
        ExampleGPUHealthy: "False"
      taints: [example.com/gpu-quarantine]   # taint keys a health agent sets

Every key and value is checked before anything is read from the cluster; the
first wrong one is one line naming the file, its line and the key (exit 2).
Default locations, first found: ``$GPULABEL_CONFIG``,
``$XDG_CONFIG_HOME/gpulabel/config.yaml`` (``~/.config/gpulabel/config.yaml``),
``/etc/gpulabel/config.yaml`` (where the chart mounts its ConfigMap).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpulabel.checks.engine.verdict import IgnoreRule
from gpulabel.errors import InputError
from gpulabel.model.severity import SEVERITIES, Severity

__all__ = ["SYSTEM_CONFIG", "Config", "default_config_path", "load_config", "parse_duration"]

SYSTEM_CONFIG = "/etc/gpulabel/config.yaml"
_DURATION = re.compile(r"(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?", re.ASCII)


def parse_duration(text: str, where: str = "--stuck-after") -> float:
    """``30m``, ``1h30m``, ``90s`` or a number of seconds; an :class:`InputError` otherwise."""
    text = text.strip()
    if text.isdigit():
        return float(text)
    m = _DURATION.fullmatch(text)
    if not text or m is None or not any(m.groups()):
        raise InputError(where, f"{text!r} is not a duration such as 30m, 1h30m or 90s")
    h, mins, secs = (int(g or 0) for g in m.groups())
    return float(h * 3600 + mins * 60 + secs)


@dataclass(frozen=True, slots=True)
class Config:
    """A validated config file; ``path`` is ``""`` when there is none."""

    path: str = ""
    ignore: tuple[IgnoreRule, ...] = ()
    severities: Mapping[str, Severity] = field(default_factory=dict)
    stuck_after: float | None = None
    operator_namespace: str | None = None
    health_conditions: Mapping[str, str] = field(default_factory=dict)
    health_taints: tuple[str, ...] = ()


def default_config_path(env: Mapping[str, str] | None = None) -> str | None:
    """The first default location that exists, or ``None``."""
    env = os.environ if env is None else env
    if env.get("GPULABEL_CONFIG"):
        return env["GPULABEL_CONFIG"]  # named: it must exist
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    for path in (os.path.join(xdg, "gpulabel", "config.yaml"), SYSTEM_CONFIG):
        if os.path.isfile(path):
            return path
    return None


class _Where:
    """``file:line`` of a YAML node, and the key path leading to it."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, node: Any, key: str, message: str) -> InputError:
        line = node.start_mark.line + 1 if node is not None else 1
        return InputError(f"{self.path}:{line}", f"{key}: {message}")


def _scalar(w: _Where, node: Any, key: str) -> str:
    import yaml

    if not isinstance(node, yaml.ScalarNode) or node.tag == "tag:yaml.org,2002:null":
        raise w.fail(node, key, "must be a string")
    return str(node.value)


def _mapping(w: _Where, node: Any, key: str) -> list[tuple[Any, Any]]:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        raise w.fail(node, key, "must be a mapping")
    seen: set[str] = set()
    for k, _ in node.value:
        name = _scalar(w, k, key)
        if name in seen:
            raise w.fail(k, f"{key}.{name}" if key else name, "given twice")
        seen.add(name)
    return list(node.value)


def _known_reasons() -> dict[str, set[str]]:
    from gpulabel.checks.registry import CHECKS

    return {c.name: set(c.reasons()) for c in CHECKS}


def _reason_key(w: _Where, node: Any, key: str, text: str, known: dict[str, set[str]]) -> None:
    check, _, reason = text.rpartition("/")
    if check and check not in known:
        raise w.fail(node, key, f"unknown check {check!r}; known: {', '.join(known)}")
    pool = known[check] if check else set().union(*known.values())
    if reason not in pool:
        raise w.fail(node, key, f"unknown reason {reason!r}" + (f" of {check}" if check else ""))


def _ignore_rule(w: _Where, node: Any, key: str, known: dict[str, set[str]]) -> IgnoreRule:
    from gpulabel.k8s.selectors import parse_selector

    fields: dict[str, str] = {}
    for k, v in _mapping(w, node, key):
        name = _scalar(w, k, key)
        if name not in ("check", "reason", "nodes", "namespace", "pod", "comment"):
            raise w.fail(k, f"{key}.{name}", "unknown key; one of check, reason, nodes, namespace, pod, comment")
        fields[name] = _scalar(w, v, f"{key}.{name}")
        if name == "check" and fields[name] not in known:
            raise w.fail(v, f"{key}.check", f"unknown check {fields[name]!r}; known: {', '.join(known)}")
    if not fields.get("comment", "").strip():
        raise w.fail(node, f"{key}.comment", "required: say why the finding is accepted")
    if not set(fields) - {"comment"}:
        raise w.fail(node, key, "names nothing: give check, reason, nodes, namespace or pod")
    if "reason" in fields:
        check = fields.get("check", "")
        _reason_key(w, node, f"{key}.reason", f"{check}/{fields['reason']}" if check else fields["reason"], known)
    matches: Callable[[Mapping[str, str]], bool] | None = None
    if "nodes" in fields:
        try:
            matches = parse_selector(fields["nodes"]).matches
        except ValueError as err:
            raise w.fail(node, f"{key}.nodes", str(err)) from None
    return IgnoreRule(
        fields["comment"],
        f"{w.path}:{node.start_mark.line + 1}",
        check=fields.get("check", ""),
        reason=fields.get("reason", ""),
        nodes=matches,
        namespace=fields.get("namespace", ""),
        pod=fields.get("pod", ""),
    )


def read_text(path: str) -> str:
    """The UTF-8 text of a small input file (bounded: cluster/inputs.py); one line when it is not text."""
    from gpulabel.cluster.inputs import read_input

    data = read_input(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise InputError(f"{path}:{line}", "not UTF-8 text") from None


_POLARITY = ("True", "False", "None")


def _health(w: _Where, node: Any) -> tuple[dict[str, str], tuple[str, ...]]:
    """``health:``: ``conditions`` (type -> True | False | None) and ``taints`` (a list of keys)."""
    import yaml

    conditions: dict[str, str] = {}
    taints: list[str] = []
    for k, v in _mapping(w, node, "health"):
        name = _scalar(w, k, "health")
        if name == "conditions":
            for ck, cv in _mapping(w, v, "health.conditions"):
                kind = _scalar(w, ck, "health.conditions")
                problem = _scalar(w, cv, f"health.conditions.{kind}")
                if problem not in _POLARITY:
                    raise w.fail(cv, f"health.conditions.{kind}", f"{problem!r} is not one of True, False, None")
                conditions[kind] = problem
        elif name == "taints":
            if not isinstance(v, yaml.SequenceNode):
                raise w.fail(v, "health.taints", "must be a list of taint keys")
            taints.extend(_scalar(w, item, f"health.taints[{i}]") for i, item in enumerate(v.value))
        else:
            raise w.fail(k, f"health.{name}", "unknown key; one of conditions, taints")
    return conditions, tuple(taints)


def load_config(path: str) -> Config:
    """Read and validate the config file at ``path``; an :class:`InputError` naming file, line and key."""
    import yaml

    text = read_text(path)
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else path
        raise InputError(where, f"not YAML: {getattr(err, 'problem', None) or err}") from None
    w = _Where(path)
    if root is None:
        return Config(path)
    known = _known_reasons()
    ignore: list[IgnoreRule] = []
    severities: dict[str, Severity] = {}
    stuck_after: float | None = None
    operator_ns: str | None = None
    health: tuple[dict[str, str], tuple[str, ...]] = ({}, ())
    for k, v in _mapping(w, root, ""):
        name = _scalar(w, k, "")
        if name == "apiVersion":
            if _scalar(w, v, name) != "gpulabel/v1":
                raise w.fail(v, name, "must be gpulabel/v1")
        elif name == "kind":
            if _scalar(w, v, name) != "Config":
                raise w.fail(v, name, "must be Config")
        elif name == "ignore":
            if not isinstance(v, yaml.SequenceNode):
                raise w.fail(v, name, "must be a list of rules")
            ignore.extend(_ignore_rule(w, item, f"ignore[{i}]", known) for i, item in enumerate(v.value))
        elif name == "severity":
            for sk, sv in _mapping(w, v, name):
                reason = _scalar(w, sk, name)
                _reason_key(w, sk, f"severity.{reason}", reason, known)
                level = _scalar(w, sv, f"severity.{reason}")
                if level not in SEVERITIES:
                    raise w.fail(sv, f"severity.{reason}", f"{level!r} is not one of {', '.join(SEVERITIES)}")
                severities[reason] = level
        elif name == "thresholds":
            for tk, tv in _mapping(w, v, name):
                t = _scalar(w, tk, name)
                if t == "stuck-after":
                    try:
                        stuck_after = parse_duration(_scalar(w, tv, f"thresholds.{t}"), "")
                    except InputError as err:
                        raise w.fail(tv, f"thresholds.{t}", err.message) from None
                elif t == "operator-namespace":
                    operator_ns = _scalar(w, tv, f"thresholds.{t}")
                else:
                    raise w.fail(tk, f"thresholds.{t}", "unknown key; one of stuck-after, operator-namespace")
        elif name == "health":
            health = _health(w, v)
        else:
            raise w.fail(k, name, "unknown key; one of apiVersion, kind, ignore, severity, thresholds, health")
    return Config(path, tuple(ignore), severities, stuck_after, operator_ns, *health)
