"""What a ClusterPolicy's CDI and NRI settings say about a missing RuntimeClass of the GPU Operator's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpulabel.model.records import JSON

__all__ = ["policy_note"]


def _map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def _flag(spec: Mapping[str, Any], key: str) -> bool | None:
    value = _map(spec, "cdi").get(key)
    return value if isinstance(value, bool) else None


def policy_note(name: str, policies: Sequence[JSON]) -> str:
    """What the ClusterPolicy's CDI/NRI settings say about the missing class ``name`` (empty when it says nothing).

    From the GPU Operator's code (NVIDIA/gpu-operator a22dbf6, 2026-08-21): the ``pre-requisites`` state, which
    creates the RuntimeClasses (``assets/pre-requisites/0200_runtime_class.yaml``: ``spec.operator.runtimeClass``,
    default ``nvidia``), is off when ``spec.cdi.nriPluginEnabled`` is true (``state_manager.go``
    ``isStateEnabled``), and its operands then carry no ``runtimeClassName`` (``setRuntimeClassName``); the
    operator refuses NRI with CDI off (``validateClusterPolicySpec``). ``cdi.enabled`` defaults to true there
    (false in labcluster's 2025-09-17 operator, which has no NRI setting); ``cdi.default`` is deprecated.
    """
    for policy in policies:
        spec = _map(policy, "spec")
        own = str(_map(spec, "operator").get("runtimeClass") or "nvidia")
        if name != own:
            continue
        which = f"ClusterPolicy {_map(policy, 'metadata').get('name') or '?'}"
        if _flag(spec, "nriPluginEnabled"):
            cdi_off = _flag(spec, "enabled") is False
            return (
                f"; {which} has spec.cdi.nriPluginEnabled: true, so the operator creates no RuntimeClass {own} "
                "(its pre-requisites state is off) and NRI injects the devices: drop runtimeClassName (or the "
                "admission webhook that adds it) rather than create the class"
                + ("; it also has spec.cdi.enabled: false, which the operator refuses with NRI" if cdi_off else "")
            )
        return (
            f"; {which} names {own} as the operator's RuntimeClass (spec.operator.runtimeClass) and does not run "
            "the NRI plugin: the operator should have created it; see its logs and the ClusterPolicy's status"
        )
    return ""
