"""``devices`` on a device that allows multiple allocations: the claims holding shares of it, what of its
capacity they consume and what is left, which is what the allocator grants the next share (the same rows
as ``test_dra_features.py``'s consumable-capacity ones)."""

from __future__ import annotations

from typing import Any

from bench import draobjects as dra

from gpulabel.checks.health.devices import device_rows
from gpulabel.k8s.dra.plugin import DraState
from tests.unit.test_dra_features import ANY, asks, held, run, share, shared_gpu


def rows(*objects: dict[str, Any]) -> list[str]:
    state = DraState.from_objects((f"obj{i}", o) for i, o in enumerate([ANY, *objects]))
    return [r.line() for r in device_rows(state)]


def test_a_shared_device_shows_its_shares_and_the_capacity_left_which_the_allocator_grants() -> None:
    objects = [shared_gpu(), share("a", "60Gi"), share("b", "8Gi")]
    (line,) = rows(*objects)
    assert line == "n1 gpu.nvidia.com/n1/gpu-0 gpu NVIDIA_A100-SXM4-80GB shared 2 claim(s): memory 68Gi held, 12Gi left"
    assert run(objects, asks("12Gi"))[0].ok  # what is shown left is what a share may still take
    assert not run(objects, asks("13Gi"))[0].ok
    state = DraState.from_objects((f"obj{i}", o) for i, o in enumerate([ANY, *objects]))
    (row,) = device_rows(state)
    cells = row.cells()
    assert (cells["state"], cells["allocated_to"], cells["shared_by"]) == ("shared", None, ("default/a", "default/b"))
    assert (cells["capacity_held"], cells["capacity_left"]) == (("memory=68Gi",), ("memory=12Gi",))


def test_without_shares_it_is_free_and_an_exclusive_allocation_is_allocated() -> None:
    assert rows(shared_gpu())[0].endswith(" free")
    plain = dra.resource_slice("n1", [dra.gpu_device("gpu-0", 0, dra.GPUS[0], "550.54.15")], node="n1")
    assert rows(plain, held("x", "gpu-0", pool="n1"))[0].endswith(" allocated default/x")
