"""A fleet of clusters: the monitor's cluster label, the members, ``check`` and ``report`` over several clusters."""

from __future__ import annotations

import pytest

from gpulabel.app.fleet import refuse_bad_cluster_name
from gpulabel.errors import InputError


def test_the_monitor_labels_every_series_with_its_cluster_name() -> None:
    from gpulabel.controller.monitor_metrics import MonitorMetrics

    plain = MonitorMetrics().render().decode()
    named = MonitorMetrics(cluster="gpu-east").render().decode()
    samples = [line for line in named.splitlines() if line and not line.startswith("#")]
    assert len(samples) >= 10
    assert all('cluster="gpu-east"' in line for line in samples), samples
    assert "cluster=" not in plain
    # the same series otherwise
    assert len(samples) == len([line for line in plain.splitlines() if line and not line.startswith("#")])


@pytest.mark.parametrize("name", ["", "-a", "a b", 'a"b', "x" * 64, "a/b"])
def test_a_bad_cluster_name_is_refused_in_one_line(name: str) -> None:
    with pytest.raises(InputError, match=r"--cluster-name: .* is not a cluster name"):
        refuse_bad_cluster_name(name)


def test_monitor_refuses_a_bad_cluster_name_before_reading_anything() -> None:
    from gpulabel.app.monitor import MonitorOptions

    with pytest.raises(InputError, match="--cluster-name"):
        MonitorOptions(metrics_port=None, cluster_name="a b")
    assert MonitorOptions(metrics_port=None, cluster_name="lab-1").cluster_name == "lab-1"


# -- check and report over several clusters ---------------------------------------------------------

import io  # noqa: E402
import json  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import jsonschema  # noqa: E402

from gpulabel.app.fleet import Member, in_parallel  # noqa: E402
from gpulabel.app.session import Source  # noqa: E402
from gpulabel.cli.main import main  # noqa: E402
from gpulabel.errors import ClusterError  # noqa: E402
from tests.unit.test_report import page_data  # noqa: E402

ROOT = Path(__file__).parents[2]
LAB = str(ROOT / "examples" / "lab-cluster.yaml")
DRIFTED = str(ROOT / "examples" / "drifted-lab.yaml")
HEALTH = str(ROOT / "examples" / "gpu-health.yaml")
SCHEMA = json.loads((ROOT / "docs" / "schema" / "gpulabel-v1.json").read_text())


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _undated(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k != "generated"}


def test_the_fleet_reports_sections_are_the_single_cluster_reports() -> None:
    code, page, err = run("report", "--cluster", f"lab={LAB}", "--cluster", f"drifted={DRIFTED}", "--html", "-")
    assert (code, err) == (0, "")
    fleet = page_data(page)
    assert [c["name"] for c in fleet["clusters"]] == ["lab", "drifted"]
    for c, path in zip(fleet["clusters"], (LAB, DRIFTED), strict=True):
        code, single, err = run("report", "--snapshot", path, "--html", "-")
        assert (code, err) == (0, "")
        assert _undated(c["doc"]) == _undated(page_data(single)), c["name"]
    # the per-cluster header cards are the single pages' cards
    assert page.count('<nav class="summary">') == 2
    assert 'href="#cluster=drifted"' in page and 'data-cluster="drifted" hidden' in page


def test_the_fleet_summary_counts_what_check_counts_per_cluster() -> None:
    from collections import Counter

    code, page, _ = run("report", "--cluster", f"drifted={DRIFTED}", "--cluster", f"health={HEALTH}", "--html", "-")
    assert code == 0
    rows = {r["cluster"]: r for r in page_data(page)["fleet"]}
    for name, path in (("drifted", DRIFTED), ("health", HEALTH)):
        doc = json.loads(run("check", "--snapshot", path, "-o", "json")[1])
        row = rows[name]
        severities = Counter(f["severity"] for f in doc["findings"])
        assert row["findings"] == {s: severities.get(s, 0) for s in ("error", "warning", "info")}, name
        _, text, _ = run("check", "--snapshot", path, "-o", "wide")
        causes = [line for line in text.splitlines() if line.startswith("cause ")]
        assert row["causes"] == causes[:3] and row["more_causes"] == max(len(causes) - 3, 0), name
        assert row["gpus_lost"] == sum(c["gpus"] or 0 for c in doc.get("causes", [])), name
    assert rows["drifted"]["gpu_nodes"] == 3 and rows["drifted"]["findings"]["error"] > 0 and rows["drifted"]["causes"]
    assert rows["health"]["gpus_unhealthy"] > 0


def test_check_over_two_clusters_is_a_list_of_their_envelopes() -> None:
    code, out, _ = run("check", "--cluster", f"lab={LAB}", "--cluster", f"drifted={DRIFTED}", "-o", "json")
    doc = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    assert (doc["apiVersion"], doc["kind"]) == ("gpulabel/v1", "List")
    codes = []
    for item, path, name in zip(doc["items"], (LAB, DRIFTED), ("lab", "drifted"), strict=True):
        single_code, single, _ = run("check", "--snapshot", path, "-o", "json")
        codes.append(single_code)
        assert item["cluster"] == name
        assert {k: v for k, v in item.items() if k != "cluster"} == json.loads(single)
    assert code == max(codes) == 1  # the drifted lab has errors: the worst cluster's exit code
    broken = {**doc, "items": [{k: v for k, v in doc["items"][0].items() if k != "cluster"}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, SCHEMA)  # an item names its cluster


def test_check_over_two_clusters_in_text_leads_every_line_with_its_cluster() -> None:
    _, out, _ = run("check", "--cluster", f"lab={LAB}", "--cluster", f"drifted={DRIFTED}")
    _, single, _ = run("check", "--snapshot", DRIFTED)
    lines = out.splitlines()
    assert [line.removeprefix("drifted: ") for line in lines if line.startswith("drifted: ")] == single.splitlines()
    assert all(line.startswith(("lab: ", "drifted: ")) for line in lines if line)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--cluster", "lab"], "gpulabel: --cluster: 'lab' is not NAME=SNAPSHOT\n"),
        (["--cluster", "lab=/no/such.yaml"], "gpulabel: --cluster: lab: /no/such.yaml: no such file\n"),
        (["--cluster", f"a={LAB}", "--cluster", f"a={DRIFTED}"], "gpulabel: --cluster: cluster 'a' is named twice\n"),
        (["--cluster", f"a b={LAB}"], "gpulabel: --cluster: 'a b' is not a cluster name"),
        (["--snapshot", LAB, "--cluster", f"a={LAB}"], "gpulabel: --snapshot: not with --cluster"),
        (["--context", "x", "--context", "x"], "gpulabel: --context: cluster 'x' is named twice\n"),
    ],
)
@pytest.mark.parametrize("command", [["check"], ["report", "--html", "-"]])
def test_bad_fleet_input_is_one_line(command: list[str], argv: list[str], said: str) -> None:
    code, out, err = run(*command, *argv)
    assert (code, out) == (2, "")
    assert err.startswith(said) and err.count("\n") == 1, err


def test_check_over_several_clusters_refuses_a_baseline(tmp_path: Path) -> None:
    baseline = tmp_path / "known.json"
    baseline.write_text(run("check", "--snapshot", DRIFTED, "-o", "json")[1])
    code, out, err = run("check", "--cluster", f"a={DRIFTED}", "--cluster", f"b={LAB}", "--baseline", str(baseline))
    assert (code, out, err) == (2, "", "gpulabel: --baseline: is one cluster's: not with several clusters\n")


def test_a_command_that_reads_one_cluster_refuses_two_contexts() -> None:
    code, _, err = run("audit", "--context", "a", "--context", "b")
    assert (code, err) == (
        2,
        "gpulabel: --context: given more than once: only check, report and gpus read several clusters\n",
    )


def test_members_are_read_in_parallel_at_most_workers_at_once_answers_in_order() -> None:
    members = [Member(f"c{i}", Source(snapshots=(LAB,))) for i in range(7)]
    running, most, lock = 0, 0, threading.Lock()
    together = threading.Barrier(3, timeout=10)  # the first three are read at once, however slow the machine

    def work(m: Member) -> str:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        if int(m.name[1:]) < 3:
            together.wait()  # broken (the test fails) if fewer than three run at once
        time.sleep(0.02 * (7 - int(m.name[1:])))  # the first finish last
        with lock:
            running -= 1
        return m.name

    assert in_parallel(members, work, workers=3) == [m.name for m in members]
    assert most == 3


def test_a_cluster_that_cannot_be_read_fails_the_fleet_naming_it() -> None:
    from gpulabel.app.fleet import MemberError

    members = [Member("ok", Source(snapshots=(LAB,))), Member("down", Source(context="down"))]

    def work(m: Member) -> str:
        if m.name == "down":
            raise ClusterError("https://10.0.0.1:6443", "connection refused")
        return m.name

    with pytest.raises(MemberError, match=r"^cluster down: https://10.0.0.1:6443: connection refused$") as caught:
        in_parallel(members, work)
    assert caught.value.exit_code == 2
