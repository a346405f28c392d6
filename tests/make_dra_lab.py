"""Writes examples/dra-lab.json from the test builders: ``python tests/make_dra_lab.py examples/dra-lab.json``."""

import json
import sys

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
from bench import draobjects as dra

from tests.objects import node

A = f'device.attributes["{dra.DRIVER}"]'
C = f'device.capacity["{dra.DRIVER}"]'
objs = []


def n(name, labels):
    o = node(name, labels)
    objs.append(o)


n("dra-node-0", {"kubernetes.io/hostname": "dra-node-0"})
n("dra-node-1", {"kubernetes.io/hostname": "dra-node-1"})
n("dra-node-2", {"kubernetes.io/hostname": "dra-node-2"})
objs.append(dra.GPU_CLASS)
objs.append(dra.MIG_CLASS)
a100 = dra.GPUS[0]
a10 = dra.GPUS[4]
objs.append(
    dra.resource_slice(
        "dra-node-0-gpu",
        [dra.gpu_device(f"gpu-{i}", i, a100, "550.54.15", node="dra-node-0") for i in range(4)],
        node="dra-node-0",
    )
)
objs.append(
    dra.resource_slice(
        "dra-node-1-gpu",
        [
            dra.gpu_device(
                f"gpu-{i}",
                i,
                a10,
                "535.104.5",
                node="dra-node-1",
                taints=[{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"}] if i == 1 else None,
            )
            for i in range(2)
        ],
        node="dra-node-1",
    )
)
# claims running
objs.append(
    dra.claim(
        "trainer-0-gpu",
        dra.claim_spec([dra.request("gpu", dra.exactly("gpu.nvidia.com", count=4))]),
        "ml",
        [("gpu", dra.DRIVER, "dra-node-0", f"gpu-{i}") for i in range(4)],
    )
)
# pending pods
spec_h = dra.claim_spec([dra.request("gpu", dra.exactly("gpu.nvidia.com", f'{A}.architecture == "Hopper"'))])
objs.append(dra.claim_template("hopper", spec_h, "ml"))
spec_mem = dra.claim_spec(
    [dra.request("gpu", dra.exactly("gpu.nvidia.com", f'{C}.memory.compareTo(quantity("40Gi")) >= 0', count=2))]
)
objs.append(dra.claim("big-memory", spec_mem, "ml"))
spec_mig = dra.claim_spec([dra.request("mig", dra.exactly("mig.nvidia.com", f'{A}.profile == "1g.10gb"'))])
objs.append(dra.claim("small-mig", spec_mig, "ml"))


MESSAGE = (
    "0/3 nodes are available: 3 cannot allocate all claims. preemption: 0/3 nodes are available:"
    " 3 Preemption is not helpful for scheduling."
)


def pending(p):
    p["status"] = {
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": MESSAGE,
            }
        ],
    }
    return p


objs.append(pending(dra.dra_pod("train-h100", [("gpu", "template", "hopper")], "ml")))
objs.append(pending(dra.dra_pod("train-big", [("gpu", "claim", "big-memory")], "ml")))
objs.append(pending(dra.dra_pod("infer-mig", [("mig", "claim", "small-mig")], "ml")))
with open(sys.argv[1], "w") as fh:
    json.dump({"apiVersion": "v1", "kind": "List", "items": objs}, fh, indent=1)
