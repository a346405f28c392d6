"""Taints and tolerations, as ``api/core/v1/toleration.go`` and the DaemonSet controller define them.

Only ``NoSchedule`` and ``NoExecute`` taints filter scheduling. A toleration
with an empty effect matches every effect, an empty key with ``Exists`` every
taint; ``Equal`` (or no operator) compares values exactly and ``Exists``
ignores them. ``Lt``/``Gt`` tolerations sit behind an alpha feature gate that is
off by default, so they tolerate nothing. Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "FILTERING_EFFECTS",
    "TAINT_EFFECTS",
    "TOLERATION_OPERATORS",
    "UNSCHEDULABLE_TAINT",
    "Taint",
    "Toleration",
    "daemon_tolerations",
]

# The effects a taint or toleration may name, in the order the API server lists them.
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
FILTERING_EFFECTS = frozenset({"NoSchedule", "NoExecute"})
# Every toleration operator; Lt and Gt sit behind the TaintTolerationComparisonOperators gate (off).
TOLERATION_OPERATORS = ("Equal", "Exists", "Lt", "Gt")


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint, comparison: bool = False) -> bool:
        """``Toleration.ToleratesTaint`` (k8s.io/api v0.35.1-v0.37 ``core/v1/toleration.go``); ``comparison``:
        its ``enableComparisonOperators`` (off in kube-scheduler by default; Karpenter v1.14.1 passes true),
        with which ``Lt``/``Gt`` compare the taint's value with the toleration's as decimal int64s."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        if self.operator in ("Lt", "Gt") and comparison:
            mine, theirs = _decimal(self.value), _decimal(taint.value)
            if mine is None or theirs is None:
                return False
            return theirs < mine if self.operator == "Lt" else theirs > mine
        return self.operator == "Exists"

    def __str__(self) -> str:
        op = self.operator or "Equal"
        what = f"{self.key or '*'} {op}" + (f" {self.value}" if op != "Exists" else "")
        return f"{what}:{self.effect or '*'}"


_DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)")


def _decimal(text: str) -> int | None:
    """``content.IsDecimalInteger`` then ``strconv.ParseInt(s, 10, 64)``: ``None`` where either fails."""
    if not _DECIMAL.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def daemon_tolerations(host_network: bool = False) -> tuple[Toleration, ...]:
    """The tolerations the DaemonSet controller adds to every daemon pod."""
    out = [
        Toleration("node.kubernetes.io/not-ready", "Exists", "", "NoExecute"),
        Toleration("node.kubernetes.io/unreachable", "Exists", "", "NoExecute"),
        Toleration("node.kubernetes.io/disk-pressure", "Exists", "", "NoSchedule"),
        Toleration("node.kubernetes.io/memory-pressure", "Exists", "", "NoSchedule"),
        Toleration("node.kubernetes.io/pid-pressure", "Exists", "", "NoSchedule"),
        Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"),
    ]
    if host_network:
        out.append(Toleration("node.kubernetes.io/network-unavailable", "Exists", "", "NoSchedule"))
    return tuple(out)
