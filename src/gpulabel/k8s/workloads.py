"""The API server's checks on a workload object around its pod template, message for message.

What ``place`` needs before it can trust a manifest: the pod spec itself
(:func:`gpulabel.k8s.podvalidation.validate_pod_spec`), and for the workload
kinds the rules that tie the template to the object, in the server's order:

- Deployment, ReplicaSet, StatefulSet (``apps/validation``:
  ``ValidateDeploymentSpec``, ``ValidateReplicaSetSpec``,
  ``ValidateStatefulSetSpec``, ``ValidatePodTemplateSpecForReplicaSet``): a
  ``selector`` is required and may not be empty; a non-empty selector must
  match the template's labels (a missing selector matches nothing, so a
  missing template, ``template: null``, fails it too); the template's
  ``restartPolicy`` may only be ``Always``;
- DaemonSet (``ValidateDaemonSetSpec``): the selector must match the
  template's labels, then may not be empty; ``restartPolicy`` only ``Always``;
- Job, and a CronJob's job template (``batch/validation``: ``validateJobSpec``):
  ``restartPolicy`` must be ``OnFailure`` or ``Never`` (the default,
  ``Always``, is refused).

Not checked: the selector's own syntax (``ValidateLabelSelector``), replica
counts, strategies, a CronJob's schedule, and the rest of the pod spec that
placement never reads; the server may refuse a manifest for those reasons
while gpulabel accepts it. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpulabel.k8s import field
from gpulabel.k8s.podvalidation import pod_spec_of, validate_pod_spec

__all__ = ["selector_matches", "workload_errors"]

# kind -> the word its "empty selector" message uses (ReplicaSet's says "deployment" upstream)
_SELECTOR_KINDS = {"Deployment": "deployment", "ReplicaSet": "deployment", "StatefulSet": "statefulset"}
_TEMPLATE_LABELS = "`selector` does not match template `labels`"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """``metav1.LabelSelectorAsSelector(selector).Matches(labels)``; ``None`` matches nothing, ``{}`` everything."""
    if selector is None:
        return False
    for key, want in _mapping(selector.get("matchLabels")).items():
        if labels.get(key) != want:
            return False
    for expr in selector.get("matchExpressions") or ():
        expr = _mapping(expr)
        name, op = str(expr.get("key") or ""), expr.get("operator")
        values = expr.get("values") or []
        present = name in labels
        if op == "In" and not (present and labels[name] in values):
            return False
        if op == "NotIn" and present and labels[name] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


def _is_empty(selector: Mapping[str, Any]) -> bool:
    return not selector.get("matchLabels") and not selector.get("matchExpressions")


def _template_errors(kind: str, spec: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The selector errors reported before the pod template's, and the restart-policy ones after it."""
    before: list[str] = []
    template = _mapping(spec.get("template"))
    raw_labels = _mapping(template.get("metadata")).get("labels")
    labels = raw_labels if isinstance(raw_labels, dict) else {}
    selector = spec.get("selector")
    selector = selector if isinstance(selector, dict) else None
    mismatch = field.invalid("spec.template.metadata.labels", raw_labels, _TEMPLATE_LABELS)
    if kind in _SELECTOR_KINDS:
        if selector is None:
            before.append(field.required("spec.selector"))
        elif _is_empty(selector):
            before.append(field.invalid("spec.selector", {}, f"empty selector is invalid for {_SELECTOR_KINDS[kind]}"))
        if (selector is None or not _is_empty(selector)) and not selector_matches(selector, labels):
            before.append(mismatch)
    elif kind == "DaemonSet":
        if not selector_matches(selector, labels):
            before.append(mismatch)
        if selector is not None and _is_empty(selector):
            before.append(field.invalid("spec.selector", {}, "empty selector is invalid for daemonset"))
    after: list[str] = []
    policy = str(_mapping(template.get("spec")).get("restartPolicy") or "")
    if (kind in _SELECTOR_KINDS or kind == "DaemonSet") and policy not in ("", "Always"):
        after.append(field.not_supported("spec.template.spec.restartPolicy", field.Named(policy), ["Always"]))
    return before, after


def _job_errors(path: str, pod_spec: Mapping[str, Any]) -> list[str]:
    policy = str(pod_spec.get("restartPolicy") or "")
    where = f"{path}.restartPolicy"
    if policy in ("", "Always"):
        return [field.required(where, 'valid values: "OnFailure", "Never"')]
    if policy not in ("OnFailure", "Never"):
        return [field.not_supported(where, field.Named(policy), ["OnFailure", "Never"])]
    return []


def workload_errors(obj: Mapping[str, Any]) -> list[str]:
    """The field errors the server reports for a workload of a kind in ``WORKLOAD_KINDS``.

    Call :func:`gpulabel.k8s.podvalidation.decode_error` on the pod spec first.
    """
    kind = str(obj.get("kind") or "")
    path, pod_spec = pod_spec_of(obj)
    pod_spec = _mapping(pod_spec)
    before, after = _template_errors(kind, _mapping(obj.get("spec")))
    out = before + validate_pod_spec(pod_spec, path, pod_defaults=kind == "Pod")
    if kind in ("Job", "CronJob"):
        out.extend(_job_errors(path, pod_spec))
    return out + after
