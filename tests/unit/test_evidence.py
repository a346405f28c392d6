"""Evidence: which pods a finding blames, the bounded live read (against a fake API at the wire), the support
bundle read back like a snapshot, and its redaction (planted secrets, the archive grepped)."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest
import yaml

from gpulabel.checks.explain.evidence import Blame, blamed
from gpulabel.cli.main import main
from gpulabel.cluster.bundle import make_bundle
from gpulabel.cluster.evidence import EvidenceLimits, collect_evidence
from gpulabel.cluster.retry import RetryPolicy
from gpulabel.model.evidence import EventNote, Evidence, LogLine, LogTail
from gpulabel.model.podspec import compiled
from gpulabel.model.records import Pod
from tests.fakeapi import FakeApi, FakeClock, FakeResponse, fake_client

ROOT = Path(__file__).parents[2]
DRIFTED = ROOT / "examples" / "drifted-lab.yaml"
SCHEMA = json.loads((ROOT / "docs" / "schema" / "gpulabel-v1.json").read_text())
TOOLKIT = "gpu-operator/nvidia-container-toolkit-daemonset-x7k2p"
TOOLKIT_LINE = (
    'time="2026-11-30T10:12:01Z" level=error msg="error running nvidia-ctk-installer: unable to setup runtime: '
    "unable to load config: unable to load containerd config: failed to load config: open /runtime/config-dir/"
    'config.toml: permission denied"'
)


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def drifted() -> dict[str, Any]:
    doc = yaml.safe_load(DRIFTED.read_text())
    assert doc["kind"] == "List"
    return dict(doc)


def test_the_not_ready_toolkit_is_blamed_and_nothing_else_on_its_node() -> None:
    from gpulabel.app.checks import check_options
    from gpulabel.checks.registry import run_checks
    from gpulabel.cluster.snapshot import load_snapshots

    state = load_snapshots([str(DRIFTED)])
    found = run_checks(state, check_options()).findings
    blames = {(b.node, b.operand): b for b in blamed(state, found)}
    toolkit = blames[("lab-node-0", "container-toolkit")]
    assert toolkit.pod is not None and toolkit.pod.ref == TOOLKIT
    assert toolkit.daemonset is not None and toolkit.daemonset.name == "nvidia-container-toolkit-daemonset"
    assert toolkit.link == "operand-pod"
    # out-of-order device plugin and GFD on lab-node-0 are not blamed: the toolkit is what they wait for
    assert ("lab-node-0", "device-plugin") not in blames


# -- the live read, at the wire ------------------------------------------------------------------------------


class EvidenceApi(FakeApi):
    """Answers a pod GET, its log and Event LISTs (``forbid``: paths answered 403)."""

    def __init__(self, pod: dict[str, Any], log: str, events: list[dict[str, Any]], forbid: tuple[str, ...] = ()):
        super().__init__()
        self.pod, self.log, self.event_items, self.forbid = pod, log, events, forbid

    def open(self, method: str, path: str, query: Any = None, *args: Any, **kwargs: Any) -> FakeResponse:
        q = dict(query or [])
        self.requests.append((method, path, q))
        if any(f in path for f in self.forbid):
            return FakeResponse(403, orjson.dumps({"kind": "Status", "message": f"forbidden: {path}", "code": 403}))
        if path.endswith("/log"):
            return FakeResponse(200, self.log.encode())
        if path.endswith("/events"):
            return FakeResponse(200, orjson.dumps({"kind": "EventList", "metadata": {}, "items": self.event_items}))
        if "/pods/" in path:
            return FakeResponse(200, orjson.dumps(self.pod))
        return FakeResponse(404, b"{}")


POD_JSON = {
    "kind": "Pod",
    "metadata": {"name": "tk-1", "namespace": "gpu-operator"},
    "status": {
        "initContainerStatuses": [{"name": "driver-validation", "state": {"terminated": {"exitCode": 0}}}],
        "containerStatuses": [
            {
                "name": "nvidia-container-toolkit-ctr",
                "ready": False,
                "restartCount": 6,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"exitCode": 1}},
            }
        ],
    },
}
EVENT = {
    "kind": "Event",
    "metadata": {"name": "tk-1.1", "namespace": "gpu-operator"},
    "involvedObject": {"kind": "Pod", "namespace": "gpu-operator", "name": "tk-1"},
    "type": "Warning",
    "reason": "BackOff",
    "message": "Back-off restarting failed container nvidia-container-toolkit-ctr",
    "lastTimestamp": "2026-11-30T10:12:05Z",
    "count": 7,
}


def _blame() -> Blame:
    return Blame(
        "gpu-1",
        "container-toolkit",
        "operand-pod",
        Pod("gpu-operator", "tk-1", "gpu-1", "Running", {}, {}, (), compiled({})[0]),
        None,
    )


def test_the_live_read_asks_for_the_previous_tail_bounded_and_the_events_by_field_selector(tmp_path: Path) -> None:
    api = EvidenceApi(POD_JSON, f"2026-11-30T10:12:01Z {TOOLKIT_LINE}\n", [EVENT])
    client = fake_client(tmp_path, api, FakeClock())
    ev = collect_evidence(client, [_blame()], EvidenceLimits(tail_lines=20, limit_bytes=4096))
    (log_q,) = api.queries("GET", "/api/v1/namespaces/gpu-operator/pods/tk-1/log")
    assert log_q == {
        "container": "nvidia-container-toolkit-ctr",
        "tailLines": "20",
        "limitBytes": "4096",
        "timestamps": "true",
        "previous": "true",
    }
    selectors = [q["fieldSelector"] for m, p, q in api.requests if p.endswith("/events")]
    assert selectors == [
        "involvedObject.kind=Pod,involvedObject.name=tk-1",
        "involvedObject.kind=Node,involvedObject.name=gpu-1",
    ]
    assert [t.previous for t in ev.logs] == [True] and ev.logs[0].lines[0].text == TOOLKIT_LINE
    assert ev.logs[0].lines[0].time == "2026-11-30T10:12:01Z"
    assert [e.reason for e in ev.events] == ["BackOff", "BackOff"] and ev.unread == ()
    assert not [r for r in api.requests if r[0] != "GET"]  # read-only


def test_a_forbidden_log_and_events_are_said_once_and_not_asked_again(tmp_path: Path) -> None:
    api = EvidenceApi(POD_JSON, "", [EVENT], forbid=("/log", "/events"))
    client = fake_client(tmp_path, api, FakeClock(), RetryPolicy(budget=0.0))
    other = Blame(
        "gpu-2",
        "container-toolkit",
        "operand-pod",
        Pod("gpu-operator", "tk-2", "gpu-2", "Running", {}, {}, (), compiled({})[0]),
        None,
    )
    ev = collect_evidence(client, [_blame(), other])
    assert ev.logs == () and ev.events == ()
    assert len([u for u in ev.unread if u.startswith("pods/log: 403")]) == 1
    assert len([u for u in ev.unread if u.startswith("events: 403")]) == 1
    assert len([r for r in api.requests if r[1].endswith("/log")]) == 1
    assert len([r for r in api.requests if r[1].endswith("/events")]) == 1


def test_the_byte_budget_stops_the_reading(tmp_path: Path) -> None:
    api = EvidenceApi(POD_JSON, "x" * 5000 + "\n", [EVENT])
    client = fake_client(tmp_path, api, FakeClock())
    ev = collect_evidence(client, [_blame()], EvidenceLimits(total_bytes=4000))
    assert len(ev.logs) == 1 and not [r for r in api.requests if r[1].endswith("/events")]
    assert any("budget of 4000 bytes is spent" in u for u in ev.unread)
    ev = collect_evidence(client, [_blame()] * 3, EvidenceLimits(max_blamed=1))
    assert "2 more blamed pod(s) not read (at most 1)" in ev.unread


# -- the bundle ------------------------------------------------------------------------------------------------


def _toolkit_evidence(line: str = TOOLKIT_LINE) -> Evidence:
    tail = LogTail(
        TOOLKIT,
        "nvidia-container-toolkit-ctr",
        previous=True,
        lines=(LogLine("2026-11-30T10:12:01Z", "Starting"), LogLine("2026-11-30T10:12:01Z", line)),
    )
    backoff = EventNote(
        "Pod",
        "gpu-operator",
        TOOLKIT.split("/")[1],
        "Warning",
        "BackOff",
        "Back-off restarting failed container",
        "2026-11-30T10:12:05Z",
        7,
    )
    return Evidence((tail,), (backoff,))


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> str:
    data, _ = make_bundle(drifted(), _toolkit_evidence())
    path = tmp_path_factory.mktemp("bundle") / "b.tar.gz"
    path.write_bytes(data)
    return str(path)


def test_explain_from_a_bundle_names_the_cause_and_the_line_under_the_broken_link(bundle: str) -> None:
    code, out, err = run("explain", "node/lab-node-0", "--snapshot", bundle)
    assert code == 1, err
    lines = out.splitlines()
    at = lines.index(next(ln for ln in lines if ln.startswith("broken operand-pod")))
    below = "\n".join(lines[at:])
    assert (
        f"evidence container-toolkit {TOOLKIT}: the toolkit cannot load the container runtime's configuration" in below
    )
    assert "[toolkit-runtime-config]" in below
    assert f"log nvidia-container-toolkit-ctr (previous) 2026-11-30T10:12:01Z: {TOOLKIT_LINE}" in below
    assert "fix: set toolkit.env CONTAINERD_CONFIG" in below
    # the plain snapshot of the same moment says the same chain, without evidence
    _, plain, _ = run("explain", "node/lab-node-0", "--snapshot", str(DRIFTED))
    assert [ln for ln in lines if not ln.startswith("           ") and "evidence" not in ln] == plain.splitlines()


def test_check_from_a_bundle_adds_the_cause_in_wide_output_and_json_only(bundle: str) -> None:
    _, plain, _ = run("check", "--snapshot", bundle)
    _, before, _ = run("check", "--snapshot", str(DRIFTED))
    assert plain == before
    _, wide, _ = run("check", "--snapshot", bundle, "-o", "wide")
    cause = next(ln for ln in wide.splitlines() if ln.startswith("cause lab-node-0 "))
    assert cause.endswith(
        "-- the toolkit cannot load the container runtime's configuration from the path it was given (missing "
        "there, unreadable, or a template it cannot parse, as k3s and RKE2 keep), so it cannot add the nvidia "
        "runtime [toolkit-runtime-config]"
    )
    _, out, _ = run("check", "--snapshot", bundle, "-o", "json")
    doc = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    rows = doc["evidence"]
    assert {(r["source"], r["signature"], r["line"]) for r in rows} == {("log", "toolkit-runtime-config", TOOLKIT_LINE)}
    assert (
        rows[0]["container"] == "nvidia-container-toolkit-ctr (previous)" and rows[0]["time"] == "2026-11-30T10:12:01Z"
    )
    _, out, _ = run("explain", "node/lab-node-0", "--snapshot", bundle, "-o", "json")
    jsonschema.validate(json.loads(out), SCHEMA)


def test_an_unknown_failure_from_a_bundle_shows_the_last_lines_without_a_guess(tmp_path: Path) -> None:
    data, _ = make_bundle(drifted(), _toolkit_evidence("panic: something nobody has seen"))
    path = tmp_path / "u.tar.gz"
    path.write_bytes(data)
    _, out, _ = run("explain", "node/lab-node-0", "--snapshot", str(path))
    assert "no known signature; the lines that matter" in out and "panic: something nobody has seen" in out
    assert "fix:" not in out
    _, out, _ = run("check", "--snapshot", str(path), "-o", "json")
    assert {r["signature"] for r in json.loads(out)["evidence"]} == {None}


def test_no_evidence_turns_it_off(bundle: str) -> None:
    _, out, _ = run("explain", "node/lab-node-0", "--snapshot", bundle, "--no-evidence")
    assert "evidence" not in out


def test_a_gzip_that_is_not_a_bundle_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "x.gz"
    path.write_bytes(gzip.compress(b"not a tar"))
    code, _, err = run("check", "--snapshot", str(path))
    assert code == 2 and err.count("\n") == 1 and "not a gpulabel bundle" in err


# -- redaction: planted secrets, the archive grepped -------------------------------------------------------------

PLANTED = {
    "env": "s3cr3t-env-value-4242",
    "arg": "arg-token-77f1c0ffee",
    "flag": "flag-separate-token-9911",
    "annotation": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.c2lnbmF0dXJlLXBsYW50ZWQ",
    "bearer": "Zm9vYmFyYmF6cGxhbnRlZA",
    "policy-env": "policy-env-secret-1234",
    "log-password": "hunter2-planted",
    "event-token": "ghp_PlantedGitHubToken0123456789ab",
    "last-applied": "last-applied-secret-5555",
    "secret-data": "c2VjcmV0LWRhdGEtcGxhbnRlZA==",
    "annotation-key": "plain words planted under a password key",
    "label-key": "pl4nted-label-value",
    "url-userinfo": "pl4nted-url-password",
    "shell-flag": "pl4nted-shell-flag",
    "log-url": "pl4nted-log-url-password",
}


def _planted_document() -> dict[str, Any]:
    doc = drifted()
    items = doc["items"]
    pod = next(o for o in items if o["kind"] == "Pod" and o["metadata"]["name"] == TOOLKIT.split("/")[1])
    ctr = pod["spec"].setdefault("containers", [{"name": "nvidia-container-toolkit-ctr"}])[0]
    ctr["env"] = [
        {"name": "NGC_API_KEY", "value": PLANTED["env"]},
        {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "ngc", "key": "key"}}},
    ]
    ctr["args"] = [f"--token={PLANTED['arg']}", "--password", PLANTED["flag"], "--verbose"]
    pod["metadata"].setdefault("annotations", {})["example.com/auth"] = PLANTED["annotation"]
    pod["metadata"]["annotations"]["example.com/header"] = f"Authorization: Bearer {PLANTED['bearer']}"
    pod["metadata"]["annotations"]["example.com/password"] = PLANTED["annotation-key"]
    pod["metadata"].setdefault("labels", {})["secret-token"] = PLANTED["label-key"]
    ctr["command"] = [
        "sh",
        "-c",
        f"ctk --registry https://admin:{PLANTED['url-userinfo']}@registry.example.com/v2 "
        f"--password {PLANTED['shell-flag']} && exec toolkit",
    ]
    pod["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = json.dumps(
        {"spec": {"containers": [{"env": [{"name": "X", "value": PLANTED["last-applied"]}]}]}}
    )
    items.append(  # the capture reads no Secret; one in a merged file is redacted all the same
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "ngc", "namespace": "gpu-operator"},
            "data": {"key": PLANTED["secret-data"]},
        }
    )
    items.append(
        {
            "apiVersion": "nvidia.com/v1",
            "kind": "ClusterPolicy",
            "metadata": {"name": "gpu-cluster-policy"},
            "spec": {"driver": {"env": [{"name": "UBUNTU_PRO_TOKEN", "value": PLANTED["policy-env"]}]}},
            "status": {"state": "notReady"},
        }
    )
    return doc


def test_a_bundle_holds_none_of_the_planted_secrets(tmp_path: Path) -> None:
    ev = _toolkit_evidence(
        f"login with password={PLANTED['log-password']} to https://u:{PLANTED['log-url']}@repo.example.com failed"
    )
    event = EventNote("Node", "", "lab-node-0", "Warning", "Leak", f"token: {PLANTED['event-token']}", "t")
    ev = Evidence(ev.logs, (*ev.events, event))
    data, report = make_bundle(_planted_document(), ev)
    raw = gzip.decompress(data)
    for what, secret in PLANTED.items():
        assert secret.encode() not in raw, what
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        names = tar.getnames()
        snap = json.loads(tar.extractfile("snapshot.json").read())  # type: ignore[union-attr]
    assert names[:2] == ["snapshot.json", "evidence.json"] and "redaction.txt" in names
    assert (
        "logs/gpu-operator_nvidia-container-toolkit-daemonset-x7k2p_nvidia-container-toolkit-ctr.previous.log" in names
    )
    pod = next(o for o in snap["items"] if o["metadata"]["name"] == TOOLKIT.split("/")[1])
    ctr = pod["spec"]["containers"][0]
    # names stay, values go; a reference to a Secret key is not its content and stays
    assert ctr["env"] == [
        {"name": "NGC_API_KEY", "value": "<redacted>"},
        {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "ngc", "key": "key"}}},
    ]
    assert ctr["args"] == ["--token=<redacted>", "--password", "<redacted>", "--verbose"]
    assert ctr["command"] == [
        "sh",
        "-c",
        "ctk --registry https://admin:<redacted>@registry.example.com/v2 --password <redacted> && exec toolkit",
    ]
    assert pod["metadata"]["annotations"]["example.com/password"] == "<redacted>"
    rules = ("env-value: 2", "last-applied: 1", "secret-data: 1", "secret-argument: 1", "bearer: 1", "jwt: 1")
    for rule in (*rules, "secret-key-value: 2", "url-password: 2", "secret-flag: 1"):
        assert f"  {rule}\n" in report, rule
    # and the bundle still reads: the redacted snapshot gives the findings of the unredacted one
    path, plain = tmp_path / "p.tar.gz", tmp_path / "p.json"
    path.write_bytes(data)
    plain.write_text(json.dumps(_planted_document()))
    assert run("check", "--snapshot", str(path))[1] == run("check", "--snapshot", str(plain))[1]


def test_the_schema_rejects_an_evidence_object_without_its_line() -> None:
    row = {
        "node": "n",
        "operand": "driver",
        "link": "operand-pod",
        "source": "log",
        "container": "c",
        "line": "x",
        "time": None,
        "signature": None,
        "cause": None,
    }
    summary = {"findings": 0, "reasons": {}}
    doc = {"apiVersion": "gpulabel/v1", "kind": "CheckResult", "findings": [], "summary": summary, "evidence": [row]}
    jsonschema.validate(doc, SCHEMA)
    for broken in ({k: v for k, v in row.items() if k != "line"}, {**row, "source": "guess"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**doc, "evidence": [broken]}, SCHEMA)


def test_the_monitors_node_event_says_why_once_per_series() -> None:
    from gpulabel.app.checks import check_options
    from gpulabel.app.monitorevidence import ExplainingPlanner
    from gpulabel.checks.engine.assessment import Accepted, Assessment, judged
    from gpulabel.checks.registry import run_checks
    from gpulabel.cluster.snapshot import load_snapshots
    from gpulabel.controller.grace import NO_GRACE

    state = load_snapshots([str(DRIFTED)])
    result, causes = judged(run_checks(state, check_options()), state, Accepted())
    asked: list[str] = []

    def why(cause: Any, st: Any) -> str:
        asked.append(cause.node)
        return (
            "the toolkit cannot read the runtime's configuration [toolkit-runtime-config]"
            if cause.node == "lab-node-0"
            else ""
        )

    planner = ExplainingPlanner(why, grace=NO_GRACE)  # every Warning at once: the grace is tested elsewhere
    now = Assessment(result, causes, state, 0.0)
    specs = planner.plan(None, now).events
    node0 = [s for s in specs if s.key.regarding.kind == "Node" and s.key.regarding.name == "lab-node-0"]
    assert node0 and all(
        s.note.endswith("; why: the toolkit cannot read the runtime's configuration [toolkit-runtime-config]")
        for s in node0
    )
    others = [s for s in specs if s.key.regarding.kind != "Node" or s.key.regarding.name != "lab-node-0"]
    assert others and not [s for s in others if "; why:" in s.note]
    assert planner.plan(now, now).events == ()  # nothing new: nothing asked or written
    assert len(asked) == len({s.key for s in specs if s.key.regarding.kind == "Node"})


def test_the_live_explainer_reads_the_blamed_pod_and_says_its_cause(tmp_path: Path) -> None:
    from gpulabel.app.monitorevidence import live_explainer
    from gpulabel.checks.engine.rootcause import Cause
    from gpulabel.model.findings import Finding

    api = EvidenceApi(POD_JSON, f"2026-11-30T10:12:01Z {TOOLKIT_LINE}\n", [])
    from gpulabel.model.cluster import ClusterState, DaemonSet

    ds = DaemonSet(
        "gpu-operator",
        "nvidia-container-toolkit-daemonset",
        "uid-ds",
        {"nodeSelector": {"nvidia.com/gpu.deploy.container-toolkit": "true"}},
        {},
    )
    pod = Pod("gpu-operator", "tk-1", "gpu-1", "Running", {}, {}, (("DaemonSet", "uid-ds"),), compiled({})[0])
    state = ClusterState(pods=(pod,), daemonsets=(ds,))
    finding = Finding("operands", "not-ready", node="gpu-1", operand="container-toolkit", severity="error")
    warned: list[str] = []
    why = live_explainer(fake_client(tmp_path, api, FakeClock()), warned.append)
    assert why(Cause("gpu-1", "operand-pod", 1, finding, 0), state).endswith("[toolkit-runtime-config]")
    assert warned == []


def test_the_report_from_a_bundle_says_why_in_the_operand_cell(bundle: str) -> None:
    code, page, err = run("report", "--snapshot", bundle, "--html", "-")
    assert code == 0, err
    assert "why: the toolkit cannot load the container runtime" in page and "[toolkit-runtime-config]" in page
    _, plain, _ = run("report", "--snapshot", str(DRIFTED), "--html", "-")
    assert "why:" not in plain


def test_a_kubelet_that_does_not_answer_stops_the_log_reads(tmp_path: Path) -> None:
    class Away(EvidenceApi):
        def open(self, method: str, path: str, query: Any = None, *args: Any, **kwargs: Any) -> FakeResponse:
            if path.endswith("/log"):
                self.requests.append((method, path, dict(query or [])))
                return FakeResponse(500, orjson.dumps({"kind": "Status", "message": "dial tcp: i/o timeout"}))
            return super().open(method, path, query, *args, **kwargs)

    api = Away(POD_JSON, "", [EVENT])
    client = fake_client(tmp_path, api, FakeClock())
    other = Blame(
        "gpu-2",
        "container-toolkit",
        "operand-pod",
        Pod("gpu-operator", "tk-2", "gpu-2", "Running", {}, {}, (), compiled({})[0]),
        None,
    )
    ev = collect_evidence(client, [_blame(), other])
    logs = {p for m, p, q in api.requests if p.endswith("/log")}
    assert logs == {"/api/v1/namespaces/gpu-operator/pods/tk-1/log"}  # tried once, then no other log
    assert "pods/log: the kubelet did not answer, no other log read" in ev.unread
    assert ev.events  # the Events are still read


def test_snapshot_bundle_captures_reads_the_blamed_pods_evidence_and_check_reads_it_back(tmp_path: Path) -> None:
    from gpulabel.app.session import Session, Source
    from gpulabel.app.snapshot import SnapshotOptions, run_snapshot

    class Cluster(EvidenceApi):
        def open(self, method: str, path: str, query: Any = None, *args: Any, **kwargs: Any) -> FakeResponse:
            if "/pods/" in path or path.endswith("/events"):
                return super().open(method, path, query, *args, **kwargs)
            return FakeApi.open(self, method, path, query, *args, **kwargs)

    api = Cluster(POD_JSON, f"2026-11-30T10:12:01Z {TOOLKIT_LINE}\n", [])
    for obj in drifted()["items"]:
        if obj["kind"] == "Node":
            api.nodes[obj["metadata"]["name"]] = obj
        else:
            api.put(obj)
    session = Session(Source(kubeconfig="unused"))
    client = fake_client(tmp_path, api, FakeClock())
    session._client = client  # the session's API client is the fake at the wire
    out = tmp_path / "b.tar.gz"
    outcome = run_snapshot(session, SnapshotOptions(bundle=str(out)))
    assert outcome.code == 0 and outcome.result.fields["blamed"] >= 1
    namespace, name = TOOLKIT.split("/")
    assert f"/api/v1/namespaces/{namespace}/pods/{name}/log" in {p for _, p, _ in api.requests}
    assert not [r for r in api.requests if r[0] != "GET"]
    _, text, _ = run("explain", "node/lab-node-0", "--snapshot", str(out))
    assert "[toolkit-runtime-config]" in text and TOOLKIT_LINE in text
