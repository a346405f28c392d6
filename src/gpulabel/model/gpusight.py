"""How a pod's containers can see GPUs without asking the scheduler for them, as NVIDIA's container stack reads it.

Read from the pod's spec when the record is made (:func:`sight_of`), judged by :func:`seen`. The facts, from
NVIDIA/nvidia-container-toolkit at commit d34b304 (v1.20.0-27, 2026-08-21) unless said otherwise:

- ``NVIDIA_VISIBLE_DEVICES`` (``internal/config/image/cuda_image.go`` ``devicesFromEnvvars``,
  ``internal/config/image/devices.go`` ``NewVisibleDevices``): the value is split on ``,`` and each part
  trimmed; no part at all, or a part ``void``, means no device and no injection; else the first part that is
  ``all`` or ``none`` decides (all GPUs; none: the driver without a device), and otherwise the parts are
  the devices (indexes, UUIDs, MIG names, CDI names).
- The variable is honoured for a privileged container, and for an unprivileged one when
  ``accept-nvidia-visible-devices-envvar-when-unprivileged`` is true (``cuda_image.go`` ``VisibleDevices``),
  which is the toolkit's default (``api/config/v1/config.go``) and the GPU Operator does not change it
  (gpu-operator 2025-09-17: nothing in its controllers or assets sets it). A device plugin run with the
  ``volume-mounts`` list strategy pairs with that option set false: then the variable alone gives nothing.
- Annotations whose key starts with ``cdi.k8s.io/`` (the toolkit's default ``annotation-prefixes`` in CDI
  mode, ``config.go``) name fully qualified CDI devices, comma-separated (``cdiDeviceRequestsFromAnnotations``)
  and are preferred to the variable. The toolkit reads them from the container's OCI spec: a pod's
  annotations reach it where the runtime passes them on (CRI-O; containerd's ``pod_annotations``); gpulabel
  cannot see the runtime's configuration, and says "where the runtime passes pod annotations".
- A privileged container gets every host device, ``/dev/nvidia*`` included (containerd's CRI, unless its
  runtime sets ``privileged_without_host_devices``: containerd ``docs/cri/config.md``).

Not modelled: the variable set by ``valueFrom`` or ``envFrom`` (the value is not in the pod), the image's own
``ENV NVIDIA_VISIBLE_DEVICES`` (NVIDIA's CUDA base images set ``all``: a pod of such an image sees every GPU
under the toolkit's defaults, and nothing in the pod says so), the toolkit's other device variables
(``preferredVisibleDeviceEnvVars``) and volume-mount device requests.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CDI_PREFIX",
    "ENV",
    "PRIVILEGED",
    "Seen",
    "Sight",
    "seen",
    "sight_of",
]

ENV = "NVIDIA_VISIBLE_DEVICES"
CDI_PREFIX = "cdi.k8s.io/"  # the toolkit's default CDI annotation prefix (cdi.AnnotationPrefix)
PRIVILEGED = "privileged"
_CDI = "cdi"


@dataclass(frozen=True, slots=True)
class Sight:
    """One way a pod asks to see GPUs: ``way`` is ``env``, ``privileged`` or ``cdi``; ``where`` the container (or
    the annotation's key); ``value`` the variable's or annotation's value ("" for privileged)."""

    way: str
    where: str
    value: str = ""


@dataclass(frozen=True, slots=True)
class Seen:
    """What one :class:`Sight` shows: ``devices`` ``"all"`` or how many; ``how`` in words."""

    sight: Sight
    devices: str  # "all" or a count
    how: str


def _containers(spec: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    for part in ("initContainers", "containers"):
        listed = spec.get(part)
        for c in listed if isinstance(listed, list) else ():
            if isinstance(c, Mapping):
                yield c


def sight_of(annotations: Any, spec: Any) -> tuple[Sight, ...]:
    """The pod's ways to see GPUs as its JSON says them (entries of another shape are skipped)."""
    out: list[Sight] = []
    if isinstance(annotations, Mapping):
        for key in sorted(annotations):
            value = annotations[key]
            if isinstance(key, str) and key.startswith(CDI_PREFIX) and isinstance(value, str):
                out.append(Sight(_CDI, key, value))
    if not isinstance(spec, Mapping):
        return tuple(out)
    for c in _containers(spec):
        name = str(c.get("name") or "")
        env = c.get("env")
        for e in env if isinstance(env, list) else ():
            if isinstance(e, Mapping) and e.get("name") == ENV and isinstance(e.get("value"), str):
                out.append(Sight("env", name, e["value"]))
        context = c.get("securityContext")
        if isinstance(context, Mapping) and context.get("privileged") is True:
            out.append(Sight(PRIVILEGED, name))
    return tuple(out)


def _env_devices(value: str) -> str | None:
    """``"all"``, a count, or ``None`` (no device: void, none, empty; or a value redacted by an older bundle,
    ``<redacted>``, which says nothing), as the toolkit reads the value."""
    if value == "<redacted>":
        return None
    parts = [p.strip() for p in value.split(",")]
    parts = [p for p in parts if p]
    if not parts or "void" in parts:
        return None
    for p in parts:
        if p == "all":
            return "all"
        if p == "none":
            return None
    return str(len(parts))


def _nvidia_cdi(device: str) -> bool:
    """A fully qualified CDI name of NVIDIA's (``<vendor>/<class>=<name>``, vendor ``nvidia.com`` or a subdomain:
    ``management.nvidia.com/gpu``, ``k8s.device-plugin.nvidia.com/gpu``)."""
    kind, eq, _ = device.partition("=")
    vendor = kind.partition("/")[0]
    return bool(eq) and (vendor == "nvidia.com" or vendor.endswith(".nvidia.com"))


def seen(sights: Iterable[Sight]) -> list[Seen]:
    """The sights that show GPUs, each with how many and how, in the pod's order."""
    out: list[Seen] = []
    for s in sights:
        if s.way == "env":
            devices = _env_devices(s.value)
            if devices is not None:
                how = (
                    f"container {s.where}: {ENV}={s.value} (the toolkit honours it in an unprivileged container "
                    "under its default accept-nvidia-visible-devices-envvar-when-unprivileged=true)"
                )
                out.append(Seen(s, devices, how))
        elif s.way == PRIVILEGED:
            how = f"container {s.where}: privileged (it gets every host device, /dev/nvidia* included)"
            out.append(Seen(s, "all", how))
        else:
            named = [d.strip() for d in s.value.split(",") if _nvidia_cdi(d.strip())]
            if named:
                every = any(d.endswith("=all") for d in named)
                how = f"annotation {s.where}={s.value} (CDI devices, where the runtime passes pod annotations)"
                out.append(Seen(s, "all" if every else str(len(named)), how))
    return out
