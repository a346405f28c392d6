"""Writing files: gpulabel never replaces a file it did not create (``cluster/files.py``).

Every command that writes a file goes through ``write_file``; today that is
``report --html``. Each case checks that what was at the path (a character
device, a FIFO, a symlink, a hard link) is still there afterwards.
"""

from __future__ import annotations

import io
import os
import stat
import threading
from pathlib import Path

import pytest

from gpulabel.cli.main import main
from gpulabel.cluster.files import write_file
from gpulabel.errors import InputError

ROOT = Path(__file__).parents[2]
DRIFTED = str(ROOT / "examples" / "drifted-lab.yaml")


def report_to(path: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["report", "--snapshot", DRIFTED, "--html", str(path)], out, err)
    return code, err.getvalue()


def write(path: Path, data: bytes) -> None:
    write_file(str(path), data)


def test_a_new_file_is_created_with_no_temporary_left(tmp_path: Path) -> None:
    write(tmp_path / "a.html", b"page")
    assert (tmp_path / "a.html").read_bytes() == b"page"
    assert [p.name for p in tmp_path.iterdir()] == ["a.html"]
    assert stat.S_IMODE((tmp_path / "a.html").stat().st_mode) == 0o644


def test_a_regular_file_is_replaced_keeping_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "a.html"
    target.write_bytes(b"old")
    target.chmod(0o600)
    write(target, b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_hard_linked_file_is_rewritten_in_place_so_both_names_see_it(tmp_path: Path) -> None:
    target, other = tmp_path / "a.html", tmp_path / "b.html"
    target.write_bytes(b"old")
    os.link(target, other)
    inode = target.stat().st_ino
    write(target, b"new")
    assert (target.stat().st_ino, other.read_bytes()) == (inode, b"new")


def test_a_symlink_is_followed_and_stays_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real.html"
    real.write_bytes(b"old")
    link = tmp_path / "link.html"
    link.symlink_to(real)
    code, err = report_to(link)
    assert (code, err) == (0, "")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes().startswith(b"<!DOCTYPE html>")


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link.html"
    link.symlink_to(tmp_path / "made.html")
    write(link, b"x")
    assert link.is_symlink() and (tmp_path / "made.html").read_bytes() == b"x"


def test_a_fifo_is_written_through_and_stays_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    code, err = report_to(fifo)
    reader.join(timeout=30)
    assert (code, err) == (0, "")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert got and got[0].startswith(b"<!DOCTYPE html>")


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a character device needs root")
def test_a_character_device_is_written_through_and_stays_a_device(tmp_path: Path) -> None:
    null = tmp_path / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the same device as /dev/null
    code, err = report_to(null)
    assert (code, err) == (0, "")
    st = null.lstat()
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)
    assert [p.name for p in tmp_path.iterdir()] == ["null"]


def test_dev_null_itself_stays_a_device() -> None:
    write_file("/dev/null", b"page")
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


def test_a_socket_is_refused_and_left_alone(tmp_path: Path) -> None:
    import socket

    where = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(where))
        with pytest.raises(InputError, match="not a regular file, a character device or a FIFO; not replaced"):
            write(where, b"x")
        assert stat.S_ISSOCK(where.lstat().st_mode)


def test_a_symlink_loop_is_one_error(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(InputError, match="cannot write"):
        write(loop, b"x")
    assert loop.is_symlink()


def test_no_module_but_cluster_files_writes_a_file() -> None:
    """Grep the package: only ``cluster/files.py`` may create, replace or open a file for writing."""
    import re

    writes = re.compile(
        r"os\.(replace|rename|link|mkfifo)\(|mkstemp|NamedTemporaryFile|open\([^)]*['\"][wax]b?\+?['\"]"
    )
    offenders = []
    for path in (ROOT / "src" / "gpulabel").rglob("*.py"):
        if path.name == "files.py" and path.parent.name == "cluster":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if writes.search(line) or re.search(r"\.write_(text|bytes)\(", line):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == []
