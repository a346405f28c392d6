"""``gpulabel report --html``: every read-only check of one ClusterState as one static HTML page.

Pure: a :class:`ClusterState` in, a string out. The checks are the ones the
other commands run (``audit``, ``check_operands``, ``pending_pods``,
``hazards``); this module only arranges their findings. The page carries its
data as one JSON block and builds its tables with inline JavaScript, so 5,000
nodes cost a few hundred kilobytes and sorting or filtering never goes back to
Python. Nothing is loaded from anywhere: CSS and JS are inline and a
Content-Security-Policy with their hashes forbids everything else, so a label
value or pod name that looks like markup is data, never code.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Finding, summarize
from gpulabel.render.assets import CSS, JS

if TYPE_CHECKING:
    from gpulabel.checks.placement import PendingPod

__all__ = ["CELL_STATES", "collect", "render_html", "report_html"]

# Operand cell states: the code each has in the page's data, most severe first.
CELL_STATES: Mapping[str, str] = {
    "missing": "m",
    "not-ready": "n",
    "out-of-order": "o",
    "unexpected": "u",
    "paused": "p",
    "isolated": "i",
    "running": "r",
    "not-expected": "-",
}
PENDING_SAMPLE = 20  # node names listed per Pending pod and reason; the count is always exact


def _json_for_script(doc: Any) -> str:
    """JSON that cannot end the ``<script>`` element holding it, nor open markup inside it."""
    import orjson

    raw = orjson.dumps(doc).decode()
    return raw.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _status(node: Node) -> str:
    ready = node.conditions.get("Ready")
    text = "Ready" if ready == "True" else "NotReady" if ready is not None else "Unknown"
    return f"{text},SchedulingDisabled" if node.unschedulable else text


def _operand_columns(state: ClusterState, findings: Sequence[Finding]) -> list[str]:
    from gpulabel.checks.operands import operand_of_daemonset, operand_order

    present = {op for ds in state.daemonsets if (op := operand_of_daemonset(ds))}
    present |= {f.key for f in findings if f.reason != "isolated"}  # an isolated node's finding is about the node
    return [op for op in operand_order(present) if op in present]


def _cell(node: Node, op: str, found: list[Finding], off: set[str]) -> tuple[str, str]:
    """The cell's state code and its hover text ("" when the page's default text for the state says it)."""
    if found:
        worst = min(found, key=lambda f: list(CELL_STATES).index(f.reason) if f.reason in CELL_STATES else 99)
        state = worst.reason if worst.reason in CELL_STATES else "missing"
        return CELL_STATES[state], "\n".join(f"{f.reason}: {f.detail}" if f.detail else f.reason for f in found)
    # No finding: check_operands found the operand running and ready where expected, and nothing where not.
    if node.labels.get(V.DEPLOY_OPERANDS) == "false":
        return CELL_STATES["isolated"], ""
    value = node.labels.get(V.DEPLOY_PREFIX + op)
    if op in off:
        return CELL_STATES["not-expected"], ""  # the column says: disabled cluster-wide
    if value == "true":
        return CELL_STATES["running"], ""
    return CELL_STATES["not-expected"], "" if value is None else f"not expected: {V.DEPLOY_PREFIX}{op}={value}"


def _pending_doc(state: ClusterState, namespace: str | None) -> tuple[list[dict[str, Any]], list[Finding]]:
    """The Pending pods with their nodes grouped by verdict; and one finding per node verdict, as ``pending``.

    Findings are built for one node per distinct verdict only (a 5,000-node
    cluster has a handful), which keeps 200,000 node verdicts cheap.
    """
    from gpulabel.checks.placement import PendingPod, pending_pods

    pods: list[tuple[str, str, str | None, list[Any]]] = []
    weighted: list[Finding] = []
    for p in pending_pods(state, namespace):
        if p.claims:
            pods.append(_claim_groups(p, state, weighted))
            continue
        first: dict[int, int] = {}  # id(result) -> position of its first node
        for i, result in enumerate(p.results):
            first.setdefault(id(result), i)
        # (reason, detail) -> [reason, detail, node count, sample of node names]; and one finding of each
        groups: dict[tuple[str, str], list[Any]] = {}
        samples: dict[tuple[str, str], Finding] = {}
        by_result: dict[int, tuple[str, str]] = {}
        for rid, i in first.items():
            finding = PendingPod(p.pod, (p.results[i],), p.predicted).findings([state.nodes[i]])[0]
            key = by_result[rid] = (" ".join((finding.reason, *finding.args)), finding.detail)
            samples.setdefault(key, finding)
            groups.setdefault(key, [key[0], key[1], 0, []])
        for node, result in zip(state.nodes, p.results, strict=True):
            group = groups[by_result[id(result)]]
            group[2] += 1
            if len(group[3]) < PENDING_SAMPLE:
                group[3].append(node.name)
        for key, group in groups.items():
            weighted.extend([samples[key]] * group[2])
        pods.append((p.pod.ref, p.message, p.predicted, list(groups.values())))
    # Replicas share their verdicts: one entry per distinct (verdicts, messages), listing its pods.
    shared: dict[str, dict[str, Any]] = {}
    for ref, message, predicted, verdicts in pods:
        entry = shared.setdefault(
            repr((message, predicted, verdicts)),
            {"pods": [], "message": message, "predicted": predicted, "groups": verdicts},
        )
        entry["pods"].append(ref)
    return list(shared.values()), weighted


def _claim_groups(
    p: PendingPod, state: ClusterState, weighted: list[Finding]
) -> tuple[str, str, str | None, list[Any]]:
    """A pod waiting for claims: nodes grouped by their claim verdicts (``claim <claim>/<request> <reason>``)."""
    groups: dict[tuple[str, str], list[Any]] = {}
    for node, result in zip(state.nodes, p.results, strict=True):
        found = p.findings_for(node, result)
        key = (
            "; ".join(" ".join((f.key.split(" ", 1)[1] if " " in f.key else "", f.reason)).strip() for f in found),
            "; ".join(f.detail for f in found),
        )
        group = groups.setdefault(key, [key[0], key[1], 0, []])
        group[2] += 1
        if len(group[3]) < PENDING_SAMPLE:
            group[3].append(node.name)
        weighted.extend(found)
    return p.pod.ref, p.message, p.predicted, list(groups.values())


GPU_STACK_CHECKS = ("capacity", "mig", "sharing", "upgrade")


def _gpu_stack(
    state: ClusterState, disabled: Sequence[str], stuck_after: float | None, now: datetime | None
) -> dict[str, list[Finding]]:
    from gpulabel.checks.registry import DEFAULT_STUCK_AFTER, CheckOptions, check_named

    opts = CheckOptions(
        disabled=tuple(disabled), stuck_after=DEFAULT_STUCK_AFTER if stuck_after is None else stuck_after
    )
    if now is not None:
        opts = replace(opts, now=now)
    return {name: check_named(name).run(state, opts) for name in GPU_STACK_CHECKS}


def collect(
    state: ClusterState,
    *,
    disabled: Iterable[str] = (),
    strict: bool = False,
    namespace: str | None = None,
    generated: str = "",
    stuck_after: float | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The page's data: every check run once over ``state``, arranged for the tables."""
    from gpulabel.checks.audit import audit
    from gpulabel.checks.gpus import inventory
    from gpulabel.checks.operands import check_operands, disabled_by_cluster_policy
    from gpulabel.checks.placement import hazards

    disabled = list(disabled)
    stack = _gpu_stack(state, disabled, stuck_after, now)
    audit_findings = audit(state, strict=strict)
    operand_report = check_operands(state, disabled)
    pending, pending_findings = _pending_doc(state, namespace)
    hazard_findings = hazards(state, namespace)
    off = set(disabled) | disabled_by_cluster_policy(state.cluster_policies)

    columns = _operand_columns(state, operand_report.findings)
    position = {n.name: i for i, n in enumerate(state.nodes)}
    by_cell: dict[tuple[str, str], list[Finding]] = {}
    for f in operand_report.findings:
        if f.reason != "isolated":  # the node's cells say isolated
            by_cell.setdefault((f.subject, f.key), []).append(f)
    audit_by_node: dict[str, list[str]] = {}
    for f in audit_findings:
        audit_by_node.setdefault(f.subject, []).append(f"{f.key.removeprefix('nvidia.com/')} {f.reason}")
    hazards_by_node: dict[str, int] = {}
    for f in hazard_findings:
        hazards_by_node[f.key] = hazards_by_node.get(f.key, 0) + 1
    models = sorted({p for n in state.nodes if (p := n.labels.get(V.GPU_PRODUCT)) is not None})
    model_index = {m: i for i, m in enumerate(models)}

    rows = []
    for node in state.nodes:
        codes, causes = [], {}
        for c, op in enumerate(columns):
            code, cause = _cell(node, op, by_cell.get((node.name, op), []), off)
            codes.append(code)
            if cause:
                causes[str(c)] = cause
        product = node.labels.get(V.GPU_PRODUCT)
        row: list[Any] = [
            node.name,
            -1 if product is None else model_index[product],
            node.labels.get(V.GPU_COUNT, ""),
            _status(node),
            ", ".join(map(str, node.taints)),
            "; ".join(audit_by_node.get(node.name, ())),
            hazards_by_node.get(node.name, 0),
            "".join(codes),
            1 if node.labels.get(V.GPU_PRESENT) == "true" else 0,
        ]
        if causes:
            row.append(causes)
        rows.append(row)

    def summary(findings: Sequence[Finding], **extra: int) -> dict[str, Any]:
        return {"findings": len(findings), "reasons": summarize(findings), **extra}

    return {
        "source": state.source,
        "generated": generated,
        "states": {code: name for name, code in CELL_STATES.items()},
        "columns": [{"operand": op, "disabled": op in off} for op in columns],
        "models": models,
        "nodes": rows,
        "audit": [[position[f.subject], f.key, f.reason, f.detail, f.data.get("value")] for f in audit_findings],
        "hazards": [[f.subject, position[f.key], " ".join((f.reason, *f.args)), f.detail] for f in hazard_findings],
        "pending": pending,
        "gpus": [
            [
                *(r.group.get(k, "") for k in ("product", "driver", "mig", "sharing")),
                *(r.nodes, r.gpus, r.total_allocatable, r.total_requested, r.free),
            ]
            for r in inventory(state)
        ],
        "gpustack": [
            [position[f.subject], name, f.key, f.reason, f.detail, f.data.get("value")]
            for name, fs in stack.items()
            for f in fs
        ],
        "daemonsets": [
            [
                a["daemonset"],
                a["operand"],
                a["labelled_nodes"],
                a["desired_number_scheduled"],
                [f"{e['node']} ({', '.join(e['untolerated_taints'])})" for e in a["excluded"]],
            ]
            for a in operand_report.daemonsets
        ],
        "summary": {
            "audit": summary(audit_findings),
            "operands": summary(operand_report.findings),
            "pending": summary(pending_findings, pods=sum(len(p["pods"]) for p in pending)),
            "hazards": summary(hazard_findings),
            **{name: summary(fs) for name, fs in stack.items()},
        },
        "totals": {"nodes": len(state.nodes), "gpu_nodes": sum(r[8] for r in rows), "pods": len(state.pods)},
    }


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def _summary_html(doc: Mapping[str, Any]) -> str:
    cards = []
    for check, s in doc["summary"].items():
        reasons = " ".join(f"{r}={n}" for r, n in s["reasons"].items())
        headline = f"{s['findings']:,} finding(s)" if s["findings"] else "OK"
        if check == "pending":
            headline = f"{s['pods']:,} pod(s), {headline}" if s["pods"] else "OK"
        cls = "card bad" if s["findings"] else "card ok"
        anchor = "gpustack" if check in GPU_STACK_CHECKS else check
        cards.append(
            f'<a class="{cls}" href="#{anchor}"><b>{html.escape(check)}</b>'
            f"<span>{html.escape(headline)}</span><small>{html.escape(reasons)}</small></a>"
        )
    return "".join(cards)


def render_html(doc: Mapping[str, Any], title: str = "gpulabel report") -> str:
    """The page for ``doc`` (what :func:`collect` returns): one self-contained HTML document."""
    e = html.escape
    totals = doc["totals"]
    csp = (
        f"default-src 'none'; script-src {_csp_hash(JS)}; style-src {_csp_hash(CSS)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    meta = f"{totals['nodes']:,} nodes ({totals['gpu_nodes']:,} GPU), {totals['pods']:,} pods"
    when = f" &middot; generated {e(doc['generated'])}" if doc.get("generated") else ""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{e(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{e(title)}</title>
<style>{CSS}</style>
</head>
<body>
<header>
<h1>{e(title)}</h1>
<p class="meta">{e(doc["source"] or "cluster")} &middot; {e(meta)}{when}</p>
<nav class="summary">{_summary_html(doc)}</nav>
<form id="controls" class="controls" autocomplete="off">
<label>Node <input id="filter" type="search" placeholder="name contains..."></label>
<label>GPU model <select id="gpu"><option value="">all models</option></select></label>
<label>Show <select id="show"></select></label>
<span id="count" class="count"></span>
</form>
</header>
<main>
<noscript><p class="warn">This report draws its tables with JavaScript; the data is the JSON block
in the page source.</p></noscript>
<section id="gpus"><h2>GPU inventory</h2><table id="gpus-table"></table></section>
<section id="operands"><h2>Operands per node</h2><div id="legend" class="legend"></div>
<div class="scroll"><table id="grid" class="grid"></table></div><p id="grid-more" class="more"></p></section>
<section id="audit"><h2>Audit findings</h2><table id="audit-table"></table></section>
<section id="gpustack"><h2>GPU stack findings (capacity, MIG, sharing, driver upgrades)</h2>
<table id="gpustack-table"></table></section>
<section id="pending"><h2>Pending pods</h2><div id="pending-list"></div></section>
<section id="hazards"><h2>Hazards</h2><table id="hazards-table"></table></section>
<section id="daemonsets"><h2>Operand DaemonSets</h2><table id="daemonsets-table"></table></section>
</main>
<script type="application/json" id="gpulabel-data">{_json_for_script(doc)}</script>
<script>{JS}</script>
</body>
</html>
"""


def report_html(
    state: ClusterState,
    *,
    disabled: Iterable[str] = (),
    strict: bool = False,
    namespace: str | None = None,
    generated: str = "",
    title: str = "gpulabel report",
    stuck_after: float | None = None,
    now: datetime | None = None,
) -> str:
    """Run every read-only check over ``state`` and render the page."""
    doc = collect(
        state,
        disabled=disabled,
        strict=strict,
        namespace=namespace,
        generated=generated,
        stuck_after=stuck_after,
        now=now,
    )
    return render_html(doc, title)
