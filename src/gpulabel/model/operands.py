"""The GPU Operator's operand catalogue, as data (``operands.toml``) checked against a named operator version.

Each operand is gated by a deploy label (``nvidia.com/gpu.deploy.<deploy>``)
and, for a few, by more node labels its DaemonSet requires (the MPS control
daemon shares the device plugin's deploy label and also needs
``nvidia.com/mps.capable=true``). The ClusterPolicy switches operands on and
off with per-component defaults. Facts and upstream sources:
``docs/gpu-operator.md``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from gpulabel.model.vocabulary import DEPLOY_PREFIX

__all__ = [
    "CATALOGUE",
    "CHAIN_OPERANDS",
    "OPERATOR_MODULE",
    "OPERATOR_VERSION",
    "WORKLOAD_CONFIGS",
    "Operand",
    "PolicyView",
    "deploy_key",
    "gating_keys",
    "known_operands",
    "labelled_for",
]

WORKLOAD_CONFIGS = ("container", "vm-passthrough", "vm-vgpu")
WORKLOAD_LABEL = "nvidia.com/gpu.workload.config"


@dataclass(frozen=True, slots=True)
class Operand:
    name: str
    deploy: str
    requires: Mapping[str, str]
    daemonset: str
    state: str
    policy: str
    default: bool
    sandbox: bool
    workloads: tuple[str, ...]
    needs: Mapping[str, tuple[str, ...]]
    chain: bool = False

    @property
    def deploy_key(self) -> str:
        """The node label that gates it, ``nvidia.com/gpu.deploy.<deploy>`` (two operands share the device plugin's)."""
        return DEPLOY_PREFIX + self.deploy

    def needs_for(self, workload: str) -> tuple[str, ...]:
        return self.needs.get(workload, ())

    def gates(self, labels: Mapping[str, str]) -> bool:
        """Whether the node has the labels besides the deploy label that the operand's DaemonSet requires."""
        return all(labels.get(k) == v for k, v in self.requires.items())


def _load() -> tuple[str, str, dict[str, Operand]]:
    raw = tomllib.loads(resources.files("gpulabel.model").joinpath("operands.toml").read_text(encoding="utf-8"))
    out: dict[str, Operand] = {}
    for item in raw["operand"]:
        needs: dict[str, Any] = item.get("needs") or {}
        out[item["name"]] = Operand(
            name=item["name"],
            deploy=item["deploy"],
            requires=dict(item.get("requires") or {}),
            daemonset=item["daemonset"],
            state=item["state"],
            policy=item.get("policy", ""),
            default=bool(item.get("default", True)),
            sandbox=bool(item.get("sandbox", False)),
            workloads=tuple(item.get("workloads") or ()),
            needs={w: tuple(v) for w, v in needs.items()},
            chain=bool(item.get("chain", False)),
        )
    return raw["operator"]["module"], raw["operator"]["version"], out


OPERATOR_MODULE, OPERATOR_VERSION, CATALOGUE = _load()
# The operands of the chain that makes a node's GPUs usable, in the catalogue's order (driver first).
CHAIN_OPERANDS = tuple(name for name, op in CATALOGUE.items() if op.chain)


def deploy_key(name: str) -> str:
    """The deploy label of the operand ``name``; an operand the catalogue does not know is named by its label."""
    op = CATALOGUE.get(name)
    return op.deploy_key if op is not None else DEPLOY_PREFIX + name


def gating_keys(name: str) -> tuple[str, ...]:
    """The node labels that decide whether a node is labelled for the operand ``name``: its deploy label first."""
    op = CATALOGUE.get(name)
    return (deploy_key(name), *(op.requires if op is not None else ()))


def labelled_for(name: str, labels: Mapping[str, str]) -> bool:
    """Whether a node with ``labels`` is labelled for the operand: its deploy label ``true`` and, for an operand
    whose DaemonSet requires more (the MPS control daemon: ``nvidia.com/mps.capable=true``), those labels too."""
    op = CATALOGUE.get(name)
    return labels.get(deploy_key(name)) == "true" and (op is None or op.gates(labels))


@dataclass(frozen=True, slots=True)
class PolicyView:
    """What the ClusterPolicies say, read the way the operator reads them (``isStateEnabled``).

    Without any ClusterPolicy nothing is switched off: gpulabel cannot know.
    """

    policies: Sequence[Mapping[str, Any]] = ()

    @property
    def known(self) -> bool:
        return bool(self.policies)

    def _spec(self) -> Mapping[str, Any]:
        spec = self.policies[0].get("spec") if self.policies else None
        return spec if isinstance(spec, Mapping) else {}

    def _enabled(self, section: str, default: bool) -> bool:
        part = self._spec().get(section)
        value = part.get("enabled") if isinstance(part, Mapping) else None
        return default if value is None else value is True

    @property
    def sandbox(self) -> bool:
        return self.known and self._enabled("sandboxWorkloads", False)

    def default_workload(self) -> str:
        part = self._spec().get("sandboxWorkloads")
        value = part.get("defaultWorkload") if isinstance(part, Mapping) else None
        return value if value in WORKLOAD_CONFIGS else "container"

    def enabled(self, operand: Operand) -> bool:
        if not self.known:
            return True
        if operand.sandbox and not self.sandbox:
            return False
        return operand.default if not operand.policy else self._enabled(operand.policy, operand.default)

    def workload(self, labels: Mapping[str, str]) -> str:
        """The node's workload config as the operator's labeller decides it (``getWorkloadConfig``)."""
        value = labels.get(WORKLOAD_LABEL)
        if not self.known:
            return value if value in WORKLOAD_CONFIGS else "container"
        if not self.sandbox:
            return "container"
        return value if value in WORKLOAD_CONFIGS else self.default_workload()


def known_operands(names: Iterable[str], where: str = "--disabled") -> tuple[str, ...]:
    """``names`` if each is an operand of the catalogue; otherwise an :class:`InputError` naming the first unknown."""
    from gpulabel.errors import InputError

    names = tuple(names)
    unknown = [n for n in names if n not in CATALOGUE]
    if unknown:
        import difflib

        near = difflib.get_close_matches(unknown[0], list(CATALOGUE), 1, 0.75)
        hint = f" (did you mean {near[0]}?)" if near else ""
        raise InputError(where, f"unknown operand {unknown[0]!r}{hint}; known: {', '.join(CATALOGUE)}")
    return names
