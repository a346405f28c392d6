"""``gpulabel capacity``: do the GPUs a node's labels describe match what it advertises?

The device plugin advertises ``gpu.count x gpu.replicas`` devices as
``nvidia.com/gpu`` (``nvidia.com/gpu.shared`` when renamed) in
``status.allocatable``; with MIG ``mixed``, ``mig-<profile>.count x replicas``
as ``nvidia.com/mig-<profile>``. Nodes whose ``status.allocatable`` is not in
the input (hand-written snapshots) are only checked for the labels.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from gpulabel.k8s.karpenter import lifecycle
from gpulabel.k8s.karpenter.lifecycle import Unready
from gpulabel.model import gpustack as G
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Finding, label_finding
from gpulabel.model.operands import CATALOGUE
from gpulabel.model.severity import Reason

__all__ = ["READS_DISABLED", "REASONS", "capacity", "capacity_node", "nodeclaim_unready"]

REASONS: dict[str, Reason] = {
    "no-allocatable": Reason("error", "a GPU node whose device plugin should run advertises no GPU"),
    "allocatable-mismatch": Reason("warning", "status.allocatable differs from count x replicas in the labels"),
    "mig-profile-mismatch": Reason(
        "warning", "the MIG labels name profiles status.allocatable does not advertise, and the reverse"
    ),
    "unlabelled-gpus": Reason(
        "warning", "GPUs are advertised but nvidia.com/gpu.present is not true, so label selectors miss the node"
    ),
    "missing": Reason("error", "NFD found the NVIDIA PCI device but the GPU Operator never labelled the node"),
    "node-not-ready": Reason("warning", "a GPU node whose Ready condition is not True: its GPUs take no new pods"),
    "cordoned": Reason("warning", "a GPU node marked unschedulable (kubectl cordon): its GPUs take no new pods"),
    "cloud-gpus-not-allocatable": Reason(
        "error",
        "a node its cloud or autoscaler labels as a GPU instance advertises no GPU: the autoscalers count it "
        "unready and the scheduler places no GPU pod on it",
    ),
    "nodeclaim-not-initialized": Reason(
        "error",
        "a Karpenter NodeClaim registered as the node is not Initialized past Karpenter's registration timeout "
        "(15 min) because the GPUs it requested never reached allocatable: its pods wait on a node that never "
        "serves them",
    ),
}
DEVICE_PLUGIN = CATALOGUE["device-plugin"].deploy_key

# Labels a cloud or an autoscaler writes on a GPU instance before any GPU software runs there: a node that carries
# one (a count label: above 0) and advertises no GPU is a GPU node whose stack never came up.
# - Cluster Autoscaler's GPULabel per cloud (kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/
#   aws_cloud_provider.go, gce/gce_cloud_provider.go, azure/azure_cloud_provider.go): a node with it and no GPU
#   allocatable counts as unready, "resourceUnready" in its status (cluster-autoscaler/FAQ.md), which stalls
#   its scale-up (processors/customresources/gpu_processor.go, REFERENCE.md section 18);
# - Karpenter's providers' GPU count labels (aws/karpenter-provider-aws, Azure/karpenter-provider-azure
#   v1.14.1): the NodeClaim stays not Initialized ("Resource "nvidia.com/gpu" was requested but not
#   registered", sigs.k8s.io/karpenter pkg/controllers/nodeclaim/lifecycle/initialization.go).
CLOUD_GPU_LABELS: tuple[tuple[str, bool], ...] = (  # (label, whether its value is a GPU count)
    ("k8s.amazonaws.com/accelerator", False),
    ("cloud.google.com/gke-accelerator", False),
    ("kubernetes.azure.com/accelerator", False),
    ("karpenter.k8s.aws/instance-gpu-count", True),
    ("karpenter.azure.com/sku-gpu-count", True),
)


# GKE's label of a node whose GPUs its DRA driver publishes (cluster-autoscaler/cloudprovider/gce/
# dynamicresources.go DraGPULabel): its GPUs are ResourceSlices' devices, no extended resource
GKE_DRA_LABEL = "cloud.google.com/gke-gpu-dra-driver"


def cloud_gpu_label(labels: Mapping[str, str]) -> str | None:
    """The first of :data:`CLOUD_GPU_LABELS` the node carries (a count above 0), as ``key=value``; ``None`` too
    where the GPUs are meant to be absent from allocatable: the device plugin switched off or the node isolated
    by its deploy labels, or GKE's DRA driver offering them."""
    if labels.get(DEVICE_PLUGIN) == "false" or labels.get(V.DEPLOY_OPERANDS) == "false" or GKE_DRA_LABEL in labels:
        return None
    for key, counted in CLOUD_GPU_LABELS:
        value = labels.get(key)
        if value is None or value == "" or (counted and not (G.whole_number(value) or 0)):
            continue
        return f"{key}={value}"
    return None


def _finding(node: Node, key: str, reason: str, detail: str) -> Finding:
    return label_finding("capacity", reason, node, key, detail)


# The operands whose being switched off capacity's findings read (:func:`plugin_meant_to_run`, the only reader
# of ``disabled``): switching another one off or on changes no capacity finding.
READS_DISABLED = frozenset({"device-plugin"})


def plugin_meant_to_run(node: Node, disabled: Iterable[str] = ()) -> bool:
    """The device plugin should run here: deploy label true (or pre-installed), node not isolated, not disabled."""
    labels = node.labels
    return (
        labels.get(V.GPU_PRESENT) == "true"
        and labels.get(DEVICE_PLUGIN) in ("true", "pre-installed")
        and labels.get(V.DEPLOY_OPERANDS) != "false"
        and "device-plugin" not in (disabled if isinstance(disabled, (set, frozenset)) else set(disabled))
    )


def expected_devices(labels: Mapping[str, str], advertised: Mapping[str, int]) -> dict[str, int] | None:
    """``resource -> count x replicas`` from the labels; ``None`` when the labels do not say (not numbers).

    With the ``mixed`` strategy and MIG devices labelled, only the MIG
    resources are derived: the GPUs left out of MIG mode are advertised as
    ``nvidia.com/gpu`` while ``gpu.count`` counts every parent GPU, so that
    resource is not compared. Without MIG devices, ``mixed`` advertises whole
    GPUs like ``none``.
    """
    profiles = G.mig_profile_counts(labels)
    if labels.get(G.MIG_STRATEGY) == "mixed" and any(G.whole_number(v) for v in profiles.values()):
        out: dict[str, int] = {}
        for profile, count in profiles.items():
            n = G.whole_number(count)
            replicas = G.whole_number(labels.get(f"nvidia.com/mig-{profile}.replicas", "1"))
            if n is None or replicas is None:
                return None
            out[f"nvidia.com/mig-{profile}"] = n * replicas
        return out
    gpus = G.whole_number(labels.get(V.GPU_COUNT))
    per_gpu = G.whole_number(labels.get(G.GPU_REPLICAS, "1"))
    if gpus is None or per_gpu is None:
        return None
    renamed = G.SHARED_RESOURCE in advertised and G.GPU_RESOURCE not in advertised
    return {G.SHARED_RESOURCE if renamed else G.GPU_RESOURCE: gpus * per_gpu}


def capacity_node(
    node: Node,
    disabled: Iterable[str] = (),
    operator: bool = True,
    claim: Unready | None = None,
    now: datetime | None = None,
) -> list[Finding]:
    """``operator``: the GPU Operator manages the cluster, so it owes every NVIDIA node ``gpu.present``;
    ``claim``: the Karpenter NodeClaim registered as the node and not Initialized, judged at ``now``
    (:func:`nodeclaim_unready`)."""
    labels = node.labels
    found: list[Finding] = []
    if operator and labels.get(V.GPU_PRESENT) is None and V.has_nvidia_pci(labels):
        pci = next(k for k in V.PCI_PRESENT if labels.get(k) == "true")
        found.append(
            _finding(node, V.GPU_PRESENT, "missing", f"{pci}=true but no {V.GPU_PRESENT}: no operand will run here")
        )
    advertised = G.gpu_resources(node.amounts)
    # a device the plugin took out stays in status.capacity: the health check names that gap (gpus-lost),
    # so the labels are compared with what the node has, lost devices included
    for resource, (lost, _) in G.lost_gpus(node).items():
        advertised[resource] = advertised.get(resource, 0) + lost
    total = sum(advertised.values())
    found.extend(_node_health(node, total))
    if node.amounts is None:
        return found
    if operator and total > 0 and labels.get(V.GPU_PRESENT) != "true":
        value = labels.get(V.GPU_PRESENT)
        shown = "absent" if value is None else f"{value!r}"
        found.append(
            _finding(
                node,
                G.GPU_RESOURCE,
                "unlabelled-gpus",
                f"allocatable {_shown(advertised)} but {V.GPU_PRESENT} is {shown}",
            )
        )
    meant = plugin_meant_to_run(node, disabled)
    if total == 0:
        return found + _no_gpus(node, advertised, meant, disabled, claim, now)
    found.extend(_mismatches(node, advertised, found))
    return found


def _no_gpus(
    node: Node,
    advertised: Mapping[str, int],
    meant: bool,
    disabled: Iterable[str],
    claim: Unready | None,
    now: datetime | None,
) -> list[Finding]:
    """A node that advertises no GPU: its NodeClaim not Initialized (:func:`nodeclaim_unready`), else the device
    plugin meant to run (``no-allocatable``), else its cloud's GPU label (``cloud-gpus-not-allocatable``)."""
    labels = node.labels
    if claim is not None and (unready := nodeclaim_unready(node, claim, now, meant, disabled)) is not None:
        return unready  # past its grace one finding with the node's facts, within it none (Karpenter waits)
    if meant:
        detail = f"allocatable has {_shown(advertised)}; {DEVICE_PLUGIN}={labels.get(DEVICE_PLUGIN)}"
        if V.GPU_COUNT in labels:
            detail += f", {V.GPU_COUNT}={labels[V.GPU_COUNT]}"
        return [_finding(node, G.GPU_RESOURCE, "no-allocatable", detail)]
    cloud = None if "device-plugin" in disabled else cloud_gpu_label(labels)
    if cloud is None:
        return []
    detail = (
        f"{cloud} (a GPU instance, labelled before any GPU software ran) but allocatable has "
        f"{_shown(advertised)}: the driver or the device plugin never came up here (gpulabel explain "
        f"node/{node.name}); Cluster Autoscaler counts the node unready (resourceUnready) and Karpenter "
        "leaves its NodeClaim not Initialized"
    )
    return [_finding(node, G.GPU_RESOURCE, "cloud-gpus-not-allocatable", detail)]


def nodeclaim_unready(
    node: Node, claim: Unready, now: datetime | None, meant: bool, disabled: Iterable[str] = ()
) -> list[Finding] | None:
    """The node's NodeClaim, registered and not Initialized, requested GPUs the node has none of in allocatable
    (Karpenter's ``RequestedResourcesRegistered``, ``k8s/karpenter/lifecycle.py``): ``None`` when it did not (the
    node's other findings stand); else, past :data:`lifecycle.REGISTRATION_TIMEOUT` from the NodeClaim's creation,
    one ``nodeclaim-not-initialized`` finding that also says what ``no-allocatable`` or
    ``cloud-gpus-not-allocatable`` would (so the node is not reported twice), and within it none: Karpenter is
    still initializing the node (no time given: within)."""
    missing = [(name, qty) for name, qty in claim.unregistered(node.amounts) if G.gpu_resources({name: 1})]
    if not missing:
        return None
    age = None if now is None else lifecycle.age(claim.created, now)
    if age is None or age <= lifecycle.REGISTRATION_TIMEOUT:
        return [] if not meant else None  # the device plugin's own no-allocatable still says it meanwhile
    capacity = dict(claim.capacity)
    gaps = ", ".join(
        f"{name} 0 allocatable of {qty} requested"
        + (f" ({capacity[name]} in its capacity)" if name in capacity else "")
        for name, qty in missing
    )
    labels = node.labels
    cloud = None if "device-plugin" in disabled else cloud_gpu_label(labels)
    if meant:
        why = f"the device plugin should run here ({DEVICE_PLUGIN}={labels.get(DEVICE_PLUGIN)}) and advertises none"
    elif cloud is not None:
        why = (
            f"{cloud} (a GPU instance, labelled before any GPU software ran): its driver or device plugin never came up"
        )
    else:
        why = "no device plugin is meant to run here by the node's labels"
    said = f" ({claim.reason}: {claim.message})" if claim.message else ""
    detail = (
        f"NodeClaim {claim.name} of NodePool {claim.nodepool} (created {claim.created}) is not Initialized after "
        f"{G.format_age(age)}{said}: {gaps}; {why}; the GPU stack's chain there: gpulabel explain node/{node.name}"
    )
    args = (f"nodeclaim/{claim.name}", f"nodepool/{claim.nodepool}")
    return [
        Finding("capacity", "nodeclaim-not-initialized", node=node.name, key=G.GPU_RESOURCE, args=args, detail=detail)
    ]


def _mismatches(node: Node, advertised: dict[str, int], found: list[Finding]) -> list[Finding]:
    """What the node advertises against what its labels say it has (a MIG profile pair once, in ``found``)."""
    labels = node.labels
    expected = expected_devices(labels, advertised)
    if expected is None:
        return []
    mig_only = any(r.startswith("nvidia.com/mig-") for r in expected)
    paired: set[str] = set()
    if mig_only:
        paired = _profile_pair(found, node, expected, advertised)
    out: list[Finding] = []
    for resource in sorted(set(expected) | set(advertised)):
        if mig_only and resource in (G.GPU_RESOURCE, G.SHARED_RESOURCE):
            continue
        if resource in paired:
            continue
        want, got = expected.get(resource, 0), advertised.get(resource, 0)
        if want != got:
            out.append(
                _finding(
                    node,
                    resource,
                    "allocatable-mismatch",
                    f"allocatable {got}, labels say {want} ({_why(labels, resource)})",
                )
            )
    return out


def _profile_pair(
    found: list[Finding], node: Node, expected: Mapping[str, int], advertised: Mapping[str, int]
) -> set[str]:
    """MIG profiles the labels name that the node does not advertise, and the reverse (GFD and the device
    plugin disagreeing on a profile's name, 3g.21gb against 3g.20gb): one finding naming both sides.
    Returns the resources it names."""
    mig = G.MIG_RESOURCE_PREFIX
    labelled = {r: n for r, n in expected.items() if r.startswith(mig) and n and r not in advertised}
    shown = {r: n for r, n in advertised.items() if r.startswith(mig) and n and r not in expected}
    if not labelled or not shown:
        return set()

    def side(counts: Mapping[str, int]) -> str:
        return ", ".join(f"{r.removeprefix('nvidia.com/')} ({n})" for r, n in sorted(counts.items()))

    pair = f"labels: {side(labelled)}; advertised: {side(shown)}"
    detail = "GFD's labels and the device plugin name different MIG profiles: a pod asking for the labelled one waits"
    found.append(Finding("capacity", "mig-profile-mismatch", node=node.name, args=(pair,), detail=detail))
    return {*labelled, *shown}


def _shown(advertised: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(advertised.items())) or "no GPU resource"


def _node_health(node: Node, devices: int) -> list[Finding]:
    """A GPU node that is NotReady or cordoned (a node without conditions in the input is not judged);
    ``devices``: how many GPU devices the node advertises."""
    if node.labels.get(V.GPU_PRESENT) != "true" and not devices:
        return []
    found = []
    if node.conditions and not node.ready:
        status = node.conditions.get("Ready", "absent")
        found.append(Finding("capacity", "node-not-ready", node=node.name, detail=f"condition Ready is {status}"))
    if node.unschedulable:
        found.append(Finding("capacity", "cordoned", node=node.name, detail="spec.unschedulable is true"))
    return found


def _why(labels: Mapping[str, str], resource: str) -> str:
    if resource.startswith("nvidia.com/mig-") and labels.get(G.MIG_STRATEGY) == "mixed":
        profile = resource.removeprefix("nvidia.com/mig-")
        count = labels.get(f"nvidia.com/mig-{profile}.count", "absent")
        return f"mig-{profile}.count={count} x replicas={labels.get(f'nvidia.com/mig-{profile}.replicas', '1')}"
    return f"gpu.count={labels.get(V.GPU_COUNT, 'absent')} x gpu.replicas={labels.get(G.GPU_REPLICAS, '1')}"


def capacity(state: ClusterState, disabled: Sequence[str] = (), now: datetime | None = None) -> list[Finding]:
    """Every node's capacity findings, by node (``now``: when a Karpenter NodeClaim's age is judged)."""
    from gpulabel.checks.operands.daemonsets import disabled_by_cluster_policy

    off = set(disabled) | disabled_by_cluster_policy(state.cluster_policies)
    # without a ClusterPolicy or any deploy label the cluster runs no GPU Operator (a standalone device
    # plugin, a cloud's): nothing writes gpu.present there, so its absence is no finding
    operator = bool(state.cluster_policies) or any(
        k.startswith(V.DEPLOY_PREFIX) for node in state.nodes for k in node.labels
    )
    claims = lifecycle.unready_claims(state.karpenter.nodeclaims)
    return [f for node in state.nodes for f in capacity_node(node, off, operator, claims.get(node.name), now)]
