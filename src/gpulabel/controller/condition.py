"""The optional node condition ``GPUStackProblem`` (``gpulabel monitor --node-condition``, off by default).

Informational: it says why a GPU node's GPUs are not usable, where
``kubectl describe node`` and node dashboards look; nothing should taint,
cordon or drain on it unless the team chooses to.

- ``status: "True"`` while the node has a root cause (``checks.rootcause``:
  the first broken link of its chain, at warning or worse); ``reason`` the
  link in UpperCamelCase (``operand-pod``: ``OperandPod``), ``message`` the
  cause line (``cause gpu-a operand-pod 4 GPU(s): device-plugin missing ...``);
- ``status: "False"``, ``reason: AsExpected`` on every other GPU node (and on
  a node it said True about that is no longer a GPU node).

Written by server-side apply on ``nodes/{name}/status`` as field manager
``gpulabel-monitor`` (``application/apply-patch+yaml``, force): node
conditions are a list keyed by ``type``, so the manager owns that one
condition and nothing else. A node is patched only when its condition's value
(status, reason, message) changes; ``lastTransitionTime`` moves only when the
status does. On its first sight of a node the sink trusts a ``False`` the node
already carries (no patch at start-up for healthy nodes that have it).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from gpulabel.checks.engine.assessment import Assessment
from gpulabel.controller.events import camel
from gpulabel.controller.sinks import BackgroundSink, GpuNodes, NodeFacts, same_findings
from gpulabel.errors import ClusterError

if TYPE_CHECKING:
    from gpulabel.cluster.client import KubeClient
    from gpulabel.controller.monitor_metrics import MonitorMetrics

__all__ = ["CONDITION", "MANAGER", "ApiConditionWriter", "ConditionSink", "NodeCondition", "desired"]

CONDITION = "GPUStackProblem"
MANAGER = "gpulabel-monitor"
AS_EXPECTED = "AsExpected"
OK_MESSAGE = "gpulabel finds the node's GPU stack as expected"
MESSAGE_LIMIT = 1024
RETRY_SECONDS = 30.0  # a patch the API server refused is tried again no sooner


@dataclass(frozen=True, slots=True)
class NodeCondition:
    status: str  # "True" | "False"
    reason: str
    message: str

    def body(self, since: float, now: float) -> dict[str, Any]:
        """The condition as applied: ``since`` is when its status last changed."""
        seconds = "%Y-%m-%dT%H:%M:%SZ"
        return {
            "type": CONDITION,
            "status": self.status,
            "reason": self.reason,
            "message": self.message,
            "lastTransitionTime": time.strftime(seconds, time.gmtime(since)),
            "lastHeartbeatTime": time.strftime(seconds, time.gmtime(now)),
        }


OK = NodeCondition("False", AS_EXPECTED, OK_MESSAGE)


def desired(assessment: Assessment, nodes: Mapping[str, NodeFacts] | None = None) -> dict[str, NodeCondition]:
    """The condition each GPU node (and each node with a root cause) should carry now; ``nodes``: the
    state's node facts, if known."""
    facts = nodes if nodes is not None else GpuNodes().facts(assessment.state.nodes)
    out = {name: OK for name, f in facts.items() if f.gpu}
    for c in assessment.causes:
        line = c.line()
        message = line if len(line) <= MESSAGE_LIMIT else line[: MESSAGE_LIMIT - 1] + "…"
        out[c.node] = NodeCondition("True", camel(c.link), message)
    return out


class ConditionWriter(Protocol):
    def apply(self, node: str, body: Mapping[str, Any]) -> bool:
        """Apply the condition ``body`` to ``node``; whether the node was there."""
        ...


class ApiConditionWriter:
    """Applies the condition through ``cluster/writes.py`` (``dry_run``: the API server's dry run)."""

    def __init__(self, client: KubeClient, dry_run: bool = False, manager: str = MANAGER) -> None:
        self.client = client
        self.dry_run = dry_run
        self.manager = manager

    def apply(self, node: str, body: Mapping[str, Any]) -> bool:
        from gpulabel.cluster.writes import apply_node_condition

        return apply_node_condition(self.client, node, body, self.manager, self.dry_run) is not None


class ConditionSink(BackgroundSink):
    """The node-condition :class:`~gpulabel.controller.sinks.Sink`: finds which nodes' condition changed
    on each publish and applies them in the background (the latest value per node; bounded by the nodes)."""

    def __init__(
        self,
        writer: ConditionWriter,
        metrics: MonitorMetrics | None = None,
        clock: Callable[[], float] = time.time,
        warn: Callable[[str], None] = lambda line: None,
        background: bool = True,
    ) -> None:
        super().__init__("node-condition", "node condition", background, warn)
        self.writer = writer
        self.metrics = metrics
        self.clock = clock
        self.warn = warn
        self.known: dict[str, tuple[NodeCondition, float]] = {}  # node -> (what it carries, since when)
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[NodeCondition, float]] = {}
        self._retry_at = 0.0
        self._nodes = GpuNodes()
        self._facts: dict[str, NodeFacts] = {}
        self.previous: Assessment | None = None

    def publish(self, assessment: Assessment) -> None:
        now = self.clock()
        nodes = self._nodes.facts(assessment.state.nodes)
        previous, self.previous = self.previous, assessment
        same = same_findings(previous, assessment) and nodes == self._facts
        self._facts = nodes
        # the same causes on the same GPU nodes: the same conditions
        changed = {} if same else self._changes(assessment, nodes, now)
        with self._lock:
            self._pending.update(changed)
            # a write that failed waits here too: tried again with the next change, or after RETRY_SECONDS
            waiting = bool(changed) or (bool(self._pending) and now >= self._retry_at)
        if waiting:
            self._wake()

    def _changes(
        self, assessment: Assessment, nodes: Mapping[str, NodeFacts], now: float
    ) -> dict[str, tuple[NodeCondition, float]]:
        """The nodes whose condition is to change, with the value and since when; ``known`` updated."""
        want = desired(assessment, nodes)
        present = {n.name: n for n in assessment.state.nodes}
        for name in [n for n in self.known if n not in present]:
            del self.known[name]  # the node is gone
        for name, (had, _) in self.known.items():
            if name not in want and had.status == "True":
                want[name] = OK  # no longer a GPU node: what it said no longer holds
        changed: dict[str, tuple[NodeCondition, float]] = {}
        for name, cond in want.items():
            known = self.known.get(name)
            if known is None:
                node = present.get(name)
                carried = node.conditions.get(CONDITION) if node is not None else None
                if cond == OK and carried == "False":
                    self.known[name] = (cond, now)  # it says so already
                    continue
                since = now
            elif known[0] == cond:
                continue
            else:
                since = known[1] if known[0].status == cond.status else now
            self.known[name] = (cond, since)
            changed[name] = (cond, since)
        return changed

    def drain(self) -> list[str]:
        """Apply what waits, in the caller's thread; the nodes patched."""
        with self._lock:
            pending, self._pending = self._pending, {}
        done = []
        now = self.clock()
        for name, (cond, since) in pending.items():
            try:
                if not self.writer.apply(name, cond.body(since, now)):
                    continue
            except ClusterError as err:
                self.warn(f"node condition {name}: {err}")
                with self._lock:
                    self._pending.setdefault(name, (cond, since))
                    self._retry_at = now + RETRY_SECONDS
                continue
            done.append(name)
            if self.metrics is not None:
                self.metrics.condition_patched(cond.status)
        return done
