"""The autoscalers' own word on a Pending pod: their pod Events, and Cluster Autoscaler's status ConfigMap.

What is read (``model/cluster.py`` ``AUTOSCALER_EVENTS``, one LIST per reason, and the ConfigMap
``cluster-autoscaler-status``), each as its writer writes it:

- Karpenter (sigs.k8s.io/karpenter v1.14.1 ``pkg/controllers/provisioning/scheduling/events.go``): Normal
  ``Nominated`` ``Pod should schedule on: nodeclaim/<name>[, node/<name>]`` and Warning ``FailedScheduling``
  ``Failed to schedule pod, <error>``, component ``karpenter``; parsed by :mod:`gpulabel.k8s.karpenter.events`.
  A ``FailedScheduling`` is the word of its time: Karpenter writes it again for a pod still failing once its
  ``DedupeTimeout`` (5 minutes) is over, so one older than :data:`KARPENTER_FAILED_WINDOW` is not read.
- Cluster Autoscaler (kubernetes/autoscaler cluster-autoscaler-1.36.1
  ``processors/status/eventing_scale_up_processor.go``): Normal ``TriggeredScaleUp`` and ``NotTriggerScaleUp``,
  parsed by :mod:`gpulabel.k8s.clusterautoscaler`. A ``TriggeredScaleUp`` means a node is on its way for
  :data:`TRIGGERED_WINDOW` (``--max-node-provision-time``, 15 minutes by default, ``config/flags/flags.go``: past
  it CA gives the node up and backs the group off); a ``NotTriggerScaleUp`` is CA's word for
  :data:`NOT_TRIGGERED_WINDOW` (its recorder lets one Event per pod through every 5 minutes,
  ``utils/kubernetes/factory.go`` ``defaultQPS = 1/300``, ``defaultBurstSize = 1``: a pod CA still cannot help
  gets it again by then; twice that is allowed).

Both recorders are client-go's: after 10 similar Events of one reason in 10 minutes the message is prefixed
``(combined from similar events): `` (``tools/record/events_cache.go`` ``EventAggregatorByReasonMessageFunc``),
which is taken off before parsing. An Event names its pod by namespace, name and uid: one of another pod of the
same name (made again) is not read.

Without a time (``now`` ``None``) no Event that ages is read: only ``Nominated``, which is judged by the NodeClaim
it names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from gpulabel.k8s import clusterautoscaler as ca
from gpulabel.k8s.karpenter.events import COMPONENT, FailedToSchedule, Nominated, pod_event
from gpulabel.model.cluster import ClusterState, Pod
from gpulabel.model.evidence import EventNote
from gpulabel.model.gpustack import parse_time

__all__ = [
    "COMBINED",
    "KARPENTER_FAILED_WINDOW",
    "NOT_TRIGGERED_WINDOW",
    "SKEW",
    "TRIGGERED_WINDOW",
    "CaWord",
    "ca_applies",
    "ca_status",
    "ca_word",
    "events_deadline",
    "is_autoscaler_event",
    "karpenter_events",
    "pod_events",
]

TRIGGERED_WINDOW = 15 * 60.0  # --max-node-provision-time's default
NOT_TRIGGERED_WINDOW = 10 * 60.0  # twice the 5 minutes CA's recorder lets one Event per pod through
KARPENTER_FAILED_WINDOW = 10 * 60.0  # twice Karpenter's 5-minute DedupeTimeout of PodFailedToScheduleEvent
COMBINED = "(combined from similar events): "
SKEW = 60.0  # seconds an Event may be stamped after now and still be now's (the API server's clock ahead)
_CA_REASONS = ("TriggeredScaleUp", "NotTriggerScaleUp")
_WINDOWS = {
    "TriggeredScaleUp": TRIGGERED_WINDOW,
    "NotTriggerScaleUp": NOT_TRIGGERED_WINDOW,
    "FailedScheduling": KARPENTER_FAILED_WINDOW,
}


def is_autoscaler_event(e: EventNote | None) -> bool:
    """An autoscaler's Event on a pod that the verdict reads."""
    if e is None or e.kind != "Pod":
        return False
    return e.reason in ("Nominated", *_CA_REASONS) or (e.reason == "FailedScheduling" and e.component == COMPONENT)


def pod_events(state: ClusterState) -> dict[tuple[str, str], list[EventNote]]:
    """The autoscalers' Events of the state by the pod they are about (namespace, name), oldest first."""
    out: dict[tuple[str, str], list[EventNote]] = {}
    for e in state.events:
        if is_autoscaler_event(e):
            out.setdefault((e.namespace, e.name), []).append(e)
    for notes in out.values():
        notes.sort(key=_when)
    return out


def _when(e: EventNote) -> datetime:
    """When the Event was last written (its time parsed: ``10:15:00.5Z`` is after ``10:15:00Z``); unknown first."""
    return (parse_time(e.time) if e.time else None) or _NEVER


_NEVER = datetime.min.replace(tzinfo=UTC)


def of_pod(index: Mapping[tuple[str, str], Sequence[EventNote]], pod: Pod) -> list[EventNote]:
    """``pod``'s Events of ``index``: those of another pod of its name (another uid) left out."""
    return [e for e in index.get((pod.namespace, pod.name), ()) if not (e.uid and pod.uid and e.uid != pod.uid)]


def _age(e: EventNote, now: datetime | None) -> float | None:
    when = parse_time(e.time) if e.time else None
    return None if now is None or when is None else (now - when).total_seconds()


def _fresh(e: EventNote, now: datetime | None, window: float) -> bool:
    """Written within ``window`` before ``now``: one stamped up to :data:`SKEW` after it is the API server's clock
    ahead of this one; one later than that was not written yet at ``now`` (a snapshot judged ``--at`` an earlier
    time)."""
    age = _age(e, now)
    return age is not None and -SKEW <= age <= window


def _message(e: EventNote) -> str:
    return e.message.removeprefix(COMBINED)


def karpenter_events(notes: Iterable[EventNote], now: datetime | None) -> list[Nominated | FailedToSchedule]:
    """Karpenter's Events of one pod, parsed, oldest first: every ``Nominated`` (judged by its NodeClaim), a
    ``FailedScheduling`` only within :data:`KARPENTER_FAILED_WINDOW` of ``now``."""
    out: list[Nominated | FailedToSchedule] = []
    for e in notes:
        if e.reason == "FailedScheduling" and not _fresh(e, now, KARPENTER_FAILED_WINDOW):
            continue
        # a Nominated Event without a component (written through events.k8s.io) is still Karpenter's: no other
        # writer gives that reason
        component = (e.component or COMPONENT) if e.reason == "Nominated" else e.component
        event = pod_event(component, e.reason, _message(e))
        if event is not None:
            out.append(event)
    return out


def ca_status(state: ClusterState) -> ca.StatusConfigMap | None:
    """Cluster Autoscaler's status ConfigMap (kube-system's first, where several namespaces have one)."""
    found = [m for m in state.autoscaler if m.name == ca.STATUS_CONFIGMAP[1]]
    return min(found, key=lambda m: (m.namespace != ca.STATUS_CONFIGMAP[0], m.namespace)) if found else None


def ca_applies(state: ClusterState) -> bool:
    """Cluster Autoscaler is there: its status ConfigMap, or one of its Events on a pod."""
    return ca_status(state) is not None or any(e.kind == "Pod" and e.reason in _CA_REASONS for e in state.events)


@dataclass(frozen=True, slots=True)
class CaWord:
    """Cluster Autoscaler's verdict for one pod, from its own Events and status.

    - ``coming``: a ``TriggeredScaleUp`` within :data:`TRIGGERED_WINDOW`, its ``groups`` (none of them in backoff
      by the status); ``none``: a ``NotTriggerScaleUp`` within :data:`NOT_TRIGGERED_WINDOW` (its ``reasons``, per
      reason how many node groups gave it; ``max_total``), or the triggered groups now in backoff; ``unknown``:
      Cluster Autoscaler runs and has said nothing about the pod lately
    - ``message``: the Event's words, ``time`` its time; ``status``: what the status ConfigMap adds; ``fix``
    """

    kind: Literal["coming", "none", "unknown"]
    groups: tuple[ca.ScaleUp, ...] = ()
    reasons: tuple[tuple[str, int], ...] = ()
    max_total: bool = False
    message: str = ""
    time: str = ""
    status: str = ""
    fix: str = ""


# what to change, by Cluster Autoscaler's reason (skippedreasons.go; the scheduler's filter reasons, Kubernetes
# v1.37.2 pkg/scheduler/framework/plugins: nodeaffinity ErrReasonPod, tainttoleration, noderesources Insufficient)
_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
_TAINT = "node(s) had untolerated taint(s)"
_FIXES = {
    ca.MAX_SIZE_REACHED: "raise the node group's maximum size",
    ca.BACKOFF: (
        "the node group's last scale-up failed: fix its cause (quota, capacity, the instance type); CA tries it "
        "again after its backoff (5 minutes, doubling up to 30: --initial-node-group-backoff-duration, "
        "--max-node-group-backoff-duration)"
    ),
    ca.NOT_READY: "wait for the node group to be ready for scale-up, or look at why its nodes are not ready",
    _AFFINITY: (
        "no node group's template has the labels the pod selects (a label NFD or GPU Feature Discovery writes once "
        "a node booted is not in it): select the cloud's GPU label CA knows before launch (k8s.amazonaws.com/"
        "accelerator, cloud.google.com/gke-accelerator, kubernetes.azure.com/accelerator) or add the label to the "
        "node group's template (on AWS the ASG tag k8s.io/cluster-autoscaler/node-template/label/<key>)"
    ),
    _TAINT: "tolerate the node group's taint, or remove it from the node group",
}


def _fix(reasons: Iterable[str], max_total: bool) -> str:
    if max_total:
        return "raise --max-nodes-total, or free nodes"
    out: list[str] = []
    for r in reasons:
        fix = _FIXES.get(r)
        if fix is None and r.startswith("Insufficient "):
            fix = f"no node group's node has enough {r.removeprefix('Insufficient ')}: add a node group that has"
        elif fix is None and r.startswith("exceeded quota: "):
            fix = "raise the quota (CA's --cores-total, --memory-total, --gpu-total, or the provider's quota)"
        if fix is not None and fix not in out:
            out.append(fix)
    return "; ".join(out)


def _status_note(cm: ca.StatusConfigMap | None, groups: Iterable[str] = ()) -> str:
    """What the status adds: the named groups' (or every group at its max or in backoff) and the cluster's health."""
    if cm is None:
        return ""
    if cm.status is None:
        return "its status ConfigMap is the text of Cluster Autoscaler before 1.30: not read" if cm.text_form else ""
    st, named, parts = cm.status, set(groups), []
    for g in st.node_groups:
        if (named and g.name not in named) or (not named and g.scale_up != "Backoff" and g.target < g.max_size):
            continue
        part = f"{g.name} {g.target}/{g.max_size} nodes"
        if g.scale_up == "Backoff":
            part += f", in backoff ({g.backoff_code}: {g.backoff_message})" if g.backoff_code else ", in backoff"
        parts.append(part)
    if st.health and st.health != "Healthy":
        c = st.counts
        parts.append(
            f"the cluster is {st.health} to Cluster Autoscaler (ready {c.ready}, unready {c.unready} of "
            f"{c.registered}): it does not scale while so (core/static_autoscaler.go IsClusterHealthy)"
        )
    when = f" (status of {st.time})" if st.time else ""
    return f"status{when}: " + "; ".join(parts) if parts else ""


def ca_word(cm: ca.StatusConfigMap | None, notes: Iterable[EventNote], now: datetime | None) -> CaWord:
    """Cluster Autoscaler's verdict for a pod from its Events ``notes`` (the pod's) and its status ``cm``."""
    fresh: list[tuple[EventNote, ca.Triggered | ca.NotTriggered]] = []
    for e in notes:
        if e.reason not in _CA_REASONS or not _fresh(e, now, _WINDOWS[e.reason]):
            continue
        event = ca.scale_up_event(e.reason, _message(e))
        if event is not None:
            fresh.append((e, event))
    if not fresh:
        note = _status_note(cm)
        return CaWord("unknown", status=note)
    e, word = max(fresh, key=lambda f: _when(f[0]))
    if isinstance(word, ca.Triggered):
        names = [g.group for g in word.groups]
        backoff = [g for g in (cm.status.node_groups if cm and cm.status else ()) if g.name in names]
        if backoff and all(g.scale_up == "Backoff" for g in backoff):
            note = _status_note(cm, names)
            return CaWord("none", word.groups, ((ca.BACKOFF, len(backoff)),), False, e.message, e.time, note,
                          _fix([ca.BACKOFF], False))  # fmt: skip
        return CaWord("coming", word.groups, message=e.message, time=e.time, status=_status_note(cm, names))
    reasons = [r for r, _ in word.reasons]
    return CaWord(
        "none",
        reasons=word.reasons,
        max_total=word.max_total,
        message=e.message,
        time=e.time,
        status=_status_note(cm),
        fix=_fix(reasons, word.max_total),
    )


def events_deadline(state: ClusterState, now: datetime) -> datetime | None:
    """The earliest time after ``now`` at which an autoscaler's Event the verdict reads comes into its window or
    ages past it (the verdicts change then with no object changed), or ``None``."""
    ends = []
    for e in state.events:
        if not is_autoscaler_event(e) or e.reason == "Nominated":
            continue
        when = parse_time(e.time) if e.time else None
        if when is None:
            continue
        for end in (when - timedelta(seconds=SKEW), when + timedelta(seconds=_WINDOWS[e.reason])):
            if end > now:  # it becomes now's (a later --at), or ages past its window
                ends.append(end)
                break
    return min(ends) if ends else None
