"""The cluster as a command needs it: paged LISTs of only the kinds it reads.

Each kind is one paged LIST (``limit``/``continue``, restarted on 410 Gone)
converted page by page, never one request per node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from gpulabel.cluster.client import KubeClient
from gpulabel.errors import ClusterError
from gpulabel.model.cluster import KIND, ClusterState, DaemonSet, pod_from_json

__all__ = ["load_cluster", "served_kinds", "with_daemonset_pods"]


def _read(read: Callable[[dict[str, Any], str], Any], kind: str, where: str, item: dict[str, Any]) -> Any:
    item.setdefault("kind", kind)  # a LIST's items carry no kind
    return read(item, where)


def load_cluster(
    client: KubeClient,
    kinds: Iterable[str],
    *,
    pod_selector: str | None = None,
    pod_field_selector: str | None = None,
    node_selector: str | None = None,
) -> ClusterState:
    """LIST only the kinds a command needs, each as a paged LIST converted page by page.

    ``node_selector`` (``-l``) is sent as the node LIST's ``labelSelector``: the server filters.
    Kinds outside the core API groups are LISTed only where the server serves them (a CRD, DRA).
    Every kind is LISTed in all namespaces, as a snapshot holds them: a command's ``-n`` selects
    the pods it reports (devices other claims hold count wherever those claims live).
    """
    wanted = list(dict.fromkeys(kinds))
    records: list[tuple[str, Any]] = []
    unread: list[str] = []
    served = served_kinds(client, wanted)
    for name in served:
        kind = KIND[name]
        where = f"{client.endpoint} {name}"
        label_selector, field_selector = None, kind.field_selector
        if name == "Node":
            label_selector = node_selector
        elif name == "Pod":
            label_selector, field_selector = pod_selector, pod_field_selector
        try:
            items = client.list_objects(
                client.kind_path(name),
                partial(_read, kind.reader(), kind.object_kind, where),
                label_selector=label_selector,
                field_selector=field_selector,
            )[0]
        except ClusterError as err:
            # a read-only role from before Warning Events (or the autoscalers' Events and status ConfigMap) were
            # read: answer without them, as a snapshot without them does (the runtime check then says nothing from
            # Events, the autoscaler's verdict rests on the objects), rather than not at all
            if kind.object_kind not in ("Event", "ConfigMap") or err.status != 403:
                raise
            unread.append(name)
            continue
        records.extend((name, r) for r in items)
    return ClusterState.of_records(records, client.endpoint, [k for k in served if k not in unread])


def served_kinds(client: KubeClient, kinds: Iterable[str]) -> list[str]:
    """Of ``kinds``, those the server serves (discovery is asked once per group version).

    A kind the server serves only at one of its older versions (Kueue's v1beta1) is kept, and the client told
    to LIST it there (``client.versions``).
    """
    served: dict[str, frozenset[str]] = {}

    def asked(group_version: str, resource: str) -> bool:
        if group_version not in served:
            served[group_version] = client.served_resources(group_version)
        return resource in served[group_version]

    out = []
    for name in kinds:
        kind = KIND[name]
        if kind.probe is None:
            out.append(name)
            continue
        for version in kind.versions:
            if asked(f"{kind.group}/{version}", kind.resource):
                if version != kind.version:
                    client.versions[name] = version
                out.append(name)
                break
    return out


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
