"""The autoscalers' words are redacted when read (#47 item 5): a NodeClaim's and a NodePool's condition messages
(Karpenter quotes its cloud provider's error there) and Cluster Autoscaler's status ConfigMap (its message and each
node group's backoff error message, which ``pending`` quotes), with a planted secret in each place and a twin of
ordinary words kept verbatim."""

from __future__ import annotations

from typing import Any

from gpulabel.k8s.karpenter.lifecycle import unready_claims
from gpulabel.model.cluster import ClusterState
from gpulabel.model.redaction import REDACTED
from tests.unit.karpenter.objects import nodeclaim, nodepool
from tests.unit.test_autoscaler_events import details, full, gpu_pod, status_map

JSON = dict[str, Any]
# three of the text rules: a URL's userinfo, a secret-named flag inside a string, a secret-named key's value
PLANTED = (
    "launching: pulling https://admin:hunter2-url@registry.example.com/ami failed; "
    "sh -c 'init --password hunter2-flag'; example.com/secret-token=hunter2-key"
)
SECRETS = ("hunter2-url", "hunter2-flag", "hunter2-key")
ORDINARY = 'Resource "nvidia.com/gpu" was requested but not registered'


def _state(*objects: JSON) -> ClusterState:
    return ClusterState.from_objects((f"obj{i}", o) for i, o in enumerate(objects))


def _claim(message: str) -> JSON:
    claim = nodeclaim("gpu-a-z7", "gpu-a", node="gpu-7", initialized="False", reason="ResourceNotRegistered")
    for c in claim["status"]["conditions"]:
        c["message"] = message
    return claim


def _pool(message: str) -> JSON:
    pool = nodepool("gpu-a")
    pool["status"]["conditions"] = [
        {"type": "Ready", "status": "False", "reason": "NodeClassNotReady", "message": message,
         "lastTransitionTime": "2026-12-04T10:00:05Z"},
    ]  # fmt: skip
    return pool


def test_a_nodeclaims_condition_messages_are_redacted_when_read() -> None:
    claims = _state(_claim(PLANTED)).karpenter.nodeclaims
    said = " ".join(c.message for c in claims[0].conditions)
    assert not any(s in said for s in SECRETS) and said.count(REDACTED) >= 3 * 3
    assert "admin" in said and "--password" in said and "example.com/secret-token" in said  # names stay
    # where a check quotes one: the Initialized message of a NodeClaim that never initialized
    quoted = " ".join(u.message for _, u in unready_claims(claims).items)
    assert quoted and not any(s in quoted for s in SECRETS)


def test_a_nodepools_condition_messages_are_redacted_when_read() -> None:
    pools = _state(_pool(PLANTED)).karpenter.nodepools
    said = pools[0].conditions[0].message
    assert not any(s in said for s in SECRETS) and said.count(REDACTED) == 3


def test_the_status_configmaps_messages_are_redacted_when_read() -> None:
    cm = status_map("Backoff")
    text = cm["data"]["status"].replace("'Quota GPUS exceeded'", f'"{PLANTED}"')
    running = "autoscalerStatus: Running\n"
    cm["data"]["status"] = text.replace(running, f'{running}message: "{PLANTED}"\n')
    (read,) = _state(cm).autoscaler
    assert read.status is not None
    shown = [read.status.message, read.status.node_groups[0].backoff_message]
    assert all(s and REDACTED in s and not any(x in s for x in SECRETS) for s in shown), shown
    # and where pending quotes the backoff: the Pending pod's detail
    said = " ".join(details([*full(), gpu_pod(), cm]))
    assert "in backoff" in said and REDACTED in said and not any(x in said for x in SECRETS)


def test_ordinary_words_are_kept_verbatim() -> None:
    """The twin: messages with nothing to redact come out as read, and the records are the ones read."""
    claim = _state(_claim(ORDINARY)).karpenter.nodeclaims[0]
    assert {c.message for c in claim.conditions} == {ORDINARY}
    assert _state(_pool(ORDINARY)).karpenter.nodepools[0].conditions[0].message == ORDINARY
    (read,) = _state(status_map("Backoff")).autoscaler
    assert read.status is not None and read.status.node_groups[0].backoff_message == "Quota GPUS exceeded"
    assert "in backoff (QUOTA_EXCEEDED: Quota GPUS exceeded)" in " ".join(
        details([*full(), gpu_pod(), status_map("Backoff")])
    )
