"""Issue 33's must-show failures, each through the command line only, so that the same file runs on any tree.

Every test here runs ``python -m gpulabel`` in a process of its own (the
unprivileged user: ``main`` in a forked child, as ``nobody`` cannot run root's
Python) and imports no gpulabel name that 397c1e2 lacked: run with another
tree's ``src`` first on ``PYTHONPATH``, it tests that tree. Each one failed on 397c1e2 (the issue's "today's main": a
traceback, a hang, a replaced file, minutes or gigabytes) and passes now; the
table of old and new results is in docs/hostile-input.md. The focused tests of
each class (``test_files.py``, ``test_inputs.py``, ``test_cel_cost.py``, ...)
use the modules that fixed them and so cannot run on the old tree.

Runaway children are bounded: ``RLIMIT_AS`` 2 GiB and a timeout, so a test of
an old tree fails rather than takes the machine.
"""

from __future__ import annotations

import json
import os
import pwd
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
DRIFTED = str(ROOT / "examples" / "drifted-lab.yaml")
FLEET = str(ROOT / "examples" / "mixed-fleet.yaml")
DRA_LAB = str(ROOT / "examples" / "dra-lab.json")
GIB = 1 << 30


def _bounded(extra: Callable[[], None] | None = None) -> Callable[[], None]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 * GIB, 2 * GIB))
        if extra is not None:
            extra()

    return limit


def gpulabel(
    *args: str, timeout: float = 60, preexec: Callable[[], None] | None = None, stdin: int | None = None
) -> tuple[int, str, str, float]:
    """Exit code, stdout, stderr and CPU seconds of ``python -m gpulabel ARGS``; a hang is exit -1."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "gpulabel", *args],
            capture_output=True,
            timeout=timeout,
            check=False,
            preexec_fn=_bounded(preexec),
            stdin=stdin if stdin is not None else subprocess.DEVNULL,
            cwd=str(ROOT),
        )
    except subprocess.TimeoutExpired:
        return -1, "", f"hung for {timeout} s", timeout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace"), cpu


def one_line(err: str) -> bool:
    return err.count("\n") == 1 and err.startswith("gpulabel: ") and "Traceback" not in err


def state(path: Path) -> tuple[int, int, int, int, bytes]:
    st = path.stat()
    return st.st_ino, st.st_uid, stat.S_IMODE(st.st_mode), st.st_nlink, path.read_bytes()


def test_a_hard_linked_page_under_ulimit_f_keeps_both_names_whole(tmp_path: Path) -> None:
    page, other = tmp_path / "report.html", tmp_path / "kept.html"
    page.write_bytes(b"<html>the user's own page, 30 bytes" + b"." * 100)
    os.link(page, other)
    before = state(page), state(other)

    def small_files() -> None:  # the write fails midway, as a full disk would
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # inherited: a write past the limit fails with EFBIG
    try:
        code, _, err, _ = gpulabel("report", "--snapshot", DRIFTED, "--html", str(page), preexec=small_files)
    finally:
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    assert (state(page), state(other)) == before, "a name of the hard-linked file changed"
    assert code == 2 and one_line(err), err


NOBODY = pwd.getpwnam("nobody").pw_uid if os.geteuid() == 0 else -1


def _main_as_nobody(argv: list[str]) -> tuple[int, str]:
    """``gpulabel.cli.main.main(argv)`` in a forked child that became ``nobody`` (it cannot exec root's Python):
    its exit code and what it wrote to stderr. The parent ran the same command once, so every module the
    command imports is loaded before the child drops root."""
    import io

    from gpulabel.cli.main import main  # the tree on sys.path: this file imports no gpulabel at its top

    read, written = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        err = io.StringIO()
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            code = main(argv, io.StringIO(), err)
        except BaseException as e:
            code = 99
            err.write(f"unexpected {e!r}\n")
        os.write(written, f"{code}\n{err.getvalue()}".encode())
        os._exit(0)
    os.close(written)
    with os.fdopen(read, "rb") as fh:
        code_text, _, message = fh.read().decode().partition("\n")
    os.waitpid(pid, 0)
    return int(code_text), message


@pytest.mark.skipif(os.geteuid() != 0, reason="becoming another user needs root")
def test_an_unprivileged_user_cannot_replace_a_root_owned_read_only_file(tmp_path: Path) -> None:
    import io

    from gpulabel.cli.main import main

    main(["report", "--snapshot", DRIFTED, "--html", str(tmp_path / "warm.html")], io.StringIO(), io.StringIO())
    shared = Path(tempfile.mkdtemp(prefix="gpulabel-shared-", dir="/tmp"))
    shared.chmod(0o777)  # writable by anyone, no sticky bit: a rename over root's file would succeed
    try:
        snapshot = shared / "lab.yaml"
        shutil.copy(DRIFTED, snapshot)
        snapshot.chmod(0o444)
        target = shared / "report.html"
        target.write_bytes(b"root's page\n")
        target.chmod(0o444)
        before = state(target)
        code, err = _main_as_nobody(["report", "--snapshot", str(snapshot), "--html", str(target)])
        assert state(target) == before, "root's file was replaced"
        assert code == 2 and one_line(err), err
    finally:
        shutil.rmtree(shared)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_snapshot_is_one_line_at_once(device: str) -> None:
    started = time.monotonic()
    code, _, err, _ = gpulabel("audit", "--snapshot", device, timeout=60)
    assert code == 2 and one_line(err), err[-300:]
    assert time.monotonic() - started < 10


def test_dev_zero_on_standard_input_is_one_line() -> None:
    with open("/dev/zero", "rb") as zero:
        code, _, err, _ = gpulabel("audit", "--snapshot", "-", stdin=zero.fileno(), timeout=60)
    assert code == 2 and one_line(err), err[-300:]


def test_a_fifo_snapshot_without_a_writer_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "snap.json"
    os.mkfifo(fifo)
    code, _, err, _ = gpulabel("audit", "--snapshot", str(fifo), timeout=20)
    assert code != -1, err
    assert code == 2 and one_line(err), err


def test_a_fifo_as_html_target_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "page.html"
    os.mkfifo(fifo)
    code, _, err, _ = gpulabel("report", "--snapshot", DRIFTED, "--html", str(fifo), timeout=20)
    assert code == 2 and one_line(err), err
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_json_1000_deep_in_an_unknown_field_is_one_line(tmp_path: Path) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {}}}
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [node]})
    deep = "[" * 1000 + "]" * 1000
    path = tmp_path / "deep.json"
    path.write_text(text.replace('"labels": {}', f'"labels": {{}}, "x": {deep}'))
    code, _, err, _ = gpulabel("audit", "--snapshot", str(path))
    assert code == 2 and one_line(err), err[-300:]


def bomb(levels: int) -> str:
    text = 'cel.bind(a0, "xxxxxxxxxx", '
    for i in range(1, levels + 1):
        text += f"cel.bind(a{i}, {' + '.join([f'a{i - 1}'] * 10)}, "
    return text + f"size(a{levels}) > 0" + ")" * (levels + 1)


def test_the_cel_string_bomb_is_refused_under_a_second_with_the_api_servers_message() -> None:
    code, _, err, cpu = gpulabel("cel", bomb(7), "--snapshot", DRA_LAB, timeout=120)
    assert (code, err) == (2, "gpulabel: EXPR: compilation failed: ERROR: <input>:1:1: cost limit exceeded\n") or (
        code == 2 and one_line(err) and "exceeds cost limit" in err
    ), err[-300:]
    assert cpu < 1.0


def test_a_slice_of_129_devices_is_refused_as_the_api_server_refuses_it(tmp_path: Path) -> None:
    spec = {
        "driver": "gpu.nvidia.com",
        "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1},
        "nodeName": "node-a",
        "devices": [{"name": f"gpu-{i}"} for i in range(129)],
    }
    o = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": spec}
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [o]}))
    code, _, err, _ = gpulabel("devices", "--snapshot", str(path))
    assert code == 2 and one_line(err), err
    assert err.endswith("spec.devices: Too many: 129: must have at most 128 items\n")


def test_check_to_dev_full_is_one_line() -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "gpulabel", "check", "--snapshot", DRIFTED, "-o", "json"],
            stdout=full,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
            cwd=str(ROOT),
        )
    assert (done.returncode, done.stderr) == (2, b"gpulabel: standard output: No space left on device\n")


def test_a_newline_in_a_file_name_never_makes_a_line_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "n1\nlab-node-0 gpu.present missing.env").write_text("nvidia.com/gpu.present=true\n")
    _, out, err, _ = gpulabel("sync", str(tmp_path), "--snapshot", DRIFTED, "--dry-run")
    lines = (out + err).splitlines()
    assert not any(line.startswith("lab-node-0 gpu.present missing") for line in lines), lines
    assert any("n1\\nlab-node-0" in line for line in lines), lines


def test_50000_pods_are_placed_in_seconds(tmp_path: Path) -> None:
    products = ["NVIDIA-A100-SXM4-40GB", "NVIDIA-L4", "Tesla-T4", "NVIDIA-H100-80GB-HBM3", "NVIDIA-A10"]
    items = []
    for i in range(50_000):
        s = i % 10
        resources = {"limits": {"nvidia.com/gpu": str(1 + s // 5)}, "requests": {"cpu": "4", "memory": "16Gi"}}
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"train-{i}", "namespace": "ml"},
                "spec": {
                    "nodeSelector": {"nvidia.com/gpu.product": products[s % 5]},
                    "containers": [{"name": "main", "image": "train:1.0", "resources": resources}],
                },
            }
        )
    path = tmp_path / "pods.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    code, out, err, cpu = gpulabel("place", "--snapshot", FLEET, str(path), timeout=300)
    assert code == 1 and err == "" and out.count("\n") > 50_000
    assert cpu < 12, f"{cpu:.1f} s CPU"  # 21-67 s before (397c1e2: 20.9 s on a loaded machine)


def test_a_negative_allocatable_is_refused(tmp_path: Path) -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "labels": {"nvidia.com/gpu.present": "true"}},
        "status": {"allocatable": {"nvidia.com/gpu": "-1"}, "capacity": {"nvidia.com/gpu": "1"}},
    }
    path = tmp_path / "neg.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node]}))
    code, out, err, _ = gpulabel("gpus", "--snapshot", str(path))
    assert code == 2 and one_line(err) and "free=-1" not in out, (code, out, err)
