"""The command line: contracts scripts rely on, flags anywhere, exit codes, errors."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpulabel.cli.main import main
from gpulabel.cluster import client
from gpulabel.cluster.retry import Retrier, RetryPolicy
from tests.objects import as_list, gpu_node, node
from tests.objects import kubeconfig as kubeconfig_file

EXAMPLE = str(Path(__file__).parents[2] / "examples" / "lab-cluster.yaml")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def broken(tmp_path: Path) -> str:
    path = tmp_path / "broken.json"
    path.write_text(
        json.dumps(
            as_list(
                gpu_node("gpu-a"),
                node(
                    "gpu-b",
                    {
                        "nvidia.com/gpu.present": "true",
                        "nvidia.com/gpu.product": "NVIDIA-A10",
                        "nvidia.com/gpu.count": "two",
                    },
                ),
                node("cpu", {}),
            )
        )
    )
    return str(path)


def test_sanitize_prints_one_value_per_line() -> None:
    assert run("sanitize", "NVIDIA A100-SXM4-40GB", "Tesla T4") == (0, "NVIDIA-A100-SXM4-40GB\nTesla-T4\n", "")


def test_sanitize_gfd_predicts_gfd() -> None:
    assert run("sanitize", "--gfd", "NVIDIA-TITAN-X-(Pascal)")[1] == "NVIDIA-TITAN-X-Pascal\n"


def test_sanitize_says_when_nothing_usable_is_left_and_exits_one() -> None:
    code, out, err = run("sanitize", "()", "Tesla T4")
    assert (code, out) == (1, "\nTesla-T4\n")  # stdout keeps one line per value
    assert err == "gpulabel: sanitize: '()': no character a label value may hold\n"


def test_sanitize_gfd_says_when_gfd_writes_no_product_label() -> None:
    assert run("sanitize", "--gfd", "") == (1, "\n", "gpulabel: sanitize: '': GFD writes no product label for it\n")


def test_validate_refuses_an_argument_without_equals_before_printing_anything() -> None:
    assert run("validate", "a=b c", "foo") == (2, "", "gpulabel: foo: not KEY=VALUE (write KEY= for the empty value)\n")


def test_validate_is_silent_and_zero_when_all_are_valid() -> None:
    assert run("validate", "nvidia.com/gpu.count=4", "a=") == (0, "", "")


def test_validate_prints_one_line_per_error_and_exits_one() -> None:
    code, out, _ = run("validate", "nvidia.com/gpu.product=NVIDIA A100", "ok=1", "/x=" + "v" * 64)
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith('nvidia.com/gpu.product=NVIDIA A100: metadata.labels: Invalid value: "NVIDIA A100"')
    assert lines[1] == "/x=" + "v" * 64 + ': metadata.labels: Invalid value: "/x": prefix part must be non-empty'
    assert lines[2].endswith("must be no more than 63 bytes")


def test_audit_lines_and_exit_code(broken: str) -> None:
    code, out, _ = run("audit", "--snapshot", broken)
    assert code == 1
    assert out == "gpu-b nvidia.com/gpu.memory missing\ngpu-b nvidia.com/gpu.count not-a-number\n"


def test_audit_ok_is_a_single_line() -> None:
    assert run("audit", "--snapshot", EXAMPLE) == (0, "OK\n", "")


@pytest.mark.parametrize(
    "argv",
    [
        ["--snapshot", "{f}", "-o", "json", "audit"],
        ["audit", "--snapshot", "{f}", "-o", "json"],
        ["-o", "json", "audit", "--snapshot", "{f}"],
        ["--snapshot", "{f}", "audit", "--output=json"],
    ],
    ids=["flags before", "flags after", "split around", "long form after"],
)
def test_shared_flags_go_before_or_after_the_command(broken: str, argv: list[str]) -> None:
    code, out, _ = run(*[a.format(f=broken) for a in argv])
    assert code == 1
    doc = json.loads(out)
    assert [f["reason"] for f in doc["findings"]] == ["missing", "not-a-number"]


def test_wide_output_adds_the_explanation(broken: str) -> None:
    out = run("audit", "--snapshot", broken, "-o", "wide")[1]
    assert out.splitlines()[1] == "error gpu-b nvidia.com/gpu.count not-a-number ('two' is not a whole number)"


def test_table_output_is_for_people(broken: str) -> None:
    out = run("audit", "--snapshot", broken, "-o", "table")[1]
    assert "gpu-b" in out and "not-a-number" in out


def test_check_summarises_each_check(broken: str) -> None:
    code, out, _ = run("check", "--snapshot", broken)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("cause gpu-b gfd-labels ? GPU(s): nvidia.com/gpu.memory missing (")  # its root cause
    assert (
        next(line for line in lines if not line.startswith("cause ")) == "audit: 2 finding(s) missing=1 not-a-number=1"
    )


def test_check_on_the_example_lab() -> None:
    _, out, _ = run("check", "--snapshot", EXAMPLE)
    assert "audit: OK" in out.splitlines()


def test_sources_prints_owner_per_key() -> None:
    assert run("sources", "nvidia.com/gpu.product", "feature.node.kubernetes.io/pci-10de.present", "x") == (
        0,
        "nvidia.com/gpu.product=gpu-feature-discovery\nfeature.node.kubernetes.io/pci-10de.present=nfd-worker\n"
        "x=unknown\n",
        "",
    )


def test_sources_for_a_node_lists_its_labels_with_writers() -> None:
    code, out, _ = run("sources", "--node", "lab-node-1", "--snapshot", EXAMPLE)
    assert code == 0
    assert (
        "nvidia.com/gpu.count=gpu-feature-discovery value=2 manager=nfd-master operation=Update "
        "time=2026-11-20T09:01:00Z"
    ) in out.splitlines()


def test_sources_for_an_unknown_node_is_an_error() -> None:
    code, out, err = run("sources", "--node", "nope", "--snapshot", EXAMPLE)
    assert (code, out) == (2, "")
    assert err == "gpulabel: node nope: not found\n"


def test_a_bad_snapshot_is_one_line_and_exit_two(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "List", "items": [')
    code, out, err = run("audit", "--snapshot", str(bad))
    assert (code, out) == (2, "")
    assert err.startswith(f"gpulabel: {bad}:1: invalid JSON")
    assert err.count("\n") == 1


class VirtualTime:
    """A clock that a sleep advances: retry budgets are spent without waiting."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_an_unreachable_cluster_is_one_line_and_exit_two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    time = VirtualTime()

    def retrier(policy: RetryPolicy) -> Retrier:
        return Retrier(policy, clock=time.clock, rand=lambda: 0.0, sleep=time.sleep)

    monkeypatch.setattr(client, "Retrier", retrier)
    config = kubeconfig_file(tmp_path, "https://127.0.0.1:1")
    code, out, err = run("audit", "--kubeconfig", config)
    assert (code, out) == (2, "")
    assert err == "gpulabel: https://127.0.0.1:1: unreachable: connection refused (6 attempt(s) in 10.0 s)\n"
    # Read-only commands retry for 10 s (0.5 s doubling), then give up: here in virtual time.
    assert time.slept == [0.5, 1.0, 2.0, 4.0, 2.5]
    assert time.now == 10.0


def test_a_server_that_never_answers_is_given_up_on_within_the_budget_and_a_second(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection that neither opens nor is refused (a dropped SYN) costs its whole connect timeout; no attempt
    waits past the operation's deadline (at least 1 s), so a read command ends within 11 s, naming the wait."""
    import urllib3

    time = VirtualTime()
    waited: list[float] = []

    def retrier(policy: RetryPolicy) -> Retrier:
        return Retrier(policy, clock=time.clock, rand=lambda: 0.0, sleep=time.sleep)

    def never_answers(*args: object, connect_timeout: float = client.CONNECT_TIMEOUT, **kwargs: object) -> object:
        waited.append(connect_timeout)
        if len(waited) <= 2:  # refused at once at first (the server restarting), then its packets dropped
            raise urllib3.exceptions.NewConnectionError(None, "Failed to establish a new connection: [Errno 111] x")
        time.now += connect_timeout
        raise urllib3.exceptions.ConnectTimeoutError(None, f"timed out. (connect timeout={connect_timeout})")

    monkeypatch.setattr(client, "Retrier", retrier)
    monkeypatch.setattr(client.KubeClient, "open", never_answers)
    config = kubeconfig_file(tmp_path, "https://127.0.0.1:1")
    code, _, err = run("audit", "--kubeconfig", config)
    assert code == 2
    # refused at 0 s and 0.5 s (0.5 s, then 1 s of backoff); at 1.5 s the third attempt waits out the deadline
    assert waited == [10.0, 9.5, 8.5]  # each attempt is given what is left of the 10 s
    assert time.now == 10.0
    assert err == (
        "gpulabel: https://127.0.0.1:1: unreachable: no connection within the connect timeout (8.5 s) "
        "(3 attempt(s) in 10.0 s)\n"
    )


def test_a_missing_kubeconfig_is_one_line_and_exit_two(tmp_path: Path) -> None:
    code, _, err = run("audit", "--kubeconfig", str(tmp_path / "nope"))
    assert code == 2
    assert err.startswith(f"gpulabel: {tmp_path / 'nope'}:")


def test_the_console_scripts_are_installed() -> None:
    bindir = Path(sys.executable).parent
    for name in ("gpulabel", "kubectl-gpulabel"):
        res = subprocess.run([str(bindir / name), "sanitize", "a b"], capture_output=True, text=True, check=False)
        assert (res.returncode, res.stdout) == (0, "a-b\n")


def test_help_imports_no_cluster_client() -> None:
    code = (
        "import sys, contextlib, io\nfrom gpulabel.cli.main import main\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n    main(['--help'])\n"
        "heavy = [m for m in ('kubernetes', 'urllib3', 'yaml', 'orjson') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == ""


def test_a_100_mb_binary_snapshot_is_refused_in_one_line(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    chunk = bytes(range(256)) * 4096  # 1 MiB with NUL bytes
    with big.open("wb") as f:
        for _ in range(100):
            f.write(chunk)
    code, out, err = run("check", "--snapshot", str(big))
    assert (code, out) == (2, "")
    assert err == f"gpulabel: {big}: binary data, not JSON or YAML\n"
