"""Every input is read bounded (``cluster/inputs.py``): devices, FIFOs, stdin, size and nesting depth.

Each case is one line and exit 2 in bounded time: ``--snapshot /dev/zero`` read
until memory ran out, a writer-less FIFO hung, and JSON nested 1,000 deep inside
an unknown field ended in a RecursionError traceback.
"""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gpulabel.cli.main import main
from gpulabel.cluster.inputs import read_input
from gpulabel.errors import InputError, SnapshotError

ROOT = Path(__file__).parents[2]
DRIFTED = str(ROOT / "examples" / "drifted-lab.yaml")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def run_process(*argv: str, **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gpulabel", *argv],
        capture_output=True,
        timeout=60,
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_snapshot_is_refused_at_once(device: str) -> None:
    started = time.monotonic()
    assert run("audit", "--snapshot", device) == (
        2,
        "",
        f"gpulabel: {device}: not a regular file (a device); not read\n",
    )
    assert time.monotonic() - started < 5


def test_a_device_as_manifest_is_refused_at_once() -> None:
    code, _, err = run("place", "--snapshot", DRIFTED, "/dev/zero")
    assert (code, err) == (2, "gpulabel: /dev/zero: not a regular file (a device); not read\n")


def test_dev_zero_on_standard_input_is_refused_in_its_own_process() -> None:
    with open("/dev/zero", "rb") as zero:
        done = run_process("audit", "--snapshot", "-", stdin=zero)
    assert (done.returncode, done.stderr) == (2, b"gpulabel: <stdin>: not a regular file (a device); not read\n")


def test_standard_input_beyond_the_limit_is_refused() -> None:
    env = {**os.environ, "GPULABEL_MAX_INPUT_BYTES": "1000"}
    done = run_process("audit", "--snapshot", "-", input=b"#" * 5000, env=env)
    assert (done.returncode, done.stderr) == (
        2,
        b"gpulabel: <stdin>: more than 1000 bytes (the input limit; GPULABEL_MAX_INPUT_BYTES raises it)\n",
    )


def test_a_file_beyond_the_limit_is_refused_and_the_limit_can_be_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    size = os.path.getsize(DRIFTED)
    monkeypatch.setenv("GPULABEL_MAX_INPUT_BYTES", str(size - 1))
    code, _, err = run("audit", "--snapshot", DRIFTED)
    assert (code, err) == (
        2,
        f"gpulabel: {DRIFTED}: more than {size - 1} bytes (the input limit; GPULABEL_MAX_INPUT_BYTES raises it)\n",
    )
    monkeypatch.setenv("GPULABEL_MAX_INPUT_BYTES", str(size))
    assert run("audit", "--snapshot", DRIFTED)[0] == 1  # read whole: its findings


@pytest.mark.parametrize("value", ["1G", "-1", "0", "lots"])
def test_a_bad_limit_is_one_line(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("GPULABEL_MAX_INPUT_BYTES", value)
    code, _, err = run("audit", "--snapshot", DRIFTED)
    assert (code, err) == (
        2,
        f"gpulabel: GPULABEL_MAX_INPUT_BYTES: {value!r} is not a positive whole number of bytes\n",
    )


def test_a_fifo_without_a_writer_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    started = time.monotonic()
    assert run("audit", "--snapshot", str(fifo)) == (2, "", f"gpulabel: {fifo}: empty: no Kubernetes objects\n")
    assert time.monotonic() - started < 5


def test_a_fifo_whose_writer_sends_nothing_is_refused_after_the_idle_time(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    opened = threading.Event()
    release = threading.Event()

    def silent_writer() -> None:
        fd = os.open(fifo, os.O_RDWR)  # a writer that never writes (O_RDWR: opens without a reader)
        opened.set()
        release.wait(10)
        os.close(fd)

    thread = threading.Thread(target=silent_writer)
    thread.start()
    opened.wait(5)
    try:
        with pytest.raises(SnapshotError, match=r"pipe: no data for 0\.3 s; not read$"):
            read_input(str(fifo), SnapshotError, idle=0.3)
    finally:
        release.set()
        thread.join()


def test_a_fifo_with_a_writer_is_read_like_process_substitution(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    data = Path(DRIFTED).read_bytes()

    opened = threading.Event()

    def writer() -> None:
        import fcntl
        import termios

        fd = os.open(fifo, os.O_RDWR)  # opens without a reader: there before the reader opens, as bash's <(...) is
        opened.set()
        try:
            for i in range(0, len(data), 1000):
                os.write(fd, data[i : i + 1000])
            deadline = time.monotonic() + 10
            # closed once the reader took it all (a FIFO's data dies with its last descriptor)
            while struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0] and time.monotonic() < deadline:
                time.sleep(0.002)
        finally:
            os.close(fd)

    thread = threading.Thread(target=writer)
    thread.start()
    assert opened.wait(10)  # not a sleep: a late writer thread made the FIFO look empty on a loaded machine
    try:
        assert read_input(str(fifo), InputError, idle=10) == data
    finally:
        thread.join(10)


def test_a_directory_is_one_line(tmp_path: Path) -> None:
    assert run("audit", "--snapshot", str(tmp_path)) == (2, "", f"gpulabel: {tmp_path}: Is a directory\n")


# -- nesting depth on every path ---------------------------------------------------------------------------

DEEP = ("[" * 1000 + "]" * 1000, "[" * 100_000 + "]" * 100_000)


def _node(deep: str) -> str:
    return '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"x":' + deep + "}"


@pytest.mark.parametrize("deep", DEEP, ids=["1000", "100000"])
@pytest.mark.parametrize("shape", ["List", "object", "yaml"])
def test_a_deep_value_in_an_unknown_field_is_one_line(tmp_path: Path, deep: str, shape: str) -> None:
    path = tmp_path / ("s.yaml" if shape == "yaml" else "s.json")
    if shape == "List":
        path.write_text('{"apiVersion":"v1","kind":"List","items":[' + _node(deep) + "]}")
    elif shape == "object":
        path.write_text(_node(deep))
    else:
        path.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nx: " + deep + "\n")
    code, out, err = run("audit", "--snapshot", str(path))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "nested deeper than 64 levels" in err or "exceeded maximum nesting depth" in err


@pytest.mark.parametrize("deep", DEEP, ids=["1000", "100000"])
def test_a_deep_manifest_is_one_line(tmp_path: Path, deep: str) -> None:
    path = tmp_path / "pod.json"
    path.write_text(
        '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},'
        '"spec":{"containers":[{"name":"c","image":"i"}]},"x":' + deep + "}"
    )
    code, _, err = run("place", "--snapshot", DRIFTED, str(path))
    assert code == 2 and err.count("\n") == 1 and "nested deeper than 64 levels" in err


@pytest.mark.parametrize("flag", ["--config", "--nfd-config"])
def test_a_deep_config_is_one_line(tmp_path: Path, flag: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("x: " + "{a: " * 1000 + "1" + "}" * 1000 + "\n")
    command = "rules" if flag == "--nfd-config" else "check"
    code, _, err = run(command, "--snapshot", DRIFTED, flag, str(path))
    assert (code, err) == (2, f"gpulabel: {path}:1: not YAML: exceeded maximum nesting depth\n")


def test_a_deep_baseline_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text('{"apiVersion":"gpulabel/v1","findings":[],"x":' + DEEP[1] + "}")
    code, _, err = run("check", "--snapshot", DRIFTED, "--baseline", str(path))
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"gpulabel: {path}: not JSON")


def test_a_config_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"apiVersion: gpulabel/v1\nkind: \xff\n")
    assert run("check", "--snapshot", DRIFTED, "--config", str(path)) == (
        2,
        "",
        f"gpulabel: {path}:2: not UTF-8 text\n",
    )


def test_a_baseline_keeps_only_what_identifies_a_finding(tmp_path: Path) -> None:
    from gpulabel.app.baseline import load_baseline

    path = tmp_path / "b.json"
    finding = {"check": "audit", "reason": "missing", "node": "n1", "detail": "x" * 99, "severity": "error", "args": []}
    path.write_text(json.dumps({"apiVersion": "gpulabel/v1", "findings": [finding] * 3, "summary": {}}))
    assert list(load_baseline(str(path))) == [{"check": "audit", "reason": "missing", "node": "n1", "args": []}] * 3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"findings": [{"reason": "x"}]}', "not a gpulabel -o json envelope: Object missing required field `check`"),
        ("[1]", "not a gpulabel -o json envelope: Expected `object`, got `array`"),
        ("{", "not JSON (a previous gpulabel -o json)"),
        ("{}", "not a gpulabel -o json envelope: no findings list"),
    ],
)
def test_a_baseline_that_is_not_an_envelope_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "b.json"
    path.write_text(text)
    code, _, err = run("check", "--snapshot", DRIFTED, "--baseline", str(path))
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"gpulabel: {path}: {message}")
