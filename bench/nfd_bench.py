# ruff: noqa: E501  (the rule table reads best one rule a line)
"""``rules`` against ``audit`` on one snapshot: 5,000 nodes, one NodeFeature per node, 20 NodeFeatureRules.

Run: ``.venv/bin/python -m bench.nfd_bench [--nodes 5000] [--repeat 2]``.

The nodes come from ``bench/synth.py``; each gets a NodeFeature the size nfd-worker publishes (kernel
config and loaded modules as flags, CPUID flags, PCI devices as instances, kernel and OS versions as
attributes) and the labels the rules would set on most nodes (some left out, some extra: drift to report).
The 20 rules use every kind of match: In/NotIn/InRegexp/Exists/DoesNotExist, Gt/Lt/GtLt/GeLe, IsTrue,
``type: version``, matchName, matchAny, ``rule.matched`` back-references and a labelsTemplate.
Each command runs as its own process, best of ``--repeat``; the target (issue 26) is ``rules`` within 2x
``audit`` on the same input. ``audit`` reads the NodeFeatureRules as well (it reports their drift), so a
second baseline is printed: ``audit`` on the same nodes and NodeFeatures without the rules.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.output_bench import _run

JSON = dict[str, Any]
RATIO_LIMIT = 2.0
NS = "feature.node.kubernetes.io"


def _expr(op: str, *values: str, type_: str = "") -> JSON:
    e: JSON = {"op": op}
    if values:
        e["value"] = list(values)
    if type_:
        e["type"] = type_
    return e


def _rules() -> list[JSON]:
    """20 rules in 8 NodeFeatureRule objects."""
    pci = "pci.device"
    r: list[tuple[str, JSON]] = [
        ("a-gpu", {"name": "nvidia-gpu", "labels": {"nvidia-gpu": "true"},
                   "matchFeatures": [{"feature": pci, "matchExpressions": {"vendor": _expr("In", "10de"),
                                                                            "class": _expr("In", "0300", "0302")}}]}),
        ("a-gpu", {"name": "nvlink", "labels": {"nvlink": "true"},
                   "matchFeatures": [{"feature": "kernel.loadedmodule",
                                      "matchExpressions": {"nvidia_peermem": _expr("Exists")}},
                                     {"feature": "rule.matched", "matchExpressions": {"nvidia-gpu": _expr("IsTrue")}}]}),
        ("b-kernel", {"name": "kernel-6", "labels": {"kernel-6": "true"},
                      "matchFeatures": [{"feature": "kernel.version", "matchExpressions": {"major": _expr("Gt", "5")}}]}),
        ("b-kernel", {"name": "kernel-lts", "labels": {"kernel-lts": "true"},
                      "matchFeatures": [{"feature": "kernel.version",
                                         "matchExpressions": {"full": _expr("GeLe", "5.15.0", "6.8.0", type_="version")}}]}),
        ("b-kernel", {"name": "preempt", "labels": {"preempt-rt": "true"},
                      "matchFeatures": [{"feature": "kernel.config", "matchExpressions": {"PREEMPT_RT": _expr("Exists")}}]}),
        ("b-kernel", {"name": "no-hz", "labels": {"no-hz-full": "true"},
                      "matchFeatures": [{"feature": "kernel.config",
                                         "matchExpressions": {"NO_HZ_FULL": _expr("Exists"),
                                                              "NO_HZ_IDLE": _expr("DoesNotExist")}}]}),
        ("c-cpu", {"name": "avx512", "labels": {"avx512": "true"},
                   "matchFeatures": [{"feature": "cpu.cpuid", "matchName": _expr("InRegexp", "^AVX512")}]}),
        ("c-cpu", {"name": "amx", "labels": {"amx": "true"},
                   "matchFeatures": [{"feature": "cpu.cpuid", "matchExpressions": {"AMXBF16": _expr("Exists"),
                                                                                    "AMXTILE": _expr("Exists")}}]}),
        ("c-cpu", {"name": "numa", "labels": {"numa-wide": "true"},
                   "matchFeatures": [{"feature": "memory.numa", "matchExpressions": {"node_count": _expr("Gt", "1")}}]}),
        ("d-os", {"name": "os", "labelsTemplate": "{{ range .system.osrelease }}os-{{ .Name | lower }}={{ .Value }}\n{{ end }}",
                  "matchFeatures": [{"feature": "system.osrelease",
                                     "matchExpressions": {"ID": _expr("Exists"), "VERSION_ID": _expr("Exists")}}]}),
        ("d-os", {"name": "ubuntu", "labels": {"ubuntu": "true"},
                  "matchFeatures": [{"feature": "system.osrelease", "matchExpressions": {"ID": _expr("In", "ubuntu")}}]}),
        ("d-os", {"name": "not-rhel", "vars": {"not-rhel": "true"},
                  "matchFeatures": [{"feature": "system.osrelease", "matchExpressions": {"ID": _expr("NotIn", "rhel")}}]}),
        ("e-net", {"name": "rdma", "labels": {"rdma": "true"},
                   "matchAny": [{"matchFeatures": [{"feature": pci, "matchExpressions": {"vendor": _expr("In", "15b3")}}]},
                                {"matchFeatures": [{"feature": "kernel.loadedmodule",
                                                    "matchExpressions": {"ib_core": _expr("Exists")}}]}]}),
        ("e-net", {"name": "sriov", "labels": {"sriov": "true"},
                   "matchFeatures": [{"feature": pci, "matchExpressions": {"sriov_totalvfs": _expr("Gt", "0")}}]}),
        ("f-gpu-pool", {"name": "training", "labels": {"custom-gpu-training": "true"},
                        "matchFeatures": [{"feature": "rule.matched",
                                           "matchExpressions": {"nvidia-gpu": _expr("IsTrue"), "kernel-6": _expr("IsTrue")}}]}),
        ("f-gpu-pool", {"name": "inference", "labels": {"custom-gpu-inference": "true"},
                        "matchFeatures": [{"feature": "rule.matched", "matchExpressions": {"nvidia-gpu": _expr("IsTrue")}},
                                          {"feature": "system.osrelease",
                                           "matchExpressions": {"VERSION_ID": _expr("In", "22.04", "24.04")}}]}),
        ("g-memory", {"name": "big-memory", "labels": {"big-memory": "true"},
                      "matchFeatures": [{"feature": "memory.numa", "matchExpressions": {"node_count": _expr("GtLt", "1", "9")}}]}),
        ("g-memory", {"name": "nv-memory", "labels": {"nvdimm": "true"},
                      "matchFeatures": [{"feature": "memory.nv", "matchName": _expr("Exists")}]}),
        ("h-misc", {"name": "static", "labels": {"fleet": "a"}}),
        ("h-misc", {"name": "rhel-taint", "taints": [{"key": f"{NS}/rhel", "effect": "NoSchedule"}],
                    "matchFeatures": [{"feature": "rule.matched", "matchExpressions": {"not-rhel": _expr("DoesNotExist")}}]}),
    ]  # fmt: skip
    objs: dict[str, JSON] = {}
    for name, rule in r:
        objs.setdefault(
            name, {"apiVersion": "nfd.k8s-sigs.io/v1alpha1", "kind": "NodeFeatureRule", "metadata": {"name": name},
                   "spec": {"rules": []}}
        )["spec"]["rules"].append(rule)  # fmt: skip
    assert sum(len(o["spec"]["rules"]) for o in objs.values()) == 20
    return list(objs.values())


KCONFIG = [f"CONFIG_OPT_{i}" for i in range(300)]
MODULES = [f"mod_{i}" for i in range(120)]
CPUID = ["AVX", "AVX2", "FMA3", "SSE4", "BMI2", "ADX", "AESNI", "SHA", *(f"X{i}" for i in range(60))]


def _nodefeature(name: str, gpu: bool, rng: random.Random) -> JSON:
    major = rng.choice(["5", "6", "6"])
    full = {"5": "5.15.0-91-generic", "6": rng.choice(["6.8.0-45-generic", "6.11.0-1-generic"])}[major]
    os_ver = rng.choice(["22.04", "24.04"])
    cpuid = CPUID + (["AVX512F", "AVX512BW", "AMXBF16", "AMXTILE"] if rng.random() < 0.5 else [])
    config = [*KCONFIG, "NO_HZ_FULL"] + (["PREEMPT_RT"] if rng.random() < 0.1 else [])
    modules = (
        MODULES
        + (["nvidia", "nvidia_peermem"] if gpu and rng.random() < 0.7 else [])
        + (["ib_core"] if rng.random() < 0.3 else [])
    )
    devices = [{"vendor": "8086", "device": "1572", "class": "0200", "sriov_totalvfs": "64"}]
    devices += [{"vendor": "1022", "device": f"14{i:02d}", "class": "0600"} for i in range(4)]
    if gpu:
        devices += [{"vendor": "10de", "device": "2330", "class": "0302"} for _ in range(rng.choice([4, 8]))]
    nf = {
        "apiVersion": "nfd.k8s-sigs.io/v1alpha1",
        "kind": "NodeFeature",
        "metadata": {"name": name, "namespace": "node-feature-discovery",
                     "labels": {"nfd.node.kubernetes.io/node-name": name}},
        "spec": {
            "features": {
                "flags": {"kernel.config": {"elements": {k: {} for k in config}},
                          "kernel.loadedmodule": {"elements": {k: {} for k in modules}},
                          "cpu.cpuid": {"elements": {k: {} for k in cpuid}}},
                "attributes": {"kernel.version": {"elements": {"full": full, "major": major}},
                               "system.osrelease": {"elements": {"ID": "ubuntu", "VERSION_ID": os_ver}},
                               "memory.numa": {"elements": {"node_count": rng.choice(["1", "2"])}}},
                "instances": {"pci.device": {"elements": [{"attributes": d} for d in devices]}},
            },
            "labels": {"kernel-version.major": major},
        },
    }  # fmt: skip
    return nf


def _write_snapshot(path: Path, nodes: int) -> str:
    import orjson

    from bench.synth import generate
    from gpulabel.k8s.nfd.master import NfdConfig, process_node
    from gpulabel.k8s.nfd.objects import nodefeature_from_json, nodefeaturerule_from_json

    synth = generate(nodes, seed=1, workloads_per_gpu_node=0.0, problem_rate=0.0)
    rng = random.Random(26)
    rules = _rules()
    parsed = [nodefeaturerule_from_json(r) for r in rules]
    items: list[JSON] = []
    count = 0
    for obj in synth.objects:
        if obj["kind"] != "Node":
            continue
        labels = obj["metadata"].setdefault("labels", {})
        gpu = labels.get("nvidia.com/gpu.present") == "true"
        nf = _nodefeature(obj["metadata"]["name"], gpu, rng)
        # what nfd-master wrote: the prediction, with a few labels missing (drift for check to find)
        written = process_node(obj["metadata"]["name"], [nodefeature_from_json(nf)], parsed, NfdConfig())
        labels.update({k: v for k, v in written.labels.items() if rng.random() < 0.995})
        items += [obj, nf]
        count += 1
    items += rules
    data = orjson.dumps({"apiVersion": "v1", "kind": "List", "items": items})
    path.write_bytes(data)
    return (
        f"{count:,} nodes, {count:,} NodeFeatures, {len(rules)} NodeFeatureRules (20 rules); {len(data) / 1e6:.0f} MB"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.nfd_bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--write", metavar="DIR", help=argparse.SUPPRESS)  # the child that writes the snapshots
    a = p.parse_args(argv)
    if a.write:
        import orjson

        snap = Path(a.write) / "snapshot.json"
        print(f"snapshot: {_write_snapshot(snap, a.nodes)}")
        doc = orjson.loads(snap.read_bytes())
        doc["items"] = [i for i in doc["items"] if i["kind"] != "NodeFeatureRule"]
        (Path(a.write) / "no-rules.json").write_bytes(orjson.dumps(doc))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        # written by a child process: a forked child's peak RSS counts its parent's pages, so the
        # measuring process stays small
        subprocess.run([sys.executable, "-m", "bench.nfd_bench", "--nodes", str(a.nodes), "--write", tmp], check=True)
        snap, no_rules = Path(tmp) / "snapshot.json", Path(tmp) / "no-rules.json"
        runs = {
            "audit": [_run(["audit", "--snapshot", str(snap)]) for _ in range(a.repeat)],
            "rules": [_run(["rules", "--snapshot", str(snap)]) for _ in range(a.repeat)],
            "rules -o json": [_run(["rules", "-o", "json", "--snapshot", str(snap)]) for _ in range(a.repeat)],
            "audit (no rules)": [_run(["audit", "--snapshot", str(no_rules)]) for _ in range(a.repeat)],
        }
    best = {k: (min(r[0] for r in v), max(r[1] for r in v), v[0][2]) for k, v in runs.items()}
    base = best["audit"][0]
    print(f"{'command':<20} {'seconds':>8} {'peak RSS':>10} {'stdout':>12} {'x audit':>8}")
    for name, (sec, rss, size) in best.items():
        print(f"{name:<20} {sec:>8.2f} {rss:>7.0f} MB {size:>12,} {sec / base:>7.2f}x")
    ratio = best["rules"][0] / base
    strict = best["rules"][0] / best["audit (no rules)"][0]
    print(
        f"rules / audit (same input): {ratio:.2f}x (target within {RATIO_LIMIT:g}x: {'met' if ratio <= 2 else 'missed'})"
    )
    print(f"rules / audit on the same nodes and NodeFeatures without the rules: {strict:.2f}x")
    return 0 if ratio <= RATIO_LIMIT else 1


if __name__ == "__main__":
    raise SystemExit(main())
