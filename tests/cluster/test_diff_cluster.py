"""``gpulabel diff SNAPSHOT`` against the live cluster: what changed since the snapshot was taken."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from gpulabel_run import gpulabel
from labcluster_support import LabCluster


def test_a_snapshot_against_the_live_cluster_names_the_label_changed_since(
    labcluster: LabCluster, make_node: Any, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex[:6]
    name = f"diff-{tag}"
    # Ready first: kwok makes a new node Ready and the node lifecycle controller then lifts its not-ready
    # taint; a snapshot taken before that would also differ from the cluster by that taint
    make_node(name, {"diff-test": tag, "zone": "a"})
    snapshot = tmp_path / "before.json"
    snapshot.write_text(labcluster.kubectl("get", "nodes", "-l", f"diff-test={tag}", "-o", "json").stdout)
    labcluster.kubectl("label", "node", name, "zone=b", "--overwrite")
    labcluster.kubectl("label", "node", name, "extra=1")
    done = gpulabel(labcluster.kubeconfig, "diff", str(snapshot), "-l", f"diff-test={tag}")
    assert (done.returncode, done.stderr) == (1, "")
    assert done.stdout.splitlines() == [f"{name} extra (absent) -> 1", f"{name} zone a -> b"]
