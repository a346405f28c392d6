"""Input that selects nothing: never "OK" with exit 0.

A ``-l`` that no node matches, a ``--snapshot`` that holds no Node (a Pod manifest, an empty List), a live
cluster without nodes, or a ``-n`` namespace that holds no pod would make every check pass over nothing.
:func:`nothing_selected` names the flag that selected nothing, in one line; :func:`refuse_empty` turns the
command's outcome into exit 2 with that line as its warning (the result is still printed: a script reading
``-o json`` gets its envelope, and the exit code says it holds nothing).
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpulabel.app.session import Outcome, Source
    from gpulabel.model.cluster import ClusterState

__all__ = ["EMPTY_EXIT", "not_found", "nothing_selected", "refuse_empty"]

EMPTY_EXIT = 2  # the exit code of a run whose input selected nothing (README's exit codes)
_NAMED = 5  # namespaces named in the line when -n names none of them


def nothing_selected(source: Source, state: ClusterState, namespace: str | None = None) -> str | None:
    """The line saying which flag selected nothing, or None when the run looked at something.

    ``namespace``: the ``-n`` the command reports pods of; pass it only where every pod was read (a live
    ``pending`` lists Pending pods alone, so an empty namespace there is an answer, not a mistake)."""
    if not state.nodes:
        return _no_node(source, state)
    if namespace is not None and not any(p.namespace == namespace for p in state.pods):
        return _no_pod(namespace, Counter(p.namespace for p in state.pods))
    return None


def _no_node(source: Source, state: ClusterState) -> str:
    if source.selector is not None:
        where = f" of --snapshot {', '.join(source.snapshots)}" if source.offline else " in the cluster"
        return f"-l {source.selector}: selects no node{where}; nothing was checked"
    if source.offline:
        held = _held(state)
        return f"--snapshot {', '.join(source.snapshots)}: holds no Node ({held}); nothing was checked"
    context = f" (context {source.context})" if source.context else ""
    return f"the cluster{context} has no Node; nothing was checked"


def _held(state: ClusterState) -> str:
    """What a snapshot without nodes holds instead: ``1 Pod``, or ``no object`` (an empty List)."""
    parts = [
        (len(state.pods), "Pod"),
        (len(state.daemonsets), "DaemonSet"),
        (len(state.cluster_policies), "ClusterPolicy"),
    ]
    said = [f"{n} {kind}" for n, kind in parts if n]
    return ", ".join(said) if said else "no object gpulabel reads"


def _no_pod(namespace: str, namespaces: Counter[str]) -> str:
    line = f"-n {namespace}: no pod in this namespace, so none was checked"
    near = difflib.get_close_matches(namespace, list(namespaces), n=1)
    if near:
        return f"{line} (did you mean -n {near[0]}?)"
    if namespaces:
        named = ", ".join(name for name, _ in namespaces.most_common(_NAMED))
        more = f" and {len(namespaces) - _NAMED} more" if len(namespaces) > _NAMED else ""
        return f"{line} (pods are in {named}{more})"
    return line


def refuse_empty(outcome: Outcome, source: Source, state: ClusterState, namespace: str | None = None) -> Outcome:
    """``outcome`` as it is, or, when its input selected nothing, with exit 2 and the line saying so."""
    line = nothing_selected(source, state, namespace)
    if line is None:
        return outcome
    return replace(outcome, code=EMPTY_EXIT, warnings=(line, *outcome.warnings))


def not_found(name: str, state: ClusterState) -> str:
    """``not found``, with the nearest node name of ``state`` when one is close (a typo of a node)."""
    near = difflib.get_close_matches(name, [n.name for n in state.nodes], 1, 0.75)
    return f"not found (did you mean node/{near[0]}?)" if near else "not found"
