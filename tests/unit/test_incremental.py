"""IncrementalEvaluator == FullEvaluator after any sequence of watch events (the monitor's agreement, in process).

Seeded random sequences of events over every example snapshot and small bench.synth clusters: nodes
added, deleted and changed (labels the checks read, taints, allocatable, Ready, cordon, managedFields
times), operand pods deleted and back, pods going Pending, bound or Failed, new Pending pods,
DaemonSets' selectors, tolerations and status, ClusterPolicy switches and status writes, DRA slices,
classes and claims, NFD objects, and now and then a relist of one kind. Every event is an API object
changed as JSON and read by its kind's own reader (what an informer hands the monitor). After each
batch both evaluators are asked at the same moment (time moves on, so stuck states age) and must
answer the same Result (every part: findings in order, sections, caveats, counts), the same root
causes and the same state. Planted wrong scopes (pending not rerun when a node's labels change,
stuck ages not refreshed, ...) must be caught by the same generator, so the oracle comparison can fail.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from bench import synth

from gpulabel.app.checks import check_options
from gpulabel.checks.admission import check as admission_definition
from gpulabel.checks.engine import judging
from gpulabel.checks.engine.assessment import Accepted, Assessment, Evaluator, FullEvaluator
from gpulabel.checks.engine.definition import Check, CheckOptions, NodePieces
from gpulabel.checks.engine.incremental import IncrementalEvaluator
from gpulabel.checks.engine.rootcause import node_findings
from gpulabel.checks.engine.verdict import IgnoreRule
from gpulabel.checks.health import check as health_definition
from gpulabel.checks.operands import check as operands_definition
from gpulabel.checks.pending import rules as pending_module
from gpulabel.checks.pending import scope, specrows
from gpulabel.checks.placement import fit as placement
from gpulabel.checks.registry import BUILTIN, Registry
from gpulabel.k8s.selectors import parse_selector
from gpulabel.model.cluster import KIND

JSON = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
START = datetime(2026, 12, 1, 12, 0, tzinfo=UTC).timestamp()
SEQUENCES = 1000  # over every base cluster, in total
BATCHES = 3  # per sequence; each batch 1-3 events, then both evaluators assess


def _objects(path: Path) -> list[JSON]:
    text = path.read_text()
    docs = [json.loads(text)] if path.suffix == ".json" else list(yaml.load_all(text, Loader=yaml.CSafeLoader))
    out = []
    for doc in docs:
        for obj in doc.get("items", ()) if doc and doc.get("kind") == "List" else [doc] if doc else []:
            if obj.get("kind") in KIND:
                out.append(obj)
    return out


def _bases() -> dict[str, list[JSON]]:
    bases = {p.name: _objects(p) for p in sorted((ROOT / "examples").glob("*")) if p.suffix in (".yaml", ".json")}
    bases = {k: v for k, v in bases.items() if v}
    pods = [o for p in sorted((ROOT / "examples" / "pods").glob("*.yaml")) for o in _objects(p)]
    bases["lab-cluster+pods"] = bases["lab-cluster.yaml"] + pods  # claims without DRA objects: a caveat
    for seed in range(3):
        bases[f"synth-{seed}"] = synth.objects(8, seed=seed, problem_rate=0.15, workloads_per_gpu_node=0.5)
    bases["synth-no-policy"] = synth.objects(8, seed=7, problem_rate=0.15, cluster_policy=False)
    return bases


BASES = _bases()


def _key(obj: JSON) -> tuple[str, tuple[str, str]]:
    meta = obj["metadata"]
    namespace = meta.get("namespace", "") if KIND[obj["kind"]].namespaced else ""
    return obj["kind"], (namespace, meta["name"])


@dataclass
class Cluster:
    """The API objects as JSON (what the informers see), and what was deleted, to bring it back."""

    rng: random.Random
    objects: dict[tuple[str, tuple[str, str]], JSON]
    gone: list[JSON] = field(default_factory=list)
    at: float = START

    def of(self, kind: str) -> list[JSON]:
        return [o for (k, _), o in self.objects.items() if k == kind]

    def pick(self, kind: str) -> JSON | None:
        found = self.of(kind)
        return copy.deepcopy(self.rng.choice(found)) if found else None


def _managed(obj: JSON, key: str, at: float) -> None:
    """Record a label write in managedFields, as the API server does for the writer's apply or update."""
    meta = obj["metadata"]
    when = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    entry = {"manager": "gpulabel-test", "operation": "Update", "apiVersion": "v1", "time": when}
    entry["fieldsType"] = "FieldsV1"
    entry["fieldsV1"] = {"f:metadata": {"f:labels": {f"f:{key}": {}}}}
    meta["managedFields"] = [*(meta.get("managedFields") or []), entry]


LABELS: dict[str, tuple[str | None, ...]] = {
    "nvidia.com/gpu.present": ("true", "false", None),
    "nvidia.com/gpu.product": ("NVIDIA-A100-SXM4-40GB", "NVIDIA-A10-SHARED", "bad value!", "A100-MIG-INVALID", None),
    "nvidia.com/gpu.count": ("8", "2", "eight", None),
    "nvidia.com/gpu.memory": ("40960", None),
    "nvidia.com/gpu.replicas": ("1", "4", None),
    "nvidia.com/gpu.sharing-strategy": ("none", "time-slicing", "mps", None),
    "nvidia.com/gpu.deploy.device-plugin": ("true", "false", "paused-for-mig-change", "", "True", None),
    "nvidia.com/gpu.deploy.driver": ("true", "pre-installed", "paused-for-driver-upgrade", None),
    "nvidia.com/gpu.deploy.container-toolkit": ("true", "false", None),
    "nvidia.com/gpu.deploy.gpu-feature-discovery": ("true", None),
    "nvidia.com/gpu.deploy.dcgm-exporter": ("true", "false", None),
    "nvidia.com/gpu.deploy.operands": ("false", None),
    "nvidia.com/mig.config.state": ("pending", "rebooting", "failed", "success", None),
    "nvidia.com/mig.config": ("all-1g.5gb", "all-disabled", None),
    "nvidia.com/mig.capable": ("true", None),
    "nvidia.com/mig.strategy": ("single", "mixed", None),
    "nvidia.com/gpu-driver-upgrade-state": ("upgrade-required", "upgrade-failed", "upgrade-done", None),
    "feature.node.kubernetes.io/pci-10de.present": ("true", None),
    "feature.node.kubernetes.io/custom-gpu-training": ("true", None),
    "cloud.google.com/gke-accelerator": ("nvidia-l4", None),
}


def _node_event(c: Cluster) -> JSON | tuple[str, JSON] | None:
    node = c.pick("Node")
    if node is None:
        return None
    meta, spec = node["metadata"], node.setdefault("spec", {})
    status = node.setdefault("status", {})
    roll = c.rng.random()
    if roll < 0.45:
        key = c.rng.choice(sorted(LABELS))
        value = c.rng.choice(LABELS[key])
        labels = meta.setdefault("labels", {})
        if value is None:
            labels.pop(key, None)
        else:
            labels[key] = value
            _managed(node, key, c.at - c.rng.choice((0, 600, 1200, 2400, 7200)))
    elif roll < 0.6:
        taint = c.rng.choice(
            (
                {"key": "dedicated", "value": "training", "effect": "NoSchedule"},
                {"key": "nvidia.com/gpu", "effect": "NoSchedule"},
                {"key": "maintenance", "effect": "NoExecute"},
            )
        )
        taints = spec.get("taints") or []
        spec["taints"] = [t for t in taints if t != taint] if taint in taints else [*taints, taint]
    elif roll < 0.72:
        # allocatable, or capacity (the device plugin took devices out when capacity exceeds allocatable)
        part = "allocatable" if c.rng.random() < 0.6 else "capacity"
        amounts = status.setdefault(part, {"cpu": "32", "memory": "256Gi", "pods": "110"})
        choice = c.rng.choice(("0", "1", "4", "8", None))
        if choice is None:
            amounts.pop("nvidia.com/gpu", None)
        else:
            amounts["nvidia.com/gpu"] = choice
    elif roll < 0.8:
        ready = c.rng.choice(("True", "False", "Unknown"))
        status["conditions"] = [{"type": "Ready", "status": ready}]
        if c.rng.random() < 0.5:  # a health agent's GPU condition, aged
            since = datetime.fromtimestamp(c.at - c.rng.choice((0, 3600, 7200)), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            kind = c.rng.choice(("GPUXIDErrors", "GpuXidError", "KernelDeadlock"))
            state = c.rng.choice(("True", "False", "Unknown"))
            status["conditions"].append({"type": kind, "status": state, "reason": "XID79", "lastTransitionTime": since})
    elif roll < 0.86:
        spec["unschedulable"] = not spec.get("unschedulable", False)
    elif roll < 0.93:
        return ("delete", node)
    else:
        meta["name"] = f"{meta['name']}-new{c.rng.randrange(1000)}"
        meta.setdefault("labels", {})["kubernetes.io/hostname"] = meta["name"]
    return node


# (status.reason, status.message) of a Failed pod: an eviction, and the kubelet's admission rejections
# (pkg/kubelet/kubelet.go rejectPod; the messages of cm/devicemanager and cm/topologymanager, v1.37.2)
_REJECTIONS = (
    ("", ""),
    ("Evicted", "The node was low on resource: memory."),
    (
        "UnexpectedAdmissionError",
        "Pod was rejected: Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. "
        "Requested: 1, Available: 0, which is unexpected",
    ),
    ("TopologyAffinityError", "Pod was rejected: Resources cannot be allocated with Topology locality"),
)


def _pod_event(c: Cluster) -> JSON | tuple[str, JSON] | None:
    pod = c.pick("Pod")
    if pod is None:
        return None
    meta, spec = pod["metadata"], pod.setdefault("spec", {})
    status = pod.setdefault("status", {})
    roll = c.rng.random()
    if roll < 0.25:
        return ("delete", pod)
    if roll < 0.5:
        ready = c.rng.choice(("True", "False"))
        status["phase"] = "Running"
        status["conditions"] = [{"type": "Ready", "status": ready}]
        if ready == "False":
            status["containerStatuses"] = [
                {"name": "c", "restartCount": 3, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
            ]
        elif c.rng.random() < 0.4:  # the kubelet's allocatedResourcesStatus (KEP-4680) for the GPU it holds
            health = c.rng.choice(("Healthy", "Unhealthy", "Unknown"))
            device = {"resourceID": f"GPU-{c.rng.randrange(4)}", "health": health}
            reported = [{"name": "nvidia.com/gpu", "resources": [device]}]
            status["containerStatuses"] = [{"name": "c", "restartCount": 0, "allocatedResourcesStatus": reported}]
        else:
            status.pop("containerStatuses", None)
    elif roll < 0.65:  # back to Pending, unbound (a new replica waiting)
        meta["name"] = f"{meta['name']}-{c.rng.randrange(1000)}"
        spec.pop("nodeName", None)
        status.clear()
        status["phase"] = "Pending"
        message = c.rng.choice(("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.", ""))
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "message": message}]
    elif roll < 0.8:  # bound somewhere (the scheduler's binding)
        nodes = c.of("Node")
        if not nodes:
            return None
        spec["nodeName"] = c.rng.choice(nodes)["metadata"]["name"]
        status["phase"] = "Running"
        status["conditions"] = [{"type": "Ready", "status": "True"}]
    elif roll < 0.9:
        status["phase"] = c.rng.choice(("Failed", "Succeeded", "Pending"))
        if status["phase"] == "Failed":  # now and then the kubelet's rejection at admission (pkg/kubelet)
            status["reason"], status["message"] = c.rng.choice(_REJECTIONS)
    else:  # a new GPU request size
        for container in spec.get("containers") or ():
            res = container.setdefault("resources", {})
            res["requests"] = {"nvidia.com/gpu": c.rng.choice(("1", "4", "16"))}
            res["limits"] = dict(res["requests"])
    return pod


def _daemonset_event(c: Cluster) -> JSON | tuple[str, JSON] | None:
    ds = c.pick("DaemonSet")
    if ds is None:
        return None
    tspec = ds["spec"]["template"]["spec"]
    roll = c.rng.random()
    if roll < 0.35:
        status = ds.setdefault("status", {})
        status["desiredNumberScheduled"] = c.rng.randrange(6)
        status["numberReady"] = c.rng.randrange(6)
    elif roll < 0.55:
        tolerations = tspec.get("tolerations") or []
        wide = {"operator": "Exists"}
        tspec["tolerations"] = [t for t in tolerations if t != wide] if wide in tolerations else [*tolerations, wide]
    elif roll < 0.75:
        selector = tspec.setdefault("nodeSelector", {})
        if "nvidia.com/gpu.present" in selector:
            selector.pop("nvidia.com/gpu.present")
        else:
            selector["nvidia.com/gpu.present"] = "true"
    else:
        return ("delete", ds)
    return ds


def _policy_event(c: Cluster) -> JSON | tuple[str, JSON] | None:
    policy = c.pick("ClusterPolicy")
    if policy is None:
        return None
    spec = policy.setdefault("spec", {})
    roll = c.rng.random()
    if roll < 0.2:  # the operator's status write: nothing the checks read
        policy["status"] = {"state": c.rng.choice(("ready", "notReady")), "namespace": "gpu-operator"}
    elif roll < 0.6:
        section = c.rng.choice(("dcgmExporter", "gfd", "toolkit", "devicePlugin", "driver", "migManager"))
        part = spec.setdefault(section, {})
        part["enabled"] = not part.get("enabled", True)
    elif roll < 0.85:
        spec.setdefault("mig", {})["strategy"] = c.rng.choice(("single", "mixed"))
    else:
        return ("delete", policy)
    return policy


def _dra_event(c: Cluster) -> JSON | tuple[str, JSON] | None:
    kind = c.rng.choice(("ResourceSlice", "DeviceClass", "ResourceClaim"))
    obj = c.pick(kind)
    if obj is None:
        return None
    if c.rng.random() < 0.4:
        return ("delete", obj)
    if kind == "ResourceSlice":
        devices = obj["spec"].get("devices") or []
        if devices:
            obj["spec"]["devices"] = devices[: c.rng.randrange(len(devices) + 1)]
    elif kind == "DeviceClass":
        obj["spec"]["selectors"] = [{"cel": {"expression": c.rng.choice(("true", "device.driver == 'none'"))}}]
    else:
        obj.pop("status", None)
    return obj


def _nfd_event(c: Cluster) -> JSON | tuple[str, JSON] | None:
    kind = c.rng.choice(("NodeFeature", "NodeFeatureRule"))
    obj = c.pick(kind)
    if obj is None:
        return None
    if c.rng.random() < 0.3:
        return ("delete", obj)
    if kind == "NodeFeature":
        labels = obj["spec"].setdefault("labels", {})
        key = "feature.node.kubernetes.io/test-label"
        if key in labels:
            labels.pop(key)
        else:
            labels[key] = "true"
    else:
        rules = obj["spec"].get("rules") or []
        if rules:
            obj["spec"]["rules"] = rules[:-1]
    return obj


def _kueue_event(c: Cluster) -> JSON | tuple[str, JSON] | None:
    """A flavor's labels set right or wrong, a quota raised or lowered, a Topology's level or a flavor removed."""
    kind = c.rng.choice(("ResourceFlavor", "ClusterQueue", "Topology"))
    obj = c.pick(kind)
    if obj is None:
        return None
    if c.rng.random() < 0.2:
        return ("delete", obj)
    if kind == "ResourceFlavor":
        labels = obj["spec"].setdefault("nodeLabels", {})
        labels["nvidia.com/gpu.product"] = c.rng.choice(("NVIDIA-A100-SXM4-40GB", "NVIDIA-A100-SXM4-80GB", "x"))
    elif kind == "ClusterQueue":
        for fq in obj["spec"]["resourceGroups"][0]["flavors"]:
            for r in fq["resources"]:
                if r["name"] == "nvidia.com/gpu":
                    r["nominalQuota"] = c.rng.choice((4, 8, 16, 32))
    else:
        obj["spec"]["levels"] = obj["spec"]["levels"][: c.rng.randrange(1, len(obj["spec"]["levels"]) + 1)]
    return obj


def _return_one(c: Cluster) -> JSON | None:
    if not c.gone:
        return None
    return c.gone.pop(c.rng.randrange(len(c.gone)))


EVENTS: list[tuple[float, Callable[[Cluster], JSON | tuple[str, JSON] | None]]] = [
    (0.34, _node_event),
    (0.30, _pod_event),
    (0.08, _daemonset_event),
    (0.06, _policy_event),
    (0.08, _dra_event),
    (0.06, _nfd_event),
    (0.06, _kueue_event),
    (0.08, _return_one),
]


_LISTED: dict[int, dict[str, list[tuple[tuple[str, str], Any]]]] = {}


def _listed(objects: list[JSON]) -> dict[str, list[tuple[tuple[str, str], Any]]]:
    """A base cluster's records per kind, read once (records are immutable: every sequence may share them)."""
    found = _LISTED.get(id(objects))
    if found is None:
        found = _LISTED[id(objects)] = {}
        readers = {k: KIND[k].reader() for k in KIND}
        for o in objects:
            where = f"{o['kind']} {o['metadata']['name']}"
            found.setdefault(o["kind"], []).append((_key(o)[1], readers[o["kind"]](o, where)))
    return found


@dataclass
class Pair:
    """The same events fed to the evaluator under test and to the oracle, through the kinds' own readers."""

    under_test: Any
    oracle: FullEvaluator
    readers: dict[str, Callable[[JSON, str], Any]] = field(default_factory=dict)

    def read(self, obj: JSON) -> Any:
        kind = obj["kind"]
        reader = self.readers.setdefault(kind, KIND[kind].reader())
        return reader(obj, f"{kind} {obj['metadata']['name']}")

    def reset(self, objects: list[JSON]) -> None:
        for kind, records in _listed(objects).items():
            for ev in (self.under_test, self.oracle):
                ev.reset(kind, records)

    def relist(self, kind: str, objects: list[JSON]) -> None:
        """A relist of one kind (after a 410): every object of it now, read afresh."""
        self.readers.pop(kind, None)
        records = [(_key(o)[1], self.read(o)) for o in objects]
        for ev in (self.under_test, self.oracle):
            ev.reset(kind, records)

    def apply(self, obj: JSON, deleted: bool) -> None:
        kind, key = _key(obj)
        record = None if deleted else self.read(obj)
        for ev in (self.under_test, self.oracle):
            ev.apply(kind, key, record)

    def assess(self, at: float) -> tuple[Assessment, Assessment]:
        return self.under_test.assess(at), self.oracle.assess(at)

    def first_difference(self, objects: list[JSON], batches: Iterable[list[tuple[JSON, bool]]]) -> str:
        """LIST ``objects``, then each batch a minute apart, assessing both after each: how they first differ
        ("" if never)."""
        self.reset(objects)
        if why := _differs(*self.assess(START)):
            return f"after the LIST: {why}"
        for n, batch in enumerate(batches):
            for obj, deleted in batch:
                self.apply(obj, deleted)
            if why := _differs(*self.assess(START + 60.0 * (n + 1))):
                return f"batch {n}: {why}"
        return ""


def _differs(got: Assessment, want: Assessment) -> str:
    if got.result != want.result:
        for g, w in zip(got.result.parts, want.result.parts, strict=True):
            if g != w:
                return f"check {w.command}: {len(g.findings)} vs {len(w.findings)} findings\n{g}\n!=\n{w}"
        return f"the judged result differs\n{got.result}\n!=\n{want.result}"
    if got.causes != want.causes:
        return "root causes differ"
    if got.state != want.state:
        return "states differ"
    return ""


def _sequences(
    factory: Callable[..., Any],
    count: int,
    seed: int = 0,
    bases: dict[str, list[JSON]] | None = None,
    registry: Registry | None = None,
    accepted: Callable[[random.Random], Accepted] | None = None,
) -> Iterator[str]:
    """Run ``count`` sequences over the bases in turn; yield a description of every disagreement. ``registry``:
    the checks both evaluators run (gpulabel's own by default); ``accepted``: what a team accepted in each
    sequence (none by default), given to both."""
    bases = bases or BASES
    names = sorted(bases)
    opts = check_options() if registry is None else replace(check_options(), registry=registry)
    for n in range(count):
        name = names[n % len(names)]
        rng = random.Random(f"{seed}-{n}")
        opts_n = replace(
            opts,
            strict=rng.random() < 0.3,
            per_node=rng.random() < 0.2,
            all_pods=rng.random() < 0.2,
            namespace=rng.choice((None,) * 8 + ("gpu-operator", "ml")),
            operator_namespace=rng.choice((None,) * 9 + ("gpu-operator",)),
            disabled=rng.choice(((),) * 9 + (("dcgm-exporter",),)),
            stuck_after=rng.choice((1800.0, 1800.0, 600.0)),
        )
        objects = bases[name]
        cluster = Cluster(rng, {_key(o): o for o in objects})
        taken = accepted(rng) if accepted is not None else Accepted()
        pair = Pair(factory(opts_n, taken), FullEvaluator(opts_n, taken))
        pair.reset(objects)
        got = pair.under_test.assess(cluster.at)
        if n % 8 == 0 and (why := _differs(got, pair.oracle.assess(cluster.at))):  # the LIST (part of the time)
            yield f"{name} sequence {n} after the LIST: {why}"
            continue
        for batch in range(BATCHES):
            done = []
            if rng.random() < 0.03:  # a relist of one kind between batches: the informer's answer to a 410
                kind = rng.choice(sorted({k for k, _ in cluster.objects}))
                pair.relist(kind, cluster.of(kind))
            for _ in range(rng.randint(1, 3)):
                event = rng.choices([e for _, e in EVENTS], weights=[w for w, _ in EVENTS])[0](cluster)
                if event is None:
                    continue
                deleted, obj = (True, event[1]) if isinstance(event, tuple) else (False, event)
                key = _key(obj)
                if deleted:
                    cluster.objects.pop(key, None)
                    cluster.gone.append(obj)
                else:
                    cluster.objects[key] = obj
                pair.apply(obj, deleted)
                done.append(f"{'delete' if deleted else 'put'} {key}")
            cluster.at += rng.choice((0.0, 30.0, 600.0, 1000.0))
            got, want = pair.assess(cluster.at)
            if why := _differs(got, want):
                yield f"{name} sequence {n} batch {batch} ({'; '.join(done)}): {why}"
                break


def test_incremental_equals_full_after_random_event_sequences() -> None:
    failures = list(_sequences(IncrementalEvaluator, SEQUENCES))
    assert not failures, f"{len(failures)} of {SEQUENCES} sequences disagree; first: {failures[0]}"


def _accepted(rng: random.Random) -> Accepted:
    """A team's config as ``gpulabel.yaml`` reads it: severity overrides and ignore rules (by check, reason,
    a node label selector the node events flip, namespace and pod pattern), some of each per sequence."""
    severities = {
        k: v
        for k, v in (("missing", "info"), ("operands/not-ready", "error"), ("taint", "warning"), ("stuck", "info"))
        if rng.random() < 0.5
    }
    rules = (
        IgnoreRule("a", check="audit"),
        IgnoreRule("b", reason="cordoned"),
        IgnoreRule("c", nodes=parse_selector("nvidia.com/mig.capable=true").matches),
        IgnoreRule("d", check="operands", nodes=parse_selector("nvidia.com/gpu.deploy.dcgm-exporter=false").matches),
        IgnoreRule("e", namespace="ml", pod="train-*"),
        IgnoreRule("f", namespace="gpu-operator"),
    )
    return Accepted(severities, tuple(r for r in rules if rng.random() < 0.4))  # type: ignore[arg-type]


def test_incremental_equals_full_with_what_a_team_accepted() -> None:
    """Severity overrides and ignore rules (a node selector's among them) judge both evaluators alike as nodes'
    labels flip: the incremental one keeps each check's judged result and each node's cause between events."""
    count = SEQUENCES // 4
    failures = list(_sequences(IncrementalEvaluator, count, seed=7, accepted=_accepted))
    assert not failures, f"{len(failures)} of {count} sequences disagree; first: {failures[0]}"


def _no_clock(check: Check) -> Check:
    """``check`` (a node check) with pieces that never read the clock: its stuck states no longer age."""
    pieces = check.pieces
    assert isinstance(pieces, NodePieces)
    return replace(check, pieces=replace(pieces, rule=replace(pieces.rule, clock=lambda node: False)))


# Planted wrong scopes: each must make the oracle comparison fail (so the test above can fail), and name the
# check. A scope is a function of a check's definition module (patched there) or a rule of its definition.
PLANTED: dict[str, tuple[Any, str, Any, tuple[str, ...]]] = {
    # a node's labels, taints and allocatable no longer rerun pending (nor hazards)
    "placement_view": (placement, "placement_view", lambda node: (), ("pending", "hazards")),
    # an operand pod's change no longer reruns the operands of its node
    "_daemon": (operands_definition, "_daemon", lambda pod: False, ("operands",)),
    # a DaemonSet's new selector or tolerations taken for a status update
    "_ds_view": (operands_definition, "_ds_view", lambda ds: (ds.namespace, ds.name), ("operands",)),
    # a pod's device reports (allocatedResourcesStatus) no longer rerun its node's health
    "_reported_on": (health_definition, "_reported_on", lambda pod: (), ("health",)),
    # a GPU pod's rejection at admission no longer remakes its node's admission findings
    "_rejected_on": (admission_definition, "_rejected_on", lambda pod: (), ("admission",)),
}


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_a_wrong_scope_is_caught(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    module, attr, wrong, checks = PLANTED[name]
    monkeypatch.setattr(module, attr, wrong)
    caught = next(_sequences(IncrementalEvaluator, 400, seed=1), "")
    assert caught, f"the generator never caught the planted wrong scope {name}"
    assert any(f"check {c}:" in caught for c in checks), caught


def test_a_wrong_clock_is_caught() -> None:
    """Stuck states no longer age between events in the pieces of mig and upgrade (mixed-fleet has MIG states
    and upgrades under way): the incremental evaluator runs a registry whose node rules say so."""
    wrong = Registry(tuple(_no_clock(c) if c.name in ("mig", "upgrade") else c for c in BUILTIN))

    def planted(opts: CheckOptions, *args: Any) -> IncrementalEvaluator:
        return IncrementalEvaluator(replace(opts, registry=wrong), *args)

    bases = {"mixed-fleet.yaml": BASES["mixed-fleet.yaml"]}
    caught = next(_sequences(planted, 400, seed=1, bases=bases), "")
    assert caught, "the generator never caught the planted wrong clock"
    assert any(f"check {c}:" in caught for c in ("mig", "upgrade")), caught


def test_time_alone_ages_stuck_states() -> None:
    """No event at all, only time passing: a MIG state pending for longer than --stuck-after turns stuck."""
    objects = BASES["mixed-fleet.yaml"]
    opts = check_options()
    pair = Pair(IncrementalEvaluator(opts), FullEvaluator(opts))
    pair.reset(objects)
    seen = set()
    for hours in range(0, 24 * 30, 6):
        got, want = pair.assess(START + hours * 3600)
        assert got.result == want.result
        seen |= {(f.check, f.reason) for f in got.findings}
    assert {("mig", "stuck"), ("upgrade", "stuck")} & seen


def test_it_is_an_evaluator_made_like_the_full_one() -> None:
    """The monitor builds either with the same arguments (opts, accepted, source) and drives it by the protocol."""
    evaluator: Evaluator = IncrementalEvaluator(check_options(), None, "live")
    evaluator.reset("Node", ())
    assert evaluator.assess(START).state.source == "live"
    with pytest.raises(KeyError):
        evaluator.apply("Nonsense", ("", "x"), None)


# A bound pod's change re-judging no Pending pod at all (neither the pods judged on every node, through the
# scope, nor those told by a kept row, through the rows whose cells moved): the random sequences catch it (the
# narrower wrong scopes, that only the figures or the preemption tail show, are planted in
# tests/unit/test_incremental_scope.py).
def test_no_re_judging_on_a_bound_pods_change_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scope, "flips", lambda pod, old, new, backed: False)
    monkeypatch.setattr(specrows.SpecRows, "settled", lambda self: set())
    caught = next(_sequences(IncrementalEvaluator, 400, seed=1), "")
    assert "check pending:" in caught, caught


def test_a_node_selected_by_an_ignore_rule_is_judged_again_when_only_its_labels_change() -> None:
    """A label no check reads (``team``) silences every finding of a node through an ignore rule's selector:
    the checks' results are equal before and after, yet the judged ones differ (and its root cause goes)."""
    objects = BASES["drifted-lab.yaml"]
    rule = IgnoreRule("the infra team's nodes", nodes=parse_selector("team=infra").matches)
    accepted = Accepted({}, (rule,))
    pair = Pair(IncrementalEvaluator(check_options(), accepted), FullEvaluator(check_options(), accepted))
    pair.reset(objects)
    first, _ = pair.assess(START)
    node = next(
        o for o in objects if o["kind"] == "Node" and any(c.node == o["metadata"]["name"] for c in first.causes)
    )
    name = node["metadata"]["name"]
    for team in ("infra", None, "infra"):
        changed = copy.deepcopy(node)
        changed["metadata"]["labels"].pop("team", None)
        if team:
            changed["metadata"]["labels"]["team"] = team
        pair.apply(changed, False)
        got, want = pair.assess(START)
        assert not _differs(got, want), _differs(got, want)
        assert any(f.node == name for f in got.findings) is (team is None)


def test_which_pods_are_gpu_pods_follows_the_nodes_that_come_and_go() -> None:
    """A Pending pod asking for a resource only a GPU node advertises is a GPU pod while such a node is there
    (pending lists it), and a pod whose node selector names a label key only GPU nodes carry is one while a
    node that is not a GPU node lacks it: both told by nodes joining, changing and leaving, kept between events
    by the incremental evaluator (``pending.GpuPods.put``)."""
    from tests.objects import gpu_node, node, pod

    def with_amounts(obj: JSON, amounts: dict[str, str]) -> JSON:
        obj["status"].update(capacity=dict(amounts), allocatable=dict(amounts))
        return obj

    plain = with_amounts(node("cpu-1"), {"cpu": "8", "memory": "32Gi", "pods": "110"})
    gpu_1 = with_amounts(gpu_node("gpu-1"), {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "4"})
    accel = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"acme.com/accel": "1"}}}]}
    selects = {"nodeSelector": {"team.example.com/gpu-pool": "a"}}
    waiting = [
        pod("ml", "wants-accel", phase="Pending", spec=accel, conditions=[]),
        pod("ml", "wants-pool", phase="Pending", spec=selects, conditions=[]),
    ]
    objects = [plain, gpu_1, *waiting]
    gpu_2 = with_amounts(
        gpu_node("gpu-2", **{"team.example.com/gpu-pool": "a"}),
        {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "4", "acme.com/accel": "2"},
    )
    pooled_cpu = copy.deepcopy(plain)
    pooled_cpu["metadata"]["labels"]["team.example.com/gpu-pool"] = "b"
    steps: list[tuple[JSON, bool, set[str]]] = [
        (gpu_2, False, {"ml/wants-accel", "ml/wants-pool"}),  # joins: advertises acme.com/accel, carries the key
        (pooled_cpu, False, {"ml/wants-accel"}),  # a CPU node carries the key too: no longer GPU-only
        (plain, False, {"ml/wants-accel", "ml/wants-pool"}),
        (gpu_2, True, set()),  # leaves: neither
    ]
    pair = Pair(IncrementalEvaluator(check_options()), FullEvaluator(check_options()))
    pair.reset(objects)
    got, want = pair.assess(START)
    assert not _differs(got, want), _differs(got, want)
    for obj, deleted, listed in steps:
        pair.apply(obj, deleted)
        got, want = pair.assess(START)
        assert not _differs(got, want), _differs(got, want)
        pending = next(p for p in got.result.parts if p.command == "pending")
        assert {str(r["pod"]) for r in pending.sections[0].rows} == listed


def test_a_join_that_does_not_ask_which_pods_are_gpu_pods_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A node that comes or goes re-judges the Pending pods a kept row tells only if which pods are GPU pods
    changed with it (``GpuPods.view`` before and after): planted blind, the test above fails."""
    monkeypatch.setattr(pending_module.GpuPods, "view", lambda self: (frozenset(), frozenset()))
    with pytest.raises(AssertionError):
        test_which_pods_are_gpu_pods_follows_the_nodes_that_come_and_go()


def test_a_nodefeaturerule_change_tells_a_pending_pod_its_hints_again() -> None:
    """A Pending GPU pod selects an NFD label no node has; a NodeFeatureRule that would write it explains why
    it does not match (pending's wide lines). Changing the rule changes those lines while the pod and its
    spec's row stay what they were: the incremental evaluator must not keep the pod's lines."""
    from tests.objects import nodefeaturerule

    objects = copy.deepcopy(BASES["nfd-rules.yaml"])
    wants = {"feature.node.kubernetes.io/gpu-fancy": "true"}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "fancy", "namespace": "ml"},
        "spec": {
            "nodeSelector": wants,
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"nvidia.com/gpu": "1"}}}],
        },
        "status": {"phase": "Pending"},
    }
    kernel = {"feature": "kernel.version", "matchExpressions": {"major": {"op": "Gt", "value": ["7"]}}}
    rule = nodefeaturerule("fancy", {"gpu-fancy": "true"}, kernel)
    pair = Pair(IncrementalEvaluator(check_options()), FullEvaluator(check_options()))
    pair.reset([*objects, pod, rule])
    first, want = pair.assess(START)
    assert not _differs(first, want), _differs(first, want)
    wide = next(p for p in first.result.parts if p.command == "pending").sections[0].wide or ()
    assert any("nfd:" in line and "fancy" in line for line in wide), wide
    looser = copy.deepcopy(rule)
    looser["spec"]["rules"][0]["matchFeatures"][0]["matchExpressions"]["major"]["value"] = ["6"]
    pair.apply(looser, False)
    got, want = pair.assess(START + 60)
    assert not _differs(got, want), _differs(got, want)
    assert got.result.parts != first.result.parts


def _regroup_never(by_node: dict[str, list[Any]], old: Sequence[Any], new: Sequence[Any], *_: Any) -> set[str]:
    return set()


def _regroup_came_only(by_node: dict[str, list[Any]], old: Sequence[Any], new: Sequence[Any], *_: Any) -> set[str]:
    """Only the nodes of the findings that came (a node whose last finding went keeps it)."""
    was = {id(f) for f in old}
    nodes = {f.node for f in new if id(f) not in was and f.node and not f.pod}
    fresh = node_findings(f for f in new if f.node in nodes and not f.baseline)
    moved = {n for n in nodes if by_node.get(n) != fresh.get(n)}
    for n in moved:
        by_node[n] = fresh[n]
    return moved


@pytest.mark.parametrize("planted", [_regroup_never, _regroup_came_only])
def test_a_judgment_that_regroups_too_few_nodes_is_caught(monkeypatch: pytest.MonkeyPatch, planted: Any) -> None:
    """The kept judgment regroups by node only the findings that changed (judging._regroup): one that never
    regroups, or forgets the nodes whose findings went, leaves a root cause wrong, and the sequences see it."""
    monkeypatch.setattr(judging, "_regroup", planted)
    assert next(_sequences(IncrementalEvaluator, 400, seed=1), "")
