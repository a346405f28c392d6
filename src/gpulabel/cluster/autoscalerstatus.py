"""Cluster Autoscaler's status ConfigMap decoded: ``data.status`` is YAML (``sigs.k8s.io/yaml.Marshal`` of
``api.ClusterAutoscalerStatus``, cluster-autoscaler 1.30 and later); before 1.30 it was free text.

Upstream: kubernetes/autoscaler ``cluster-autoscaler/clusterstate/utils/status.go`` (cluster-autoscaler-1.36.1).
The fields are read by the pure :func:`gpulabel.k8s.clusterautoscaler.status_from_document`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from gpulabel.k8s.clusterautoscaler import AutoscalerStatus, status_from_document

__all__ = ["TEXT_FORM", "autoscaler_status"]

# before 1.30 (cluster-autoscaler-1.29.0 clusterstate/utils/status.go): "Cluster-autoscaler status at %s:\n%v" of
# api.ClusterAutoscalerStatus.GetReadableString ("Cluster-wide:\n  Health: ..."), which YAML reads as a mapping too
TEXT_FORM = "Cluster-autoscaler status at "


def autoscaler_status(configmap: Mapping[str, Any], where: str) -> AutoscalerStatus | None:
    """The status a ``cluster-autoscaler-status`` ConfigMap holds; ``None`` when its ``data.status`` is the
    free text of Cluster Autoscaler before 1.30 (or absent): nothing to read field by field."""
    data = configmap.get("data")
    text = data.get("status") if isinstance(data, Mapping) else None
    if not isinstance(text, str) or text.startswith(TEXT_FORM):
        return None
    try:
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return None
    if not isinstance(doc, Mapping):
        return None  # the text form: "Cluster-autoscaler status at ...:" lines do not make a mapping
    return status_from_document(doc, where)
