"""Offline is offline: a bundle's recorded read errors are said as recorded at capture time, never as a failure of
the offline run; ``snapshot --bundle`` takes only an archive's name; the capture's progress line is on stderr."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpulabel.app.evidence import RECORDED
from gpulabel.cli.main import main
from gpulabel.cluster.bundle import make_bundle
from gpulabel.model.evidence import Evidence
from tests.objects import kubeconfig as kubeconfig_file

DRIFTED = Path(__file__).parents[2] / "examples" / "drifted-lab.yaml"
# what a capture without the pods/log right records (cluster/evidence.py's line for a 403)
FORBIDDEN = 'pods/log: 403 pods "nvidia-container-toolkit-daemonset-x7k2p" is forbidden'


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def refused_bundle(tmp_path: Path) -> str:
    snapshot: dict[str, Any] = {"apiVersion": "v1", "kind": "List", "items": []}
    for doc in yaml.safe_load_all(DRIFTED.read_text()):
        snapshot["items"].extend(doc["items"] if doc.get("kind") == "List" else [doc])
    data, _ = make_bundle(snapshot, Evidence(unread=(FORBIDDEN,)))
    path = tmp_path / "support.tar.gz"
    path.write_bytes(data)
    return str(path)


def test_a_bundles_recorded_read_error_is_said_as_recorded_at_capture_time(refused_bundle: str) -> None:
    code, _, err = run("check", "--snapshot", refused_bundle)
    assert code == 1
    assert err.splitlines() == [f"gpulabel: evidence: {FORBIDDEN} {RECORDED}"]


def test_explain_from_the_bundle_labels_what_was_not_read_the_same_way(refused_bundle: str) -> None:
    _, out, _ = run("explain", "node/lab-node-0", "--snapshot", refused_bundle)
    said = [line.strip() for line in out.splitlines() if "not read:" in line]
    assert said == [f"not read: {FORBIDDEN} {RECORDED}"], out


@pytest.mark.parametrize("name", ["support.json", "support.tar", "support"])
def test_a_bundle_named_as_something_else_is_refused_before_the_cluster_is_asked(name: str) -> None:
    code, out, err = run("snapshot", "--bundle", name, "--kubeconfig", "/nonexistent/kubeconfig")
    assert (code, out) == (2, "")
    assert err == (
        f"gpulabel: --bundle {name}: a bundle is a gzipped tar archive: name it {name}.tar.gz\n"
    )  # not the kubeconfig's error: nothing was read


def test_the_capture_progress_line_is_on_stderr_and_stdout_holds_only_the_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    import json

    from gpulabel.cluster.client import KubeClient
    from tests.unit.test_progress import PagedServer

    config = kubeconfig_file(tmp_path)
    monkeypatch.setattr(KubeClient, "request_raw", PagedServer({"nodes": 3, "pods": 1}, limit=2))
    code = main(["snapshot", "--progress", "--kubeconfig", config])
    out, err = capfd.readouterr()
    assert code == 0
    assert json.loads(out)["generator"] == "gpulabel"  # stdout: the document alone
    progress = [line for line in err.splitlines() if line.startswith("snapshot: Node")]
    assert progress and progress[-1].startswith("snapshot: Node 3 object(s), 2 page(s); kind 1/"), err
