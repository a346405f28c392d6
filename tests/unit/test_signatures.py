"""The signature table: one real line per row, and the matcher that names a cause from it (or does not guess).

Each excerpt is a line as the program prints it. ``from`` says where it was
taken: a public report (quoted as posted) or, where no report quotes the
whole line, composed from the upstream format strings the row's ``source``
names (the program's own words around a realistic inner error).
"""

from __future__ import annotations

import pytest

from gpulabel.checks.evidence import Blame, diagnose
from gpulabel.model.evidence import EventNote, Evidence, LogLine, LogTail, containers_to_read, parse_log
from gpulabel.model.signatures import SIGNATURES

# id -> (the line, where it comes from)
EXCERPTS: dict[str, tuple[str, str]] = {
    "driver-kernel-headers": (
        "Unable to open the file '/lib/modules/3.10.0-862.el7.x86_64/proc/version' (No such file or directory)."
        "Could not resolve Linux kernel version",
        "https://github.com/NVIDIA/gpu-operator/issues/155 (nvidia-driver pod log)",
    ),
    "driver-package-cache": (
        "ERROR: Failed to update package cache.  Ensure that the cluster can access the proper networks.",
        "composed: NVIDIA/gpu-driver-container ubuntu22.04/nvidia-driver _update_package_cache (echo of two words)",
    ),
    "driver-secure-boot": (
        "ERROR: The kernel module failed to load, because it was not signed by a key that is trusted by the kernel. "
        "Please try installing the driver again, and sign the kernel module when prompted to do so.",
        "https://github.com/NVIDIA/gpu-operator/issues/266 (driver container log)",
    ),
    "driver-module-load": (
        "ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most frequently when this kernel module "
        "was built against the wrong or improperly configured kernel sources, with a version of gcc that differs "
        "from the one used to build the target kernel, or if another driver, such as nouveau, is present and "
        "prevents the NVIDIA kernel module from obtaining ownership of the NVIDIA GPU(s)",
        "https://github.com/NVIDIA/gpu-operator/issues/266 (driver container log; the line continues)",
    ),
    "driver-in-use": (
        "Could not unload NVIDIA driver kernel modules, driver is in use",
        "https://github.com/NVIDIA/nvidia-docker/issues/1242 (driver container log)",
    ),
    "toolkit-runtime-config": (
        'time="2026-11-30T10:12:01Z" level=error msg="error running nvidia-ctk-installer: unable to setup runtime: '
        "unable to load config: unable to load containerd config: failed to load config: "
        'open /runtime/config-dir/config.toml: permission denied"',
        "composed: NVIDIA/nvidia-container-toolkit cmd/nvidia-ctk-installer/main.go main and Run, "
        "container/runtime/containerd/containerd.go Setup and getRuntimeConfig (logrus text format)",
    ),
    "toolkit-runtime-restart": (
        'time="2026-11-30T10:12:01Z" level=error msg="error running nvidia-ctk-installer: unable to setup runtime: '
        "unable to restart containerd: unable to dial: dial unix /runtime/sock-dir/containerd.sock: connect: "
        'no such file or directory"',
        "composed: NVIDIA/nvidia-container-toolkit cmd/nvidia-ctk-installer/main.go, "
        "container/runtime/containerd/containerd.go Setup, containerd_linux.go (unable to dial)",
    ),
    "runtime-not-configured": (
        "FailedCreatePodSandBox: Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox "
        'runtime: no runtime for "nvidia" is configured',
        "https://github.com/NVIDIA/gpu-operator/issues/413 (the Event's reason and message)",
    ),
    "device-plugin-nvml": (
        "2023/10/19 03:11:54 Failed to initialize NVML: could not load NVML library.",
        "https://github.com/NVIDIA/k8s-device-plugin/issues/444 (device plugin log)",
    ),
    "device-plugin-no-runtime": (
        "error starting plugins: error getting plugins: unable to create plugins: failed to construct resource "
        "managers: invalid device discovery strategy",
        "https://github.com/NVIDIA/k8s-device-plugin/issues/1470 (device plugin log)",
    ),
    "gfd-nvml": (
        "W1130 10:12:01.123456       1 fallback.go:40] Failed to initialize resource manager: ERROR_LIBRARY_NOT_FOUND",
        "composed: NVIDIA/k8s-device-plugin internal/resource/fallback.go withFallBack.Init (klog format)",
    ),
    "validator-driver-not-ready": (
        'time="2026-11-30T10:12:01Z" level=warning msg="failed to validate the driver, retrying after 5 seconds\\n"',
        "composed: NVIDIA/gpu-operator cmd/nvidia-validator/main.go Driver.runValidation (logrus text format)",
    ),
    "validator-no-gpu-resources": (
        'time="2026-11-30T10:12:01Z" level=info msg="Error: error validating plugin installation: '
        'GPU resources are not discovered by the node"',
        "composed: NVIDIA/gpu-operator cmd/nvidia-validator/main.go main (Error: %v), Plugin.validateGPUResource",
    ),
    "validator-cuda-workload": (
        "Failed to allocate device vector A (error code no CUDA-capable device is detected)!",
        "https://github.com/NVIDIA/gpu-operator/issues/253 and #1900 (cuda-validation log)",
    ),
    "mig-config-not-present": (
        'time="2026-11-30T10:12:01Z" level=error msg="error selecting MIG config: selected mig-config not present: '
        'all-1g.10gb"',
        "composed: NVIDIA/mig-parted cmd/nvidia-mig-parted/assert/assert.go AssertMigConfig and GetSelectedMigConfig",
    ),
    "mig-apply-failed": (
        'time="2026-11-30T10:12:01Z" level=error msg="Error: failed to apply MIG configuration: exit status 1"',
        "composed: NVIDIA/mig-parted cmd/nvidia-mig-manager/main.go (Error: %s) and "
        "pkg/mig/reconfigure/reconfigure.go Reconfigure.Run",
    ),
    "dcgm-exporter-hostengine": (
        'time="2022-09-29T12:09:14Z" level=fatal msg="Error connecting to nv-hostengine: '
        'Host engine connection invalid/disconnected"',
        "https://github.com/NVIDIA/gpu-operator/issues/414 (dcgm-exporter log)",
    ),
    "dcgm-exporter-nvml": (
        'time="2020-07-21T18:49:33Z" level=fatal msg="Error starting nv-hostengine: DCGM initialization error"',
        "https://github.com/NVIDIA/gpu-monitoring-tools/issues/96 (dcgm-exporter log)",
    ),
    "image-pull": (
        'Failed: Failed to pull image "nvcr.io/nvidia/driver:550.54.15-ubuntu22.04": rpc error: code = NotFound '
        'desc = failed to pull and unpack image "nvcr.io/nvidia/driver:550.54.15-ubuntu22.04": not found',
        "composed: kubernetes pkg/kubelet/images/image_manager.go (Failed to pull image %q: %v) with containerd's "
        "not-found error",
    ),
}


def test_every_row_has_a_real_line_and_every_line_a_row() -> None:
    assert set(EXCERPTS) == {s.id for s in SIGNATURES}
    for s in SIGNATURES:
        assert s.source and s.cause.strip() and s.fix.strip()


@pytest.mark.parametrize("row", SIGNATURES, ids=lambda s: s.id)
def test_each_line_names_its_own_row(row) -> None:  # type: ignore[no-untyped-def]
    line, _ = EXCERPTS[row.id]
    operand = row.operand if row.operand != "*" else "driver"
    blame = Blame("gpu-1", operand, "operand-pod", _pod(), None)
    if row.where == "log":
        evidence = Evidence(
            logs=(LogTail("gpu-operator/p-1", "ctr", lines=(LogLine("", "starting"), LogLine("", line))),)
        )
    else:
        reason, _, message = line.partition(": ")
        evidence = Evidence(events=(EventNote("Pod", "gpu-operator", "p-1", "Warning", reason, message, "t"),))
    d = diagnose(blame, evidence)
    assert d.signature is row
    assert [ln.text for ln in d.lines] == [line]


def _pod():  # type: ignore[no-untyped-def]
    from gpulabel.model.podspec import compiled
    from gpulabel.model.records import Pod

    return Pod("gpu-operator", "p-1", "gpu-1", "Running", {}, {}, (), compiled({})[0])


BACKOFF = "Back-off restarting failed container"


def test_an_unknown_failure_shows_the_last_lines_and_no_cause() -> None:
    lines = tuple(LogLine(f"2026-11-30T10:00:0{i}Z", f"step {i}") for i in range(6))
    evidence = Evidence(
        logs=(LogTail("gpu-operator/p-1", "ctr", previous=True, lines=lines),),
        events=(
            EventNote("Pod", "gpu-operator", "p-1", "Warning", "BackOff", "Back-off restarting failed container", "t"),
        ),
    )
    d = diagnose(Blame("gpu-1", "device-plugin", "operand-pod", _pod(), None), evidence)
    assert d.signature is None
    assert [ln.text for ln in d.lines] == [
        "step 3",
        "step 4",
        "step 5",
        "BackOff: Back-off restarting failed container",
    ]
    assert d.lines[0].where == "ctr (previous)" and d.lines[0].time == "2026-11-30T10:00:03Z"
    assert d.summary() == 'no known signature; "step 5"'


def test_a_row_of_another_operand_is_not_taken() -> None:
    line = EXCERPTS["device-plugin-nvml"][0]
    evidence = Evidence(logs=(LogTail("gpu-operator/p-1", "ctr", lines=(LogLine("", line),)),))
    d = diagnose(Blame("gpu-1", "driver", "operand-pod", _pod(), None), evidence)
    assert d.signature is None and [ln.text for ln in d.lines] == [line]


def test_the_first_row_of_the_table_wins_on_one_log() -> None:
    both = (EXCERPTS["driver-secure-boot"][0], EXCERPTS["driver-module-load"][0])
    evidence = Evidence(logs=(LogTail("gpu-operator/p-1", "ctr", lines=tuple(LogLine("", t) for t in both)),))
    d = diagnose(Blame("gpu-1", "driver", "operand-pod", _pod(), None), evidence)
    assert d.signature is not None and d.signature.id == "driver-secure-boot"


def test_events_of_other_objects_are_not_evidence() -> None:
    line = EXCERPTS["image-pull"][0]
    reason, _, message = line.partition(": ")
    other = EventNote("Pod", "gpu-operator", "someone-else", "Warning", reason, message, "t")
    node = EventNote("Node", "default", "gpu-1", "Warning", reason, message, "t")
    d = diagnose(Blame("gpu-1", "driver", "operand-pod", _pod(), None), Evidence(events=(other,)))
    assert d.signature is None and d.lines == ()
    d = diagnose(Blame("gpu-1", "driver", "operand-pod", _pod(), None), Evidence(events=(node,)))
    assert d.signature is not None and d.signature.id == "image-pull"


def test_which_containers_are_read() -> None:
    pod = {
        "status": {
            "initContainerStatuses": [
                {"name": "ok-init", "state": {"terminated": {"exitCode": 0}}},
                {
                    "name": "bad-init",
                    "restartCount": 3,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": {"exitCode": 1}},
                },
                {"name": "later-init", "state": {"waiting": {"reason": "PodInitializing"}}},
                {"name": "running-init", "state": {"running": {}}},
                {"name": "no-image-init", "state": {"waiting": {"reason": "ImagePullBackOff"}}},
            ],
            "containerStatuses": [
                {"name": "main", "ready": False, "state": {"waiting": {"reason": "PodInitializing"}}},
                {"name": "creating", "ready": False, "state": {"waiting": {"reason": "ContainerCreating"}}},
                {"name": "fine", "ready": True, "state": {"running": {}}},
                {"name": "unready", "ready": False, "state": {"running": {}}},
                {
                    "name": "crashing",
                    "ready": False,
                    "restartCount": 2,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": {"exitCode": 2}},
                },
            ],
        }
    }
    got = [(c.name, c.init, c.previous) for c in containers_to_read(pod)]
    # the containers still waiting to start (behind the init containers, on an image) have no log: not asked
    assert got == [
        ("bad-init", True, True),
        ("running-init", True, False),
        ("unready", False, False),
        ("crashing", False, True),
    ]


def test_a_log_body_with_timestamps() -> None:
    body = "2026-11-30T10:00:00.123456789Z first line\n2026-11-30T10:00:01Z second: with colon\nno stamp\n"
    assert parse_log(body) == (
        LogLine("2026-11-30T10:00:00.123456789Z", "first line"),
        LogLine("2026-11-30T10:00:01Z", "second: with colon"),
        LogLine("", "no stamp"),
    )
