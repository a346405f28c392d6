"""The cluster as a command needs it: paged LISTs of only the kinds it reads.

Each kind is one paged LIST (``limit``/``continue``, restarted on 410 Gone)
converted page by page, never one request per node.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from gpulabel.cluster.client import KubeClient
from gpulabel.k8s.dra.objects import DRA_KINDS
from gpulabel.k8s.dra.plugin import DraState
from gpulabel.model.cluster import (
    ClusterState,
    DaemonSet,
    Node,
    Pod,
    daemonset_from_json,
    node_from_json,
    pod_from_json,
)

__all__ = ["load_cluster", "with_daemonset_pods"]


def _with_kind(kind: str, item: dict[str, Any]) -> dict[str, Any]:
    item.setdefault("kind", kind)
    return item


def load_cluster(
    client: KubeClient,
    kinds: Iterable[str],
    *,
    namespace: str | None = None,
    pod_selector: str | None = None,
    pod_field_selector: str | None = None,
    node_selector: str | None = None,
) -> ClusterState:
    """LIST only the kinds a command needs, each as a paged LIST converted page by page.

    ``node_selector`` (``-l``) is sent as the node LIST's ``labelSelector``: the server filters.
    """
    wanted = list(dict.fromkeys(kinds))
    nodes: list[Node] = []
    pods: list[Pod] = []
    daemonsets: list[DaemonSet] = []
    policies: list[dict[str, Any]] = []
    dra: list[tuple[str, dict[str, Any]]] = []
    served: bool | None = None
    for kind in wanted:
        where = f"{client.endpoint} {kind}"
        if kind in DRA_KINDS:
            if served is None:
                served = client.has_resource("resource.k8s.io/v1", "resourceslices")
            if not served:
                continue
            # claims of every namespace: devices other claims hold count wherever those claims live
            ns = namespace if kind == "ResourceClaimTemplate" else None
            items = client.list_objects(client.kind_path(kind, ns), partial(_with_kind, kind))[0]
            dra.extend((where, o) for o in items)
            continue
        if kind == "Node":
            nodes = client.list_objects(
                client.kind_path(kind), partial(node_from_json, where=where), label_selector=node_selector
            )[0]
        elif kind == "Pod":
            pods = client.list_objects(
                client.kind_path(kind, namespace),
                partial(pod_from_json, where=where, shared={}),
                label_selector=pod_selector,
                field_selector=pod_field_selector,
            )[0]
        elif kind == "DaemonSet":
            daemonsets = client.list_objects(
                client.kind_path(kind, namespace), partial(daemonset_from_json, where=where)
            )[0]
        elif kind == "ClusterPolicy" and client.has_resource("nvidia.com/v1", "clusterpolicies"):
            policies = client.list_objects(client.kind_path(kind), lambda i: i)[0]
    nodes.sort(key=lambda n: n.name)
    return ClusterState(
        tuple(nodes),
        tuple(pods),
        tuple(daemonsets),
        tuple(policies),
        client.endpoint,
        frozenset(wanted),
        DraState.from_objects(dra),
    )


def with_daemonset_pods(client: KubeClient, state: ClusterState, daemonsets: Iterable[DaemonSet]) -> ClusterState:
    """``state`` plus the pods of ``daemonsets``: one LIST per DaemonSet, by its selector.

    Listing by selector reads only the operand pods, not every pod of a
    150,000-pod cluster.
    """
    import dataclasses

    pods = list(state.pods)
    seen = {(p.namespace, p.name) for p in pods}
    where = f"{client.endpoint} Pod"
    for ds in daemonsets:
        selector = ds.selector_string()
        if not selector:
            continue
        found, _ = client.list_objects(
            client.kind_path("Pod", ds.namespace), partial(pod_from_json, where=where), label_selector=selector
        )
        for pod in found:
            if (pod.namespace, pod.name) not in seen:
                seen.add((pod.namespace, pod.name))
                pods.append(pod)
    return dataclasses.replace(state, pods=tuple(pods), kinds=state.kinds | {"Pod"})
