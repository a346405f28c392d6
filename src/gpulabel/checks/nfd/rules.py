"""What nfd-master would write on each node from NodeFeatures and NodeFeatureRules, and drift from it.

:func:`predict` runs nfd-master's pipeline (``k8s.nfd.master``) for every
node; :func:`rules_result` is the ``rules`` command's result (a section per
node and per node and rule, with why a rule did not match); :func:`drift`
compares the prediction with the node: a label a rule or NodeFeature should
set that the node lacks or has with another value, a label in NFD's
namespaces that nothing explains, and rules that fail with an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gpulabel.k8s.nfd.master import Memo, NfdConfig, NodeResult, is_nfd_namespace, process_node
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Cell, Finding, Result, Section
from gpulabel.model.severity import Reason
from gpulabel.model.vocabulary import nfd_owned_keys

__all__ = ["CHECK", "REASONS", "Prediction", "drift", "predict", "rules_result"]

# The reasons of the nfd check (``check``, and ``audit`` where NodeFeatures are in the input).
REASONS = {
    "nfd-missing": Reason("error", "a NodeFeatureRule (or NodeFeature) sets this label and the node does not have it"),
    "nfd-differs": Reason("error", "a NodeFeatureRule sets this label to another value than the node has"),
    "nfd-unexplained": Reason(
        "warning", "a label in NFD's namespaces that no rule, feature file or worker source produces"
    ),
    "nfd-rule-error": Reason("error", "nfd-master skips the rule on these nodes: the error it meets"),
}

CHECK = "nfd"


@dataclass(frozen=True, slots=True)
class Prediction:
    node: Node
    result: NodeResult


def predict(state: ClusterState, cfg: NfdConfig, only: str | None = None) -> list[Prediction]:
    """nfd-master's result for each node of ``state`` (or just ``only``)."""
    nfd = state.nfd
    memo = Memo()
    return [
        Prediction(n, process_node(n.name, nfd.for_node(n.name), nfd.rules, cfg, memo))
        for n in state.nodes
        if only is None or n.name == only
    ]


def _pairs(m: dict[str, str] | object) -> tuple[str, ...]:
    assert isinstance(m, dict)
    return tuple(f"{k}={v}" for k, v in sorted(m.items()))


def rules_result(state: ClusterState, cfg: NfdConfig, only: str | None = None) -> Result:
    if "NodeFeatureRule" not in state.kinds and "NodeFeature" not in state.kinds:
        return Result("rules", skipped="no nodefeatures or nodefeaturerules in the input (are NFD's CRDs installed?)")
    preds = predict(state, cfg, only)
    node_rows: list[dict[str, Cell]] = []
    rule_rows: list[dict[str, Cell]] = []
    text: list[str] = []
    wide: list[str] = []
    matched = errors = 0
    for p in preds:
        r = p.result
        node_rows.append(
            {
                "node": r.node,
                "nodefeatures": r.nodefeatures,
                "labels": _pairs(dict(r.labels)),
                "annotations": _pairs(dict(r.annotations)),
                "taints": tuple(str(t) for t in r.taints),
                "extended_resources": _pairs(dict(r.extended_resources)),
                "dropped": tuple(f"{k}: {why}" for k, why in sorted(r.dropped.items())),
            }
        )
        wide.append(f"{r.node} labels: {', '.join(_pairs(dict(r.labels))) or '(none)'}")
        for rr in r.rules:
            o = rr.outcome
            row: dict[str, Cell] = {"node": r.node, "object": rr.object, "rule": rr.rule, "matched": o.matched}
            if o.error:
                errors += 1
                row["error"] = o.error
                row["unsupported"] = o.unsupported
            elif o.matched:
                matched += 1
            else:
                first = o.failures[0] if o.failures else None
                if first is not None:
                    row.update(
                        term=first.term,
                        feature=first.feature,
                        key=first.key or None,
                        expression=first.expression or None,
                        actual=first.actual,
                    )
                row["why"] = o.why()
            rule_rows.append(row)
            if not o.matched:
                line = f"{r.node} rule {rr.rule} {o.why()}"
                text.append(line)
                wide.append(line)
    total = len(rule_rows)
    return Result(
        "rules",
        sections=(
            Section("nodes", tuple(node_rows)),
            Section("rules", tuple(rule_rows), tuple(text), tuple(wide)),
        ),
        ok="",
        counts={"nodes": len(preds), "rules": total, "matched": matched, "not_matched": total - matched - errors,
                "errors": errors},
    )  # fmt: skip


def drift(state: ClusterState, cfg: NfdConfig, preds: Sequence[Prediction] | None = None) -> list[Finding]:
    """Labels nfd-master would set that the node lacks or has otherwise, unexplained NFD labels, failing rules."""
    out: list[Finding] = []
    errs: dict[tuple[str, str, str], list[str]] = {}
    for p in preds if preds is not None else predict(state, cfg):
        r, node = p.result, p.node
        for k, want in sorted(r.labels.items()):
            src = r.label_sources.get(k, "")
            have = node.labels.get(k)
            if have is None:
                out.append(
                    Finding(CHECK, "nfd-missing", node=node.name, key=k, args=(f"want {want}", src),
                            detail=f"{src} sets {k}={want} but the node does not have it")
                )  # fmt: skip
            elif have != want:
                out.append(
                    Finding(CHECK, "nfd-differs", node=node.name, key=k, value=have, args=(f"want {want}", src),
                            detail=f"{src} sets {k}={want}; the node has {have!r}")
                )  # fmt: skip
        owned = nfd_owned_keys(node.annotations)
        for k in sorted(node.labels):
            ns = k.rpartition("/")[0]
            if k in r.labels or not ns or not is_nfd_namespace(ns, cfg):
                continue
            why = r.dropped.get(f"label {k}")
            detail = (
                f"a source produces it but nfd-master drops it ({why})"
                if why
                else "no NodeFeatureRule or NodeFeature (feature file, worker source) produces it"
            )
            if k in owned:
                detail += "; nfd-master lists it as its own (feature-labels) and removes it at its next update"
            out.append(Finding(CHECK, "nfd-unexplained", node=node.name, key=k, value=node.labels[k], detail=detail))
        for rr in r.rules:
            if rr.outcome.error:
                errs.setdefault((rr.object, rr.rule, rr.outcome.error), []).append(node.name)
    for (obj, rule, err), nodes in sorted(errs.items()):
        out.append(
            Finding(
                CHECK,
                "nfd-rule-error",
                args=(f"rule {obj}/{rule}", err),
                count=len(nodes),
                sample=tuple(nodes[:3]),
                detail=f"nfd-master skips rule {rule!r} of NodeFeatureRule {obj} on these nodes: {err}",
            )
        )
    return out


def check(state: ClusterState, cfg: NfdConfig) -> Result:
    if not state.nfd.nodefeatures:
        return Result(CHECK, skipped="no nodefeatures in the input")
    return Result(CHECK, tuple(drift(state, cfg)))


def producers(state: ClusterState, cfg: NfdConfig, node: str) -> dict[str, str]:
    """For ``sources``: which NodeFeatureRule (or NodeFeature) produces each label of ``node``."""
    preds = predict(state, cfg, node)
    return dict(preds[0].result.label_sources) if preds else {}


def nodes_lacking(preds: Iterable[Prediction], key: str) -> list[Prediction]:
    return [p for p in preds if key not in p.node.labels]


def label_hints(state: ClusterState, cfg: NfdConfig | None, keys: Iterable[str]) -> list[str]:
    """For each NFD label ``keys`` selects that no node has: the NodeFeatureRule that would produce it and why not.

    ``feature.node.kubernetes.io/custom-gpu-training: rule gpu-training/gpu-training did not match on
    12 node(s): term[0] kernel.version major Gt [5]`` (the commonest failing expression first). A label a
    rule's template makes is found only where the template ran; a static label is found on every node.
    """
    if not (state.nfd.rules or state.nfd.nodefeatures):
        return []
    cfg = cfg or NfdConfig()  # nfd-master's defaults
    wanted = [k for k in dict.fromkeys(keys) if is_nfd_namespace(k.rpartition("/")[0], cfg)]
    missing = [k for k in wanted if not any(k in n.labels for n in state.nodes)]
    if not missing:
        return []
    preds = predict(state, cfg)
    out: list[str] = []
    for key in missing:
        would = [p.node.name for p in preds if key in p.result.labels]
        if would:
            src = next(p.result.label_sources.get(key, "") for p in preds if key in p.result.labels)
            out.append(
                f"{key}: {src} sets it on {len(would)} node(s) ({', '.join(would[:3])}), "
                "but nfd-master has not written it there"
            )
            continue
        producers = [
            (obj.name, rule.name)
            for obj in state.nfd.rules
            for rule in obj.rules
            if key
            in {k if "/" in k or not cfg.auto_default_ns else f"feature.node.kubernetes.io/{k}" for k in rule.labels}
        ]
        if not producers:
            out.append(f"{key}: no NodeFeatureRule sets it (nor a NodeFeature)")
            continue
        for obj_name, rule_name in producers:
            reasons: dict[str, int] = {}
            for p in preds:
                rr = next(r for r in p.result.rules if r.object == obj_name and r.rule == rule_name)
                o = rr.outcome
                if o.error:
                    why = f"error: {o.error}"
                elif o.failures:
                    f = o.failures[0]
                    why = " ".join(x for x in (f.term, f.feature, f.key, f.expression) if x) or f.actual
                    if f.actual in ("feature absent",):
                        why += f" ({f.actual})"
                else:
                    why = "matched, but nfd-master drops the label"
                reasons[why] = reasons.get(why, 0) + 1
            ranked = sorted(reasons.items(), key=lambda kv: -kv[1])
            out.append(
                f"{key}: rule {obj_name}/{rule_name} did not match on {len(preds)} node(s): "
                + "; ".join(f"{why}" + (f" ({n})" if len(ranked) > 1 else "") for why, n in ranked[:3])
            )
    return out
