"""Checks rerun whole only when what they read changes (``whole(views=..., pods_needed=True)``): the monitor's
answer stays the full run's.

``unrequested`` and ``cudaskew`` were rerun at every Node or Pod event, each walking every pod (at 65,000 nodes
the bulk of an ordinary event's time: issue 50). Now a change whose view is equal (a pod that neither runs
seeing GPUs unasked nor has container messages, a node's change that moves neither its GPU-ness nor its
labels) reruns nothing, and neither does any node or DaemonSet change while no pod has a view. Random
changes of exactly the things the views read, against the full evaluator after each batch.
"""

from __future__ import annotations

import copy
import random
from dataclasses import replace
from typing import Any

from gpulabel.app.checks import check_options
from gpulabel.checks.engine.assessment import FullEvaluator
from gpulabel.checks.engine.definition import whole
from gpulabel.checks.engine.incremental import IncrementalEvaluator
from gpulabel.checks.registry import BUILTIN
from tests.unit.test_cudaskew import CSV, HOOK, RUNTIME, gfd
from tests.unit.test_health import LABELS as GPU_LABELS
from tests.unit.test_incremental import START, Pair

JSON = dict[str, Any]
NODES = ("n1", "n2", "n3", "n4")


def _node(rng: random.Random, name: str) -> JSON:
    gpu = rng.random() < 0.75
    labels = {"kubernetes.io/hostname": name}
    if gpu:
        labels |= GPU_LABELS | gfd(rng.choice(("535.161.08", "550.54.15")), rng.choice(("12.2", "12.4", "12.8")))
    if rng.random() < 0.2:
        labels["team"] = rng.choice("ab")  # a label no view but cudaskew's reads
    status: JSON = {"allocatable": {"nvidia.com/gpu": "8"}} if gpu and rng.random() < 0.5 else {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "status": status}


def _pod(rng: random.Random, name: str) -> JSON:
    c: JSON = {"name": "main", "image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"}
    if rng.random() < 0.5:
        c["env"] = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": rng.choice(("all", "0,1", "void"))}]
    if rng.random() < 0.3:
        c["resources"] = {"limits": {"nvidia.com/gpu": "1"}}
    status: JSON = {"phase": rng.choice(("Running", "Running", "Pending", "Succeeded"))}
    state: JSON = {"running": {}}
    cs: JSON = {"name": "main", "restartCount": 2, "state": state}
    if rng.random() < 0.4:
        cs["state"] = {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s restarting failed"}}
        cs["lastState"] = {
            "terminated": {"reason": "StartError", "exitCode": 128, "message": rng.choice((HOOK, CSV, RUNTIME, "oom"))}
        }
    status["containerStatuses"] = [cs]
    meta: JSON = {"name": name, "namespace": rng.choice(("ml", "gpu-operator"))}
    if rng.random() < 0.3:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "ds-uid"}]
    spec: JSON = {"containers": [c]}
    if rng.random() < 0.85:
        spec["nodeName"] = rng.choice(NODES)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def _tweak(rng: random.Random, pod: JSON) -> JSON:
    """One field a view reads changed, the rest of the pod the same."""
    c, cs = pod["spec"]["containers"][0], pod["status"]["containerStatuses"][0]
    what = rng.randrange(4)
    if what == 0:
        c["env"] = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": rng.choice(("all", "0,1", "0", "void"))}]
    elif what == 1:
        owners = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "ds-uid"}]
        pod["metadata"]["ownerReferences"] = [] if pod["metadata"].get("ownerReferences") else owners
    elif what == 2:
        cs["lastState"] = {"terminated": {"reason": "StartError", "exitCode": 128, "message": rng.choice((HOOK, CSV))}}
    else:
        pod["spec"]["nodeName"] = rng.choice(NODES)
    return pod


def _daemonset() -> JSON:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "ds", "namespace": "gpu-operator", "uid": "ds-uid", "labels": {"app": "ds"}},
        "spec": {
            "template": {"spec": {"containers": [{"name": "c", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17"}]}}
        },
        "status": {},
    }


def _batches(rng: random.Random, objects: list[JSON]) -> Any:
    now = {(o["kind"], o["metadata"]["name"]): o for o in objects}
    for _ in range(25):
        batch = []
        for _ in range(rng.randrange(1, 4)):
            what = rng.random()
            if what < 0.2 and (pods := [k for k in now if k[0] == "Pod"]):
                now[key] = obj = _tweak(rng, copy.deepcopy(now[key := rng.choice(pods)]))
                batch.append((obj, False))
            elif what < 0.45:
                name = f"p{rng.randrange(8)}"
                if ("Pod", name) in now and rng.random() < 0.2:
                    batch.append((now.pop(("Pod", name)), True))
                else:
                    now[("Pod", name)] = obj = _pod(rng, name)
                    batch.append((obj, False))
            elif what < 0.85:
                name = rng.choice(NODES)
                if ("Node", name) in now and rng.random() < 0.15:
                    batch.append((now.pop(("Node", name)), True))
                else:
                    now[("Node", name)] = obj = _node(rng, name)
                    batch.append((obj, False))
            elif ("DaemonSet", "ds") in now:
                batch.append((now.pop(("DaemonSet", "ds")), True))
            else:
                now[("DaemonSet", "ds")] = obj = _daemonset()
                batch.append((obj, False))
        yield [(copy.deepcopy(o), deleted) for o, deleted in batch]


def test_views_keep_the_monitor_equal_to_the_full_run() -> None:
    registry = type(BUILTIN)(tuple(c for c in BUILTIN if c.name in ("unrequested", "cudaskew", "audit")))
    opts = replace(check_options(), registry=registry)
    found = set()
    for seed in range(30):
        rng = random.Random(seed)
        objects = [_node(rng, n) for n in NODES] + [_pod(rng, f"p{i}") for i in range(5)] + [_daemonset()]
        pair = Pair(IncrementalEvaluator(opts), FullEvaluator(opts))
        assert pair.first_difference(objects, _batches(rng, objects)) == "", seed
        found |= {f.check for f in pair.assess(START)[1].findings}
    assert {"unrequested", "cudaskew"} <= found  # the sequences reach findings of both


def test_a_change_outside_the_views_reruns_nothing() -> None:
    calls: list[int] = []
    check = BUILTIN.named("unrequested")
    keeper: Any = whole(("Node", "Pod"), {"Pod": lambda p: p, "Node": lambda n: n}, pods_needed=True)(check)
    keeper.viewed = set()  # as after a first result over no pod with a view
    keeper.kept = calls  # stands for a kept result
    keeper.touched("Node", ("", "n1"), None, object())  # a node came: no pod to tell of
    keeper.touched("DaemonSet", ("a", "b"), None, object())
    assert keeper.kept is calls
    keeper.touched("Pod", ("ml", "p"), None, object())  # a pod with a view came
    assert keeper.kept is None and keeper.viewed == {("ml", "p")}
