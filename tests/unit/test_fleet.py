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
