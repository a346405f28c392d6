"""``gpulabel report --html``: the check runner's results over one ClusterState as one static HTML page.

Pure: a :class:`ClusterState`, the ``check`` result (one part per registered
check, as ``check`` prints it) and the GPU inventory in, a string out. This
module runs no check; it only arranges the findings it is given, and a check
of the registry it was run with gets its summary card and its rows like the others. The page carries its
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
from typing import TYPE_CHECKING, Any

from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.dradriver import OPERAND as DRA_PLUGIN
from gpulabel.model.findings import Finding, Result, summarize
from gpulabel.model.operands import CATALOGUE, deploy_key, gating_keys, labelled_for
from gpulabel.render.assets import CSS, JS

if TYPE_CHECKING:
    from gpulabel.checks.health.inventory import InventoryRow

__all__ = ["CELL_STATES", "GENERATOR_MARK", "collect", "render_fleet_html", "render_html"]

GENERATOR_MARK = b'<meta name="generator" content="gpulabel">'  # how cluster/files.py knows a page as its own

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
# info findings that say why nothing runs in the cell: it is not expected there
_STATE_OF: Mapping[str, str] = {"disabled": "not-expected", "pre-installed": "not-expected"}


def _json_for_script(doc: Any) -> str:
    """JSON that cannot end the ``<script>`` element holding it, nor open markup inside it."""
    import orjson

    raw = orjson.dumps(doc).decode()
    return raw.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _status(node: Node) -> str:
    ready = node.conditions.get("Ready")
    text = "Ready" if ready == "True" else "NotReady" if ready is not None else "Unknown"
    return f"{text},SchedulingDisabled" if node.unschedulable else text


def _operand_columns(state: ClusterState, findings: Iterable[Finding]) -> list[str]:
    from gpulabel.checks.operands.daemonsets import operand_of_daemonset, operand_order

    present = {op for ds in state.daemonsets if (op := operand_of_daemonset(ds))}
    # an isolated node's finding, and one without an operand (a NoExecute taint's), is about the node: no column
    present |= {f.operand for f in findings if f.operand and f.reason != "isolated"}
    return [op for op in operand_order(present) if op in present]


def _cell(node: Node, op: str, found: list[Finding], off: set[str]) -> tuple[str, str]:
    """The cell's state code and its hover text ("" when the page's default text for the state says it)."""
    if found:
        worst = min(found, key=lambda f: list(CELL_STATES).index(f.reason) if f.reason in CELL_STATES else 99)
        state = worst.reason if worst.reason in CELL_STATES else _STATE_OF.get(worst.reason, "missing")
        return CELL_STATES[state], "\n".join(f"{f.reason}: {f.detail}" if f.detail else f.reason for f in found)
    # No finding: check_operands found the operand running and ready where expected, and nothing where not.
    if op == DRA_PLUGIN:  # NVIDIA's DRA driver's kubelet plugin: expected on every GPU node, deploy labels or not
        from gpulabel.checks.operands.standalone import gpu_node

        return CELL_STATES["running" if gpu_node(node) else "not-expected"], ""
    labels = node.labels
    if labels.get(V.DEPLOY_OPERANDS) == "false":
        return CELL_STATES["isolated"], ""
    if op in off:
        return CELL_STATES["not-expected"], ""  # the column says: disabled cluster-wide
    if labelled_for(op, labels):
        return CELL_STATES["running"], ""
    key = deploy_key(op)
    value = labels.get(key)
    if value == "true":
        lacks = ",".join(f"{k}={v}" for k, v in CATALOGUE[op].requires.items())
        return CELL_STATES["not-expected"], f"not expected: the node lacks {lacks}"
    if value is not None:
        return CELL_STATES["not-expected"], f"not expected: {key}={value}"
    # The page's own text names the label after the operand; one that shares another's label says its key here.
    shared = op in CATALOGUE and CATALOGUE[op].deploy != op
    return CELL_STATES["not-expected"], f"not expected: {key} is absent" if shared else ""


def _cells(
    node: Node, columns: Sequence[str], found: Mapping[str, list[Finding]], off: set[str]
) -> tuple[str, dict[str, str]]:
    """The node's row of cells (a state code per column) and the hover texts by column number."""
    codes, causes = [], {}
    for c, op in enumerate(columns):
        code, cause = _cell(node, op, found.get(op, []), off)
        codes.append(code)
        if cause:
            causes[str(c)] = cause
    return "".join(codes), causes


def _pending_doc(result: Result) -> list[dict[str, Any]]:
    """The Pending pods of the ``pending`` result, replicas with the same verdicts together.

    Its findings are one per pod and reason (as ``pending`` and ``check`` print
    them: same unit, same count, the same few node names each).
    """
    by_pod: dict[str, list[Finding]] = {}
    for f in result.findings:
        by_pod.setdefault(f.pod, []).append(f)
    rows = result.sections[0].rows if result.sections else ()
    shared: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in rows:
        ref, message, predicted = str(row["pod"]), row["scheduler_message"], row["predicted_message"]
        mine = by_pod.get(ref, [])
        groups = [
            {"reason": " ".join((f.reason, *f.args)), "detail": f.detail, "nodes": f.count, "sample": list(f.sample)}
            for f in mine
        ]
        # Replicas share their verdicts: one entry per distinct (verdicts, messages), listing its pods.
        sig = (message, predicted, tuple((f.reason, f.args, f.detail, f.count, f.sample) for f in mine))
        entry = shared.setdefault(sig, {"pods": [], "message": message, "predicted": predicted, "groups": groups})
        entry["pods"].append(ref)
    return list(shared.values())


_OWN_SECTIONS = ("audit", "operands", "pending", "hazards")  # the checks with a section of their own


def collect(
    state: ClusterState,
    checked: Result,
    inventory: Sequence[InventoryRow] = (),
    *,
    switched_off: Iterable[str] = (),
    generated: str = "",
    source: str | None = None,
) -> dict[str, Any]:
    """The page's data: ``checked`` (the check runner's result over ``state``) arranged for the tables.

    ``switched_off`` are the operands disabled cluster-wide, by flag or ClusterPolicy (their columns say so);
    ``source`` names the input in the header (the snapshot paths as the user
    gave them); by default the state's own ``source``.
    """
    parts = {p.command: p for p in checked.parts}
    operand_result = parts.get("operands", Result("operands"))
    off = set(switched_off)
    columns = _operand_columns(state, operand_result.findings)
    models = sorted({p for n in state.nodes if (p := n.labels.get(V.GPU_PRODUCT)) is not None})
    rows = _node_rows(state, parts, columns, off, models)

    def summary(findings: Sequence[Finding], skipped: str = "", **extra: int) -> dict[str, Any]:
        if skipped:
            return {"findings": 0, "reasons": {}, "skipped": skipped}
        return {"findings": len(findings), "reasons": summarize(findings), **extra}

    return {
        "source": state.source if source is None else source,
        "generated": generated,
        "states": {code: name for name, code in CELL_STATES.items()},
        "columns": [{"operand": op, "disabled": op in off} for op in columns],
        "models": models,
        "nodes": rows,
        **_tables(state, parts, inventory),
        "summary": {
            name: summary(r.findings, r.skipped, **({"pods": r.counts.get("pods", 0)} if name == "pending" else {}))
            for name, r in parts.items()
        },
        "totals": {"nodes": len(state.nodes), "gpu_nodes": sum(r["gpu"] for r in rows), "pods": len(state.pods)},
    }


def _node_rows(
    state: ClusterState, parts: Mapping[str, Result], columns: Sequence[str], off: set[str], models: Sequence[str]
) -> list[dict[str, Any]]:
    """One row per node: its operand cells (with their hover texts), audit findings and hazards."""
    by_cell: dict[str, dict[str, list[Finding]]] = {}  # node -> operand -> the cell's findings
    for f in parts.get("operands", Result("operands")).findings:
        if f.reason != "isolated":  # the node's cells say isolated
            by_cell.setdefault(f.node, {}).setdefault(f.operand, []).append(f)
    gating = sorted({key for op in columns for key in gating_keys(op)})  # the labels a quiet row's cells follow
    audit_by_node: dict[str, list[str]] = {}
    for f in parts.get("audit", Result("audit")).findings:
        audit_by_node.setdefault(f.node, []).append(f"{f.key.removeprefix('nvidia.com/')} {f.reason}")
    hazards_by_node: dict[str, int] = {}
    for f in parts.get("hazards", Result("hazards")).findings:
        hazards_by_node[f.node] = hazards_by_node.get(f.node, 0) + 1
    model_index = {m: i for i, m in enumerate(models)}
    rows = []
    quiet: dict[tuple[str | None, ...], tuple[str, dict[str, str]]] = {}
    for node in state.nodes:
        labels = node.labels
        here = by_cell.get(node.name)
        if here is None:  # no finding in the node's cells: they follow from its deploy labels alone
            sig = (labels.get(V.DEPLOY_OPERANDS), *map(labels.get, gating))
            known = quiet.get(sig)
            if known is None:
                known = quiet[sig] = _cells(node, columns, {}, off)
            cells, causes = known
        else:
            cells, causes = _cells(node, columns, here, off)
        product = labels.get(V.GPU_PRODUCT)
        row: dict[str, Any] = {
            "name": node.name,
            "model": -1 if product is None else model_index[product],
            "gpus": node.labels.get(V.GPU_COUNT, ""),
            "status": _status(node),
            "taints": ", ".join(map(str, node.taints)),
            "audit": "; ".join(audit_by_node.get(node.name, ())),
            "hazards": hazards_by_node.get(node.name, 0),
            "cells": cells,
            "gpu": 1 if node.labels.get(V.GPU_PRESENT) == "true" else 0,
        }
        if causes:
            row["causes"] = dict(causes)
        rows.append(row)
    return rows


def _tables(state: ClusterState, parts: Mapping[str, Result], inventory: Sequence[InventoryRow]) -> dict[str, Any]:
    """The page's tables besides the grid: audit, hazards, Pending pods, GPUs, the GPU stack, the DaemonSets."""
    position = {n.name: i for i, n in enumerate(state.nodes)}
    operand_result = parts.get("operands", Result("operands"))
    daemonsets = operand_result.sections[0].rows if operand_result.sections else ()
    stack = {name: r for name, r in parts.items() if name not in _OWN_SECTIONS}
    return {
        "audit": [
            {"node": position[f.node], "key": f.key, "reason": f.reason, "detail": f.detail, "value": f.value}
            for f in parts.get("audit", Result("audit")).findings
        ],
        "hazards": [
            {"pod": f.pod, "node": position[f.node], "reason": " ".join((f.reason, *f.args)), "detail": f.detail}
            for f in parts.get("hazards", Result("hazards")).findings
        ],
        "pending": _pending_doc(parts.get("pending", Result("pending"))),
        "gpus": [
            {
                **{k: r.group.get(k, "") for k in ("product", "driver", "mig", "sharing")},
                "nodes": r.nodes,
                "gpus": r.gpus if not r.unknown_gpus else r.gpus_text,
                "mig_devices": "" if r.mig_devices is None else r.mig_devices,
                "allocatable": r.total_allocatable,
                "requested": r.total_requested,
                "free": r.free,
                "usable": r.usable,  # as gpus says them, zeros included
                "unhealthy": r.unhealthy,
                "unschedulable": r.unschedulable,
            }
            for r in inventory
        ],
        "gpustack": [
            {
                "node": position[f.node],
                "check": name,
                "key": f.key,
                # the reason with its arguments, as the text line says it (condition GPUXIDErrors=True reason=XID79)
                "reason": " ".join((f.reason, *f.args)),
                "detail": f.detail,
                "value": f.value,
            }
            for name, r in stack.items()
            for f in r.findings
            if f.node in position  # a finding about no node (a registered check's) is in its card only
        ],
        "daemonsets": [
            {
                "daemonset": a["daemonset"],
                "operand": a["operand"],
                "labelled_nodes": a["labelled_nodes"],
                "desired_number_scheduled": a["desired_number_scheduled"],
                "excluded": list(ex) if isinstance(ex := a["excluded"], tuple) else [],
            }
            for a in daemonsets
        ],
    }


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def _summary_html(doc: Mapping[str, Any]) -> str:
    cards = []
    for check, s in doc["summary"].items():
        reasons = " ".join(f"{r}={n}" for r, n in s["reasons"].items())
        headline = f"{s['findings']:,} finding(s)" if s["findings"] else "OK"
        if check == "pending" and s.get("pods"):
            headline = f"{s['pods']:,} pod(s), {headline}"
        if s.get("skipped"):
            headline = f"skipped ({s['skipped']})"
        cls = "card bad" if s["findings"] else "card skip" if s.get("skipped") else "card ok"
        anchor = check if check in _OWN_SECTIONS else "gpustack"  # the GPU stack and registered checks
        cards.append(
            f'<a class="{cls}" href="#{anchor}"><b>{html.escape(check)}</b>'
            f"<span>{html.escape(headline)}</span><small>{html.escape(reasons)}</small></a>"
        )
    return "".join(cards)


def render_html(doc: Mapping[str, Any], title: str = "gpulabel report") -> str:
    """The page for ``doc`` (what :func:`collect` returns): one self-contained HTML document."""
    e = html.escape
    when = f" &middot; generated {e(doc['generated'])}" if doc.get("generated") else ""
    header = (
        f'<p class="meta">{e(doc["source"] or "cluster")} &middot; {e(_meta(doc))}{when}</p>\n'
        f'<nav class="summary">{_summary_html(doc)}</nav>'
    )
    return _page(title, header, doc)


def _meta(doc: Mapping[str, Any]) -> str:
    totals = doc["totals"]
    return f"{totals['nodes']:,} nodes ({totals['gpu_nodes']:,} GPU), {totals['pods']:,} pods"


def _fleet_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The fleet summary: one row per cluster, its name a link to its report (``#cluster=NAME``)."""
    e = html.escape
    head = (
        "<thead><tr><th>cluster</th><th>GPU nodes</th><th>GPUs usable</th><th>unhealthy</th><th>unschedulable</th>"
        "<th>lost (root causes)</th><th>errors</th><th>warnings</th><th>info</th><th>worst root causes</th>"
        "</tr></thead>"
    )
    body = []
    for r in rows:
        f = r["findings"]
        causes = "<br>".join(e(c) for c in r["causes"]) or "none"
        if r["more_causes"]:
            causes += f"<br>and {r['more_causes']:,} more"
        body.append(
            f'<tr><td><a href="#cluster={e(r["cluster"])}">{e(r["cluster"])}</a></td>'
            f"<td>{r['gpu_nodes']:,}</td><td>{r['gpus_usable']:,}</td><td>{r['gpus_unhealthy']:,}</td>"
            f"<td>{r['gpus_unschedulable']:,}</td><td>{r['gpus_lost']:,}</td><td>{f.get('error', 0):,}</td>"
            f"<td>{f.get('warning', 0):,}</td><td>{f.get('info', 0):,}</td><td>{causes}</td></tr>"
        )
    return f'<table id="fleet-table" class="fleet">{head}<tbody>{"".join(body)}</tbody></table>'


def render_fleet_html(fleet: Mapping[str, Any], title: str = "gpulabel fleet report") -> str:
    """The page of a fleet (``report`` over several clusters): the fleet summary, then each cluster's report,
    drawn one at a time by the same script from that cluster's own :func:`collect` document."""
    e = html.escape
    when = f" &middot; generated {e(fleet['generated'])}" if fleet.get("generated") else ""
    parts = [
        f'<p class="meta">{len(fleet["clusters"]):,} clusters{when}</p>',
        f'<section id="fleet"><h2>Fleet</h2>{_fleet_table(fleet["fleet"])}</section>',
    ]
    for i, c in enumerate(fleet["clusters"]):
        doc, name = c["doc"], e(c["name"])
        hidden = " hidden" if i else ""
        parts.append(
            f'<div data-cluster="{name}"{hidden}><h2 id="cluster-{name}">Cluster {name}</h2>'
            f'<p class="meta">{e(doc["source"] or name)} &middot; {e(_meta(doc))}</p>'
            f'<nav class="summary">{_summary_html(doc)}</nav></div>'
        )
    return _page(title, "\n".join(parts), {"fleet": fleet["fleet"], "clusters": fleet["clusters"]})


def _page(title: str, header: str, data: Mapping[str, Any]) -> str:
    e = html.escape
    csp = (
        f"default-src 'none'; script-src {_csp_hash(JS)}; style-src {_csp_hash(CSS)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="generator" content="gpulabel">
<meta http-equiv="Content-Security-Policy" content="{e(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{e(title)}</title>
<style>{CSS}</style>
</head>
<body>
<header>
<h1>{e(title)}</h1>
{header}
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
<section id="gpustack"><h2>GPU stack findings (capacity, MIG, sharing, driver upgrades, NodeFeatureRules, Kueue)</h2>
<table id="gpustack-table"></table></section>
<section id="pending"><h2>Pending pods</h2><div id="pending-list"></div></section>
<section id="hazards"><h2>Hazards</h2><table id="hazards-table"></table></section>
<section id="daemonsets"><h2>Operand DaemonSets</h2><table id="daemonsets-table"></table></section>
</main>
<script type="application/json" id="gpulabel-data">{_json_for_script(data)}</script>
<script>{JS}</script>
</body>
</html>
"""
