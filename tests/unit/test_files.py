"""Writing files: gpulabel never replaces or modifies a file it did not create (``cluster/files.py``).

Every command that writes a file goes through ``write_file``: ``report --html``,
``snapshot -o`` and ``monitor --dump``. Each case checks what was at the path
(a file of the user's, a hard link, a read-only or foreign-owned file, a FIFO, a
device, a symlink) is exactly what is there afterwards: inode, owner, mode, content.
"""

from __future__ import annotations

import io
import os
import resource
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpulabel.app.kubeconfig import GENERATOR_MARK as KUBECONFIG_MARK
from gpulabel.app.snapshot import GENERATOR_MARK as SNAPSHOT_MARK
from gpulabel.cli.main import main
from gpulabel.cluster.bundle import BUNDLE_MARK
from gpulabel.cluster.files import write_file
from gpulabel.errors import InputError
from gpulabel.render.report import GENERATOR_MARK as REPORT_MARK

ROOT = Path(__file__).parents[2]
DRIFTED = str(ROOT / "examples" / "drifted-lab.yaml")
DUMP_MARK = b'"apiVersion":"gpulabel/v1"'
OWN = b"<!DOCTYPE html>\n" + REPORT_MARK + b"\nan older page\n"
NOBODY = 65534
NOT_REGULAR = "not a regular file ({}); not written (- is stdout)"


def report_to(path: Path, *extra: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["report", "--snapshot", DRIFTED, "--html", str(path), *extra], out, err)
    return code, err.getvalue()


def fleet_report_to(path: Path, *extra: str) -> tuple[int, str]:
    """``report --html`` over two clusters (``--cluster NAME=SNAPSHOT``): the fleet page's own writer."""
    out, err = io.StringIO(), io.StringIO()
    clusters = ["--cluster", f"a={DRIFTED}", "--cluster", f"b={DRIFTED}"]
    code = main(["report", *clusters, "--html", str(path), *extra], out, err)
    return code, err.getvalue()


def write(path: Path, data: bytes = b"<!DOCTYPE html>\n" + REPORT_MARK, *, force: bool = False) -> None:
    write_file(str(path), data, marker=REPORT_MARK, force=force)


def state(path: Path) -> tuple[int, int, int, int, bytes | None]:
    """What must not change about a thing gpulabel leaves alone: inode, owner, mode, links, content."""
    st_ = path.lstat()
    content = path.read_bytes() if stat.S_ISREG(st_.st_mode) else None
    return st_.st_ino, st_.st_uid, st_.st_mode, st_.st_nlink, content


def test_a_new_file_is_created_with_no_temporary_left(tmp_path: Path) -> None:
    write(tmp_path / "a.html")
    assert (tmp_path / "a.html").read_bytes().endswith(REPORT_MARK)
    assert [p.name for p in tmp_path.iterdir()] == ["a.html"]
    assert stat.S_IMODE((tmp_path / "a.html").stat().st_mode) == 0o644


def test_a_page_gpulabel_wrote_is_replaced_keeping_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "a.html"
    target.write_bytes(OWN)
    target.chmod(0o600)
    assert report_to(target) == (0, "")
    assert target.read_bytes().startswith(b"<!DOCTYPE html>") and target.read_bytes() != OWN
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["a.html"]


def test_a_file_gpulabel_did_not_write_is_refused_and_untouched(tmp_path: Path) -> None:
    target = tmp_path / "notes.html"
    target.write_bytes(b"my own notes\n")
    before = state(target)
    code, err = report_to(target)
    assert (code, err) == (
        2,
        f"gpulabel: {target}: cannot write: exists and was not written by gpulabel; not replaced without --force\n",
    )
    assert state(target) == before


def test_force_replaces_a_file_gpulabel_did_not_write(tmp_path: Path) -> None:
    target = tmp_path / "notes.html"
    target.write_bytes(b"my own notes\n")
    assert report_to(target, "--force") == (0, "")
    assert REPORT_MARK in target.read_bytes()


@pytest.mark.parametrize("force", [False, True])
def test_a_hard_linked_file_is_refused_both_names_keep_their_content(tmp_path: Path, force: bool) -> None:
    target, other = tmp_path / "a.html", tmp_path / "b.html"
    target.write_bytes(OWN)
    os.link(target, other)
    before = state(target)
    code, err = report_to(target, *(["--force"] if force else []))
    assert code == 2 and err.endswith("has 2 hard links; not replaced (a write would reach every name)\n")
    assert state(target) == before and other.read_bytes() == OWN


def _report_under_file_size_limit(target: Path, limit: int) -> subprocess.CompletedProcess[str]:
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    argv = [sys.executable, "-m", "gpulabel", "report", "--snapshot", DRIFTED, "--html", str(target)]
    return subprocess.run(argv, preexec_fn=limited, capture_output=True, text=True, timeout=120, check=False)


def test_a_write_cut_off_by_ulimit_f_leaves_the_old_file_exactly_as_it_was(tmp_path: Path) -> None:
    target = tmp_path / "a.html"
    target.write_bytes(OWN)
    before = state(target)
    done = _report_under_file_size_limit(target, 4096)  # the page is ~28 KB
    assert (done.returncode, done.stderr) == (2, f"gpulabel: {target}: cannot write: File too large\n")
    assert state(target) == before
    assert [p.name for p in tmp_path.iterdir()] == ["a.html"]  # the temporary file is gone


def test_a_hard_link_under_ulimit_f_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    target, other = tmp_path / "a.html", tmp_path / "b.html"
    target.write_bytes(OWN)
    os.link(target, other)
    done = _report_under_file_size_limit(target, 4096)
    assert done.returncode == 2 and "hard links" in done.stderr
    assert target.read_bytes() == OWN and other.read_bytes() == OWN


@pytest.mark.skipif(os.geteuid() != 0, reason="root's > writes a mode 0444 file; only root can show the difference")
def test_as_root_a_read_only_file_is_refused_without_force(tmp_path: Path) -> None:
    target = tmp_path / "a.html"
    target.write_bytes(OWN)
    target.chmod(0o444)
    before = state(target)
    code, err = report_to(target)
    assert (code, err) == (
        2,
        f"gpulabel: {target}: cannot write: read-only file (mode 0444); not replaced without --force\n",
    )
    assert state(target) == before
    assert report_to(target, "--force") == (0, "")
    assert stat.S_IMODE(target.stat().st_mode) == 0o444 and REPORT_MARK in target.read_bytes()


def _as_nobody(path: Path, force: bool) -> str:
    """Run ``write_file`` in a child process that became the unprivileged user; its error (or "")."""
    read, written = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        message = ""
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            write(path, force=force)
        except InputError as err:
            message = str(err)
        except BaseException as err:
            message = f"unexpected {err!r}"
        os.write(written, message.encode())
        os._exit(0)
    os.close(written)
    with os.fdopen(read, "rb") as fh:
        message = fh.read().decode()
    os.waitpid(pid, 0)
    return message


@pytest.mark.skipif(os.geteuid() != 0, reason="becoming another user needs root")
@pytest.mark.parametrize("mode", [0o444, 0o644])
@pytest.mark.parametrize("force", [False, True])
def test_an_unprivileged_user_cannot_replace_a_root_owned_file_in_a_directory_it_can_write(
    mode: int, force: bool
) -> None:
    import shutil
    import tempfile

    shared = Path(tempfile.mkdtemp(prefix="gpulabel-shared-", dir="/tmp"))  # pytest's tmp_path is root's alone
    shared.chmod(0o777)  # no sticky bit: rename over root's file would succeed, > would not
    try:
        _unprivileged_over(shared, mode, force)
    finally:
        shutil.rmtree(shared)


def _unprivileged_over(shared: Path, mode: int, force: bool) -> None:
    target = shared / "a.html"
    target.write_bytes(OWN)
    target.chmod(mode)
    before = state(target)
    message = _as_nobody(target, force)
    assert message == f"{target}: cannot write: permission denied (the shell's > would fail too); not replaced"
    assert state(target) == before
    assert [p.name for p in shared.iterdir()] == ["a.html"]


def test_a_symlink_to_a_page_gpulabel_wrote_is_followed_and_stays_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real.html"
    real.write_bytes(OWN)
    link = tmp_path / "link.html"
    link.symlink_to(real)
    assert report_to(link) == (0, "")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes().startswith(b"<!DOCTYPE html>") and real.read_bytes() != OWN


def test_a_symlink_to_someone_elses_file_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "passwd"
    real.write_bytes(b"root:x:0:0\n")
    link = tmp_path / "link.html"
    link.symlink_to(real)
    before = state(real)
    code, err = report_to(link)
    assert code == 2 and err.endswith("exists and was not written by gpulabel; not replaced without --force\n")
    assert state(real) == before and link.is_symlink()


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link.html"
    link.symlink_to(tmp_path / "made.html")
    write(link)
    assert link.is_symlink() and REPORT_MARK in (tmp_path / "made.html").read_bytes()


def test_a_fifo_is_refused_at_once_and_stays_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code, err = report_to(fifo)  # no reader: writing through would wait forever
    assert (code, err) == (
        2,
        f"gpulabel: {fifo}: cannot write: not a regular file (a FIFO); not written (- is stdout)\n",
    )
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a character device needs root")
def test_a_character_device_is_refused_and_stays_a_device(tmp_path: Path) -> None:
    zero = tmp_path / "zero"
    os.mknod(zero, 0o666 | stat.S_IFCHR, os.makedev(1, 5))  # the same device as /dev/zero
    code, err = report_to(zero)
    assert code == 2 and err.endswith("not a regular file (a device); not written (- is stdout)\n")
    assert zero.lstat().st_rdev == os.makedev(1, 5)


def test_dev_full_is_refused_in_one_line() -> None:
    code, err = report_to(Path("/dev/full"))
    assert (code, err) == (
        2,
        "gpulabel: /dev/full: cannot write: not a regular file (a device); not written (- is stdout)\n",
    )


def test_dev_null_is_accepted_and_keeps_nothing() -> None:
    assert report_to(Path("/dev/null")) == (0, "")
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


def test_a_directory_and_a_socket_are_refused_and_left_alone(tmp_path: Path) -> None:
    import socket

    with pytest.raises(InputError, match="cannot write: Is a directory"):
        write(tmp_path)
    where = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(where))
        with pytest.raises(InputError, match=r"not a regular file; not written \(- is stdout\)"):
            write(where)
        assert stat.S_ISSOCK(where.lstat().st_mode)


def test_a_symlink_loop_is_one_error(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(InputError, match="too many levels of symbolic links"):
        write(loop)
    assert loop.is_symlink()


def test_data_without_its_marker_is_a_bug_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="generator marker"):
        write_file(str(tmp_path / "x"), b"no mark", marker=REPORT_MARK)
    assert list(tmp_path.iterdir()) == []


# -- the property: every writer against random pre-existing targets --------------------------------------

KINDS = ("absent", "own", "foreign", "linked", "read-only", "foreign-owned", "symlink-own", "symlink-foreign", "fifo")


@dataclass(frozen=True)
class Writer:
    """A command that writes a file, as it calls ``write_file``: its mark, whether it has ``--force``, its mode."""

    mark: bytes
    force: bool = True
    mode: int | None = None


WRITERS = {
    "report": Writer(REPORT_MARK),  # through the command line
    "report --cluster": Writer(REPORT_MARK),  # the fleet page, through the command line
    "snapshot": Writer(SNAPSHOT_MARK),
    "snapshot --bundle": Writer(BUNDLE_MARK),
    "kubeconfig": Writer(KUBECONFIG_MARK, force=False, mode=0o600),
    "monitor --dump": Writer(DUMP_MARK, force=False),
}
# every call of write_file in src/gpulabel, by file: a new writer fails test_every_writer_is_in_the_property
CALLERS = {
    "app/report.py": 1,
    "app/fleetreport.py": 1,
    "app/snapshot.py": 2,
    "app/kubeconfig.py": 1,
    "controller/findings_out.py": 1,
}


def test_every_writer_is_in_the_property() -> None:
    src = Path(__file__).parents[2] / "src" / "gpulabel"
    import re

    found = {}
    for path in src.rglob("*.py"):
        n = len(re.findall(r"^\s+write_file\(", path.read_text(), re.MULTILINE))  # a call, not its def or a doc
        if n:
            found[str(path.relative_to(src))] = n
    assert found == CALLERS


def _make(tmp: Path, kind: str, mark: bytes) -> Path:
    target = tmp / "out"
    own = b"{\n" + mark + b"\n}\n"
    if kind == "absent":
        return target
    if kind == "fifo":
        os.mkfifo(target)
    elif kind.startswith("symlink"):
        real = tmp / "real"
        real.write_bytes(own if kind == "symlink-own" else b"someone's data\n")
        target.symlink_to(real)
    else:
        target.write_bytes(b"someone's data\n" if kind == "foreign" else own)
    if kind == "linked":
        os.link(target, tmp / "other")
    if kind == "read-only":
        target.chmod(0o444)
    if kind == "foreign-owned" and os.geteuid() == 0:
        os.chown(target, NOBODY, NOBODY)
    return target


def _snapshot(tmp: Path) -> dict[str, tuple[int, int, int, int, bytes | None]]:
    return {p.name: state(p) for p in tmp.iterdir()}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(KINDS), writer=st.sampled_from(sorted(WRITERS)), force=st.booleans())
def test_nothing_gpulabel_did_not_create_is_modified(
    tmp_path_factory: pytest.TempPathFactory, kind: str, writer: str, force: bool
) -> None:
    tmp = tmp_path_factory.mktemp("prop")
    spec = WRITERS[writer]
    mark = spec.mark
    force = force and spec.force  # a command without --force never forces
    target = _make(tmp, kind, mark)
    before = _snapshot(tmp)
    data = b"{\n" + mark + b"\n}\n" + b"new\n"
    try:
        if writer in ("report", "report --cluster"):
            to = report_to if writer == "report" else fleet_report_to
            code, _ = to(target, *(["--force"] if force else []))
            wrote = code == 0
        else:
            write_file(str(target), data, marker=mark, force=force, mode=spec.mode)
            wrote = True
    except InputError as err:
        assert "\n" not in str(err)
        wrote = False
    after = _snapshot(tmp)
    foreign = kind in ("foreign", "symlink-foreign")  # content gpulabel did not write
    read_only_as_root = kind == "read-only" and os.geteuid() == 0
    # a page gpulabel wrote owned by another user: root replaces it keeping that owner (checked below)
    may_write = kind in ("absent", "own", "symlink-own", "foreign-owned") or (force and (foreign or read_only_as_root))
    assert wrote == may_write, (kind, force)
    if not wrote:
        assert after == before  # inode, owner, mode, links and content of every name
        return
    written = tmp / ("real" if kind.startswith("symlink") else "out")
    assert mark in written.read_bytes()[:4096]
    if kind != "absent":
        old = before[written.name]
        now = after[written.name]
        mode = old[2] if spec.mode is None else stat.S_IFREG | spec.mode  # kubeconfig: always 0600
        assert (now[1], now[2]) == (old[1], mode)  # owner and mode kept; only the content is new
    assert set(after) == set(before) | {"out"}  # no temporary file left


def test_a_bundle_replaces_a_bundle_gpulabel_wrote_and_nothing_else(tmp_path: Path) -> None:
    from gpulabel.cluster.bundle import BUNDLE_MARK, make_bundle
    from gpulabel.model.evidence import Evidence

    data, _ = make_bundle({"apiVersion": "v1", "kind": "List", "items": []}, Evidence())
    assert BUNDLE_MARK in data[:64]  # the gzip header's file name, before the compressed bytes
    path = tmp_path / "b.tar.gz"
    write_file(str(path), data, marker=BUNDLE_MARK)
    write_file(str(path), data, marker=BUNDLE_MARK)  # its own bundle: replaced
    theirs = tmp_path / "theirs.tar.gz"
    theirs.write_bytes(b"\x1f\x8b\x08\x00somebody else's archive")
    before = state(theirs)
    with pytest.raises(InputError):
        write_file(str(theirs), data, marker=BUNDLE_MARK)
    assert state(theirs) == before
