"""DRA allocation against the real scheduler: gpulabel's fit set agrees, pod by pod.

labcluster plays NVIDIA's DRA driver: the test publishes ResourceSlices for kwok
nodes (random GPU and MIG devices with the attributes the driver publishes,
some tainted, some pools incomplete), DeviceClasses, and then creates pods
whose claims (direct, or through templates the resourceclaim controller
turns into claims) have random selectors: attribute comparisons, semver and
quantity comparisons, attributes some devices lack, ``All``, counts,
``firstAvailable`` and ``matchAttribute``. Pods are created one at a time and
each is predicted from the cluster as it is just before it, so earlier pods'
allocations are the "allocated to other claims" of later ones. For every pod
the scheduler's outcome (bound, or Pending) must agree with gpulabel's fit set:
a bound pod sits on a node gpulabel says fits, a Pending pod has no such node
(or a selector error the scheduler stops on). Drawn from a fixed seed
(``GPULABEL_DRA_SEED`` overrides it); a failure prints the pod, the claims and
both answers.

Also: CEL expressions the API server rejects at create time are rejected by
gpulabel with the same message.
"""

from __future__ import annotations

import json
import os
import random
import time
from typing import Any

from draobjects_path import draobjects as dra  # bench/draobjects.py, shared with the unit tests
from gpulabel_run import gpulabel
from labcluster_support import LabCluster, wait_for
from live_snapshot import live_equals_snapshot

from gpulabel.checks.dra.rules import REASONS
from gpulabel.checks.labels.migrate import migrate
from gpulabel.cluster.client import KubeClient
from gpulabel.k8s.dra.cel import compile_selector
from gpulabel.k8s.dra.evaluator import DraEvaluator
from gpulabel.k8s.dra.plugin import DraState, pod_claims
from gpulabel.k8s.nodeaffinity import compile_pod_spec
from gpulabel.model.cluster import Node, node_from_json

SEED = int(os.environ.get("GPULABEL_DRA_SEED", "20261130"))
BATCHES = int(os.environ.get("GPULABEL_DRA_BATCHES", "8"))
PODS_PER_BATCH = 26
NODES_PER_BATCH = 4
D = dra.DRIVER
A = f'device.attributes["{D}"]'
C = f'device.capacity["{D}"]'
RES = "/apis/resource.k8s.io/v1"


def random_devices(rng: random.Random, node: str) -> list[dict[str, Any]]:
    product = rng.choice(dra.GPUS)
    version = rng.choice(dra.DRIVER_VERSIONS)
    out = []
    for i in range(rng.randint(2, 6)):
        p = product if rng.random() < 0.8 else rng.choice(dra.GPUS)
        taints = [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"}] if rng.random() < 0.1 else None
        out.append(dra.gpu_device(f"gpu-{i}", i, p, version, node=node, taints=taints))
    if rng.random() < 0.4:
        parent = len(out)
        for j in range(rng.randint(1, 3)):
            out.append(
                dra.mig_device(f"gpu-{parent}-mig-{j}", parent, j, product, version, rng.choice(dra.MIG_PROFILES))
            )
    return out


def random_selector(rng: random.Random) -> str:
    pname = rng.choice(dra.GPUS)[0]
    if rng.random() < 0.08:  # attributes whole GPUs lack: a runtime error where the search reaches one
        return rng.choice([f'{A}.profile == "{rng.choice(dra.MIG_PROFILES)[0]}"', f'{A}.parentUUID != ""'])
    choices = [
        f'{A}.productName == "{pname}"',
        f'{A}.architecture in ["Ampere", "Hopper"]',
        f'{A}.architecture == "{rng.choice(["Ampere", "Hopper", "Ada Lovelace", "hopper"])}"',
        f'{C}.memory.compareTo(quantity("{rng.choice(["20Gi", "40Gi", "48G", "80Gi"])}")) >= 0',
        f'{C}.memory.isGreaterThan(quantity("{rng.choice(["24G", "40Gi", "79Gi"])}"))',
        f'{A}.driverVersion.isGreaterThan(semver("{rng.choice(["540.0.0", "550.54.15", "560.0.0"])}"))',
        f'{A}.cudaComputeCapability.compareTo(semver("{rng.choice(["8.0.0", "8.6.0", "9.0.0"])}")) >= 0',
        f'{A}.cudaDriverVersion.isLessThan(semver("12.6.0"))',
        f'has({A}.profile) && {A}.profile.startsWith("1g")',
        f'{A}.?profile.orValue("") == ""',
        f"{A}.index < {rng.randint(1, 3)}",
        f'{A}.productName.lowerAscii().contains("{rng.choice(["a100", "h100", "l4"])}")',
        f'{A}.brand == "Nvidia" && {A}.uuid.startsWith("GPU-")',
    ]
    return rng.choice(choices)


def random_request(rng: random.Random, name: str, classes: list[str]) -> dict[str, Any]:
    def one() -> dict[str, Any]:
        cls = rng.choice(classes)
        selectors = [random_selector(rng) for _ in range(rng.choice([0, 0, 1, 1, 1, 2]))]
        if rng.random() < 0.1:
            mode: dict[str, Any] = {"mode": "All"}
        else:
            mode = {"count": rng.choice([1, 1, 1, 1, 2, 2, 3])}
        tolerations = (
            [{"key": "gpu.nvidia.com/xid", "operator": "Exists", "effect": "NoSchedule"}]
            if rng.random() < 0.2
            else None
        )
        return dra.exactly(cls, *selectors, tolerations=tolerations, **mode)

    if rng.random() < 0.2:
        return dra.request(name, first_available=[("a", one()), ("b", one())])
    return dra.request(name, one())


def random_claim_spec(rng: random.Random, classes: list[str]) -> dict[str, Any]:
    n = 1 if rng.random() < 0.75 else 2
    requests = [random_request(rng, f"r{i}", classes) for i in range(n)]
    match = None
    if rng.random() < 0.25:
        match = rng.choice(
            [f"{D}/productName", "resource.kubernetes.io/pcieRoot", f"{D}/driverVersion", f"{D}/profile"]
        )
    return dra.claim_spec(requests, match_attribute=match)


def create(client: KubeClient, path: str, obj: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = client.request("POST", path, body=json.dumps(obj).encode(), content_type="application/json")
    return out


def read_state(client: KubeClient, ns: str) -> tuple[DraState, list[Node]]:
    objects: list[tuple[str, dict[str, Any]]] = []
    for kind, path in (
        ("ResourceSlice", f"{RES}/resourceslices"),
        ("DeviceClass", f"{RES}/deviceclasses"),
        ("ResourceClaim", f"{RES}/resourceclaims"),
        ("ResourceClaimTemplate", f"{RES}/namespaces/{ns}/resourceclaimtemplates"),
    ):
        items, _ = client.list_objects(path, lambda i, k=kind: {**i, "kind": k})
        objects.extend((kind, o) for o in items)
    nodes = [node_from_json(n) for n in client.list("Node")[0]]
    return DraState.from_objects(objects), nodes


def predict(
    state: DraState, nodes: list[Node], ns: str, pod: dict[str, Any], batch: str
) -> tuple[list[str], list[str], str]:
    """(nodes that fit, errors, note) for a pod whose nodeSelector is the batch label."""
    claims = pod_claims(ns, pod["metadata"]["name"], pod["spec"], pod.get("status") or {}, state)
    if claims.missing:
        return [], [claims.missing], "missing"
    fits, errors = [], []
    ev = DraEvaluator(state)
    for node in nodes:
        if node.labels.get("dra-diff/batch") != batch:
            continue
        outcome = ev.allocate(node, claims.to_allocate)
        if outcome.error:
            errors.append(f"{node.name}: {outcome.error}")
        elif outcome.ok:
            fits.append(node.name)
    return fits, errors, ""


def check_the_cli_live(labcluster: LabCluster, client: KubeClient, ns: str, pod: str) -> None:
    """``gpulabel pending`` and ``devices`` on the live cluster: paged LISTs of the DRA kinds, the same verdicts."""
    done = gpulabel(labcluster.kubeconfig, "pending", "-n", ns, "-o", "json", "--fail-level", "warning")
    assert done.returncode == 1, done.stderr  # its claims' pods are Pending: warnings
    doc = json.loads(done.stdout)
    entry = next(p for p in doc["pods"] if p["pod"] == f"{ns}/{pod}")
    assert entry["predicted_message"] == entry["scheduler_message"]
    # claim findings: reason "claim", args [<claim>/<request>, <why>], one per reason with its node count
    mine = [f for f in doc["findings"] if f.get("pod") == f"{ns}/{pod}" and f["reason"] == "claim"]
    assert mine and all(f["args"][-1] in (*REASONS, "error") and f["count"] >= 1 for f in mine), mine
    devices = json.loads(gpulabel(labcluster.kubeconfig, "devices", "-o", "json").stdout)["devices"]
    slices = client.list_objects(f"{RES}/resourceslices", lambda i: i)[0]
    assert len(devices) == sum(len(s["spec"].get("devices") or ()) for s in slices)
    claims = client.list_objects(f"{RES}/resourceclaims", lambda i: i)[0]
    # this test's pools only (named after its nodes): other tests on this shared cluster leave claims whose
    # slices are gone, which no listing of devices can show. Held whole: an admin-access result holds nothing
    # and a share of a device that allows multiple allocations leaves it shown free (docs/dra.md)
    mine = f"dra-{SEED % 1000}-"
    shown = {(d["driver"], d["pool"], d["device"]) for d in devices if d["pool"].startswith(mine) and d["allocated_to"]}
    held = {
        (r.get("driver"), r.get("pool"), r.get("device"))
        for c in claims
        for r in ((c.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or ()
        if str(r.get("pool")).startswith(mine) and not r.get("adminAccess") and not r.get("shareID")
    }
    assert len(shown) > 20, shown
    assert shown == held, f"shown allocated only: {sorted(shown - held)}; held only: {sorted(held - shown)}"


def predicted_messages(nodes: list[Node], batch: str, errors: list[str]) -> list[str]:
    """The PodScheduled messages the scheduler may write for a Pending pod of ``batch``.

    An allocation error on any node aborts the attempt with that node's error
    (nodes are filtered in parallel: any one of them); otherwise every batch
    node "cannot allocate all claims" and the others fail the nodeSelector.
    """
    if errors:
        return [f'running "DynamicResources" filter plugin: {e.split(": ", 1)[1]}' for e in errors]
    total = len(nodes)
    mine = sum(n.labels.get("dra-diff/batch") == batch for n in nodes)
    reasons = [f"{mine} cannot allocate all claims"]
    if total - mine:
        reasons.append(f"{total - mine} node(s) didn't match Pod's node affinity/selector")
    tail = f" preemption: 0/{total} nodes are available: {total} Preemption is not helpful for scheduling."
    return [f"0/{total} nodes are available: {', '.join(sorted(reasons))}.{tail}"]


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


def test_dra_allocation_agrees_with_the_real_scheduler(labcluster: LabCluster, make_node: Any) -> None:
    seen = dict.fromkeys(
        ("messages", "pods", "bound", "pending", "errors", "all", "first_available", "match", "templates"), 0
    )
    rng = random.Random(SEED)
    client = KubeClient(str(labcluster.kubeconfig))
    ns = f"dra-{SEED}"
    labcluster.kubectl("create", "namespace", ns)
    wait_for(lambda: labcluster.kubectl("get", "serviceaccount", "default", "-n", ns, check=False).returncode == 0)
    classes = [dra.GPU_CLASS, dra.MIG_CLASS]
    classes.append(dra.device_class("hopper.example.com", f'device.driver == "{D}"', f'{A}.architecture == "Hopper"'))
    classes.append(dra.device_class("big.example.com", f'{C}.memory.compareTo(quantity("40Gi")) >= 0'))
    classes.append(dra.device_class("any.example.com"))
    for c in classes:
        create(client, f"{RES}/deviceclass".replace("deviceclass", "deviceclasses"), c)
    class_names = [c["metadata"]["name"] for c in classes]
    disagreements: list[str] = []
    message_mismatches: list[str] = []
    last_pending = ""
    started = time.monotonic()
    for b in range(BATCHES):
        batch = f"b{b}"
        for i in range(NODES_PER_BATCH):
            name = f"dra-{SEED % 1000}-{batch}-n{i}"
            make_node(name, {"dra-diff/batch": batch})
            devices = random_devices(rng, name)
            roll = rng.random()
            if roll < 0.07:  # a pool of two slices, one never published: incomplete
                create(client, f"{RES}/resourceslices", dra.resource_slice(f"{name}-a", devices, node=name, count=2))
            elif roll < 0.25:  # a pool published through a node selector
                sel = {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [name]}]}
                    ]
                }
                create(
                    client,
                    f"{RES}/resourceslices",
                    dra.resource_slice(f"{name}-sel", devices, pool=f"{name}-sel", node_selector=sel),
                )
            else:
                create(client, f"{RES}/resourceslices", dra.resource_slice(name, devices, node=name))
        for k in range(PODS_PER_BATCH):
            pod_name = f"{batch}-p{k}"
            spec = random_claim_spec(rng, class_names)
            ref_kind = "template" if rng.random() < 0.5 else "claim"
            obj_name = f"{pod_name}-c"
            if ref_kind == "template":
                create(client, f"{RES}/namespaces/{ns}/resourceclaimtemplates", dra.claim_template(obj_name, spec, ns))
                seen["templates"] += 1
            else:
                create(client, f"{RES}/namespaces/{ns}/resourceclaims", dra.claim(obj_name, spec, ns))
            pod = dra.dra_pod(pod_name, [("gpu", ref_kind, obj_name)], ns, {"dra-diff/batch": batch})
            state, nodes = read_state(client, ns)
            fits, errors, _note = predict(state, nodes, ns, pod, batch)
            create(client, f"/api/v1/namespaces/{ns}/pods", pod)
            final = wait_for(
                lambda n=pod_name: settled(client, ns, n),
                timeout=60,
                interval=0.1,
                message=f"for pod {pod_name} to be bound or unschedulable",
            )
            bound = final["spec"].get("nodeName")
            seen["pods"] += 1
            text = json.dumps(spec["devices"])
            seen["all"] += '"All"' in text
            seen["first_available"] += "firstAvailable" in text
            seen["match"] += "matchAttribute" in text
            if bound:
                seen["bound"] += 1
                if errors or bound not in fits:
                    disagreements.append(
                        f"{pod_name}: bound to {bound}, gpulabel: fits={fits} errors={errors} spec={text}"
                    )
            else:
                last_pending = pod_name
                seen["pending"] += 1
                seen["errors"] += bool(errors)
                message = next(
                    (c.get("message", "") for c in final["status"]["conditions"] if c["type"] == "PodScheduled"), ""
                )
                if fits and not errors:
                    disagreements.append(f"{pod_name}: Pending ({message}), gpulabel fits={fits} spec={text}")
                # the claims exist now and are unallocated: predict again with their real names, and the message
                state, nodes = read_state(client, ns)
                _, errors, _ = predict(state, nodes, ns, final, batch)
                expected = predicted_messages(nodes, batch, errors)
                seen["messages"] += 1
                if message not in expected:
                    message_mismatches.append(f"{pod_name}: scheduler {message!r}, gpulabel {expected}")
    print(f"\n{seen} in {time.monotonic() - started:.0f} s; disagreements: {len(disagreements)}")
    print(f"Pending messages: {len(message_mismatches)} of {seen['messages']} differ")
    for d in disagreements + message_mismatches:
        print(d)
    assert disagreements == []
    assert message_mismatches == []
    check_the_cli_live(labcluster, client, ns, last_pending)
    # every read-only command says live what it says on a snapshot of this moment (claims, slices, devices held)
    work = labcluster.dir / f"moment-dra-{SEED}"
    work.mkdir(exist_ok=True)
    manifest = work / "manifest.json"
    spec = random_claim_spec(rng, class_names)
    create(client, f"{RES}/namespaces/{ns}/resourceclaimtemplates", dra.claim_template("probe-c", spec, ns))
    probe = dra.dra_pod("probe", [("gpu", "template", "probe-c")], ns, {"dra-diff/batch": "b0"})
    manifest.write_text(json.dumps(probe))
    compared = live_equals_snapshot(
        labcluster.kubeconfig,
        work,
        namespace=ns,
        node=f"dra-{SEED % 1000}-b0-n0",
        manifest=str(manifest),
        expression=f'{A}.productName.startsWith("NVIDIA")',
    )
    print(f"live = snapshot: {compared}")
    assert seen["pods"] >= 200
    assert seen["bound"] > 20 and seen["pending"] > 20


# -- create-time validation of CEL --------------------------------------------------


def random_expression(rng: random.Random) -> str:
    """A selector as people write them, with at most one mistake of the kinds people make.

    Mistakes: a type mismatch (a string attribute against a number, a version
    against an int, a quantity compared with an operator, a method the type
    lacks), an unknown field of ``device``, an undeclared name, ``has()`` on
    something that is not a field, a result that is not a bool, and syntax
    slips (``=`` for ``==``, a dangling operator, an unclosed bracket or
    string, a word operator). Expressions with several unrelated errors are
    left out: cel-go and the C++ checker may report a different one of them
    first.
    """
    base = random_selector(rng)
    mistakes = [
        lambda e: e.replace(" == ", " = ", 1) if " == " in e else e + " = 1",
        lambda e: e + " &&",
        lambda e: "(" + e,
        lambda e: e + ' and device.driver == "x"',
        lambda e: e.replace('"', "", 1),
        lambda e: e + " ||| true",
        lambda e: f"{e} && device.driver == 1",
        lambda e: f"{e} && {A}.productName.startsWith(1)",
        lambda e: f'{e} && semver("1.0.0").isGreaterThan(1)',
        lambda e: f'{e} && {C}.memory > quantity("1Gi")',
        lambda e: f"{e} && {C}.memory >= 5",
        lambda e: f'{e} && quantity("1Gi").compareTo(semver("1.0.0")) > 0',
        lambda e: f"{e} && {A}.uuid.matches(1)",
        lambda e: f"{e} && device.nosuch == 1",
        lambda e: f'device.driverName == "{D}" && {e}',
        lambda e: f"{e} && nosuchvar",
        lambda e: f'{e} && has("{D}")',
        lambda e: f"{e} && device.allowMultipleAllocations.size() > 0",
        lambda e: f"{e} && device.driver.lowerAscii",
        lambda e: f"{A}.index",
        lambda e: "1",
        lambda e: f"{C}.memory",
        lambda e: f'"{D}"',
        lambda e: f"[{e}]",
        lambda e: f"{e} ? 1 : 0",
        lambda e: f"{e} && null",
        lambda e: f"{e} && 1 < 2.5",  # valid: cross-type numeric comparisons
        lambda e: f"{e} || 2u >= 1",
    ]
    if rng.random() < 0.3:
        return base
    return str(rng.choice(mistakes)(base))


def server_verdict(client: KubeClient, ns: str, i: int, expr: str) -> str | None:
    body = dra.claim(f"v{i}", dra.claim_spec([dra.request("r", dra.exactly("gpu.nvidia.com", expr))]), ns)
    status, data = client.request_raw(
        "POST",
        f"{RES}/namespaces/{ns}/resourceclaims",
        query=[("dryRun", "All")],
        body=json.dumps(body).encode(),
        content_type="application/json",
    )
    if status < 300:
        return None
    assert status == 422, data[:400]
    causes = [c for c in json.loads(data)["details"]["causes"] if c["field"].endswith("cel.expression")]
    assert len(causes) == 1, causes
    message: str = causes[0]["message"]
    return message


def _affinity(*terms: list[tuple[str, str, list[str]]]) -> dict[str, Any]:
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": f"nvidia.com/gpu.{k}", "operator": o, "values": v} for k, o, v in t
                            ]
                        }
                        for t in terms
                    ]
                }
            }
        }
    }


MIGRATION_CASES = {
    "products": _affinity([("product", "In", ["NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3"])]),
    "memory and family": _affinity([("memory", "Gt", ["40000"]), ("family", "NotIn", ["ampere"])]),
    "compute, or a product": _affinity([("compute.major", "In", ["8", "9"])], [("product", "NotIn", ["NVIDIA-L4"])]),
}


def test_cel_rejected_at_create_time_with_the_same_message(labcluster: LabCluster, ns: str) -> None:
    client = KubeClient(str(labcluster.kubeconfig))
    rng = random.Random(SEED)
    exprs = [random_expression(rng) for _ in range(300)]
    mismatches, rejected = [], 0
    for i, expr in enumerate(exprs):
        theirs = server_verdict(client, ns, i, expr)
        rejected += theirs is not None
        sel = compile_selector(expr)
        ours = None if sel.error is None else f"Invalid value: {json.dumps(expr)}: {sel.error}"
        if ours != theirs:
            mismatches.append((expr, theirs, ours))
    # the migration aid's selectors are accepted by the API server too
    for j, pod_spec in enumerate(MIGRATION_CASES.values()):
        selector = migrate(compile_pod_spec(pod_spec), [p[0] for p in dra.GPUS[:2]], ["Ampere"]).selector
        assert selector is not None
        assert server_verdict(client, ns, 1000 + j, selector) is None, selector
    print(f"\n{len(exprs)} random expressions, {rejected} rejected by the API server, {len(mismatches)} differ")
    for m in mismatches:
        print("\nexpr:", m[0], "\n server:", m[1], "\n gpulabel:", m[2])
    assert 100 < rejected < len(exprs) - 50
    assert mismatches == []
