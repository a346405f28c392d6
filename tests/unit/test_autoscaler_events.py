"""The autoscalers' own word in the verdict of a Pending pod (``checks/pending/autoscaler_events.py``): Karpenter's
``Nominated`` and ``FailedScheduling``, Cluster Autoscaler's ``TriggeredScaleUp``/``NotTriggerScaleUp`` and its
status ConfigMap, each in its writer's format (the source is named at each message); their twins (too old, another
pod, another writer) change nothing; live ``pending`` LISTs them bounded and says what ``pending --snapshot`` says
on a capture of the same moment."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from gpulabel.app.session import Outcome, Session, Source
from gpulabel.checks.engine.assessment import FullEvaluator
from gpulabel.checks.engine.incremental import IncrementalEvaluator
from gpulabel.checks.pending import autoscaler_events as words
from gpulabel.checks.pending.rules import pending_result
from gpulabel.checks.registry import BUILTIN
from gpulabel.cluster.capture import capture
from gpulabel.model.cluster import AUTOSCALER_EVENTS, KIND, ClusterState
from tests.fakeapi import FakeApi, FakeClock, fake_client
from tests.unit.karpenter.objects import nodeclaim, nodepool
from tests.unit.pending_objects import node, pod

JSON = dict[str, Any]
NOW = datetime(2026, 12, 4, 10, 20, tzinfo=UTC)
DATA = Path(__file__).parent / "data"
CUSTOM = "feature.node.kubernetes.io/custom-gpu-training"

# Karpenter v1.14.1 pkg/controllers/provisioning/scheduling/events.go NominatePodEvent
NOMINATED = "Pod should schedule on: nodeclaim/gpu-a-z7"
# PodFailedToScheduleEvent, as Karpenter wrote it on labcluster (tests/unit/karpenter/test_events.py)
FAILED = 'Failed to schedule pod, incompatible requirements, label "nvidia.com/gpu.product" does not have known values'
# cluster-autoscaler-1.36.1 processors/status/eventing_scale_up_processor.go (tests/unit/test_clusterautoscaler.py)
TRIGGERED = "pod triggered scale-up: [{eks-gpu-a 0->1 (max: 4)}]"
NOT_AFFINITY = "pod didn't trigger scale-up: 2 node(s) didn't match Pod's node affinity/selector"
NOT_MAX = "pod didn't trigger scale-up: 1 max node group size reached, 1 in backoff after failed scale-up"


def event(
    reason: str,
    message: str,
    at: str = "2026-12-04T10:15:00Z",
    *,
    pod_name: str = "train",
    uid: str = "",
    component: str = "",
    kind: str = "",
    n: int = 0,
) -> JSON:
    """A core/v1 Event as client-go's recorder writes it (source.component, first/lastTimestamp, count)."""
    normal = reason in ("Nominated", "TriggeredScaleUp", "NotTriggerScaleUp", "Scheduled")
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{pod_name}.{reason.lower()}{n}", "namespace": "ml"},
        "involvedObject": {
            "kind": "Pod",
            "namespace": "ml",
            "name": pod_name,
            "uid": uid or f"uid-{pod_name}",
            "apiVersion": "v1",
        },
        "reason": reason,
        "message": message,
        "type": kind or ("Normal" if normal else "Warning"),
        "source": {"component": component or ("karpenter" if reason in ("Nominated", "FailedScheduling") else "")},
        "firstTimestamp": at,
        "lastTimestamp": at,
        "count": 1,
    }


def ca_event(reason: str, message: str, at: str = "2026-12-04T10:15:00Z", **kw: Any) -> JSON:
    return event(reason, message, at, component="cluster-autoscaler", **kw)


def status_map(group_state: str = "NoActivity", target: int = 1, health: str = "Healthy") -> JSON:
    """The status ConfigMap in 1.30's YAML (clusterstate/utils/status_test.yaml's shape), one GPU node group."""
    backoff = (
        "    backoffInfo:\n      errorCode: QUOTA_EXCEEDED\n      errorMessage: 'Quota GPUS exceeded'\n"
        if group_state == "Backoff"
        else ""
    )
    text = (
        f"time: 2026-12-04 10:19:50.1 +0000 UTC\nautoscalerStatus: Running\nclusterWide:\n  health:\n"
        f"    status: {health}\n    nodeCounts:\n      registered:\n        total: 3\n        ready: 1\n"
        f"        unready:\n          total: 2\n  scaleUp:\n    status: NoActivity\nnodeGroups:\n- name: eks-gpu-a\n"
        f"  health:\n    status: Healthy\n    cloudProviderTarget: {target}\n    minSize: 0\n    maxSize: 4\n"
        f"  scaleUp:\n    status: {group_state}\n{backoff}"
    )
    meta: JSON = {"name": "cluster-autoscaler-status", "namespace": "kube-system"}
    meta["annotations"] = {"cluster-autoscaler.kubernetes.io/last-updated": "2026-12-04 10:19:50.1 +0000 UTC"}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"status": text}}


def full() -> list[JSON]:
    """One 8-GPU node held by a running pod: the Pending ``ml/train`` (8 GPUs) fits no node."""
    return [node("n1", "8", {}), pod("run", 8, "n1")]


def gpu_pod(name: str = "train", selector: JSON | None = None) -> JSON:
    out = pod(name, 8, selector=selector)
    out["spec"]["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    return out


def lines(objects: list[JSON], now: datetime | None = NOW) -> list[str]:
    state = ClusterState.from_objects((f"obj{i}", o) for i, o in enumerate(objects))
    return [f.line() for f in pending_result(state, now=now).findings if f.reason != "insufficient"]


def details(objects: list[JSON], now: datetime | None = NOW) -> list[str]:
    state = ClusterState.from_objects((f"obj{i}", o) for i, o in enumerate(objects))
    return [f.detail for f in pending_result(state, now=now).findings if f.reason != "insufficient"]


POOLS = [nodepool("gpu-a", taints=[{"key": "nvidia.com/gpu", "effect": "NoSchedule"}])]
IN_FLIGHT = nodeclaim("gpu-a-z7", "gpu-a", initialized="Unknown", reason="NotLaunched")


# -- Karpenter -------------------------------------------------------------------------------------------


# within Karpenter's 15-minute registration timeout of IN_FLIGHT's creation (10:00): coming, not late
SOON = datetime(2026, 12, 4, 10, 14, 30, tzinfo=UTC)


def test_a_nominated_event_names_the_nodeclaim_coming() -> None:
    got = details([*full(), *POOLS, IN_FLIGHT, gpu_pod(), event("Nominated", NOMINATED)], SOON)
    assert len(got) == 1 and "NodeClaim gpu-a-z7 of NodePool gpu-a" in got[0]
    assert got[0].endswith("Karpenter nominated the pod to it")
    # without the Event: the NodePool Karpenter would choose is launching it (the model)
    assert details([*full(), *POOLS, IN_FLIGHT, gpu_pod()], SOON)[0].endswith(
        "the NodePool Karpenter would choose is launching it"
    )


def test_a_nomination_of_another_pod_of_the_same_name_is_not_read() -> None:
    other = event("Nominated", NOMINATED, uid="uid-train-before")
    got = details([*full(), *POOLS, IN_FLIGHT, gpu_pod(), other], SOON)
    assert got[0].endswith("the NodePool Karpenter would choose is launching it")


def test_karpenters_fresh_failed_scheduling_is_its_word_over_the_model() -> None:
    objects = [*full(), *POOLS, gpu_pod(), event("FailedScheduling", FAILED, "2026-12-04T10:12:00Z")]
    assert lines(objects) == ["ml/train no-autoscaler unknown-key nvidia.com/gpu.product"]
    assert details(objects)[0].startswith("Karpenter's FailedScheduling Event says: Failed to schedule pod, ")
    # twins: older than twice its 5-minute dedupe, the scheduler's own, another pod's, or a time to come: the model
    for twin in (
        event("FailedScheduling", FAILED, "2026-12-04T10:09:00Z"),
        event("FailedScheduling", FAILED, component="default-scheduler"),
        event("FailedScheduling", FAILED, pod_name="other"),
        event("FailedScheduling", FAILED, "2026-12-04T10:25:00Z"),
    ):
        assert lines([*full(), *POOLS, gpu_pod(), twin]) == ["ml/train nodepool-can nodepool/gpu-a"], twin
    # without a time no aging Event is read
    assert lines(objects, now=None) == ["ml/train nodepool-can nodepool/gpu-a"]


def test_the_aggregated_message_is_read_as_its_event() -> None:
    """client-go tools/record/events_cache.go EventAggregatorByReasonMessageFunc: the 11th similar Event."""
    combined = event("FailedScheduling", words.COMBINED + FAILED)
    assert lines([*full(), *POOLS, gpu_pod(), combined]) == [
        "ml/train no-autoscaler unknown-key nvidia.com/gpu.product"
    ]


# -- Cluster Autoscaler alone ----------------------------------------------------------------------------


def test_a_recent_triggered_scale_up_is_a_node_coming_from_its_group() -> None:
    objects = [*full(), gpu_pod(), ca_event("TriggeredScaleUp", TRIGGERED, "2026-12-04T10:06:00Z"), status_map()]
    assert lines(objects) == ["ml/train node-coming nodegroup/eks-gpu-a"]
    assert (
        "max-node-provision-time (15 min by default); status (status of 2026-12-04 10:19:50.1 +0000 UTC): "
        in (details(objects)[0])
    )
    # past --max-node-provision-time (15 min): CA gave the node up; nothing else said: unknown, never guessed
    old = [*full(), gpu_pod(), ca_event("TriggeredScaleUp", TRIGGERED, "2026-12-04T10:04:00Z"), status_map()]
    assert lines(old) == ["ml/train autoscaler-unknown cluster-autoscaler"]


def test_a_triggered_group_now_in_backoff_is_no_node_coming() -> None:
    objects = [*full(), gpu_pod(), ca_event("TriggeredScaleUp", TRIGGERED), status_map("Backoff")]
    assert lines(objects) == ["ml/train no-autoscaler cluster-autoscaler 1 in backoff after failed scale-up"]
    assert "eks-gpu-a 1/4 nodes, in backoff (QUOTA_EXCEEDED: Quota GPUS exceeded)" in details(objects)[0]


def test_not_triggered_gives_cas_reasons_counted_and_the_fix() -> None:
    objects = [*full(), gpu_pod(selector={CUSTOM: "true"}), ca_event("NotTriggerScaleUp", NOT_AFFINITY)]
    assert lines(objects) == [
        "ml/train node-selector 1 node(s) feature.node.kubernetes.io/custom-gpu-training=true",
        "ml/train no-autoscaler cluster-autoscaler 2 node(s) didn't match Pod's node affinity/selector",
    ]
    detail = details(objects)[1]
    assert detail.startswith(
        f"Cluster Autoscaler's NotTriggerScaleUp Event (2026-12-04T10:15:00Z) says: {NOT_AFFINITY}"
    )
    assert "k8s.io/cluster-autoscaler/node-template/label/<key>" in detail


def test_max_size_and_backoff_name_the_groups_from_the_status() -> None:
    objects = [*full(), gpu_pod(), ca_event("NotTriggerScaleUp", NOT_MAX), status_map("Backoff", target=4)]
    assert lines(objects) == [
        "ml/train no-autoscaler cluster-autoscaler 1 in backoff after failed scale-up 1 max node group size reached"
    ]
    detail = details(objects)[0]
    assert "eks-gpu-a 4/4 nodes, in backoff (QUOTA_EXCEEDED: Quota GPUS exceeded)" in detail
    assert "raise the node group's maximum size" in detail and "--initial-node-group-backoff-duration" in detail


def test_an_unhealthy_cluster_is_said() -> None:
    objects = [*full(), gpu_pod(), status_map(health="Unhealthy")]
    assert lines(objects) == ["ml/train autoscaler-unknown cluster-autoscaler"]
    assert "the cluster is Unhealthy to Cluster Autoscaler (ready 1, unready 2 of 3)" in details(objects)[0]


def test_the_newest_of_cas_events_decides() -> None:
    later = ca_event("NotTriggerScaleUp", NOT_MAX, "2026-12-04T10:18:00Z", n=1)
    assert lines([*full(), gpu_pod(), ca_event("TriggeredScaleUp", TRIGGERED), later])[0].startswith(
        "ml/train no-autoscaler cluster-autoscaler"
    )
    earlier = ca_event("NotTriggerScaleUp", NOT_MAX, "2026-12-04T10:10:00Z", n=1)
    assert lines([*full(), gpu_pod(), ca_event("TriggeredScaleUp", TRIGGERED), earlier]) == [
        "ml/train node-coming nodegroup/eks-gpu-a"
    ]


def test_twins_of_cas_events_raise_nothing() -> None:
    # older than twice the 5 minutes CA's recorder lets one Event a pod through; another pod's; no CA at all
    assert lines(
        [*full(), gpu_pod(), ca_event("NotTriggerScaleUp", NOT_MAX, "2026-12-04T10:09:00Z"), status_map()]
    ) == ["ml/train autoscaler-unknown cluster-autoscaler"]
    assert lines([*full(), gpu_pod(), ca_event("NotTriggerScaleUp", NOT_MAX, pod_name="other"), status_map()]) == [
        "ml/train autoscaler-unknown cluster-autoscaler"
    ]
    assert lines([*full(), gpu_pod()]) == []
    # a pod that fits a node gets no verdict
    assert lines([node("n1", "8", {}), gpu_pod(), ca_event("NotTriggerScaleUp", NOT_MAX), status_map()]) == [
        "ml/train fits 1 node(s)"
    ]


def test_the_text_status_before_1_30_is_said_not_read() -> None:
    cm = status_map()
    cm["data"]["status"] = "Cluster-autoscaler status at 2024-01-10 09:00:00.1 +0000 UTC:\nCluster-wide:\n"
    assert "text of Cluster Autoscaler before 1.30: not read" in details([*full(), gpu_pod(), cm])[0]


def test_an_event_ages_out_of_its_window_at_the_deadline() -> None:
    state = ClusterState.from_objects(
        (f"o{i}", o) for i, o in enumerate([*full(), gpu_pod(), ca_event("TriggeredScaleUp", TRIGGERED)])
    )
    assert words.events_deadline(state, NOW) == datetime(2026, 12, 4, 10, 30, tzinfo=UTC)
    assert words.events_deadline(state, datetime(2026, 12, 4, 10, 31, tzinfo=UTC)) is None


# -- read bounded, live as in a snapshot, and kept by the monitor's evaluator -----------------------------


def objects_ca() -> list[JSON]:
    others = [
        event("Scheduled", "Successfully assigned ml/run to n1", pod_name="run"),  # a Normal Event nobody reads
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kube-root-ca.crt", "namespace": "ml"}},
    ]
    return [*full(), gpu_pod(), ca_event("NotTriggerScaleUp", NOT_MAX), status_map("Backoff", target=4), *others]


def live(tmp_path: Path, items: list[JSON]) -> tuple[Outcome, FakeApi]:
    from gpulabel.app.checks import run_pending

    api = FakeApi()
    for k in KIND.values():  # every API server serves the core and apps kinds, none of them at first
        if k.probe is None:
            api.objects.setdefault(k.path, {})
    for obj in items:
        if obj["kind"] == "Node":
            api.nodes[str(obj["metadata"]["name"])] = obj
        else:
            api.put(obj)
    session = Session(Source(kubeconfig="unused"))
    session._client = fake_client(tmp_path, api, FakeClock())
    return run_pending(session, replace(BUILTIN.options(), now=NOW)), api


def test_live_pending_lists_them_bounded_and_a_capture_says_the_same(tmp_path: Path) -> None:
    from gpulabel.app.checks import run_pending

    items = objects_ca()
    got, api = live(tmp_path, items)
    assert [f.line() for f in got.result.findings if f.reason != "insufficient"] == [
        "ml/train no-autoscaler cluster-autoscaler 1 in backoff after failed scale-up 1 max node group size reached"
    ]
    # one paged LIST per reason, by field selector; the ConfigMap by its name: never one request per pod
    selectors = sorted(q.get("fieldSelector", "") for q in api.queries("GET", "/api/v1/events"))
    assert selectors == sorted(AUTOSCALER_EVENTS.values())
    assert [q.get("fieldSelector") for q in api.queries("GET", "/api/v1/configmaps")] == [
        "metadata.name=cluster-autoscaler-status"
    ]
    doc = capture(fake_client(tmp_path, api, FakeClock()))
    held = [(o["kind"], o.get("reason") or o["metadata"].get("name")) for o in doc["items"] if "metadata" in o]
    assert ("Event", "NotTriggerScaleUp") in held and ("ConfigMap", "cluster-autoscaler-status") in held
    assert ("Event", "Scheduled") not in held and ("ConfigMap", "kube-root-ca.crt") not in held
    path = tmp_path / "capture.json"
    path.write_bytes(orjson.dumps(doc))
    offline = run_pending(Session(Source(snapshots=(str(path),))), replace(BUILTIN.options(), now=NOW))
    assert (offline.code, offline.result) == (got.code, got.result)


def test_the_monitors_evaluators_follow_the_events_and_their_age() -> None:
    """The incremental evaluator (the monitor's) equals the full one as an Event comes and as time ages it."""
    objects = [*full(), gpu_pod(), status_map()]
    opts = BUILTIN.options()
    full_ev, inc = FullEvaluator(opts), IncrementalEvaluator(opts)
    by_kind: dict[str, list[tuple[tuple[str, str], Any]]] = {}
    for o in objects:
        k = KIND[o["kind"]]
        key = (o["metadata"].get("namespace", ""), o["metadata"]["name"])
        by_kind.setdefault(k.kind, []).append((key, k.read(o, "t")))
    for ev in (full_ev, inc):
        for kind in ("Node", "Pod", "ConfigMap", "Event/TriggeredScaleUp"):
            ev.reset(kind, by_kind.get(kind, []))

    def pending_lines(ev: Any, at: datetime) -> list[str]:
        result = ev.assess(at.timestamp()).result
        return [f.line() for f in result.findings if f.check == "pending" and f.reason != "insufficient"]

    assert pending_lines(inc, NOW) == pending_lines(full_ev, NOW) == ["ml/train autoscaler-unknown cluster-autoscaler"]
    triggered = ca_event("TriggeredScaleUp", TRIGGERED, "2026-12-04T10:15:00Z")
    record = KIND["Event"].read(triggered, "t")
    for ev in (full_ev, inc):
        assert ev.apply("Event/TriggeredScaleUp", ("ml", triggered["metadata"]["name"]), record)
    coming = ["ml/train node-coming nodegroup/eks-gpu-a"]
    assert pending_lines(inc, NOW) == pending_lines(full_ev, NOW) == coming
    later = datetime(2026, 12, 4, 10, 31, tzinfo=UTC)  # the Event is 16 minutes old: no longer CA's word
    assert (
        pending_lines(inc, later) == pending_lines(full_ev, later) == ["ml/train autoscaler-unknown cluster-autoscaler"]
    )


def test_explain_pods_autoscaler_step_says_what_pending_says() -> None:
    """``explain pod``'s autoscaler step reads the pod's Events as ``pending`` does, at the same time: Cluster
    Autoscaler's word where it alone is (``unknown`` too, leaving the ``nodes`` step broken), and a NodeClaim past
    its grace is late."""
    from gpulabel.checks.explain.pod import explain_pod

    cases = {
        "node-coming": [*full(), gpu_pod(), ca_event("TriggeredScaleUp", TRIGGERED, "2026-12-04T10:06:00Z")],
        "no-autoscaler": [*full(), gpu_pod(), ca_event("NotTriggerScaleUp", NOT_MAX), status_map()],
        "autoscaler-unknown": [*full(), gpu_pod(), status_map()],
        "node-late": [*full(), gpu_pod(), *POOLS, IN_FLIGHT],
    }
    for reason, objects in cases.items():
        state = ClusterState.from_objects((f"obj{i}", o) for i, o in enumerate(objects))
        findings = [f for f in pending_result(state, now=NOW).findings if f.pod == "ml/train"]
        (said,) = [f for f in findings if f.reason not in ("insufficient", "node-selector")]
        assert said.reason == reason, (reason, said)
        pod_ = next(p for p in state.pods if p.name == "train")
        steps = {s.name: s for s in explain_pod(state, pod_, findings, now=NOW)}
        auto = steps["autoscaler"]
        assert auto.verdict is not None and auto.row()["detail"] == said.detail, reason
        want = {"node-coming": "waiting", "no-autoscaler": "broken", "autoscaler-unknown": "waiting"}
        assert auto.status == want.get(reason, "waiting"), (reason, auto)
        if reason == "autoscaler-unknown":
            assert auto.verdict.kind == "unknown" and steps["nodes"].status == "broken"
        if reason == "node-late":
            assert auto.evidence.startswith("the node on its way is late (nodeclaim/gpu-a-z7"), auto.evidence
