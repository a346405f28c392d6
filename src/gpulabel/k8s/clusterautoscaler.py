"""Cluster Autoscaler's own word: its status ConfigMap and its pod Events, as typed records.

Upstream: kubernetes/autoscaler at ``cluster-autoscaler-1.36.1``.

- ``cluster-autoscaler/clusterstate/utils/status.go`` ``WriteStatusConfigMap``: the ConfigMap
  ``kube-system/cluster-autoscaler-status`` (``--status-config-map-name``), ``data.status`` is
  ``yaml.Marshal`` of ``api.ClusterAutoscalerStatus`` (the YAML form since 1.30; before it, free text),
  annotation ``cluster-autoscaler.kubernetes.io/last-updated``.
- ``cluster-autoscaler/clusterstate/api/types.go``: its fields (``time``, ``autoscalerStatus``, ``message``,
  ``clusterWide`` health/scaleUp/scaleDown, ``nodeGroups[]`` with ``health`` (``nodeCounts``,
  ``cloudProviderTarget``, ``minSize``, ``maxSize``), ``scaleUp`` (``status``, ``backoffInfo``) and
  ``scaleDown``). Every field is ``omitempty`` or a zero Go value when absent: read as such.
- ``cluster-autoscaler/processors/status/eventing_scale_up_processor.go``: the pod Events
  ``TriggeredScaleUp`` (``pod triggered scale-up: %v`` of ``[]ScaleUpInfo``, each
  ``{<group id> <current>-><new> (max: <max>)}``, ``processors/nodegroupset/nodegroup_set_processor.go``)
  and ``NotTriggerScaleUp`` (``pod didn't trigger scale-up: `` then ``ReasonsMessage``: ``<count> <reason>``
  per distinct reason joined by ``", "`` in Go's map order, or ``max total nodes in cluster reached``).
  Reasons of skipped groups: ``core/scaleup/orchestrator/skippedreasons.go`` (``in backoff after failed
  scale-up``, ``max node group size reached``, ``not ready for scale-up``, ``exceeded quota: ...``); of
  rejected groups, the scheduler's filter reasons (``simulator/clustersnapshot/scheduling_error.go``).

The YAML text is decoded by the caller (the core reads no YAML): :func:`status_from_document` takes the
decoded mapping. The ConfigMap as a kind of the table (:func:`configmap_from_json`) decodes it with the decoder
the cluster layer registers (:func:`use_decoder`, ``gpulabel.cluster.autoscalerstatus``, registered when any
``gpulabel.cluster`` module is imported: every reader of API objects is one).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpulabel.k8s.jsonfields import Fields

__all__ = [
    "BACKOFF",
    "LAST_UPDATED",
    "MAX_SIZE_REACHED",
    "MAX_TOTAL_NODES",
    "NOT_READY",
    "STATUS_CONFIGMAP",
    "AutoscalerStatus",
    "NodeCounts",
    "NodeGroupStatus",
    "NotTriggered",
    "ScaleUp",
    "StatusConfigMap",
    "Triggered",
    "configmap_from_json",
    "scale_up_event",
    "status_from_document",
    "use_decoder",
]

STATUS_CONFIGMAP = ("kube-system", "cluster-autoscaler-status")  # the default of --status-config-map-name
# before 1.30 (cluster-autoscaler-1.29.0 clusterstate/utils/status.go): "Cluster-autoscaler status at %s:\n%v" of
# api.ClusterAutoscalerStatus.GetReadableString ("Cluster-wide:\n  Health: ..."), which YAML reads as a mapping too
TEXT_FORM = "Cluster-autoscaler status at "
LAST_UPDATED = "cluster-autoscaler.kubernetes.io/last-updated"
# skippedreasons.go and eventing_scale_up_processor.go ReasonsMessage
BACKOFF = "in backoff after failed scale-up"
MAX_SIZE_REACHED = "max node group size reached"
NOT_READY = "not ready for scale-up"
MAX_TOTAL_NODES = "max total nodes in cluster reached"


@dataclass(frozen=True, slots=True)
class NodeCounts:
    """``api.NodeCount``: registered (total, ready, notStarted, unready and of those resourceUnready: a node
    whose GPUs never reached allocatable) and the nodes the cloud has that never registered."""

    registered: int = 0
    ready: int = 0
    not_started: int = 0
    unready: int = 0
    resource_unready: int = 0
    being_deleted: int = 0
    long_unregistered: int = 0
    unregistered: int = 0


@dataclass(frozen=True, slots=True)
class NodeGroupStatus:
    name: str
    health: str  # Healthy / Unhealthy
    counts: NodeCounts
    target: int  # cloudProviderTarget
    min_size: int
    max_size: int
    scale_up: str  # Needed / NotNeeded / InProgress / NoActivity / Backoff
    backoff_code: str = ""
    backoff_message: str = ""
    scale_down: str = ""
    candidates: int = 0


@dataclass(frozen=True, slots=True)
class AutoscalerStatus:
    time: str  # as written: "2006-01-02 15:04:05.999999999 -0700 MST"
    autoscaler: str  # Running / Initializing
    message: str
    health: str
    counts: NodeCounts
    scale_up: str
    scale_down: str
    node_groups: tuple[NodeGroupStatus, ...]

    def group(self, name: str) -> NodeGroupStatus | None:
        return next((g for g in self.node_groups if g.name == name), None)


class _F(Fields):
    """The status document's fields (:class:`~gpulabel.k8s.jsonfields.Fields`): absent numbers are 0."""

    def number(self, v: Any, path: str) -> int:
        return self.integer(v, path) or 0

    def counts(self, v: Any, path: str) -> NodeCounts:
        c = self.mapping(v, path)
        reg = self.mapping(c.get("registered"), f"{path}.registered")
        unready = self.mapping(reg.get("unready"), f"{path}.registered.unready")
        n = self.number
        return NodeCounts(
            registered=n(reg.get("total"), f"{path}.registered.total"),
            ready=n(reg.get("ready"), f"{path}.registered.ready"),
            not_started=n(reg.get("notStarted"), f"{path}.registered.notStarted"),
            unready=n(unready.get("total"), f"{path}.registered.unready.total"),
            resource_unready=n(unready.get("resourceUnready"), f"{path}.registered.unready.resourceUnready"),
            being_deleted=n(reg.get("beingDeleted"), f"{path}.registered.beingDeleted"),
            long_unregistered=n(c.get("longUnregistered"), f"{path}.longUnregistered"),
            unregistered=n(c.get("unregistered"), f"{path}.unregistered"),
        )

    def status(self, v: Any, path: str) -> str:
        return self.text(self.mapping(v, path).get("status"), f"{path}.status")


def _group(f: _F, raw: Any, path: str) -> NodeGroupStatus:
    g = f.mapping(raw, path)
    health = f.mapping(g.get("health"), f"{path}.health")
    up = f.mapping(g.get("scaleUp"), f"{path}.scaleUp")
    backoff = f.mapping(up.get("backoffInfo"), f"{path}.scaleUp.backoffInfo")
    down = f.mapping(g.get("scaleDown"), f"{path}.scaleDown")
    return NodeGroupStatus(
        name=f.text(g.get("name"), f"{path}.name"),
        health=f.status(health, f"{path}.health"),
        counts=f.counts(health.get("nodeCounts"), f"{path}.health.nodeCounts"),
        target=f.number(health.get("cloudProviderTarget"), f"{path}.health.cloudProviderTarget"),
        min_size=f.number(health.get("minSize"), f"{path}.health.minSize"),
        max_size=f.number(health.get("maxSize"), f"{path}.health.maxSize"),
        scale_up=f.status(up, f"{path}.scaleUp"),
        backoff_code=f.text(backoff.get("errorCode"), f"{path}.scaleUp.backoffInfo.errorCode"),
        backoff_message=f.text(backoff.get("errorMessage"), f"{path}.scaleUp.backoffInfo.errorMessage"),
        scale_down=f.status(down, f"{path}.scaleDown"),
        candidates=f.number(down.get("candidates"), f"{path}.scaleDown.candidates"),
    )


def status_from_document(doc: Any, where: str) -> AutoscalerStatus:
    """``api.ClusterAutoscalerStatus`` from the decoded YAML of ``data.status``; a field of the wrong type
    raises :class:`~gpulabel.errors.SnapshotError` naming it (``where``: the ConfigMap)."""
    f = _F(where)
    top = f.mapping(doc, "status")
    wide = f.mapping(top.get("clusterWide"), "clusterWide")
    health = f.mapping(wide.get("health"), "clusterWide.health")
    groups = f.items(top.get("nodeGroups"), "nodeGroups")
    return AutoscalerStatus(
        time=f.text(top.get("time"), "time"),
        autoscaler=f.text(top.get("autoscalerStatus"), "autoscalerStatus"),
        message=f.text(top.get("message"), "message"),
        health=f.status(health, "clusterWide.health"),
        counts=f.counts(health.get("nodeCounts"), "clusterWide.health.nodeCounts"),
        scale_up=f.status(wide.get("scaleUp"), "clusterWide.scaleUp"),
        scale_down=f.status(wide.get("scaleDown"), "clusterWide.scaleDown"),
        node_groups=tuple(_group(f, g, f"nodeGroups[{i}]") for i, g in enumerate(groups)),
    )


# -- the pod Events ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScaleUp:
    """One ``ScaleUpInfo``: ``{<group> <current>-><new> (max: <max>)}``."""

    group: str
    current: int
    new: int
    max: int


@dataclass(frozen=True, slots=True)
class Triggered:
    """``TriggeredScaleUp``: the node groups being scaled up for the pod."""

    groups: tuple[ScaleUp, ...]


@dataclass(frozen=True, slots=True)
class NotTriggered:
    """``NotTriggerScaleUp``: per reason, how many node groups gave it (sorted by reason: Go's map order is
    random); ``max_total``: the cluster's ``--max-nodes-total`` stopped it, no group was asked."""

    reasons: tuple[tuple[str, int], ...]
    max_total: bool = False

    def count(self, reason: str) -> int:
        return sum(n for r, n in self.reasons if r == reason)


_TRIGGERED = "pod triggered scale-up: "
_NOT_TRIGGERED = "pod didn't trigger scale-up: "
_SCALE_UP = re.compile(r"\{(.+?) (-?\d+)->(-?\d+) \(max: (-?\d+)\)\}")
# ReasonsMessage joins "<count> <reason>" with ", ": a reason's own ", " (a quota's resources) is not
# followed by a count
_REASON = re.compile(r"(\d+) (.+?)(?=, \d+ |$)")


def scale_up_event(reason: str, message: str) -> Triggered | NotTriggered | None:
    """A pod Event of Cluster Autoscaler (``reason``, ``message``), or ``None`` for any other Event."""
    if reason == "TriggeredScaleUp" and message.startswith(_TRIGGERED):
        return Triggered(tuple(ScaleUp(m[1], int(m[2]), int(m[3]), int(m[4])) for m in _SCALE_UP.finditer(message)))
    if reason == "NotTriggerScaleUp" and message.startswith(_NOT_TRIGGERED):
        rest = message[len(_NOT_TRIGGERED) :]
        if rest == MAX_TOTAL_NODES:
            return NotTriggered((), max_total=True)
        found: dict[str, int] = {}
        for m in _REASON.finditer(rest):
            found[m[2]] = found.get(m[2], 0) + int(m[1])
        return NotTriggered(tuple(sorted(found.items())))
    return None


# -- the status ConfigMap as a kind ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StatusConfigMap:
    """A ``cluster-autoscaler-status`` ConfigMap: where it is, when Cluster Autoscaler last wrote it (its
    ``last-updated`` annotation) and its status (``None``: the free text before 1.30, absent, or another
    ConfigMap of a snapshot that holds every ConfigMap); ``text_form``: the text before 1.30."""

    namespace: str
    name: str
    updated: str = ""
    status: AutoscalerStatus | None = None
    text_form: bool = False


_DECODERS: list[Callable[[str], Any]] = []  # the YAML decoder the cluster layer registers (one)


def use_decoder(decode: Callable[[str], Any]) -> None:
    """Decode ``data.status`` with ``decode`` (text -> the document, or ``None`` where it is no YAML)."""
    _DECODERS[:] = [decode]


def status_of_text(text: Any, where: str) -> tuple[AutoscalerStatus | None, bool]:
    """The status ``data.status`` holds, and whether it is the free text before 1.30."""
    if not isinstance(text, str):
        return None, False
    if text.startswith(TEXT_FORM):
        return None, True
    doc = _DECODERS[0](text) if _DECODERS else None
    if not isinstance(doc, dict):
        return None, False  # not YAML, or a scalar or a list: nothing to read field by field
    return status_from_document(doc, where), False


def configmap_from_json(obj: dict[str, Any], where: str) -> StatusConfigMap:
    """A ConfigMap of the input: decoded where it is named ``cluster-autoscaler-status`` (the default of
    ``--status-config-map-name``; CA's ``--namespace``, kube-system by default, is where it lives)."""
    f = Fields(where)
    meta = f.mapping(obj.get("metadata"), "metadata")
    name = f.text(meta.get("name"), "metadata.name")
    namespace = f.text(meta.get("namespace"), "metadata.namespace")
    updated = f.strmap(meta.get("annotations"), "metadata.annotations").get(LAST_UPDATED, "")
    if name != STATUS_CONFIGMAP[1]:
        return StatusConfigMap(namespace, name)
    data = f.mapping(obj.get("data"), "data")
    status, text_form = status_of_text(data.get("status"), f"{where} data.status")
    return StatusConfigMap(namespace, name, updated, status, text_form)
