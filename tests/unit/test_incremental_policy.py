"""A ClusterPolicy switch reruns only the nodes whose findings read it, and no fewer.

A small ``bench.synth`` cluster (five GPU nodes with the driver, toolkit and device plugin, one CPU node)
where the nodes read the switches in different ways: one runs the device plugin without the toolkit it
needs (``out-of-order`` reads whether the toolkit is off), one runs a device-plugin pod without its deploy
label (``unexpected``: its detail says whether the operand is off, and only the pod ties the node to it),
one advertises no GPU under a device-plugin label (capacity's ``no-allocatable`` reads the device plugin's
switch), one has the device plugin switched off by a team under a sandbox workload config (whether that
says anything reads the policy's sandbox workloads). The batches switch the toolkit, the device plugin
and sandbox workloads off and back, with a pod deleted while a setting is left (the kept findings of a
setting must be remade for the nodes changed since). The incremental evaluator must equal the full one
after each batch; each planted narrower scope must make that comparison fail here.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from bench import synth

from gpulabel.app.checks import check_options
from gpulabel.checks.capacity import rules as capacity
from gpulabel.checks.engine.assessment import FullEvaluator
from gpulabel.checks.engine.incremental import IncrementalEvaluator
from gpulabel.checks.operands import check as operands_definition
from gpulabel.checks.operands import daemonsets
from gpulabel.checks.operands import rules as operands
from tests.unit.test_incremental import START, Pair

JSON = dict[str, Any]
DEPLOY = "nvidia.com/gpu.deploy."


def _base() -> dict[str, JSON]:
    objects = synth.objects(6, seed=3, problem_rate=0.0, workloads_per_gpu_node=0.0)
    by = {f"{o['kind']}/{o['metadata']['name']}": copy.deepcopy(o) for o in objects}
    nodes = {o["metadata"]["name"] for o in objects if o["kind"] == "Node"}
    assert {"a10-00002", "l4-00003", "dgx-a100-00004", "dgx-h100-00005", "cpu-00001"} <= nodes, sorted(nodes)

    def pod_of(node: str, operand: str) -> str:
        return next(
            k for k, o in by.items() if o["kind"] == "Pod" and o["spec"].get("nodeName") == node and operand in k
        )

    # a10: the device plugin runs, the toolkit it needs is neither labelled nor running
    del by["Node/a10-00002"]["metadata"]["labels"][DEPLOY + "container-toolkit"]
    del by[pod_of("a10-00002", "container-toolkit")]
    # l4: a device-plugin pod runs where no deploy label asks for it
    del by["Node/l4-00003"]["metadata"]["labels"][DEPLOY + "device-plugin"]
    # dgx-a100: labelled for the device plugin, advertises no GPU
    by["Node/dgx-a100-00004"]["status"]["allocatable"]["nvidia.com/gpu"] = "0"
    # dgx-h100-00005: the device plugin switched off by a team, on a node of a sandbox workload config
    labels = by["Node/dgx-h100-00005"]["metadata"]["labels"]
    labels[DEPLOY + "device-plugin"] = "false"
    labels["nvidia.com/gpu.workload.config"] = "vm-passthrough"
    del by[pod_of("dgx-h100-00005", "device-plugin")]
    return by


def _policy(base: dict[str, JSON], **sections: bool) -> JSON:
    policy = copy.deepcopy(next(o for o in base.values() if o["kind"] == "ClusterPolicy"))
    for section, enabled in sections.items():
        policy["spec"].setdefault(section, {})["enabled"] = enabled
    return policy


def _batches(base: dict[str, JSON]) -> list[list[tuple[JSON, bool]]]:
    l4_plugin = next(
        o
        for o in base.values()
        if o["kind"] == "Pod" and o["spec"].get("nodeName") == "l4-00003" and "device-plugin" in o["metadata"]["name"]
    )
    return [
        [(_policy(base, toolkit=False), False)],  # a10's out-of-order goes: the toolkit it needs is off
        [(_policy(base), False)],  # back: the kept findings of the first setting
        [(_policy(base, devicePlugin=False), False)],  # l4's detail, dgx-a100's no-allocatable
        [(l4_plugin, True)],  # l4's pod deleted while the setting with the plugin on is kept
        [(_policy(base), False)],  # back on: l4 remade (changed since), the rest kept
        [(_policy(base, sandboxWorkloads=True), False)],  # dgx-h100-00005's workload: its disabled goes
        [(_policy(base), False)],
    ]


def _run() -> str:
    """How the evaluators first differ ("" if never)."""
    base = _base()
    opts = check_options()
    return Pair(IncrementalEvaluator(opts), FullEvaluator(opts)).first_difference(list(base.values()), _batches(base))


def test_a_policy_switch_reruns_the_nodes_that_read_it() -> None:
    assert _run() == ""


def test_the_cases_are_there() -> None:
    """Each node says what the planted scopes below would leave stale (so the test can fail)."""
    base = _base()
    oracle = FullEvaluator(check_options())
    Pair(IncrementalEvaluator(check_options()), oracle).reset(list(base.values()))
    found = {(f.node, f.check, f.reason) for f in oracle.assess(START).findings}
    assert {
        ("a10-00002", "operands", "out-of-order"),
        ("l4-00003", "operands", "unexpected"),
        ("dgx-a100-00004", "capacity", "no-allocatable"),
        ("dgx-h100-00005", "operands", "disabled"),
    } <= found


def test_a_switch_reruns_no_node_that_does_not_read_it() -> None:
    seen: list[set[str]] = []
    switched = operands_definition._Pieces._switched

    def spy(self: Any, *args: Any) -> set[str]:
        out = switched(self, *args)
        seen.append(out)
        return out

    operands_definition._Pieces._switched = spy  # type: ignore[method-assign]
    try:
        assert _run() == ""
    finally:
        operands_definition._Pieces._switched = switched  # type: ignore[method-assign]
    assert seen, "no switch was scoped"
    assert all("cpu-00001" not in s for s in seen), seen  # no deploy label, no operand pod: never rerun


def _owned_by_nothing(pod: Any) -> tuple[str, ...]:
    return ()


PLANTED: dict[str, tuple[Any, str, Callable[..., Any], str]] = {
    # the operands that need a switched one are not rerun (a10's out-of-order stays)
    "no-needs": (daemonsets, "reading_off", lambda switched: frozenset(switched), "operands"),
    # only deploy labels tie a node to an operand, not its pods (l4's detail stays)
    "labels-only": (operands_definition, "_owner_uids", _owned_by_nothing, "operands"),
    # what the policy says of workload configs is not compared (dgx-h100-00005's disabled stays)
    "no-workloads": (daemonsets, "policy_reading", lambda policies: (), "operands"),
    # a kept setting is brought back without remaking the nodes changed since (l4's deleted pod)
    "kept-stale": (operands_definition._Setting, "note", lambda self, names: None, "operands"),
}


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_a_narrower_policy_scope_is_caught(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    where, attr, planted, check = PLANTED[name]
    monkeypatch.setattr(where, attr, planted)
    why = _run()
    assert f"check {check}:" in why, why


def _capacity_reads_every_switch_it_needs() -> str:
    """Capacity's node rule is given only the switches of ``capacity.READS_DISABLED`` (its context, the same
    for both evaluators): every node's findings with any one operand off must equal them with that set."""
    from gpulabel.model.cluster import KIND

    reader = KIND["Node"].reader()
    nodes = [reader(o, "node") for o in _base().values() if o["kind"] == "Node"]
    for name in operands.CATALOGUE:
        for node in nodes:
            every, read = (
                capacity.capacity_node(node, {name}),
                capacity.capacity_node(node, {name} & capacity.READS_DISABLED),
            )
            if every != read:
                return f"{node.name} with {name} off: {every} != {read}"
    return ""


def test_capacity_reads_only_the_switches_it_says() -> None:
    assert _capacity_reads_every_switch_it_needs() == ""


def test_capacity_reading_no_switch_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capacity, "READS_DISABLED", frozenset())
    assert "dgx-a100-00004 with device-plugin off" in _capacity_reads_every_switch_it_needs()
