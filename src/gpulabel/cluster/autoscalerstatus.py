"""Cluster Autoscaler's status ConfigMap decoded: ``data.status`` is YAML (``sigs.k8s.io/yaml.Marshal`` of
``api.ClusterAutoscalerStatus``, cluster-autoscaler 1.30 and later); before 1.30 it was free text.

Upstream: kubernetes/autoscaler ``cluster-autoscaler/clusterstate/utils/status.go`` (cluster-autoscaler-1.36.1).
The fields are read by the pure :func:`gpulabel.k8s.clusterautoscaler.status_from_document`; this module gives
the pure reader of the ConfigMap kind its YAML decoder (:func:`gpulabel.k8s.clusterautoscaler.use_decoder`), as
the package ``gpulabel.cluster`` is imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpulabel.k8s.clusterautoscaler import TEXT_FORM, AutoscalerStatus, status_of_text, use_decoder

__all__ = ["TEXT_FORM", "autoscaler_status", "decode_status"]


def decode_status(text: str) -> Any:
    """The document of a YAML text, or ``None`` where it is no YAML."""
    import yaml

    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return None


use_decoder(decode_status)


def autoscaler_status(configmap: Mapping[str, Any], where: str) -> AutoscalerStatus | None:
    """The status a ``cluster-autoscaler-status`` ConfigMap holds; ``None`` when its ``data.status`` is the
    free text of Cluster Autoscaler before 1.30 (or absent): nothing to read field by field."""
    data = configmap.get("data")
    text = data.get("status") if isinstance(data, Mapping) else None
    return status_of_text(text, where)[0]
