"""A NodeClaim's life as Karpenter v1.14.1 times it (``k8s/karpenter/lifecycle.py``): a Pending pod's NodeClaim in
flight is information within Karpenter's registration timeout and a warning past it (``pending`` ``node-late``),
and a NodeClaim registered whose GPUs never reached allocatable is an error on its node past it (``capacity``
``nodeclaim-not-initialized``, one finding with what ``cloud-gpus-not-allocatable`` or ``no-allocatable`` would
say). Each with its twin: a healthy NodeClaim initializing within the grace raises nothing."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from gpulabel.checks.capacity.rules import capacity
from gpulabel.checks.engine.assessment import FullEvaluator
from gpulabel.checks.engine.incremental.evaluator import IncrementalEvaluator
from gpulabel.checks.engine.rootcause import root_causes
from gpulabel.checks.pending.autoscale import COMING_GRACE, REASONS, autoscaler_verdict, coming_deadline
from gpulabel.checks.pending.rules import pending_result
from gpulabel.checks.registry import BUILTIN
from gpulabel.cli.main import main
from gpulabel.k8s.karpenter import lifecycle
from gpulabel.model.cluster import KIND, ClusterState
from gpulabel.model.findings import Finding
from tests.unit.karpenter.objects import nodeclaim, nodepool
from tests.unit.pending_objects import node, pod

JSON = dict[str, Any]
GPU_TAINT = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}
CREATED = datetime(2026, 12, 4, 10, 0, tzinfo=UTC)  # tests/unit/karpenter/objects.py nodeclaim's creationTimestamp
WITHIN = CREATED + timedelta(minutes=10)
PAST = CREATED + timedelta(minutes=20)
EXAMPLE = Path(__file__).parents[3] / "examples" / "autoscaled.yaml"


def state(*objects: JSON) -> ClusterState:
    return ClusterState.from_objects((f"obj{i}", o) for i, o in enumerate(objects))


def launching(name: str = "gpu-a-x1") -> JSON:
    """A NodeClaim of gpu-a launched and not yet registered."""
    return nodeclaim(name, "gpu-a", initialized="Unknown", reason="NotLaunched")


def waiting_pod() -> JSON:
    out = pod("train", 8)
    out["spec"]["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    return out


def coming_state(claim: JSON) -> ClusterState:
    return state(nodepool("gpu-a", taints=[GPU_TAINT]), claim, waiting_pod())


# -- the grace of a NodeClaim in flight (pending) ---------------------------------------------------------------


def test_the_grace_is_karpenters_registration_timeout() -> None:
    assert COMING_GRACE == lifecycle.REGISTRATION_TIMEOUT == 15 * 60  # liveness.go registrationTimeout
    assert lifecycle.LAUNCH_TIMEOUT == 5 * 60


def test_a_nodeclaim_in_flight_within_the_grace_is_information() -> None:
    s = coming_state(launching())
    v = autoscaler_verdict(s, s.pods[0], now=WITHIN)
    assert v is not None and (v.kind, v.age, v.waiting, v.late) == ("coming", 600.0, "Registered", False)
    (f,) = [f for f in pending_result(s, now=WITHIN).findings if f.reason.startswith("node-")]
    assert (f.reason, f.args) == ("node-coming", ("nodeclaim/gpu-a-x1", "nodepool/gpu-a"))


def test_past_the_grace_it_is_a_warning_naming_the_nodeclaim_its_age_and_the_condition_not_reached() -> None:
    s = coming_state(launching())
    (f,) = [f for f in pending_result(s, now=PAST).findings if f.reason.startswith("node-")]
    assert (f.reason, f.args) == ("node-late", ("nodeclaim/gpu-a-x1", "nodepool/gpu-a", "not-Registered"))
    assert "NodeClaim gpu-a-x1 of NodePool gpu-a (created 2026-12-04T10:00:00Z) is 20m old and not Registered" in (
        f.detail
    )
    assert "past Karpenter's 15m registration timeout" in f.detail
    assert (REASONS["node-late"].severity, REASONS["node-coming"].severity) == ("warning", "info")


def test_the_condition_not_reached_is_the_first_of_launched_registered_initialized() -> None:
    registered = nodeclaim("gpu-a-r1", "gpu-a", node="n9", initialized="Unknown", reason="ResourceNotRegistered")
    s = state(nodepool("gpu-a", taints=[GPU_TAINT]), registered, node("n9", None, {}), waiting_pod())
    v = autoscaler_verdict(s, next(p for p in s.pods if p.name == "train"), now=PAST)
    assert v is not None and (v.kind, v.waiting, v.late) == ("coming", "Initialized", True)
    not_launched = launching()
    not_launched["status"]["conditions"][0]["status"] = "Unknown"
    s = coming_state(not_launched)
    v = autoscaler_verdict(s, s.pods[0], now=PAST)
    assert v is not None and v.waiting == "Launched"


def test_without_a_time_the_age_is_not_judged() -> None:
    s = coming_state(launching())
    v = autoscaler_verdict(s, s.pods[0])
    assert v is not None and (v.kind, v.age, v.late) == ("coming", None, False)


def test_the_deadline_is_the_next_nodeclaim_passing_its_grace() -> None:
    s = coming_state(launching())
    assert coming_deadline(s, WITHIN) == CREATED + timedelta(seconds=COMING_GRACE)
    assert coming_deadline(s, PAST) is None  # passed already: nothing left to wait for
    initialized = state(nodepool("gpu-a"), nodeclaim("gpu-a-i1", "gpu-a", node="n1"))
    assert coming_deadline(initialized, WITHIN) is None


def _record(obj: JSON) -> tuple[str, tuple[str, str], Any]:
    kind = KIND[obj["kind"]]
    meta = obj["metadata"]
    return kind.kind, (meta.get("namespace", ""), meta["name"]), kind.reader()(obj, "test")


def test_the_monitor_turns_the_pod_late_when_the_time_passes_with_no_change() -> None:
    """The incremental evaluator re-judges the autoscaler verdicts once a NodeClaim's grace has passed, though no
    object changed, and answers what the full evaluator does at each time."""
    objects = [nodepool("gpu-a", taints=[GPU_TAINT]), launching(), waiting_pod()]
    seen = []
    for ev in (FullEvaluator(BUILTIN.options()), IncrementalEvaluator(BUILTIN.options())):
        for kind in ("Node", "Pod", "NodePool", "NodeClaim"):
            ev.reset(kind, [])
        for obj in objects:
            kind, key, record = _record(obj)
            ev.apply(kind, key, record)
        reasons = []
        for when in (WITHIN, WITHIN + timedelta(minutes=1), PAST):
            found = ev.assess(when.timestamp()).findings
            reasons.append(sorted((f.reason, f.severity) for f in found if f.reason.startswith("node-")))
        seen.append(reasons)
    assert seen[0] == seen[1]
    assert seen[0] == [[("node-coming", "info")], [("node-coming", "info")], [("node-late", "warning")]]


def test_pending_at_measures_the_age_at_the_time_given() -> None:
    def pending(*args: str) -> str:
        out = io.StringIO()
        main(["pending", "--snapshot", str(EXAMPLE), *args], out, io.StringIO())
        return out.getvalue()

    assert "ml/train-1 node-coming nodeclaim/gpu-a100-7xk2p nodepool/gpu-a100" in pending(
        "--at", "2026-12-04T10:05:00Z"
    )
    late = pending("--at", "2026-12-04T10:20:00Z")
    assert "ml/train-1 node-late nodeclaim/gpu-a100-7xk2p nodepool/gpu-a100 not-Launched" in late


# -- a NodeClaim registered whose GPUs never reached allocatable (capacity) -----------------------------------


def stuck(labels: JSON | None = None, gpus: str | None = None, claim_node: str = "n9") -> list[JSON]:
    """NodePool gpu-a, its NodeClaim registered as node n9 and not Initialized (Karpenter's condition: Unknown,
    ResourceNotRegistered), and n9 as Karpenter labels it, advertising ``gpus``."""
    claim = nodeclaim("gpu-a-s1", "gpu-a", node=claim_node, initialized="Unknown", reason="ResourceNotRegistered")
    karpenter = {"karpenter.sh/nodepool": "gpu-a", "karpenter.sh/registered": "true"}
    return [nodepool("gpu-a"), claim, node("n9", gpus, karpenter | (labels or {}))]


AWS_GPU = {"karpenter.k8s.aws/instance-gpu-count": "8"}
OPERATOR = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.deploy.device-plugin": "true"}


def reasons(found: list[Finding]) -> list[str]:
    return [f.reason for f in found]


def test_past_the_grace_a_stuck_nodeclaim_is_one_error_on_its_node_with_the_nodes_facts() -> None:
    (f,) = capacity(state(*stuck(AWS_GPU)), now=PAST)
    assert (f.reason, f.node, f.key, f.args) == (
        "nodeclaim-not-initialized",
        "n9",
        "nvidia.com/gpu",
        ("nodeclaim/gpu-a-s1", "nodepool/gpu-a"),
    )
    assert f.detail.startswith(
        "NodeClaim gpu-a-s1 of NodePool gpu-a (created 2026-12-04T10:00:00Z) is not Initialized after 20m "
        '(ResourceNotRegistered: Resource "nvidia.com/gpu" was requested but not registered): '
        "nvidia.com/gpu 0 allocatable of 8 requested (8 in its capacity); "
        "karpenter.k8s.aws/instance-gpu-count=8 (a GPU instance"
    )
    assert f.detail.endswith("gpulabel explain node/n9")
    # the same node without the NodeClaim is cloud-gpus-not-allocatable: one finding either way, never both
    alone = [o for o in stuck(AWS_GPU) if o["kind"] != "NodeClaim"]
    assert reasons(capacity(state(*alone), now=PAST)) == ["cloud-gpus-not-allocatable"]


def test_twin_within_the_grace_a_nodeclaim_initializing_raises_nothing() -> None:
    assert capacity(state(*stuck(AWS_GPU)), now=WITHIN) == []
    assert capacity(state(*stuck(AWS_GPU))) == []  # no time given: not judged


def test_twins_initialized_or_its_gpus_allocatable_or_no_gpu_requested_raise_nothing() -> None:
    objects = stuck(AWS_GPU, gpus="8")
    assert capacity(state(*objects), now=PAST) == []  # its GPUs reached allocatable
    done = stuck(AWS_GPU)
    done[1] = nodeclaim("gpu-a-s1", "gpu-a", node="n9")  # Initialized
    assert reasons(capacity(state(*done), now=PAST)) == ["cloud-gpus-not-allocatable"]
    cpu = stuck()
    cpu[1]["spec"]["resources"]["requests"] = {"cpu": "1", "pods": "2"}  # a cpu NodeClaim: no GPU owed
    assert capacity(state(*cpu), now=PAST) == []


def test_on_an_operator_node_it_says_the_device_plugin_and_replaces_no_allocatable() -> None:
    (f,) = capacity(state(*stuck(OPERATOR)), now=PAST)
    assert f.reason == "nodeclaim-not-initialized"
    assert "the device plugin should run here (nvidia.com/gpu.deploy.device-plugin=true) and advertises none" in (
        f.detail
    )
    # within the grace the device plugin's own finding stands, as on any node joining
    assert reasons(capacity(state(*stuck(OPERATOR)), now=WITHIN)) == ["no-allocatable"]


def test_the_root_cause_is_the_operand_before_it_and_the_nodeclaim_finding_is_behind() -> None:
    s = state(*stuck(OPERATOR))
    operand = Finding("operands", "missing", node="n9", operand="device-plugin", severity="error", detail="no pod")
    found = [f.graded("error") for f in capacity(s, now=PAST)]
    (cause,) = root_causes(s.nodes, [*found, operand])
    assert (cause.link, cause.finding.operand, cause.also) == ("operand-pod", "device-plugin", 1)
    (alone,) = root_causes(s.nodes, found)
    assert (alone.link, alone.finding.reason) == ("allocatable", "nodeclaim-not-initialized")


def test_the_monitor_raises_it_when_the_grace_passes_with_no_change() -> None:
    seen = []
    for ev in (FullEvaluator(BUILTIN.options()), IncrementalEvaluator(BUILTIN.options())):
        for kind in ("Node", "Pod", "NodePool", "NodeClaim"):
            ev.reset(kind, [])
        for obj in stuck(AWS_GPU):
            kind, key, record = _record(obj)
            ev.apply(kind, key, record)
        seen.append(
            [[f.reason for f in ev.assess(t.timestamp()).findings if f.check == "capacity"] for t in (WITHIN, PAST)]
        )
    assert seen[0] == seen[1] == [[], ["nodeclaim-not-initialized"]]


def test_check_names_the_stuck_nodeclaim_on_the_example(tmp_path: Path) -> None:
    out = io.StringIO()
    rc = main(["check", "--snapshot", str(EXAMPLE), "-o", "wide", "--at", "2026-12-04T10:05:00Z"], out, io.StringIO())
    text = out.getvalue()
    assert rc == 1
    line = next(x for x in text.splitlines() if "nodeclaim-not-initialized" in x and x.startswith("error"))
    assert line.startswith(
        "error ip-10-0-3-52.ec2.internal nvidia.com/gpu nodeclaim-not-initialized "
        "nodeclaim/gpu-l4-m2c9d nodepool/gpu-l4"
    )
    assert "cloud-gpus-not-allocatable" not in text
    assert "info ml/train-1 node-coming nodeclaim/gpu-a100-7xk2p" in text
    del tmp_path
    items = yaml.safe_load(EXAMPLE.read_text())["items"]
    assert any(i["kind"] == "NodeClaim" and i["metadata"]["name"] == "gpu-l4-m2c9d" for i in items)
