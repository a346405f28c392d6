"""Failing while Ready: GFD Running and Ready on a node without its labels, the MIG manager Ready after a failed
apply. Their running containers are read (bounded as any other) and their log names the cause."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpulabel.checks.explain.evidence import blamed
from gpulabel.cluster.bundle import make_bundle
from gpulabel.cluster.evidence import collect_evidence
from gpulabel.model.cluster import ClusterState, DaemonSet
from gpulabel.model.evidence import Evidence, LogLine, LogTail, containers_to_read
from gpulabel.model.findings import Finding
from gpulabel.model.podspec import compiled
from gpulabel.model.records import Pod
from tests.fakeapi import FakeClock, fake_client
from tests.unit.test_evidence import DRIFTED, EvidenceApi, drifted, run

GFD = "gpu-operator/gpu-feature-discovery-m4q9t"
GFD_LINE = "W1204 16:00:00.000000       1 main.go:278] No labels generated from any source"
READY = {
    "kind": "Pod",
    "metadata": {"name": "gfd-1", "namespace": "gpu-operator"},
    "status": {
        "initContainerStatuses": [{"name": "toolkit-validation", "state": {"terminated": {"exitCode": 0}}}],
        "containerStatuses": [
            {"name": "gpu-feature-discovery", "ready": True, "restartCount": 0, "state": {"running": {}}}
        ],
    },
}


def test_a_ready_container_is_read_only_when_asked() -> None:
    assert containers_to_read(READY) == []
    got = [(c.name, c.init, c.previous) for c in containers_to_read(READY, ready_too=True)]
    assert got == [("gpu-feature-discovery", False, False)]  # the finished init container stays unread


def test_gfd_is_blamed_for_its_missing_labels_and_read_although_ready() -> None:
    from gpulabel.app.checks import check_options
    from gpulabel.checks.registry import run_checks
    from gpulabel.cluster.snapshot import load_snapshots

    state = load_snapshots([str(DRIFTED)])
    found = run_checks(state, check_options()).findings
    blames = {(b.node, b.operand): b for b in blamed(state, found)}
    gfd = blames[("lab-node-1", "gpu-feature-discovery")]
    assert gfd.pod is not None and gfd.pod.ref == GFD and gfd.link == "gfd-labels" and gfd.ready_read
    toolkit = blames[("lab-node-0", "container-toolkit")]
    assert not toolkit.ready_read  # a pod that is not ready is read as before


def _mig_state() -> tuple[ClusterState, Finding]:
    selector = {"nodeSelector": {"nvidia.com/gpu.deploy.mig-manager": "true"}}
    ds = DaemonSet("gpu-operator", "nvidia-mig-manager", "uid-mig", selector, {})
    pod = Pod("gpu-operator", "gfd-1", "gpu-1", "Running", {}, {}, (("DaemonSet", "uid-mig"),), compiled({})[0])
    failed = Finding("mig", "failed", node="gpu-1", key="nvidia.com/mig.config.state", severity="error")
    return ClusterState(pods=(pod,), daemonsets=(ds,)), failed


def test_the_mig_manager_after_a_failed_apply_has_its_running_log_read(tmp_path: Path) -> None:
    state, failed = _mig_state()
    (blame,) = blamed(state, [failed])
    assert blame.operand == "mig-manager" and blame.link == "mig" and blame.ready_read
    line = 'time="2026-12-04T16:00:00Z" level=error msg="Error: failed to apply MIG configuration: exit status 1"'
    api = EvidenceApi(READY, f"2026-12-04T16:00:00Z {line}\n", [])
    ev = collect_evidence(fake_client(tmp_path, api, FakeClock()), [blame])
    (query,) = api.queries("GET", "/api/v1/namespaces/gpu-operator/pods/gfd-1/log")
    assert query["container"] == "gpu-feature-discovery" and "previous" not in query
    assert [ln.text for t in ev.logs for ln in t.lines] == [line]
    # the same pod blamed as not ready (no effect link) asks for no log of its ready container
    api = EvidenceApi(READY, "", [])
    collect_evidence(fake_client(tmp_path, api, FakeClock()), [blame.__class__(*_fields(blame, ready_read=False))])
    assert not api.queries("GET", "/api/v1/namespaces/gpu-operator/pods/gfd-1/log")


def _fields(blame: Any, **changed: Any) -> list[Any]:
    values = {f: getattr(blame, f) for f in blame.__slots__}
    values.update(changed)
    return [values[f] for f in blame.__slots__]


def test_explain_names_why_gfd_wrote_no_labels_from_its_log(tmp_path: Path) -> None:
    tail = LogTail(GFD, "gpu-feature-discovery", lines=(LogLine("2026-12-04T16:00:00Z", GFD_LINE),))
    data, _ = make_bundle(drifted(), Evidence((tail,)))
    path = tmp_path / "gfd.tar.gz"
    path.write_bytes(data)
    _, out, _ = run("explain", "node/lab-node-1", "--snapshot", str(path))
    lines = out.splitlines()
    at = lines.index(next(ln for ln in lines if ln.lstrip().startswith("broken gfd-labels")))
    assert f"evidence gpu-feature-discovery {GFD}: GPU Feature Discovery cannot initialise NVML" in "\n".join(
        lines[at:]
    )
    assert "[gfd-nvml]" in out and GFD_LINE in out
    _, wide, _ = run("check", "--snapshot", str(path), "-o", "wide")
    cause = next(ln for ln in wide.splitlines() if ln.startswith("cause lab-node-1 "))
    assert cause.endswith("[gfd-nvml]")
    _, doc, _ = run("check", "--snapshot", str(path), "-o", "json")
    rows = [r for r in json.loads(doc)["evidence"] if r["node"] == "lab-node-1"]
    assert rows and {r["signature"] for r in rows} == {"gfd-nvml"} and {r["link"] for r in rows} == {"gfd-labels"}


def test_the_exporter_of_a_failing_host_engine_is_read_although_ready() -> None:
    """nvidia-dcgm not ready on a node: the dcgm-exporter beside it, Running and Ready, is blamed too and its running
    container read (its log says the host engine went away); an exporter on another node is not."""
    dcgm_sel = {"nodeSelector": {"nvidia.com/gpu.deploy.dcgm": "true"}}
    dcgm = DaemonSet("gpu-operator", "nvidia-dcgm", "uid-dcgm", dcgm_sel, {})
    exp_sel = {"nodeSelector": {"nvidia.com/gpu.deploy.dcgm-exporter": "true"}}
    exp = DaemonSet("gpu-operator", "nvidia-dcgm-exporter", "uid-exp", exp_sel, {})
    pods = (
        Pod("gpu-operator", "dcgm-1", "gpu-1", "Running", {}, {}, (("DaemonSet", "uid-dcgm"),), compiled({})[0]),
        Pod("gpu-operator", "exp-1", "gpu-1", "Running", {}, {}, (("DaemonSet", "uid-exp"),), compiled({})[0]),
        Pod("gpu-operator", "exp-2", "gpu-2", "Running", {}, {}, (("DaemonSet", "uid-exp"),), compiled({})[0]),
    )
    state = ClusterState(pods=pods, daemonsets=(dcgm, exp))
    failed = Finding("operands", "not-ready", node="gpu-1", operand="dcgm", severity="error")
    got = {(b.node, b.operand): b for b in blamed(state, [failed])}
    assert set(got) == {("gpu-1", "dcgm"), ("gpu-1", "dcgm-exporter")}
    assert not got[("gpu-1", "dcgm")].ready_read
    exporter = got[("gpu-1", "dcgm-exporter")]
    assert exporter.ready_read and exporter.pod is not None and exporter.pod.name == "exp-1"
    # the exporter blamed on its own (not ready) is read as before, not twice
    own = Finding("operands", "not-ready", node="gpu-1", operand="dcgm-exporter", severity="error")
    both = [b for b in blamed(state, [own, failed]) if b.operand == "dcgm-exporter"]
    assert len(both) == 1 and not both[0].ready_read
