"""The autoscalers' objects as read, with the text they carry from elsewhere redacted when read.

A NodePool's and a NodeClaim's condition messages are Karpenter's words around its cloud provider's errors
(sigs.k8s.io/karpenter v1.14.1 ``pkg/apis/v1`` ``status.conditions[].message``: a launch that failed quotes the
provider's error, which may hold a URL with its userinfo or a token), and Cluster Autoscaler's status ConfigMap holds
its own message and each node group's ``scaleUp.backoffInfo.errorMessage`` (kubernetes/autoscaler
cluster-autoscaler-1.36.1 ``clusterstate/api/types.go``: the cloud provider's error of the failed scale-up, which
``pending`` quotes). Both are redacted by the rules every Event message and condition message goes through
(:func:`gpulabel.model.redaction.redact_text`) before any check sees them; a record with nothing to redact is
kept itself (the reads cost nothing more where there is nothing to redact).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypeVar

from gpulabel.k8s.clusterautoscaler import AutoscalerStatus, NodeGroupStatus, StatusConfigMap, configmap_from_json
from gpulabel.k8s.karpenter.objects import Condition, NodeClaim, NodePool, nodeclaim_from_json, nodepool_from_json
from gpulabel.model.records import JSON
from gpulabel.model.redaction import redact_text

__all__ = ["nodeclaim_read", "nodepool_read", "status_configmap_read"]

_Conditioned = TypeVar("_Conditioned", NodePool, NodeClaim)


def nodepool_read(obj: JSON, where: str = "") -> NodePool:
    """A NodePool as :func:`~gpulabel.k8s.karpenter.objects.nodepool_from_json` reads it, its condition messages
    redacted."""
    return _conditions_redacted(nodepool_from_json(obj, where))


def nodeclaim_read(obj: JSON, where: str = "") -> NodeClaim:
    """A NodeClaim as :func:`~gpulabel.k8s.karpenter.objects.nodeclaim_from_json` reads it, its condition messages
    (``Launched``'s quotes the provider's error) redacted."""
    return _conditions_redacted(nodeclaim_from_json(obj, where))


def status_configmap_read(obj: JSON, where: str = "") -> StatusConfigMap:
    """A ConfigMap as :func:`~gpulabel.k8s.clusterautoscaler.configmap_from_json` reads it; of the status it holds,
    the message and each node group's backoff error message redacted."""
    cm = configmap_from_json(obj, where)
    if cm.status is None:
        return cm
    status = _status_redacted(cm.status)
    return cm if status is cm.status else replace(cm, status=status)


def _conditions_redacted(obj: _Conditioned) -> _Conditioned:
    said = tuple(_condition_redacted(c) for c in obj.conditions)
    if all(new is old for new, old in zip(said, obj.conditions, strict=True)):
        return obj
    return replace(obj, conditions=said)


def _condition_redacted(c: Condition) -> Condition:
    shown = redact_text(c.message)
    return c if shown == c.message else replace(c, message=shown)


def _status_redacted(s: AutoscalerStatus) -> AutoscalerStatus:
    groups = tuple(_group_redacted(g) for g in s.node_groups)
    message = redact_text(s.message)
    if message == s.message and all(new is old for new, old in zip(groups, s.node_groups, strict=True)):
        return s
    return replace(s, message=message, node_groups=groups)


def _group_redacted(g: NodeGroupStatus) -> NodeGroupStatus:
    shown = redact_text(g.backoff_message)
    return g if shown == g.backoff_message else replace(g, backoff_message=shown)
