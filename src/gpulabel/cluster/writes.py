"""The one place gpulabel writes to the API server.

Node labels: every write is a PATCH of one node's labels, made either as a
server-side apply (the field manager then owns exactly the keys it sent) or,
to remove keys, a JSON merge patch that sets them to null. Both honour
``dry_run`` as the API server's own dry run, so ``--dry-run`` answers what
would really happen, validation and admission included.

A :class:`Writer` is where a reconcile pass or an isolation sends its label
writes: :class:`ApiWriter` writes (or, ``dry_run``, has the API server run the
write as its own dry run), :class:`PlanWriter` contacts nothing and only keeps
the plan. The pass is the same function whichever writer it is given.

Events (``gpulabel monitor``): events.k8s.io/v1 Events are created, and a
repeat patches the Event's ``series``; an Event that exists already (another
instance made it) or no longer exists (its TTL ran out) is an answer
(``None``), not an error. The node condition is a server-side apply of the
node's status subresource as its own field manager, so it owns exactly its
one condition. Both honour ``dry_run`` as the API server's dry run.

Leases (``sync --watch --leader-elect``): a create, or an update that
carries the resourceVersion that was read, so two candidates cannot both
win; losing that race is an answer (``None``), not an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from gpulabel.errors import ClusterError, ConflictError

if TYPE_CHECKING:
    from gpulabel.cluster.client import KubeClient

__all__ = [
    "ApiWriter",
    "PlanWriter",
    "Writer",
    "apply_labels",
    "apply_node_condition",
    "create_event",
    "create_lease",
    "patch_event_series",
    "remove_labels",
    "request_token",
    "update_lease",
]


def _query(dry_run: bool, *extra: tuple[str, str]) -> list[tuple[str, str]]:
    query = list(extra)
    if dry_run:
        query.append(("dryRun", "All"))
    return query


def apply_labels(
    client: KubeClient, node: str, labels: Mapping[str, str], manager: str, dry_run: bool = False
) -> dict[str, Any]:
    """Server-side apply ``labels`` to ``node`` as ``manager`` (forcing ownership).

    Keys ``manager`` applied before and left out of ``labels`` are released
    (and removed, if no other manager holds them). Returns the node as answered.
    """
    import orjson

    body = orjson.dumps(
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": dict(sorted(labels.items()))}}
    )
    result: dict[str, Any] = client.request(
        "PATCH",
        client.node_path(node),
        query=_query(dry_run, ("fieldManager", manager), ("force", "true")),
        body=body,
        content_type="application/apply-patch+yaml",
    )
    return result


def remove_labels(
    client: KubeClient, node: str, keys: Iterable[str], manager: str, dry_run: bool = False
) -> dict[str, Any]:
    """Remove ``keys`` from ``node`` whoever set them (a merge patch to null)."""
    import orjson

    body = orjson.dumps({"metadata": {"labels": {k: None for k in keys}}})
    result: dict[str, Any] = client.request(
        "PATCH",
        client.node_path(node),
        query=_query(dry_run, ("fieldManager", manager)),
        body=body,
        content_type="application/merge-patch+json",
    )
    return result


class Writer(Protocol):
    """Where label writes go. ``target`` names what the nodes were read from, for messages."""

    @property
    def target(self) -> str: ...

    def apply(self, node: str, labels: Mapping[str, str], manager: str) -> Mapping[str, str] | None:
        """Server-side apply ``labels`` as ``manager``; the node's labels as answered (``None``: nothing answered)."""
        ...

    def remove(self, node: str, keys: Iterable[str], manager: str) -> None:
        """Remove ``keys`` from ``node``, whoever set them."""
        ...


class ApiWriter:
    """Writes to the API server; with ``dry_run``, as the server's own dry run (validation and admission run)."""

    target = "cluster"

    def __init__(self, client: KubeClient, dry_run: bool = False) -> None:
        self.client = client
        self.dry_run = dry_run

    def apply(self, node: str, labels: Mapping[str, str], manager: str) -> Mapping[str, str] | None:
        answer = apply_labels(self.client, node, labels, manager, self.dry_run)
        got: Mapping[str, str] = (answer.get("metadata") or {}).get("labels") or {}
        return got

    def remove(self, node: str, keys: Iterable[str], manager: str) -> None:
        remove_labels(self.client, node, keys, manager, self.dry_run)


class PlanWriter:
    """Contacts nothing: the plan is the answer (``--dry-run --snapshot``)."""

    def __init__(self, target: str = "snapshot") -> None:
        self.target = target

    def apply(self, node: str, labels: Mapping[str, str], manager: str) -> Mapping[str, str] | None:
        return None

    def remove(self, node: str, keys: Iterable[str], manager: str) -> None:
        return None


def create_lease(
    client: KubeClient, namespace: str, name: str, spec: Mapping[str, Any], budget: float | None = None
) -> dict[str, Any] | None:
    """Create the Lease ``name`` with ``spec``; ``None`` if another candidate created it first (409)."""
    import orjson

    body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name}, "spec": dict(spec)}
    try:
        created: dict[str, Any] = client.request(
            "POST",
            client.lease_path(namespace),
            body=orjson.dumps(body),
            content_type="application/json",
            budget=budget,
            expected=(409,),
        )
    except ConflictError:
        return None
    return created


def update_lease(
    client: KubeClient, namespace: str, name: str, lease: Mapping[str, Any], budget: float | None = None
) -> dict[str, Any] | None:
    """Replace ``lease`` (as read, with its resourceVersion); ``None`` if it changed since (409)."""
    import orjson

    try:
        updated: dict[str, Any] = client.request(
            "PUT",
            client.lease_path(namespace, name),
            body=orjson.dumps(lease),
            content_type="application/json",
            budget=budget,
            expected=(409,),
        )
    except ConflictError:
        return None
    return updated


def create_event(
    client: KubeClient, namespace: str, event: Mapping[str, Any], dry_run: bool = False
) -> dict[str, Any] | None:
    """Create the events.k8s.io/v1 Event ``event`` in ``namespace``; ``None`` if one of its name exists (409)."""
    import orjson

    try:
        created: dict[str, Any] = client.request(
            "POST",
            client.event_path(namespace),
            query=_query(dry_run),
            body=orjson.dumps(event),
            content_type="application/json",
            expected=(409,),  # an instance before this one wrote it: the writer continues its series
        )
    except ConflictError:
        return None
    return created


def _gone(err: ClusterError) -> bool:
    return err.status == 404


def patch_event_series(
    client: KubeClient, namespace: str, name: str, series: Mapping[str, Any], dry_run: bool = False
) -> dict[str, Any] | None:
    """Set the Event's ``series`` (``count``, ``lastObservedTime``) by a merge patch; ``None`` if it is gone (404)."""
    import orjson

    try:
        patched: dict[str, Any] = client.request(
            "PATCH",
            client.event_path(namespace, name),
            query=_query(dry_run),
            body=orjson.dumps({"series": dict(series)}),
            content_type="application/merge-patch+json",
            expected=(404,),  # gone (the API server's event TTL): created again
        )
    except ClusterError as err:
        if _gone(err):
            return None
        raise
    return patched


def apply_node_condition(
    client: KubeClient, node: str, condition: Mapping[str, Any], manager: str, dry_run: bool = False
) -> dict[str, Any] | None:
    """Server-side apply one condition to ``node``'s status as ``manager`` (forcing ownership of its fields):
    conditions are a list keyed by ``type``, so the manager owns that one entry only. ``None`` if the node is gone."""
    import orjson

    body = orjson.dumps(
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}, "status": {"conditions": [dict(condition)]}}
    )
    try:
        result: dict[str, Any] = client.request(
            "PATCH",
            client.node_path(node) + "/status",
            query=_query(dry_run, ("fieldManager", manager), ("force", "true")),
            body=body,
            content_type="application/apply-patch+yaml",
            expected=(404,),  # the node was deleted meanwhile
        )
    except ClusterError as err:
        if _gone(err):
            return None
        raise
    return result


def request_token(client: KubeClient, namespace: str, account: str, seconds: int) -> str:
    """A token of the ServiceAccount ``namespace/account`` valid ``seconds`` (a TokenRequest: what
    ``kubectl create token`` sends); the API server may shorten it."""
    import orjson

    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": seconds}}
    answer = client.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token",
        body=orjson.dumps(body),
        content_type="application/json",
    )
    return str(((answer or {}).get("status") or {}).get("token") or "")
