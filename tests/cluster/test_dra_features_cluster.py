"""The 1.37 DRA features against the real scheduler: gpulabel's fit set agrees, probe by probe.

labcluster plays a driver of partitionable GPUs: MIG-like layouts whose partitions consume a GPU's
shared counters (``memory``, ``slices``), published per node or, with ``perDeviceNodeSelection``, in
one pool for a batch of nodes whose devices name their node (``nodeName``) or select the batch
(``nodeSelector``); device taints in the slices and DeviceTaintRules (effects ``NoSchedule`` and
``None``). Pods with random claims (profiles, memory, counts, tolerations, ``firstAvailable``,
``matchAttribute`` and ``distinctAttribute`` on the parent GPU, admin access in a namespace labelled
for it) are created one after another; each is predicted from the cluster as it is just before the
pod exists, so earlier allocations consume the counters of later ones. A bound pod must sit on a
node gpulabel says fits, a Pending pod must have no such node, and ``explain_node`` must name a
reason from the table for each of its nodes (never ``unmodelled``: the draw uses modelled fields
only). Seeded (``GPULABEL_DRA_FEATURES_SEED``); ``GPULABEL_DRA_FEATURES_PROBES`` sets the number of
probes (default 120; docs/dra.md records a run of 400).
"""

from __future__ import annotations

import json
import os
import random
import time
from collections import Counter
from typing import Any

from draobjects_path import draobjects as dra  # bench/draobjects.py, shared with the unit tests
from gpulabel_run import gpulabel
from labcluster_support import LabCluster, wait_for

from gpulabel.checks.dra.rules import REASONS, explain_node
from gpulabel.cluster.client import KubeClient
from gpulabel.k8s.dra.evaluator import DraEvaluator
from gpulabel.k8s.dra.plugin import DraState, pod_claims
from gpulabel.k8s.quantity import parse_nanos
from gpulabel.model.cluster import Node, node_from_json

SEED = int(os.environ.get("GPULABEL_DRA_FEATURES_SEED", "20261201"))
PROBES = int(os.environ.get("GPULABEL_DRA_FEATURES_PROBES", "120"))
PROBES_PER_BATCH = 20
NODES_PER_BATCH = 3
D = dra.DRIVER
A = f'device.attributes["{D}"]'
RES = "/apis/resource.k8s.io/v1"
# profile, memory, slices: a GPU of 80Gi and 7 slices
PROFILES = [("1g", "10Gi", "1"), ("2g", "20Gi", "2"), ("3g", "40Gi", "3"), ("4g", "40Gi", "4"), ("7g", "80Gi", "7")]
FLAKY = "example.com/flaky"


def create(client: KubeClient, path: str, obj: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = client.request("POST", path, body=json.dumps(obj).encode(), content_type="application/json")
    return out


def gpu_devices(rng: random.Random, gpu: str, **where: Any) -> list[dict[str, Any]]:
    """A whole GPU and a random MIG-like layout of it, all consuming counter set ``gpu``."""
    out = []
    layout = [p for p in PROFILES if rng.random() < 0.6] or [PROFILES[0]]
    for profile, memory, slices in layout:
        for k in range(1 if profile in ("4g", "7g") else rng.randint(1, 3)):
            taints = None
            roll = rng.random()
            if roll < 0.06:
                taints = [{"key": FLAKY, "value": "true", "effect": "NoSchedule"}]
            elif roll < 0.1:
                taints = [{"key": FLAKY, "value": "maybe", "effect": "None"}]
            out.append(
                dra.partition(
                    f"{gpu}-{profile}-{k}",
                    gpu,
                    {"memory": memory, "slices": slices},
                    kind="gpu" if profile == "7g" else "mig",
                    profile=profile,
                    taints=taints,
                    **where,
                )
            )
    return out


POLICIES = [
    {"default": "4Gi", "validRange": {"min": "4Gi", "max": "40Gi", "step": "4Gi"}},
    {"default": "10Gi", "validValues": ["10Gi", "20Gi", "40Gi"]},
    {"default": "1Gi", "validRange": {"min": "1Gi"}},
    None,
]


def shared_device(rng: random.Random, name: str) -> dict[str, Any]:
    """A GPU shared across claims: 40Gi of memory under a random request policy."""
    memory: dict[str, Any] = {"value": "40Gi"}
    policy = rng.choice(POLICIES)
    if policy is not None:
        memory["requestPolicy"] = policy
    return {
        "name": name,
        "allowMultipleAllocations": True,
        "attributes": {"type": {"string": "shared"}, "parent": {"string": name}, "profile": {"string": "shared"}},
        "capacity": {"memory": memory},
    }


def counters(gpus: list[str]) -> dict[str, dict[str, str]]:
    return {g: {"memory": "80Gi", "slices": "7"} for g in gpus}


def publish(client: KubeClient, rng: random.Random, tag: str, batch: str, nodes: list[str]) -> tuple[list[str], int]:
    """Slices and DeviceTaintRules for a batch of nodes: (object paths to delete, rules made)."""
    made: list[str] = []
    batch_selector = {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "dra-features/batch", "operator": "In", "values": [batch]}]}
        ]
    }
    pools: list[tuple[str, list[str]]] = []  # pool, device names
    for node in nodes:
        if rng.random() < 0.25:
            continue  # only the batch's per-device pool (if any) reaches this node
        pool = f"{tag}-{node}"
        gpus = [f"g{i}" for i in range(rng.randint(1, 2))]
        devices = [d for g in gpus for d in gpu_devices(rng, g)]
        for s in (
            dra.counter_slice(f"{pool}-counters", counters(gpus), node=node, pool=pool),
            dra.resource_slice(f"{pool}-devices", devices, node=node, pool=pool, count=2),
        ):
            create(client, f"{RES}/resourceslices", s)
            made.append(f"{RES}/resourceslices/{s['metadata']['name']}")
        pools.append((pool, [d["name"] for d in devices]))
    if rng.random() < 0.7:  # one pool for the batch: each device names its node or selects the batch
        pool = f"{tag}-{batch}-pd"
        devices = []
        for i in range(rng.randint(1, 3)):
            where: dict[str, Any] = (
                {"node_name": rng.choice(nodes)} if rng.random() < 0.7 else {"node_selector": batch_selector}
            )
            devices.extend(gpu_devices(rng, f"s{i}", **where))
        gpus = sorted({d["consumesCounters"][0]["counterSet"] for d in devices})
        for s in (
            dra.counter_slice(f"{pool}-counters", counters(gpus), pool=pool, node_selector=batch_selector),
            dra.per_device_slice(f"{pool}-devices", devices, pool=pool),
        ):
            create(client, f"{RES}/resourceslices", s)
            made.append(f"{RES}/resourceslices/{s['metadata']['name']}")
        pools.append((pool, [d["name"] for d in devices]))
    if rng.random() < 0.6:  # shared devices (allowMultipleAllocations) with a request policy on one node
        node = rng.choice(nodes)
        pool = f"{tag}-{node}-shared"
        devices = [shared_device(rng, f"sh{i}") for i in range(rng.randint(1, 2))]
        s = dra.resource_slice(pool, devices, node=node, pool=pool)
        create(client, f"{RES}/resourceslices", s)
        made.append(f"{RES}/resourceslices/{pool}")
        pools.append((pool, [d["name"] for d in devices]))
    rules = 0
    for pool, names in pools:
        if rng.random() < 0.35:
            effect = rng.choice(["NoSchedule", "NoSchedule", "None"])
            device = rng.choice(names) if rng.random() < 0.8 else None
            rule = dra.taint_rule(
                f"{pool}-rule", {"key": FLAKY, "value": "rule", "effect": effect}, pool=pool, device=device
            )
            create(client, f"{RES}/devicetaintrules", rule)
            made.append(f"{RES}/devicetaintrules/{rule['metadata']['name']}")
            rules += 1
    return made, rules


def random_request(rng: random.Random, name: str, admin_ok: bool) -> dict[str, Any]:
    def one() -> dict[str, Any]:
        roll = rng.random()
        if roll < 0.35:
            selectors = [f'{A}.profile == "{rng.choice(PROFILES)[0]}"']
        elif roll < 0.55:
            q = rng.choice(["20Gi", "40Gi", "80Gi"])
            selectors = [f'device.capacity["{D}"].memory.compareTo(quantity("{q}")) >= 0']
        elif roll < 0.65:
            selectors = [f'{A}.type == "gpu"']
        else:
            selectors = []
        tolerations = [{"key": FLAKY, "operator": "Exists"}] if rng.random() < 0.2 else None
        out = dra.exactly("part.example.com", *selectors, count=rng.choice([1, 1, 1, 2, 2, 3]), tolerations=tolerations)
        if rng.random() < 0.3:  # a capacity request: shared devices, or partitions of that much memory
            out["selectors"] = [{"cel": {"expression": f'{A}.type == "shared"'}}] if rng.random() < 0.8 else []
            out["capacity"] = {
                "requests": {"memory": rng.choice(["1Gi", "3Gi", "5Gi", "10Gi", "15Gi", "25Gi", "41Gi"])}
            }
        return out

    if rng.random() < 0.15:
        return dra.request(name, first_available=[("a", one()), ("b", one())])
    request = dra.request(name, one())
    if admin_ok and rng.random() < 0.06:
        request["exactly"]["adminAccess"] = True
    return request


def random_claim_spec(rng: random.Random) -> dict[str, Any]:
    requests = [random_request(rng, f"r{i}", True) for i in range(1 if rng.random() < 0.8 else 2)]
    spec = dra.claim_spec(requests)
    roll = rng.random()
    if roll < 0.12:
        spec["devices"]["constraints"] = [{"matchAttribute": f"{D}/parent"}]
    elif roll < 0.24:
        spec["devices"]["constraints"] = [{"distinctAttribute": f"{D}/parent"}]
    return spec


def read_state(client: KubeClient) -> tuple[DraState, list[Node]]:
    objects: list[tuple[str, dict[str, Any]]] = []
    for kind, plural in (
        ("ResourceSlice", "resourceslices"),
        ("DeviceClass", "deviceclasses"),
        ("ResourceClaim", "resourceclaims"),
        ("DeviceTaintRule", "devicetaintrules"),
    ):
        items, _ = client.list_objects(f"{RES}/{plural}", lambda i, k=kind: {**i, "kind": k})
        objects.extend((kind, o) for o in items)
    return DraState.from_objects(objects), [node_from_json(n) for n in client.list("Node")[0]]


def settled(client: KubeClient, ns: str, name: str) -> dict[str, Any] | None:
    pod: dict[str, Any] = client.request("GET", f"/api/v1/namespaces/{ns}/pods/{name}")
    if pod["spec"].get("nodeName"):
        return pod
    for c in pod.get("status", {}).get("conditions", []):
        if (
            c["type"] == "PodScheduled"
            and c["status"] == "False"
            and c.get("reason") in ("Unschedulable", "SchedulerError")
        ):
            return pod
    return None


def predicted_messages(all_nodes: list[Node], batch: list[str], errors: list[str]) -> list[str]:
    """The PodScheduled messages the scheduler may write: a node's allocation error (any one of them:
    nodes are filtered in parallel), else every batch node "cannot allocate all claims" and the
    others fail the nodeSelector (as tests/cluster/test_dra_cluster.py predicts them)."""
    if errors:
        return [f'running "DynamicResources" filter plugin: {e.split(": ", 1)[1]}' for e in errors]
    total = len(all_nodes)
    reasons = [f"{len(batch)} cannot allocate all claims"]
    if total - len(batch):
        reasons.append(f"{total - len(batch)} node(s) didn't match Pod's node affinity/selector")
    tail = f" preemption: 0/{total} nodes are available: {total} Preemption is not helpful for scheduling."
    return [f"0/{total} nodes are available: {', '.join(sorted(reasons))}.{tail}"]


def features(spec: dict[str, Any]) -> list[str]:
    text = json.dumps(spec)
    return [
        f
        for f, present in (
            ("admin", '"adminAccess"' in text),
            ("distinct", "distinctAttribute" in text),
            ("match", "matchAttribute" in text),
            ("first-available", "firstAvailable" in text),
            ("toleration", "tolerations" in text),
            ("capacity", '"capacity"' in text),
        )
        if present
    ]


def shared_view_disagrees(labcluster: LabCluster, client: KubeClient, disagreements: list[str]) -> list[str]:
    """``gpulabel devices`` on every shared device the scheduler put shares on: the claims it names, what it
    says they hold and leave of each capacity, against the claims' status (``shareID``, ``consumedCapacity``);
    a difference is appended to ``disagreements``. Returns the shared devices with shares."""
    shares: dict[tuple[str, str, str], dict[str, int]] = {}
    holders: dict[tuple[str, str, str], set[str]] = {}
    for c in client.list_objects(f"{RES}/resourceclaims", lambda i: i)[0]:
        results = ((c.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or ()
        for r in results:
            if r.get("shareID") and not r.get("adminAccess"):
                key = (r["driver"], r["pool"], r["device"])
                holders.setdefault(key, set()).add(f"{c['metadata']['namespace']}/{c['metadata']['name']}")
                have = shares.setdefault(key, {})
                for name, q in (r.get("consumedCapacity") or {}).items():
                    have[name] = have.get(name, 0) + parse_nanos(q)
    listed = json.loads(gpulabel(labcluster.kubeconfig, "devices", "-o", "json").stdout)["devices"]
    seen = []
    for d in listed:
        key = (d["driver"], d["pool"], d["device"])
        if key not in shares and not d.get("shared_by"):
            continue
        seen.append("/".join(key))
        held = {k: parse_nanos(v) for k, v in (e.split("=", 1) for e in d.get("capacity_held") or ())}
        capacity = {k: parse_nanos(v) for k, v in (e.split("=", 1) for e in d["capacity"])}
        left = {k: parse_nanos(v) for k, v in (e.split("=", 1) for e in d.get("capacity_left") or ())}
        want_left = {
            k: capacity.get(k, capacity.get(f"{d['driver']}/{k}", 0)) - v for k, v in shares.get(key, {}).items()
        }
        if (d["state"], set(d.get("shared_by") or ()), held, left) != (
            "shared",
            holders.get(key, set()),
            shares.get(key, {}),
            want_left,
        ):
            disagreements.append(
                f"devices {'/'.join(key)}: {d} vs shares {shares.get(key)} of {sorted(holders.get(key, ()))}"
            )
    return seen


def test_partitionable_devices_taint_rules_and_admin_access_agree_with_the_scheduler(
    labcluster: LabCluster, make_node: Any
) -> None:
    rng = random.Random(SEED)
    client = KubeClient(str(labcluster.kubeconfig))
    tag = f"f{SEED % 100000}"
    ns = f"dra-features-{SEED % 100000}"
    made: list[str] = []
    create(
        client,
        "/api/v1/namespaces",
        {"metadata": {"name": ns, "labels": {"resource.kubernetes.io/admin-access": "true"}}},
    )
    wait_for(lambda: labcluster.kubectl("get", "serviceaccount", "default", "-n", ns, check=False).returncode == 0)
    part_class = dra.device_class("part.example.com", f'device.driver == "{D}"', f'{A}.?parent.orValue("") != ""')
    create(client, f"{RES}/deviceclasses", part_class)
    made.append(f"{RES}/deviceclasses/part.example.com")
    seen: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    disagreements: list[str] = []
    started = time.monotonic()
    try:
        batches = (PROBES + PROBES_PER_BATCH - 1) // PROBES_PER_BATCH
        for b in range(batches):
            batch = f"b{b}"
            nodes = [f"{tag}-{batch}-n{i}" for i in range(NODES_PER_BATCH)]
            for name in nodes:
                make_node(name, {"dra-features/batch": batch})
            objs, rules = publish(client, rng, tag, batch, nodes)
            made.extend(objs)
            seen["rules"] += rules
            time.sleep(0.5)  # the scheduler's informers (and its DeviceTaintRule tracker) see them
            for k in range(min(PROBES_PER_BATCH, PROBES - b * PROBES_PER_BATCH)):
                pod_name = f"{batch}-p{k}"
                spec = random_claim_spec(rng)
                create(client, f"{RES}/namespaces/{ns}/resourceclaims", dra.claim(f"{pod_name}-c", spec, ns))
                pod = dra.dra_pod(pod_name, [("gpu", "claim", f"{pod_name}-c")], ns, {"dra-features/batch": batch})
                state, all_nodes = read_state(client)
                mine = [n for n in all_nodes if n.name in nodes]
                claims = pod_claims(ns, pod_name, pod["spec"], {}, state)
                assert claims.missing is None, claims.missing
                ev = DraEvaluator(state)
                outcomes = {n.name: ev.allocate(n, claims.to_allocate) for n in mine}
                refused = [o.unmodelled for o in outcomes.values() if o.unmodelled]
                assert not refused, refused
                fits = sorted(n for n, o in outcomes.items() if o.ok)
                errors = [f"{n}: {o.error}" for n, o in outcomes.items() if o.error]
                create(client, f"/api/v1/namespaces/{ns}/pods", pod)
                final = wait_for(
                    lambda n=pod_name: settled(client, ns, n), timeout=60, interval=0.1, message=f"pod {pod_name}"
                )
                bound = final["spec"].get("nodeName")
                seen["probes"] += 1
                for f in features(spec):
                    seen[f"{f}:{'bound' if bound else 'pending'}"] += 1
                text = json.dumps(spec["devices"])
                if bound:
                    seen["bound"] += 1
                    if bound not in fits or errors:
                        disagreements.append(
                            f"{pod_name}: bound to {bound}; gpulabel fits={fits} errors={errors} {text}"
                        )
                    continue
                seen["pending"] += 1
                message = next(c.get("message") for c in final["status"]["conditions"] if c["type"] == "PodScheduled")
                if fits and not errors:
                    disagreements.append(f"{pod_name}: Pending ({message}); gpulabel fits={fits} {text}")
                expected = predicted_messages(all_nodes, nodes, errors)
                seen["messages"] += 1
                if message not in expected:
                    disagreements.append(f"{pod_name}: scheduler {message!r}, gpulabel {expected}")
                for n in mine:
                    for v in explain_node(ev, n, claims.to_allocate):
                        assert v.reason in (*REASONS, "error"), v
                        reasons[v.reason] += 1
        seen["shared devices"] = len(shared_view_disagrees(labcluster, client, disagreements))
    finally:
        print(f"\n{dict(seen)} in {time.monotonic() - started:.0f} s; reasons {dict(reasons)}")
        for d in disagreements:
            print(d)
        labcluster.kubectl("delete", "namespace", ns, "--wait=false", "--ignore-not-found")
        for path in reversed(made):
            client.request_raw("DELETE", path)
    assert disagreements == []
    assert seen["probes"] == PROBES
    assert seen["bound"] > PROBES // 5 and seen["pending"] > PROBES // 5
    assert reasons["counter"] > 0 and reasons["taint"] > 0
    assert seen["shared devices"] > 0  # devices was compared on shares the scheduler made
