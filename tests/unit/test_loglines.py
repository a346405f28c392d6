"""The line that matters: a failure no signature knows is shown by its panic or fatal line and the errors
before it, not by the last frames of its stack trace; lines are shown as a terminal would show them."""

from __future__ import annotations

from gpulabel.checks.explain.evidence import Blame, diagnose
from gpulabel.model.evidence import EventNote, Evidence, LogLine, LogTail
from gpulabel.model.loglines import decisive, readable, shown
from tests.unit.test_signatures import _pod

# https://github.com/NVIDIA/k8s-device-plugin/issues/338 (device plugin log, as posted)
GO_PANIC = [
    "2022/10/19 18:51:07 Retreiving plugins.",
    "panic: Unable to load resource managers to manage plugin devices: error building device map: error building "
    "device map from config.resources: error building GPU device map: error getting device handle for index '0': "
    "Unknown Error",
    "",
    "goroutine 1 [running]:",
    "main.(*migStrategyNone).GetPlugins(0xc00011c278)",
    "        /build/cmd/nvidia-device-plugin/mig-strategy.go:57 +0x1a5",
    "main.startPlugins(0xc0000e3c58?, {0xc0001ce460, 0x9, 0xe}, 0x9?)",
    "        /build/cmd/nvidia-device-plugin/main.go:247 +0x4bd",
    "github.com/urfave/cli/v2.(*App).Run(...)",
    "        /build/vendor/github.com/urfave/cli/v2/app.go:224",
    "main.main()",
    "        /build/cmd/nvidia-device-plugin/main.go:91 +0x665",
]

# https://github.com/NVIDIA/k8s-device-plugin/issues/140 (a nil dereference; frames indented with tabs)
GO_SEGV = [
    "2019/10/09 10:00:00 Loading NVML",
    "panic: runtime error: invalid memory address or nil pointer dereference",
    "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x8414d7]",
    "",
    "goroutine 1 [running]:",
    "main.getDevices(0xc4200c3e38, 0x1, 0x1)",
    "\t/go/src/nvidia-device-plugin/nvidia.go:49 +0x177",
    "main.main()",
    "\t/go/src/nvidia-device-plugin/main.go:42 +0x111",
]

PY_TRACEBACK = [  # the shape of a Python operand's crash (a MIG manager hook, a validator script)
    "INFO starting",
    "ERROR could not read /etc/nvidia-mig-manager/config.yaml",
    "Traceback (most recent call last):",
    '  File "/usr/bin/hook.py", line 12, in <module>',
    "    main()",
    '  File "/usr/bin/hook.py", line 9, in main',
    "    raise RuntimeError('no config')",
    "RuntimeError: no config",
]


def _texts(lines: list[str]) -> list[str]:
    return [lines[i] for i in decisive(lines)]


def test_a_go_panic_is_shown_by_its_panic_line_not_its_frames() -> None:
    assert _texts(GO_PANIC) == [GO_PANIC[1]]
    assert _texts(GO_SEGV) == [GO_SEGV[1]]


def test_the_error_lines_before_a_fatal_one_are_kept() -> None:
    lines = [
        'time="t" level=info msg="Starting"',
        'time="t" level=error msg="failed to open /host/etc/os-release"',
        'time="t" level=info msg="retrying"',
        'time="t" level=error msg="unable to detect the distribution"',
        'time="t" level=fatal msg="giving up"',
        'time="t" level=info msg="after"',
    ]
    assert _texts(lines) == [lines[1], lines[3], lines[4]]


def test_a_python_traceback_is_shown_by_its_error_lines() -> None:
    assert _texts(PY_TRACEBACK) == [PY_TRACEBACK[1], PY_TRACEBACK[7]]


def test_without_an_error_the_last_lines_are_shown() -> None:
    lines = ["one", "two", "three", "four"]
    assert _texts(lines) == ["two", "three", "four"]


def test_without_an_error_an_indented_line_is_read_with_the_line_it_continues() -> None:
    """The kernel's multi-line messages (NVRM's advice after a probe that was not called), printed by the driver
    installer under ``Kernel messages:`` with each continuation indented: the last entries are shown by their first
    lines, not by the last entry's tail."""
    lines = [
        "Kernel messages:",
        "[ 10.000001] nvidia-nvlink: Nvlink Core is being initialized, major device number 499",
        "[ 10.000002] NVRM: The NVIDIA probe routine was not called for 4 device(s).",
        "[ 10.000003] NVRM: This can occur when another driver was loaded and",
        "               NVRM: obtained ownership of the NVIDIA device(s).",
        "[ 10.000004] NVRM: Try unloading the conflicting kernel module (and/or",
        "               NVRM: reconfigure your kernel without the conflicting",
        "               NVRM: again.",
    ]
    assert _texts(lines) == [lines[2], lines[3], lines[5]]
    assert _texts(["  one", "  two"]) == ["  one"]  # nothing but continuations: the first line starts the entry


def test_a_line_is_shown_as_a_terminal_shows_it() -> None:
    assert readable("\x1b[31mERROR\x1b[0m: failed") == "ERROR: failed"
    assert readable("downloading 10%\rdownloading 100%\r") == "downloading 100%"
    assert readable("\tat main.go:1") == "    at main.go:1"
    assert readable("bell\x07 nul\x00 rtl\u202e") == "bell\\x07 nul\\x00 rtl\\u202e"
    assert shown("\x1b[1m--password hunter2\x1b[0m") == "--password <redacted>"


def test_an_unknown_panic_is_the_evidence_and_the_summary_says_it() -> None:
    tail = LogTail(
        "gpu-operator/p-1", "nvidia-device-plugin", previous=True, lines=tuple(LogLine("", t) for t in GO_PANIC)
    )
    backoff = EventNote("Pod", "gpu-operator", "p-1", "Warning", "BackOff", "Back-off restarting failed container", "t")
    d = diagnose(Blame("gpu-1", "device-plugin", "operand-pod", _pod(), None), Evidence((tail,), (backoff,)))
    assert d.signature is None
    assert [ln.text for ln in d.lines] == [GO_PANIC[1], "BackOff: Back-off restarting failed container"]
    assert d.summary() == f'no known signature; "{GO_PANIC[1]}"'


def test_a_coloured_line_still_names_its_signature() -> None:
    line = (
        "\x1b[31mERROR: Failed to update package cache.\x1b[0m  Ensure that the cluster can access the proper networks."
    )
    tail = LogTail("gpu-operator/p-1", "nvidia-driver-ctr", lines=(LogLine("", line),))
    d = diagnose(Blame("gpu-1", "driver", "operand-pod", _pod(), None), Evidence((tail,)))
    assert d.signature is not None and d.signature.id == "driver-package-cache"
    assert "\x1b" not in d.lines[0].text


def test_a_cpp_abort_in_a_go_program_is_shown_by_its_abort_not_the_raw_stack() -> None:
    lines = [
        'time="2021-01-01T00:00:00Z" level=info msg="Starting"',
        "terminate called after throwing an instance of 'std::runtime_error'",
        "  what():  something failed",
        "SIGABRT: abort",
        "PC=0x7f1c2a3b4c5d m=0 sigcode=18446744073709551610",
        "",
        "goroutine 0 [idle]:",
        "runtime: unknown pc 0x7f1c2a3b4c5d",
        "stack: frame={sp:0x7ffc1e2d3c40, fp:0x0} stack=[0x7ffc1d5e0a88,0x7ffc1e2dfac0)",
        "00007ffc1e2d3b40:  0000000000000000  0000000000000001",
        "00007ffc1e2d3b50:  00007f1c2a3b4c5d  0000000000000000",
        "rax    0x0",
        "rip    0x7f1c2a3b4c5d",
    ]
    assert _texts(lines) == [lines[1], lines[2], lines[3]]  # the abort, its message, the signal


def test_advice_logged_at_error_level_after_the_failure_is_not_the_line_that_matters() -> None:
    """The device plugin logs its NVML error and then four lines of advice at klog's error level
    (k8s-device-plugin internal/plugin/factory.go): the failure is shown, not only the advice."""
    lines = [
        "I1130 10:12:01.000000       1 main.go:357] Retrieving plugins.",
        "E1130 10:12:01.000000       1 factory.go:99] Failed to initialize NVML: Some Error.",
        "E1130 10:12:01.000000       1 factory.go:100] If this is a GPU node, did you set the docker default runtime?",
        "E1130 10:12:01.000000       1 factory.go:101] You can check the prerequisites at: https://example.invalid/p",
        "E1130 10:12:01.000000       1 factory.go:102] You can learn how to set the runtime at: https://example.invalid",
        "E1130 10:12:01.000000       1 factory.go:103] If this is not a GPU node, set up a toleration or nodeSelector",
    ]
    assert _texts(lines) == [lines[1]]
    weak = [ln for ln in lines if ln.startswith("E")][1:]
    assert _texts(["I start", *weak]) == weak[-3:]  # without a failure the error-level lines still are the evidence


def test_a_go_runtime_abort_that_is_not_a_panic_is_fatal() -> None:
    """runtime/proc.go badmorestackgsignal writes ``fatal: morestack on gsignal`` and exits: the line that matters
    even after error lines (NVIDIA/gpu-monitoring-tools#208 had none before it)."""
    lines = [
        'time="t" level=info msg="Starting dcgm-exporter"',
        'time="t" level=error msg="failed to read the pod resources, retrying"',
        'time="t" level=info msg="Collecting DCP Metrics"',
        "fatal: morestack on gsignal",
    ]
    assert _texts(lines) == [lines[1], lines[3]]


def test_coreutils_cant_says_a_failure_as_cannot_does() -> None:
    """The driver scripts' _mount_rootfs runs ``chcon -R -t container_file_t /run/nvidia/driver/dev`` when
    /sys/fs/selinux exists (gpu-driver-container rhel8|rhel9|rhel10, azurelinux, fedora); with SELinux disabled
    every file fails. coreutils words it ``can't apply partial context to unlabeled file %s`` (src/chcon.c, v8.4 to
    v9.5), the file quoted by quote() to v8.24 (typographic quotes in a UTF-8 locale, the centos7|rhel7 images'
    8.22) and by quoteaf() from v8.25 (straight quotes, RHEL 8's 8.30 and RHEL 9's 8.32); id, sort and uptime say
    ``can't``/``couldn't`` too. The last line that says what failed is shown, not only the ``failed to get security
    context`` lines before it. Composed from those format strings."""
    v830 = [
        "Mounting NVIDIA driver rootfs...",
        "Change device files security context for selinux compatibility",
        "chcon: failed to get security context of 'hugepages': Operation not supported",
        "chcon: failed to get security context of 'net': Operation not supported",
        "chcon: can't apply partial context to unlabeled file 'nvidia-caps'",
        "chcon: can't apply partial context to unlabeled file '/run/nvidia/driver/dev'",
        "Stopping NVIDIA persistence daemon...",
        "Unloading NVIDIA driver kernel modules...",
        "Unmounting NVIDIA driver rootfs...",
    ]
    assert _texts(v830) == v830[3:6]
    v822 = [
        "chcon: can\u2019t apply partial context to unlabeled file \u2018nvidia0\u2019",
        "chcon: can't apply partial context to unlabeled file \u2018/run/nvidia/driver/dev\u2019",
        "Unmounting NVIDIA driver rootfs...",
    ]
    assert _texts(v822) == v822[:2]
    couldnt = ["I start", "uptime: couldn't get boot time: No such file or directory", "I stop"]
    assert _texts(couldnt) == [couldnt[1]]


def test_the_driver_scripts_selinux_lines_when_chcon_works_say_no_failure() -> None:
    """The twin: on a node with SELinux enabled the same function prints its steps and chcon prints nothing; no
    error line, so the last lines are shown."""
    lines = [
        "Mounting NVIDIA driver rootfs...",
        "Check SELinux status",
        "SELinux is enabled",
        "Change device files security context for selinux compatibility",
        "Done, now waiting for signal",
    ]
    assert _texts(lines) == lines[-3:]


def test_a_retry_notice_logged_below_error_level_after_the_error_is_not_the_line_that_matters() -> None:
    """k8s-device-plugin logs a failure at klog's error level and then, at info level, that it will retry:
    cmd/mps-control-daemon/main.go ``klog.Errorf("Failed to start MPS daemon: %v")``, then ``klog.Infof("Failed to
    start one or more MPS deamons. Retrying in 30s...")`` and on the next attempt ``klog.Warningf("Failed to remove
    .ready file: %v")`` (v0.15.0 lines 203, 129, 218; v0.17.0 lines 213, 132, 228); cmd/nvidia-device-plugin/main.go
    ``klog.Errorf("Failed to start plugin: %v")`` and ``klog.Infof("Failed to start one or more plugins. Retrying in
    30s...")`` (v0.15.0 lines 301, 208; v0.17.0 lines 374, 268). The notices say ``Failed`` too; the error they are
    about is the line shown. Composed from those format strings."""
    v017 = [
        'I0101 00:00:00.000001 99 daemon.go:97] "Staring MPS daemon" resource="nvidia.com/gpu"',
        "E0101 00:00:00.000002 99 main.go:213] Failed to start MPS daemon: error setting SELinux context: lsetxattr "
        "/mps/nvidia.com/gpu/pipe: permission denied",
        "I0101 00:00:00.000003 99 main.go:132] Failed to start one or more MPS deamons. Retrying in 30s...",
        "W0101 00:00:30.000001 99 main.go:228] Failed to remove .ready file: remove /mps/.ready: no such file or "
        "directory",
        "I0101 00:00:30.000002 99 main.go:230] Stopping MPS daemons.",
        "I0101 00:00:30.000003 99 main.go:132] Failed to start one or more MPS deamons. Retrying in 30s...",
    ]
    assert _texts(v017) == [v017[1]]
    v015 = [
        "I0101 00:00:00.000001 1 main.go:279] Retrieving plugins.",
        "E0101 00:00:00.000002 1 main.go:301] Failed to start plugin: error waiting for MPS daemon: error checking "
        "MPS daemon health: failed to send command to MPS daemon: exit status 1",
        "I0101 00:00:00.000003 1 main.go:208] Failed to start one or more plugins. Retrying in 30s...",
    ]
    assert _texts(v015) == [v015[1]]


def test_a_failure_logged_below_error_level_before_any_error_is_still_shown() -> None:
    """The twin: a warning or info line that says a failure and is not after an error-level one is the failure itself
    (gRPC's warning that a dial failed, the validator's logrus info line ``Error: error validating toolkit
    installation``), and a log that says its failures only below error level shows them as before."""
    warned = [
        "I0101 00:00:00.000001 1 main.go:163] Starting OS watcher.",
        "W0101 00:00:00.000002 1 component.go:41] grpc: addrConn.createTransport failed to connect to nfd-master",
        "E0101 00:00:00.000003 1 main.go:95] error creating NVML labeler: failed to initialize NVML",
    ]
    assert _texts(warned) == warned[1:]
    info = [
        'time="2021-10-07T15:16:34Z" level=info msg="version: 8fd8b2d9"',
        'time="2021-10-07T15:16:34Z" level=info msg="Error: error validating toolkit installation: exec: '
        '\\"nvidia-smi\\": executable file not found in $PATH"',
    ]
    assert _texts(info) == [info[1]]
