"""Which Pending pods a change of what is free on one node can re-judge: the rest keep their pieces.

A bound pod's use of its node (bound or unbound there, its requests, its
priority, terminal or not) changes that node's capacity and nothing else
pending reads. Pending reads a node's capacity in two places
(``checks/placement/fit.py``):

- ``_with_resources``: the node's verdict gains ``cap.insufficient(request)``
  (every resource it lacks, with the figures its detail and the grouped
  finding's best node are told by, ``shortfall``);
- ``scheduler_message``: preemption reads ``cap.lowest_priority < priority``
  on the nodes that only lack resources.

So a Pending pod's piece can change only if one of those two answers changed
on that node: :func:`flips` compares them before and after. Pods with
``resourceClaims`` or a request a DeviceClass backs read every node's capacity
(``checks/dra/rules.py``'s ``delegated_resources``): they are always re-judged.
"""

from __future__ import annotations

from collections.abc import Collection

from gpulabel.model.cluster import NodeCapacity, Pod

__all__ = ["flips"]


def flips(pod: Pod, old: NodeCapacity | None, new: NodeCapacity | None, backed: Collection[str]) -> bool:
    """Whether ``pod`` (unbound Pending) may be judged otherwise now that a node's capacity went from ``old``
    to ``new`` (``None``: the node's allocatable is unknown, or it is not in the state); ``backed``: the
    extended resources a DeviceClass backs (the state's ``dra.extended``)."""
    if pod.spec.resource_claims or any(r in backed for r in pod.requests):
        return True
    if old is None or new is None:
        return old is not new
    if old.insufficient(pod.requests) != new.insufficient(pod.requests):
        return True
    return (old.lowest_priority < pod.priority) != (new.lowest_priority < pod.priority)
