"""A seeded differential of ``gpulabel queues`` against the real Kueue (v0.17.0's manager, labcluster/kueue/up)
and the real kube-scheduler, on a labcluster of its own.

The cluster: GPU nodes of a few kinds (GFD's ``nvidia.com/gpu.product`` values, among them an A100
``-40GB``/``-80GB`` pair whose 80GB node is cordoned; a tainted H100 pair; L4 nodes of 4 GPUs without the
rack label; a node with no GPU). From the seed: ResourceFlavors (product labels that match, differ by one
character or name a product no node has, an optional rack label, ``nodeTaints``, ``tolerations``, a
``topologyName`` whose Topology's levels some nodes lack), ClusterQueues (1-3 flavors in order with a
nominal ``nvidia.com/gpu`` quota each, some in a cohort, some with a borrowing limit), a LocalQueue each, and
``GPULABEL_KUEUE_WORKLOADS`` (default 120) suspended Jobs of 1-2 pods asking 1-8 GPUs each, some with the
taint's toleration and some with a product nodeSelector. Kueue makes a Workload per Job and admits what its
quotas allow; the scheduler binds the admitted pods or leaves them Pending. Once all of that has settled
(every Workload admitted or refused with a reason, every admitted pod bound or Unschedulable: polled with a
deadline), one ``gpulabel snapshot`` is taken between two reads of the facts that must agree, and
``gpulabel queues -o json`` and ``gpulabel pending -o json`` judge it.

The answer key is the real system: each Workload's Admitted condition and the flavor in
``status.admission``, then each of its pods: bound, or Pending with the scheduler's FailedScheduling
message, which is *no-node* when it names only filters before resources (node affinity/selector, untolerated
taint, unschedulable) and *insufficient* when it names ``Insufficient nvidia.com/gpu``. The comparison, each
rule counted over every pod of every admitted Workload (a broken rule is a disagreement; there must be none):

1. ``admitted-pending`` of a pod ⇒ its Workload is admitted to the flavor the finding names, and the pod is
   unbound and *no-node*.
2. A pod *no-node* ⇒ ``admitted-pending`` names it, or (its own nodeSelector, not the flavor, is what no
   node meets) ``pending`` names it with a reason that is not about resources.
3. A pod with no ``admitted-pending`` ⇒ it is bound or *insufficient* (the flavor selects nodes).
4. Quota: a flavor F whose admitted pods ask more GPUs than the flavor's nodes allocate (``queues``' flavor
   row ``gpus``) has some pod *insufficient*, and ``queues`` warns ``over-quota`` of F (Kueue admits up to
   the quotas, never past them, so the quotas on F add up to more than its nodes have).
5. A pod *insufficient* ⇒ ``over-quota`` of its flavor, or one of two causes ``queues`` does not model,
   checked here and counted: the flavor's nodes are shared with another flavor whose pods are bound there,
   or the pod asks more GPUs than any node carrying the flavor's labels allocates.

Printed: the seed, the Workload count and each rule's count. ``GPULABEL_KUEUE_SEED`` and
``GPULABEL_KUEUE_WORKLOADS`` override the seed (default: a fixed one, so that CI is reproducible) and count.
Without labcluster/kueue/bin/kueue (labcluster/kueue/build; a cold build is ~8 min of CPU) the test is skipped
with that reason, or fails under ``GPULABEL_REQUIRE_CLUSTER=1``.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from gpulabel_run import gpulabel
from labcluster_support import REPO, LabCluster, LabClusterError, build, gpu_node_manifest, wait_for

SHOWN = "shown"  # the user property tests/conftest.py prints at the end of the run (seed, count, tally)

KUEUE_DIR = REPO / "labcluster" / "kueue"
KUEUE_BINARY = KUEUE_DIR / "bin" / "kueue"
KUEUE_NOT_BUILT = "Kueue's manager is not built: run labcluster/kueue/build (cold: ~8 min of CPU)"
V = "kueue.x-k8s.io/v1beta2"
PRODUCT = "nvidia.com/gpu.product"
RACK = "topology.example.com/rack"
BLOCK = "topology.example.com/block"
HOST = "kubernetes.io/hostname"
NS = "kd"
TAINT = {"key": "dedicated", "value": "training", "effect": "NoSchedule"}
TOLERATE = {"key": "dedicated", "operator": "Equal", "value": "training", "effect": "NoSchedule"}
SEED = int(os.environ.get("GPULABEL_KUEUE_SEED", "13"))
COUNT = int(os.environ.get("GPULABEL_KUEUE_WORKLOADS", "120"))

# (name prefix, count, product, GPUs, extra labels, taints, cordoned)
KINDS: tuple[tuple[str, int, str | None, int, dict[str, str], list[dict[str, str]], bool], ...] = (
    ("kd-a40", 3, "NVIDIA-A100-SXM4-40GB", 8, {RACK: "r0", BLOCK: "b0"}, [], False),
    ("kd-a80", 1, "NVIDIA-A100-SXM4-80GB", 8, {RACK: "r1", BLOCK: "b0"}, [], True),
    ("kd-h100", 2, "NVIDIA-H100-80GB-HBM3", 8, {RACK: "r1", BLOCK: "b1"}, [TAINT], False),
    ("kd-l4", 2, "NVIDIA-L4", 4, {}, [], False),
    ("kd-cpu", 1, None, 0, {RACK: "r2"}, [], False),
)
REAL_PRODUCTS = ("NVIDIA-A100-SXM4-40GB", "NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3", "NVIDIA-L4")
NEAR_PRODUCTS = ("NVIDIA-A100-SXM4-40G", "NVIDIA-H100-80GB-HBM", "NVIDIA-L40", "NVIDIA-A100-SXM4-80GB-")


@pytest.fixture(scope="module")
def kueue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabCluster]:
    """A labcluster of its own with Kueue's manager running (its CRDs and queues stay out of the shared one)."""
    if not os.access(KUEUE_BINARY, os.X_OK):
        if os.environ.get("GPULABEL_REQUIRE_CLUSTER") == "1":
            pytest.fail(f"{KUEUE_NOT_BUILT} (GPULABEL_REQUIRE_CLUSTER=1)", pytrace=False)
        pytest.skip(KUEUE_NOT_BUILT)
    try:
        cluster = LabCluster.start(tmp_path_factory.mktemp("kueue-diff"), build())
    except LabClusterError as exc:
        pytest.fail(f"labcluster is unavailable: {exc}", pytrace=False)
    up = KUEUE_DIR / "up"
    try:
        started = subprocess.run(
            [str(up), "--dir", str(cluster.dir)], capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
        )
        if started.returncode != 0:
            pytest.fail(f"labcluster/kueue/up failed:\n{started.stderr}", pytrace=False)
        yield cluster
    finally:
        subprocess.run([str(up), "--dir", str(cluster.dir), "--down"], capture_output=True, check=False)
        cluster.stop()


# --- the seeded objects ----------------------------------------------------------------------------------------


def _nodes() -> list[dict[str, Any]]:
    out = []
    for prefix, count, product, gpus, extra, taints, cordoned in KINDS:
        for i in range(count):
            labels = {**extra, **({PRODUCT: product} if product else {})}
            node = gpu_node_manifest(f"{prefix}-{i}", labels, taints, gpu=bool(gpus), gpus=gpus)
            if cordoned:
                node["spec"]["unschedulable"] = True
            out.append(node)
    return out


def _flavor(rng: random.Random, name: str) -> dict[str, Any]:
    labels: dict[str, str] = {}
    pick = rng.random()
    if pick < 0.55:
        labels[PRODUCT] = rng.choice(REAL_PRODUCTS)
    elif pick < 0.8:
        labels[PRODUCT] = rng.choice(NEAR_PRODUCTS)
    if rng.random() < 0.25:
        labels[RACK] = rng.choice(("r0", "r1", "r3"))
    spec: dict[str, Any] = {"nodeLabels": labels}
    if rng.random() < 0.25:
        spec["nodeTaints"] = [dict(TAINT)]
    if rng.random() < 0.3:
        spec["tolerations"] = [dict(TOLERATE)]
    if rng.random() < 0.2:
        topology = rng.choice(("kd-racks", "kd-blocks-missing"))
        if labels:  # Kueue's CRD: "at least one nodeLabel is required when topology is set"
            spec["topologyName"] = topology
    return {"apiVersion": V, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def _objects(rng: random.Random, count: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the queueing objects, the Jobs)."""
    topologies = [
        {"apiVersion": V, "kind": "Topology", "metadata": {"name": "kd-racks"},
         "spec": {"levels": [{"nodeLabel": RACK}, {"nodeLabel": HOST}]}},
        {"apiVersion": V, "kind": "Topology", "metadata": {"name": "kd-blocks-missing"},
         "spec": {"levels": [{"nodeLabel": "topology.example.com/pod"}, {"nodeLabel": HOST}]}},
    ]  # fmt: skip
    flavors = [_flavor(rng, f"kd-f{i}") for i in range(8)]
    names = [f["metadata"]["name"] for f in flavors]
    queues = []
    for i in range(4):
        chosen = rng.sample(names, rng.randint(1, 3))
        resources = []
        for flavor in chosen:
            quota: dict[str, Any] = {"name": "nvidia.com/gpu", "nominalQuota": str(rng.choice((0, 4, 8, 12, 16, 24)))}
            if i < 3 and rng.random() < 0.3:
                quota["borrowingLimit"] = str(rng.choice((0, 4, 8)))
            resources.append({"name": flavor, "resources": [quota]})
        spec: dict[str, Any] = {
            "namespaceSelector": {},
            "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": resources}],
        }
        if i < 3:
            spec["cohortName"] = "kd-research"
        queues.append({"apiVersion": V, "kind": "ClusterQueue", "metadata": {"name": f"kd-cq{i}"}, "spec": spec})
    local = [
        {"apiVersion": V, "kind": "LocalQueue", "metadata": {"namespace": NS, "name": f"kd-lq{i}"},
         "spec": {"clusterQueue": f"kd-cq{i}"}}
        for i in range(len(queues))
    ]  # fmt: skip
    jobs = []
    for i in range(count):
        pods = rng.choice((1, 1, 1, 2))
        pod: dict[str, Any] = {
            "restartPolicy": "Never",
            "containers": [{"name": "train", "image": "train:1",
                            "resources": {"limits": {"nvidia.com/gpu": str(rng.choice((1, 2, 4, 8)))}}}],
        }  # fmt: skip
        if rng.random() < 0.35:
            pod["tolerations"] = [dict(TOLERATE)]
        if rng.random() < 0.2:
            pod["nodeSelector"] = {PRODUCT: rng.choice(REAL_PRODUCTS)}
        jobs.append({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"namespace": NS, "name": f"kd-job-{i:03d}",
                         "labels": {"kueue.x-k8s.io/queue-name": f"kd-lq{rng.randrange(len(queues))}"}},
            "spec": {"suspend": True, "parallelism": pods, "completions": pods, "backoffLimit": 0,
                     "template": {"spec": pod}},
        })  # fmt: skip
    return [*topologies, *flavors, *queues, *local], jobs


# --- the real system's answer ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PodFact:
    name: str
    job: str
    node: str  # "" while unbound
    gpus: int
    message: str  # the scheduler's FailedScheduling message while unbound
    phase: str

    @property
    def holds(self) -> bool:
        """Holds its node's GPUs: not finished (kwok's pod stages complete a bound Job pod at once)."""
        return self.phase not in ("Succeeded", "Failed")

    @property
    def verdict(self) -> str:
        if self.node:
            return "bound"
        if "Insufficient" in self.message:
            return "insufficient"
        return "no-node" if "nodes are available" in self.message else "waiting"


def _condition(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == kind), {})


Facts = tuple[dict[str, str | None], dict[str, str], frozenset[str], list[PodFact]]


def _read(cluster: LabCluster) -> Facts:
    """(Job -> the flavor its Workload is admitted to, or None while it waits; Job -> why it waits; the Jobs
    whose Workload finished; the pods)."""
    workloads = cluster.get("workloads.kueue.x-k8s.io", "-n", NS)["items"]
    admitted: dict[str, str | None] = {}
    waiting: dict[str, str] = {}
    finished = frozenset(
        next(o["name"] for o in wl["metadata"]["ownerReferences"] if o["kind"] == "Job")
        for wl in workloads
        if _condition(wl, "Finished").get("status") == "True"
    )
    for wl in workloads:
        job = next(o["name"] for o in wl["metadata"].get("ownerReferences", []) if o["kind"] == "Job")
        if _condition(wl, "Admitted").get("status") == "True" or job in finished:
            (assignment,) = wl["status"]["admission"]["podSetAssignments"]
            admitted[job] = assignment["flavors"]["nvidia.com/gpu"]
        else:
            admitted[job] = None
            waiting[job] = _condition(wl, "QuotaReserved").get("message", "")
    pods = []
    for pod in cluster.get("pods", "-n", NS)["items"]:
        job = pod["metadata"].get("labels", {}).get("job-name", "")
        spec = pod["spec"]
        gpus = sum(int(c["resources"].get("limits", {}).get("nvidia.com/gpu", 0)) for c in spec["containers"])
        message = _condition(pod, "PodScheduled").get("message", "")
        phase = pod.get("status", {}).get("phase", "")
        pods.append(PodFact(pod["metadata"]["name"], job, spec.get("nodeName", ""), gpus, message, phase))
    return admitted, waiting, finished, sorted(pods, key=lambda p: p.name)


def _settled(cluster: LabCluster, count: int) -> Facts | None:
    """The facts once every Workload is admitted or refused with a reason and every admitted pod exists and is
    bound or Unschedulable; else None."""
    admitted, waiting, finished, pods = _read(cluster)
    if len(admitted) < count or any(not why for why in waiting.values()):
        return None
    per_job: dict[str, int] = {}
    for pod in pods:
        if pod.verdict == "waiting":
            return None
        per_job[pod.job] = per_job.get(pod.job, 0) + 1
    jobs = {j["metadata"]["name"]: j for j in cluster.get("jobs", "-n", NS)["items"]}
    for job, flavor in admitted.items():
        if flavor is not None and per_job.get(job, 0) != jobs[job]["spec"]["parallelism"]:
            return None
        # an admitted Job all of whose pods ran is about to finish and hand its quota on
        if flavor is not None and job not in finished and all(not p.holds for p in pods if p.job == job):
            return None
    return admitted, waiting, finished, pods


def _moment(facts: Facts) -> tuple[object, ...]:
    """What must not change around the snapshot: the admissions and each pod's node, phase and verdict (not the
    wording of Kueue's and the scheduler's messages, whose counts they rewrite on each retry)."""
    admitted, waiting, finished, pods = facts
    return admitted, frozenset(waiting), finished, tuple((p.name, p.node, p.phase, p.verdict) for p in pods)


# --- the comparison ------------------------------------------------------------------------------------------------

_REASON = re.compile(r"(\d+) (.+)")


def test_queues_agrees_with_kueue_and_the_scheduler(
    kueue: LabCluster, tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    started = time.monotonic()
    rng = random.Random(SEED)
    print(f"\nkueue differential: seed {SEED}, {COUNT} workloads (GPULABEL_KUEUE_SEED, GPULABEL_KUEUE_WORKLOADS)")
    kueue.apply(*_nodes())
    kueue.kubectl("create", "namespace", NS)
    queueing, jobs = _objects(rng, COUNT)
    kueue.kubectl("apply", "--server-side", "-f", "-", input=json.dumps({"kind": "List", "apiVersion": "v1",
                                                                         "items": queueing}))  # fmt: skip
    kueue.apply(*jobs)

    facts = wait_for(lambda: _settled(kueue, COUNT), timeout=150, interval=1.0, message="for Kueue and the scheduler")
    snapshot = tmp_path / "snapshot.json"
    for _ in range(10):  # one moment: the facts before and after the snapshot agree (a loaded CI run churns longer)
        taken = gpulabel(kueue.kubeconfig, "snapshot", "-o", str(snapshot))
        assert taken.returncode == 0, taken.stderr
        again = _settled(kueue, COUNT)
        if again is not None and _moment(again) == _moment(facts):
            break
        facts = again or wait_for(lambda: _settled(kueue, COUNT), timeout=60, interval=1.0, message="to settle")
    else:
        pytest.fail(
            f"the cluster did not hold still around a snapshot: {_moment(facts)} then {again and _moment(again)}"
        )
    admitted, waiting, finished, pods = facts

    judged = gpulabel(kueue.kubeconfig, "queues", "--snapshot", str(snapshot), "-o", "json")
    assert judged.returncode in (0, 1), judged.stderr
    queues = json.loads(judged.stdout)
    live = gpulabel(kueue.kubeconfig, "queues", "-o", "json")
    assert json.loads(live.stdout)["findings"] == queues["findings"], "live and snapshot differ"
    pending_run = gpulabel(kueue.kubeconfig, "pending", "--snapshot", str(snapshot), "-n", NS, "-o", "json")
    assert pending_run.returncode in (0, 1), pending_run.stderr
    pending: dict[str, set[str]] = {}
    for f in json.loads(pending_run.stdout)["findings"]:
        pending.setdefault(f.get("pod", ""), set()).add(f["reason"])

    findings = queues["findings"]
    ap = {f["pod"].split("/", 1)[1]: f for f in findings if f["reason"] == "admitted-pending"}
    over = {f["args"][0].split("/", 1)[1] for f in findings if f["reason"] == "over-quota"}
    rows = {r["flavor"]: r for r in queues["flavors"]}
    nodes = {n["metadata"]["name"]: n for n in kueue.get("nodes")["items"]}
    flavors = {f["metadata"]["name"]: f["spec"] for f in kueue.get("resourceflavors.kueue.x-k8s.io")["items"]}
    flavor_of = {p.name: admitted[p.job] for p in pods if admitted.get(p.job)}

    def carriers(flavor: str) -> set[str]:
        want = flavors[flavor].get("nodeLabels", {})
        return {n for n, node in nodes.items() if all(node["metadata"]["labels"].get(k) == v for k, v in want.items())}

    wrong: list[str] = []
    counts: dict[str, int] = {}

    def count(rule: str) -> None:
        counts[rule] = counts.get(rule, 0) + 1

    for pod in pods:
        flavor = flavor_of.get(pod.name)
        if flavor is None:
            continue
        said = ap.get(pod.name)
        if said is not None:  # rule 1
            count("1 admitted-pending")
            if said["args"][1] != f"flavor/{flavor}" or pod.verdict != "no-node":
                wrong.append(
                    f"rule 1: {pod.name} admitted to {flavor}, {pod.verdict} {pod.message!r}: {said['detail']}"
                )
        elif pod.verdict == "no-node":  # rule 2
            count("2 no-node, by its own selector (pending)")
            reasons = pending.get(f"{NS}/{pod.name}", set())
            if not reasons or any("insufficient" in r for r in reasons):
                wrong.append(f"rule 2: {pod.name} ({flavor}) Pending {pod.message!r}; queues silent, pending {reasons}")
        else:  # rule 3: bound or insufficient
            count(f"3 {pod.verdict}")
        if pod.verdict == "insufficient":  # rule 5
            shared = any(
                p.node in carriers(flavor) and flavor_of.get(p.name) not in (None, flavor) for p in pods if p.node
            )
            too_big = all(
                pod.gpus > int(nodes[n].get("status", {}).get("allocatable", {}).get("nvidia.com/gpu", 0))
                for n in carriers(flavor)
            )
            if flavor in over:
                count("5 insufficient, over-quota")
            elif shared:
                count("5 insufficient, nodes shared with another flavor (not modelled)")
            elif too_big:
                count("5 insufficient, pod larger than any node (not modelled)")
            else:
                wrong.append(f"rule 5: {pod.name} ({flavor}) {pod.message!r} without over-quota of {flavor}")
    for flavor in sorted({f for f in flavor_of.values() if f}):  # rule 4
        asked = sum(p.gpus for p in pods if p.holds and flavor_of.get(p.name) == flavor)
        if asked > rows[flavor]["gpus"] and not any(a in ap for a, f in flavor_of.items() if f == flavor):
            count("4 admitted past the flavor's GPUs")
            stuck = any(p.verdict == "insufficient" for p in pods if flavor_of.get(p.name) == flavor)
            if not stuck or flavor not in over:
                wrong.append(f"rule 4: flavor {flavor}: {asked} GPUs admitted, {rows[flavor]['gpus']} on its nodes, "
                             f"insufficient pods: {stuck}, over-quota: {flavor in over}")  # fmt: skip

    n_admitted = sum(1 for f in admitted.values() if f)
    report = [
        f"kueue differential: seed {SEED}, {len(admitted)} workloads: admitted {n_admitted} (finished "
        f"{len(finished)}), waiting {len(waiting)}; pods of admitted workloads: {len(flavor_of)}",
        *(f"  flavor {f}: {s}" for f, s in flavors.items()),
        *(f"  queues row {r}" for r in queues["flavors"]),
        *(f"  rule {rule}: {n}" for rule, n in sorted(counts.items())),
        f"disagreements: {len(wrong)}; {time.monotonic() - started:.1f} s",
    ]
    print("\n".join(report), flush=True)
    record_property(SHOWN, f"kueue differential: seed {SEED}, {COUNT} workloads; " + "; ".join(report[-1:]))
    assert len(admitted) == COUNT
    assert not wrong, "\n".join([*wrong, *report])
