"""sync and isolate refuse bad options in one line, exit 2, before anything is contacted or started."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from gpulabel.cli.main import main


@pytest.fixture(autouse=True)
def nothing_is_contacted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building the API client or starting the metrics server fails the test."""
    import gpulabel.cluster.client
    import gpulabel.controller.metrics

    def contacted(*args: object, **kwargs: object) -> None:
        raise AssertionError("contacted the cluster or started a server before refusing the options")

    monkeypatch.setattr(gpulabel.cluster.client.KubeClient, "__init__", contacted)
    monkeypatch.setattr(gpulabel.controller.metrics, "serve", contacted)


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("options", "line"),
    [
        (["--watch", "--dry-run"], "--dry-run: cannot be combined with --watch (a dry run is one pass)"),
        (["--resync-period", "60"], "--resync-period: only applies with --watch"),
        (["--leader-elect"], "--leader-elect: only applies with --watch"),
        (["--metrics-port", "9090"], "--metrics-port: only applies with --watch"),
        (["--identity", "me"], "--identity: only applies with --leader-elect"),
        (["--watch", "--identity", "me"], "--identity: only applies with --leader-elect"),
        (["--watch", "--lease-namespace", "ns"], "--lease-namespace: only applies with --leader-elect"),
        (["--watch", "--lease-name", "l"], "--lease-name: only applies with --leader-elect"),
        (["--watch", "--resync-period", "0"], "--resync-period: must be a positive number of seconds, not 0"),
        (["--watch", "--resync-period", "-5"], "--resync-period: must be a positive number of seconds, not -5"),
        (["--watch", "--resync-period", "nan"], "--resync-period: must be a positive number of seconds, not nan"),
        (["--watch", "--metrics-port", "0"], "--metrics-port: must be a port from 1 to 65535, not 0"),
        (["--watch", "--metrics-port", "70000"], "--metrics-port: must be a port from 1 to 65535, not 70000"),
        (["--watch", "--leader-elect", "--identity", " "], "--identity: must not be empty"),
        (["--watch", "--leader-elect", "--lease-name", ""], "--lease-name: must not be empty"),
        (["--snapshot", "x.yaml"], "--snapshot: only with --dry-run: sync writes to a live cluster"),
    ],
    ids=[
        "watch with a dry run is refused",
        "a resync period without watch is refused",
        "leader election without watch is refused",
        "a metrics port without watch is refused",
        "an identity without leader election is refused",
        "an identity with watch but without leader election is refused",
        "a lease namespace without leader election is refused",
        "a lease name without leader election is refused",
        "a zero resync period is refused",
        "a negative resync period is refused",
        "a resync period that is not a number is refused",
        "port zero is refused",
        "a port above 65535 is refused",
        "a blank identity is refused",
        "an empty lease name is refused",
        "a snapshot without a dry run is refused",
    ],
)
def test_sync_refuses_an_option_without_the_one_it_needs(tmp_path: Path, options: list[str], line: str) -> None:
    assert run("sync", str(tmp_path), *options) == (2, "", f"gpulabel: {line}\n")


def test_sync_offers_no_namespace(tmp_path: Path) -> None:
    """Nodes have no namespace: -n is not a sync option, before or after the command name."""
    assert run("-n", "kube-system", "sync", str(tmp_path)) == (2, "", "gpulabel: -n: not used by sync\n")
    assert run("sync", str(tmp_path), "-n", "kube-system") == (2, "", "gpulabel: -n: not used by sync\n")


def test_sync_checks_the_options_before_the_directory(tmp_path: Path) -> None:
    code, _, err = run("sync", str(tmp_path / "missing"), "--leader-elect")
    assert (code, err) == (2, "gpulabel: --leader-elect: only applies with --watch\n")


def test_sync_refuses_a_missing_directory(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    assert run("sync", str(missing)) == (2, "", f"gpulabel: {missing}: not a directory of <node>.env feature files\n")


def test_the_defaults_of_watch_options_are_filled_in_after_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A complete --watch --leader-elect gets past the check (and then to the client, refused here)."""
    from gpulabel.app.sync import SyncOptions

    monkeypatch.setenv("POD_NAMESPACE", "ops")
    opts = SyncOptions(directory=str(tmp_path), watch=True, leader_elect=True)
    assert (opts.resync_period, opts.lease_namespace, opts.lease_name) == (300.0, "ops", "gpulabel-sync")
    assert opts.identity


def test_a_valid_watch_command_reaches_the_client(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="contacted the cluster"):
        run("sync", str(tmp_path), "--watch", "--leader-elect", "--resync-period", "30", "--metrics-port", "9090")


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["isolate", "gpu-a", "--snapshot", "x.yaml"],
            "--snapshot: only with --dry-run: isolate writes to a live cluster",
        ),
        (["isolate", ""], "NODE: a node name must not be empty"),
    ],
    ids=["isolate refuses a snapshot without a dry run", "isolate refuses an empty node name"],
)
def test_isolate_refuses_bad_options_before_contacting_the_cluster(argv: list[str], line: str) -> None:
    assert run(*argv) == (2, "", f"gpulabel: {line}\n")
