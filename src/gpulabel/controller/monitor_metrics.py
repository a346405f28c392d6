"""``gpulabel monitor``'s Prometheus metrics: the current findings, bounded, and the monitor's own health.

:meth:`MonitorMetrics.publish` (the metrics :class:`~gpulabel.controller.sinks.Sink`)
turns each Assessment into one immutable picture that a scrape reads whole (a
scrape never sees half of a publish): findings by check, reason and severity;
one ``gpulabel_problem`` series per error or warning finding, at most
``problem_series`` of them, worst first, the rest counted in
``gpulabel_problem_series_dropped``; GPUs unusable by root-cause link; GPU
nodes and how many carry NFD's and GFD's labels. The watch-health hooks
(:meth:`watch_event`, :meth:`relisted`, :meth:`api_error`, :meth:`evaluated`,
``leader``, ``ready``) and the Event and condition sinks' counters are kept
here too. Every label takes a bounded set of values: checks, reasons, kinds,
HTTP codes, chain links, and (capped) nodes and pods.

The names, types and labels are a contract (docs/monitor-sinks.md): the alert
rules and the dashboard use exactly these.
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from gpulabel.checks.engine.assessment import Assessment
from gpulabel.checks.engine.rootcause import CHAIN
from gpulabel.controller.sinks import GpuNodes, NodeFacts, same_findings
from gpulabel.model.cluster import Node, Pod
from gpulabel.model.findings import Finding
from gpulabel.model.severity import at_or_above

__all__ = [
    "DEFAULT_PROBLEM_SERIES",
    "EVALUATION_BUCKETS",
    "GPU_STATES",
    "GpuPicture",
    "Level",
    "MonitorMetrics",
    "Picture",
    "node_gpus",
    "picture",
]

DEFAULT_PROBLEM_SERIES = 1000
EVALUATION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

ProblemLabels = tuple[str, str, str, str, str, str]  # check, reason, severity, node, pod, operand


@dataclass(frozen=True, slots=True)
class Picture:
    """What one Assessment shows on ``/metrics``: every gauge the findings decide."""

    findings: Mapping[tuple[str, str, str], int] = field(default_factory=dict)
    problems: tuple[ProblemLabels, ...] = ()
    dropped: int = 0
    gpus_unusable: Mapping[str, int] = field(default_factory=lambda: dict.fromkeys(CHAIN, 0))
    gpu_nodes: int = 0
    labelled: Mapping[str, int] = field(default_factory=lambda: {"nfd": 0, "gfd": 0})
    # GPU devices by what a new pod can use (checks.usable.node_use): the fleet, the troubled nodes, the
    # devices pods report Unhealthy
    gpus: GpuPicture = field(default_factory=lambda: GpuPicture())


def _rank(severity: str) -> int:
    return 0 if at_or_above(severity, "error") else 1


def picture(
    assessment: Assessment,
    problem_series: int = DEFAULT_PROBLEM_SERIES,
    nodes: Mapping[str, NodeFacts] | None = None,
    conditions: Mapping[str, str] | None = None,
) -> Picture:
    """The gauges of ``assessment``; problem series worst first (error before warning, then the GPUs
    the node lost, then the node or pod name), at most ``problem_series``, the rest counted as dropped.
    ``nodes``: the state's node facts, if known (:class:`~gpulabel.controller.sinks.GpuNodes`);
    ``conditions``: the GPU health condition table (``checks.health.condition_table``; default: gpulabel's)."""
    findings: dict[tuple[str, str, str], int] = {}
    for f in assessment.findings:
        key = (f.check, f.reason, f.severity)
        findings[key] = findings.get(key, 0) + 1
    lost = {c.node: c.gpus or 0 for c in assessment.causes}
    ranked: dict[ProblemLabels, tuple[int, int, str]] = {}
    for f in assessment.findings:
        if not at_or_above(f.severity, "warning") or f.baseline:
            continue
        labels = _problem_labels(f)
        if labels not in ranked:
            name = f.pod or f.node
            ranked[labels] = (_rank(f.severity), -(0 if f.pod else lost.get(f.node, 0)), name)
    order = sorted(ranked, key=lambda labels: (*ranked[labels], labels))
    problems = tuple(order[: max(problem_series, 0)])
    unusable = dict.fromkeys(CHAIN, 0)
    for c in assessment.causes:
        unusable[c.link] = unusable.get(c.link, 0) + (c.gpus or 0)
    gpu_nodes, labelled = _node_counts(nodes if nodes is not None else GpuNodes().facts(assessment.state.nodes))
    gpus = node_gpus(assessment.state.nodes, assessment.state.pods, problem_series, conditions)
    return Picture(findings, problems, len(order) - len(problems), unusable, gpu_nodes, labelled, gpus)


GPU_STATES = ("usable", "unhealthy", "unschedulable")
GpuSplit = tuple[int, int, int]  # usable, unhealthy, unschedulable
Device = tuple[str, str, str, str]  # node, resource, device ID, pod (namespace/name)


def node_gpus(
    nodes: Iterable[Node],
    pods: Iterable[Pod] = (),
    cap: int = DEFAULT_PROBLEM_SERIES,
    conditions: Mapping[str, str] | None = None,
) -> GpuPicture:
    """The fleet's GPU devices by what a new pod can use; per node only where some device cannot take a new
    pod (the most unhealthy, then unschedulable, first, at most ``cap`` nodes); the devices pods report
    Unhealthy (allocatedResourcesStatus), at most ``cap``."""
    from gpulabel.checks.health.usable import node_use

    fleet = [0, 0, 0]
    troubled: dict[str, GpuSplit] = {}
    for n in nodes:
        use = node_use(n, 0, conditions)
        split = (use.usable, use.unhealthy, use.unschedulable)
        for i, v in enumerate(split):
            fleet[i] += v
        if use.unhealthy or use.unschedulable:
            troubled[n.name] = split
    worst = sorted(troubled, key=lambda name: (-troubled[name][1], -troubled[name][2], name))[: max(cap, 0)]
    devices = sorted(
        (p.node_name, d.resource, d.resource_id, p.ref)
        for p in pods
        if p.node_name and not p.terminal
        for d in p.device_health
        if d.health == "Unhealthy"
    )[: max(cap, 0)]
    return GpuPicture((fleet[0], fleet[1], fleet[2]), {name: troubled[name] for name in sorted(worst)}, tuple(devices))


@dataclass(frozen=True, slots=True)
class GpuPicture:
    fleet: GpuSplit = (0, 0, 0)
    nodes: Mapping[str, GpuSplit] = field(default_factory=dict)
    devices: tuple[Device, ...] = ()


def _node_counts(nodes: Mapping[str, NodeFacts]) -> tuple[int, dict[str, int]]:
    gpu = [f for f in nodes.values() if f.gpu]
    return len(gpu), {"nfd": sum(1 for f in gpu if f.nfd), "gfd": sum(1 for f in gpu if f.gfd)}


def _problem_labels(f: Finding) -> ProblemLabels:
    """A pod finding is about ``namespace/pod`` (node ""), any other about its node (pod ""); an operands
    finding names its operand (``device-plugin``; "" for every other finding)."""
    return (f.check, f.reason, f.severity, "" if f.pod else f.node, f.pod, f.operand)


class Level:
    """A gauge set from outside (``leader``): ``set(1)`` while this instance holds the lease."""

    def __init__(self) -> None:
        self.value = 0.0

    def set(self, value: float) -> None:
        self.value = float(value)


@dataclass
class _Histogram:
    counts: list[int] = field(default_factory=lambda: [0] * (len(EVALUATION_BUCKETS) + 1))
    total: float = 0.0

    def observe(self, seconds: float) -> None:
        for i, bound in enumerate(EVALUATION_BUCKETS):
            if seconds <= bound:
                self.counts[i] += 1
                break
        else:
            self.counts[-1] += 1
        self.total += seconds


class MonitorMetrics:
    """The controllers' registry (its own ``CollectorRegistry``) and the hooks that feed it.

    ``gpulabel monitor`` publishes its Assessments here. ``sync --watch`` runs
    the same loop and serves this same registry with ``assessments=False``:
    its health families only (leader, API errors, watches), and sync's own
    families registered beside them (``controller.metrics.Metrics``).
    """

    def __init__(
        self,
        problem_series: int = DEFAULT_PROBLEM_SERIES,
        clock: Callable[[], float] = time.time,
        conditions: Mapping[str, str] | None = None,
        cluster: str | None = None,
        assessments: bool = True,
    ) -> None:
        from prometheus_client import CollectorRegistry

        self.assessments = assessments
        self.problem_series = problem_series
        self.cluster = cluster  # --cluster-name: a cluster="<name>" label on every series (a fleet on one Prometheus)
        self.conditions = conditions  # the GPU health condition table (the config's types included)
        self.clock = clock
        self.ready = threading.Event()
        self.leader = Level()
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(_Collector(self))
        self._lock = threading.Lock()
        self._picturing = threading.Lock()  # one scrape makes the picture, another waits for it
        self._picture = Picture()  # replaced whole: a scrape reads one picture
        self._pictured: Assessment | None = None  # the assessment _picture shows
        self.assessment: Assessment | None = None
        self._nodes = GpuNodes()
        self._last_event: dict[str, float] = {}
        self._relists: dict[str, int] = {}
        self._api_errors: dict[str, int] = {}
        self._durations: dict[str, _Histogram] = {}
        self._last_evaluation: float | None = None
        self._events: dict[tuple[str, str], int] = {}
        self._suppressed = 0
        self._pending: dict[str, int] = {}
        self._conditions: dict[str, int] = {}

    # -- the sink ----------------------------------------------------------

    def publish(self, assessment: Assessment) -> None:
        """Keep the assessment; its picture is made when a scrape reads it (:attr:`picture`). Making it reads
        every node and pod (the GPUs by use: 40-50 ms of CPU at 5,000 nodes, ten times an incremental
        evaluation), so it is made once per scrape, not once per evaluation (several a second under a
        cluster's heartbeats)."""
        with self._lock:
            self.assessment = assessment
            self._last_evaluation = max(self._last_evaluation or 0.0, assessment.at)

    @property
    def picture(self) -> Picture:
        """The picture of the last published assessment, made at most once per assessment."""
        with self._picturing:
            assessment = self.assessment
            if assessment is None or assessment is self._pictured:
                return self._picture
            nodes = self._nodes.facts(assessment.state.nodes)
            if same_findings(self._pictured, assessment):
                gpu_nodes, labelled = _node_counts(nodes)
                # a taint or a cordon changes them without a finding
                gpus = node_gpus(assessment.state.nodes, assessment.state.pods, self.problem_series, self.conditions)
                shown = replace(self._picture, gpu_nodes=gpu_nodes, labelled=labelled, gpus=gpus)
            else:
                shown = picture(assessment, self.problem_series, nodes, self.conditions)
            self._picture, self._pictured = shown, assessment
            return shown

    # -- watch health --------------------------------------------------------

    def watch_event(self, kind: str, at: float) -> None:
        """A watch event of ``kind`` (bookmarks too) arrived at unix time ``at``."""
        with self._lock:
            self._last_event[kind] = max(self._last_event.get(kind, 0.0), at)

    def relisted(self, kind: str) -> None:
        with self._lock:
            self._relists[kind] = self._relists.get(kind, 0) + 1

    def api_error(self, code: int | str) -> None:
        """An API error by HTTP status (``unreachable`` when nothing answered): ``KubeClient.on_error``."""
        with self._lock:
            self._api_errors[str(code)] = self._api_errors.get(str(code), 0) + 1

    def evaluated(self, scope: str, seconds: float) -> None:
        """One evaluation (``incremental`` or ``full``) took ``seconds``."""
        with self._lock:
            self._durations.setdefault(scope, _Histogram()).observe(seconds)
            self._last_evaluation = max(self._last_evaluation or 0.0, self.clock())

    # -- the writing sinks' counters ----------------------------------------------

    def event_written(self, type: str, reason: str) -> None:
        with self._lock:
            self._events[(type, reason)] = self._events.get((type, reason), 0) + 1

    def events_pending(self, by_reason: Mapping[str, int]) -> None:
        """The Warnings waiting out their grace, by Event reason (replaced whole at each plan)."""
        with self._lock:
            self._pending = dict(by_reason)

    def event_suppressed(self, count: int = 1) -> None:
        with self._lock:
            self._suppressed += count

    def condition_patched(self, status: str) -> None:
        with self._lock:
            self._conditions[status] = self._conditions.get(status, 0) + 1

    # -- serving -------------------------------------------------------------

    def render(self) -> bytes:
        from prometheus_client import generate_latest

        return bytes(generate_latest(self.registry))

    def findings_document(self) -> bytes | None:
        """The current Assessment as ``check -o json``'s envelope (``None`` before the first publish)."""
        from gpulabel.render.text import emit

        assessment = self.assessment
        if assessment is None:
            return None
        out = io.StringIO()
        emit(assessment.result, "json", out)
        return out.getvalue().encode()

    def families(self) -> Iterator[Any]:
        """Every metric family, as the registry's collector yields them: the findings' picture and the writing
        sinks' counters (unless made with ``assessments=False``), then the controller's own health."""
        shown = self.picture  # made outside the counters' lock: publish and the watch hooks do not wait for it
        with self._lock:
            last_event = dict(self._last_event)
            relists, errors = dict(self._relists), dict(self._api_errors)
            durations = {k: (list(h.counts), h.total) for k, h in self._durations.items()}
            last_evaluation = self._last_evaluation
            events, suppressed, conditions = dict(self._events), self._suppressed, dict(self._conditions)
            pending = dict(self._pending)
        if self.assessments:
            yield from _picture_families(shown)
        yield from _health_families(last_event, relists, errors, durations, last_evaluation, self.leader.value)
        if self.assessments:
            yield from _writer_families(events, pending, suppressed, conditions)


Rows = Iterable[tuple[Iterable[str], float]]


def _gauge(name: str, doc: str, labels: Iterable[str], rows: Rows) -> Any:
    from prometheus_client.core import GaugeMetricFamily

    family = GaugeMetricFamily(name, doc, labels=list(labels))
    for values, value in rows:
        family.add_metric(list(values), value)
    return family


def _counter(name: str, doc: str, labels: Iterable[str], rows: Rows) -> Any:
    from prometheus_client.core import CounterMetricFamily

    family = CounterMetricFamily(name, doc, labels=list(labels))
    for values, value in rows:
        family.add_metric(list(values), value)
    return family


def _picture_families(shown: Picture) -> Iterator[Any]:
    """What the last Assessment shows: findings, problem series, lost GPUs, GPU nodes and their labels."""
    yield _gauge(
        "gpulabel_findings",
        "Current findings by check, reason and severity",
        ("check", "reason", "severity"),
        sorted(shown.findings.items()),
    )
    yield _gauge(
        "gpulabel_problem",
        "One series (=1) per current error or warning finding, worst first, capped",
        ("check", "reason", "severity", "node", "pod", "operand"),
        ((labels, 1) for labels in shown.problems),
    )
    yield _gauge("gpulabel_problem_series_dropped", "Problem series left out over the cap", (), [((), shown.dropped)])
    yield _gauge(
        "gpulabel_gpus_unusable",
        "GPUs lost, by the root-cause link that breaks first",
        ("cause",),
        (((link,), n) for link, n in shown.gpus_unusable.items()),
    )
    yield _gauge("gpulabel_gpu_nodes", "GPU nodes", (), [((), shown.gpu_nodes)])
    yield _gauge(
        "gpulabel_fleet_gpus",
        "GPU devices of every node by what a new pod can use: usable, unhealthy (lost, or a GPU health "
        "condition), unschedulable (cordoned, NotReady, tainted)",
        ("state",),
        (((state,), n) for state, n in zip(GPU_STATES, shown.gpus.fleet, strict=True)),
    )
    yield _gauge(
        "gpulabel_gpus",
        "GPU devices per node with some unhealthy or unschedulable, by state (capped, worst first)",
        ("node", "state"),
        (
            ((node, state), n)
            for node, split in shown.gpus.nodes.items()
            for state, n in zip(GPU_STATES, split, strict=True)
        ),
    )
    yield _gauge(
        "gpulabel_gpu_unhealthy_device",
        "One series (=1) per device a pod's allocatedResourcesStatus reports Unhealthy (capped)",
        ("node", "resource", "device", "pod"),
        ((d, 1) for d in shown.gpus.devices),
    )
    yield _gauge(
        "gpulabel_gpu_nodes_labelled",
        "GPU nodes carrying NFD's NVIDIA PCI label (nfd) or GFD's gpu.product (gfd)",
        ("source",),
        sorted(((s,), n) for s, n in shown.labelled.items()),
    )


def _health_families(
    last_event: Mapping[str, float],
    relists: Mapping[str, int],
    errors: Mapping[str, int],
    durations: Mapping[str, tuple[list[int], float]],
    last_evaluation: float | None,
    leader: float,
) -> Iterator[Any]:
    """The controller's own health: its watches, API errors, evaluations and whether it leads."""
    from prometheus_client.core import HistogramMetricFamily

    yield _gauge(
        "gpulabel_watch_last_event_timestamp_seconds",
        "Unix time of the last watch event, bookmark or stream end, by kind",
        ("kind",),
        sorted(((k,), t) for k, t in last_event.items()),
    )
    yield _counter(
        "gpulabel_watch_relists",
        "Relists (410 or a broken watch), by kind",
        ("kind",),
        sorted(((k,), n) for k, n in relists.items()),
    )
    yield _counter(
        "gpulabel_api_errors",
        "API errors by HTTP status ('unreachable' for no answer)",
        ("code",),
        sorted(((c,), n) for c, n in errors.items()),
    )
    histogram = HistogramMetricFamily(
        "gpulabel_evaluation_duration_seconds", "Evaluation time, by scope", labels=["scope"]
    )
    for scope, (counts, total) in sorted(durations.items()):
        cumulative, buckets = 0, []
        for bound, n in zip((*EVALUATION_BUCKETS, float("inf")), counts, strict=True):
            cumulative += n
            buckets.append(("+Inf" if bound == float("inf") else repr(bound), cumulative))
        histogram.add_metric([scope], buckets, total)
    yield histogram
    yield _gauge(
        "gpulabel_last_evaluation_timestamp_seconds",
        "Unix time of the last evaluation",
        (),
        [] if last_evaluation is None else [((), last_evaluation)],
    )
    yield _gauge("gpulabel_leader", "1 while this instance holds the lease", (), [((), leader)])


def _writer_families(
    events: Mapping[tuple[str, str], int], pending: Mapping[str, int], suppressed: int, conditions: Mapping[str, int]
) -> Iterator[Any]:
    """The counters of the sinks that write: Events and node conditions."""
    yield _counter("gpulabel_events", "Events written, by type and reason", ("type", "reason"), sorted(events.items()))
    yield _gauge(
        "gpulabel_events_pending",
        "Warning Events waiting out their grace (already in gpulabel_problem), by reason",
        ("reason",),
        sorted(((r,), n) for r, n in pending.items() if n),
    )
    yield _counter("gpulabel_events_suppressed", "Events left out by the per-object rate limit", (), [((), suppressed)])
    yield _counter(
        "gpulabel_node_conditions",
        "Node-condition patches, by status",
        ("status",),
        sorted(((s,), n) for s, n in conditions.items()),
    )


class _Collector:
    def __init__(self, metrics: MonitorMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Any]:
        cluster = self.metrics.cluster
        for family in self.metrics.families():
            if cluster:
                family.samples = [s._replace(labels={**s.labels, "cluster": cluster}) for s in family.samples]
            yield family
