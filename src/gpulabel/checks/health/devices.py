"""Devices as the cluster publishes them, and what a selector expression makes of each.

``device_rows``: every device of every ResourceSlice, per node and pool, with
its attributes and capacity and the claim it is allocated to or, for a device
that allows multiple allocations (consumable capacity), the claims holding
shares of it and what of each capacity they consume and leave (the
allocator's ``AggregatedCapacity``: ``k8s/dra/pools.shared_use``). ``select``:
which of them a CEL expression (optionally after a DeviceClass's selectors)
selects, and the runtime error where it fails on a device, as the scheduler
would report it: a way to author selectors against the real fleet.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpulabel.errors import CelError, InputError
from gpulabel.k8s.dra.allocator import DeviceID
from gpulabel.k8s.dra.capacity import quantity_text
from gpulabel.k8s.dra.evaluator import DraEvaluator
from gpulabel.k8s.dra.objects import Device, ResourceSlice
from gpulabel.k8s.dra.plugin import DraState
from gpulabel.model.findings import Cell

__all__ = ["DeviceRow", "Selection", "device_rows", "select"]


@dataclass(frozen=True)
class DeviceRow:
    node: str  # the node name, "(all nodes)" or "(node selector)"
    driver: str
    pool: str
    name: str
    allocated_to: str  # ns/claim, or ""
    device: Device = field(repr=False)
    shared_by: tuple[str, ...] = ()  # ns/claim of each claim holding a share (allowMultipleAllocations)
    consumed: Mapping[str, int] = field(default_factory=dict)  # capacity -> what the shares consume (nano-units)

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.pool}/{self.name}"

    def attribute(self, name: str) -> Any:
        found = self.device.attributes.get(name) or self.device.attributes.get(f"{self.driver}/{name}")
        return found[1] if found else None

    @property
    def tainted(self) -> bool:
        """A taint that keeps new claims off the device (``NoSchedule``, ``NoExecute``: an Xid error, a drain)."""
        return any(t.effect in ("NoSchedule", "NoExecute") for t in self.device.taints)

    @property
    def state(self) -> str:
        """``allocated <ns>/<claim>``, ``tainted`` (no new claim without a toleration), ``shared <n> claim(s)``
        (shares of a device that allows multiple allocations: a new share gets what capacity is left), or ``free``."""
        if self.allocated_to:
            return f"allocated {self.allocated_to}"
        if self.tainted:
            return "tainted"
        if self.shared_by:
            return f"shared {len(self.shared_by)} claim(s): {self.held_text()}"
        return "free"

    def held(self) -> list[tuple[str, int, int]]:
        """Per capacity the shares consume: ``(name, consumed, left)`` in nano-units (sorted by name)."""
        amounts = self.device.amounts
        return [(k, v, amounts.get(k, 0) - v) for k, v in sorted(self.consumed.items())]

    def held_text(self) -> str:
        parts = [
            f"{self._short(k)} {quantity_text(used)} held, {quantity_text(left)} left" for k, used, left in self.held()
        ]
        return "; ".join(parts) or "no capacity consumed"

    def _short(self, name: str) -> str:
        return name.removeprefix(self.driver + "/")

    def line(self, wide: bool = False) -> str:
        kind = self.attribute("type") or "-"
        product = self.attribute("productName") or self.attribute("profile") or "-"
        state = self.state
        if state == "tainted":
            state += " " + ",".join(str(t) for t in self.device.taints if t.effect in ("NoSchedule", "NoExecute"))
        base = f"{self.node} {self.id} {kind} {str(product).replace(' ', '_')} {state}"
        if not wide:
            return base
        attrs = ", ".join(f"{k}={v[1]}" for k, v in sorted(self.device.attributes.items()))
        caps = ", ".join(f"{k}={v}" for k, v in sorted(self.device.capacity.items()))
        taints = ", ".join(str(t) for t in self.device.taints)
        return base + f" (attributes: {attrs}; capacity: {caps}" + (f"; taints: {taints}" if taints else "") + ")"

    def cells(self) -> dict[str, Cell]:
        """The row for ``-o json``/``yaml`` and tables: attributes, capacity and taints as ``name=value`` strings."""
        return {
            "node": self.node,
            "driver": self.driver,
            "pool": self.pool,
            "device": self.name,
            "type": str(self.attribute("type") or ""),
            "product": str(self.attribute("productName") or self.attribute("profile") or ""),
            "allocated_to": self.allocated_to or None,
            "state": self.state.partition(" ")[0],
            "shared_by": self.shared_by or None,
            "capacity_held": tuple(f"{k}={quantity_text(v)}" for k, v, _ in self.held()) or None,
            "capacity_left": tuple(f"{k}={quantity_text(left)}" for k, _, left in self.held()) or None,
            "attributes": tuple(f"{k}={v}" for k, (_, v) in sorted(self.device.attributes.items())),
            "capacity": tuple(f"{k}={v}" for k, v in sorted(self.device.capacity.items())),
            "taints": tuple(str(t) for t in self.device.taints),
        }


def _where(s: ResourceSlice, d: Device | None = None) -> str:
    """The node a device is on: the slice's, or with ``perDeviceNodeSelection`` the device's own."""
    if d is not None and s.per_device_node_selection:
        return d.node_name or ("(all nodes)" if d.all_nodes else "(node selector)")
    if s.node_name:
        return s.node_name
    return "(all nodes)" if s.all_nodes else "(node selector)"


def device_rows(state: DraState) -> list[DeviceRow]:
    """Every published device, sorted by node, driver, pool and slice; the newest pool generation only."""
    newest: dict[tuple[str, str], int] = {}
    for s in state.slices:
        key = (s.driver, s.pool)
        newest[key] = max(newest.get(key, s.generation), s.generation)
    sharing: dict[DeviceID, list[str]] = {}
    for c in state.claims:
        for r in c.allocated or ():
            if r.share_id and not r.admin_access:
                holders = sharing.setdefault(DeviceID(driver=r.driver, pool=r.pool, device=r.device), [])
                if c.ref not in holders:
                    holders.append(c.ref)
    rows = []
    for s in sorted(state.slices, key=lambda s: (_where(s), s.driver, s.pool, s.name)):
        if s.generation < newest[(s.driver, s.pool)]:
            continue
        for d in s.devices:
            did = DeviceID(driver=s.driver, pool=s.pool, device=d.name)
            holder = state.in_use.get(did, "")
            consumed = state.shares.get(did, {})
            sharers = sharing.get(did, ()) if d.allow_multiple else ()
            rows.append(DeviceRow(_where(s, d), s.driver, s.pool, d.name, holder, d, tuple(sharers), consumed))
    if any(s.per_device_node_selection for s in state.slices):
        rows.sort(key=lambda r: r.node)  # devices that name their node: by node (stable: pool order kept)
    return rows


@dataclass(frozen=True)
class Selection:
    row: DeviceRow
    verdict: str  # yes | no | class | error
    message: str = ""

    def line(self) -> str:
        tail = f" {self.message}" if self.message else ""
        return f"{self.row.node} {self.row.id} {self.verdict}{tail}"

    def cells(self) -> dict[str, Cell]:
        return {"node": self.row.node, "device": self.row.id, "verdict": self.verdict, "message": self.message or None}


def select(state: DraState, expression: str, class_name: str | None = None) -> list[Selection]:
    """What ``expression`` (after ``class_name``'s selectors) says of every device.

    A compile error is an :class:`InputError` with the API server's message.
    """
    ev = DraEvaluator(state)
    sel = ev.selector(expression)
    if sel.error is not None:
        raise InputError("EXPR", sel.error.replace("\n", " "))
    class_exprs: tuple[str, ...] = ()
    if class_name is not None:
        cls = state.classes.get(class_name)
        if cls is None:
            raise InputError("--class", f'deviceclass "{class_name}" not found')
        class_exprs = cls.selectors
    out = []
    for row in device_rows(state):
        dev = ev.device_input(DeviceID(driver=row.driver, pool=row.pool, device=row.name), row.device)
        verdict, message = "yes", ""
        for i, expr in enumerate((*class_exprs, expression)):
            is_class = i < len(class_exprs)
            try:
                ok = ev.selector(expr).evaluate(dev)
            except CelError as err:
                where = f"class {class_name}: selector #{i}: " if is_class else ""
                verdict, message = "error", f"{where}CEL runtime error: {err}"
                break
            if not ok:
                verdict = "class" if is_class else "no"
                break
        out.append(Selection(row, verdict, message))
    return out
