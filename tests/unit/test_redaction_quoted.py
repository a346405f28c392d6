"""Redaction of what checks quote from the cluster besides logs and Events (issue 47 item 5): a node condition's
message (health), a pod's PodScheduled message (the scheduler's text pending quotes), a Kueue Workload condition's
message (explain workload), a ResourceClaim device condition's message (health) and a DRA CEL error (it quotes
the expression). Each place gets the same planted secrets (a registry password in a URL's userinfo, ``--password
X`` inside ``sh -c '...'``, a value under a key naming a secret) and is grepped in the output a user pastes:
``check -o wide``/``-o json``, ``pending``, ``explain`` and a support bundle. The twin: ordinary messages of the
same places are shown verbatim."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from bench import draobjects as dra

from gpulabel.cli.main import main
from gpulabel.cluster.bundle import make_bundle
from gpulabel.model.redaction import REDACTED
from tests.objects import as_list
from tests.unit.test_health import condition, node, not_ready, pod

ROOT = Path(__file__).parents[2]
SECRETS = ("pl4nted-url-password", "pl4nted-shell-flag", "pl4nted-key-value")
PLANTED = (
    f"pulling https://ci:{SECRETS[0]}@registry.example.com/v2 failed; sh -c 'login --password {SECRETS[1]}'; "
    f"example.com/secret-token={SECRETS[2]}"
)
CEL_SECRET = "pl4nted-in-expression"
A = f'device.attributes["{dra.DRIVER}"]'

# what the same places say in an ordinary cluster (each shown verbatim)
ORDINARY = {
    "node": "GPU has fallen off the bus",
    "pod": "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: "
    "1 No preemption victims found for incoming pod.",
    "claim": "device reset failed",
    "workload": "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor "
    "h100-80gb, 4 more needed",
    "cel": f'{A}.productName == "NVIDIA A100-SXM4-80GB" && device.nope',
}


def _pending(message: str) -> dict[str, Any]:
    """A Pending pod asking for more GPUs than any node has, with the scheduler's ``message``."""
    limits = {"nvidia.com/gpu": "16"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "wait-0", "namespace": "ml"},
        "spec": {"containers": [{"name": "c", "resources": {"limits": limits, "requests": limits}}]},
        "status": {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}],
        },
    }


def _cluster(said: dict[str, str]) -> dict[str, Any]:
    """One GPU node whose XID condition, claim device condition, a Pending pod and a DRA claim whose selector does
    not compile say ``said``'s texts."""
    claim = not_ready("gpu-1")
    claim["status"]["devices"][0]["conditions"][0]["message"] = said["claim"]
    selector = dra.exactly("gpu.nvidia.com", said["cel"])
    cel = dra.claim("cel", dra.claim_spec([dra.request("r", selector)]), namespace="ml")
    cel_pod = {**dra.dra_pod("cel-0", [("gpu", "claim", "cel")], namespace="ml"), "status": {"phase": "Pending"}}
    devices = [dra.gpu_device("gpu-0", 0, dra.GPUS[0], "550.54.15")]
    return as_list(
        node(conditions=[condition("XIDErrors", "True", reason="XID79", message=said["node"])]),
        pod("train-0", "Healthy"),
        claim,
        _pending(said["pod"]),
        dra.resource_slice("gpu-1", devices, node="gpu-1"),
        dra.GPU_CLASS,
        cel,
        cel_pod,
    )


LEAKY = {
    "node": PLANTED,
    "pod": f"0/1 nodes are available: {PLANTED}",
    "claim": PLANTED,
    "cel": f'{A}.registry == "https://ci:{CEL_SECRET}@registry.example.com" && device.nope',
}


def run(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue() + err.getvalue()


def _snapshot(tmp_path: Path, doc: dict[str, Any]) -> str:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    return str(path)


# (command, the places it quotes)
SHOWN = [
    (("check", "-o", "wide"), ("node", "claim", "pod", "cel")),
    (("check", "-o", "json"), ("node", "claim", "cel")),  # a pending pod's row (the scheduler's text) is not in it
    (("pending",), ("pod",)),
    (("pending", "-o", "wide"), ("pod", "cel")),
    (("explain", "node/gpu-1"), ("node", "claim")),
]


def _assert_redacted(shown: str, places: tuple[str, ...], what: str) -> None:
    for secret in (*SECRETS, CEL_SECRET):
        assert secret not in shown, (what, secret)
    # the evidence is there, its names kept: the flag, the URL's user, the key
    assert "--password <redacted>" in shown and "example.com/secret-token=<redacted>" in shown, what
    assert "https://ci:<redacted>@registry.example.com" in shown, what
    if "cel" in places:
        assert "undefined field 'nope'" in shown, what


@pytest.mark.parametrize(("argv", "places"), SHOWN, ids=[" ".join(a) for a, _ in SHOWN])
def test_no_planted_secret_in_a_quoted_message_is_shown(
    tmp_path: Path, argv: tuple[str, ...], places: tuple[str, ...]
) -> None:
    _, shown = run(*argv, "--snapshot", _snapshot(tmp_path, _cluster(LEAKY)))
    _assert_redacted(shown, places, " ".join(argv))


@pytest.mark.parametrize(("argv", "places"), SHOWN, ids=[" ".join(a) for a, _ in SHOWN])
def test_ordinary_quoted_messages_are_shown_as_the_cluster_wrote_them(
    tmp_path: Path, argv: tuple[str, ...], places: tuple[str, ...]
) -> None:
    _, shown = run(*argv, "--snapshot", _snapshot(tmp_path, _cluster(ORDINARY)))
    assert REDACTED not in shown
    for place in places:
        said = ORDINARY[place]
        # JSON escapes the expression's quotes; the wide line shows the compile error's newlines as \n
        assert said in shown or json.dumps(said)[1:-1] in shown, (argv, place)


def _kueue_lab(message: str) -> dict[str, Any]:
    doc = yaml.safe_load((ROOT / "examples" / "kueue-lab.yaml").read_text())
    wl = next(o for o in doc["items"] if o["kind"] == "Workload" and o["metadata"]["name"] == "job-llm-ft-5b8f2")
    wl["status"]["conditions"][0]["message"] = message
    return doc  # type: ignore[no-any-return]


def test_explain_workload_quotes_kueues_condition_message_redacted(tmp_path: Path) -> None:
    _, shown = run("explain", "workload/ml/job-llm-ft-5b8f2", "--snapshot", _snapshot(tmp_path, _kueue_lab(PLANTED)))
    _assert_redacted(shown, ("workload",), "explain workload")
    _, shown = run(
        "explain", "workload/ml/job-llm-ft-5b8f2", "--snapshot", _snapshot(tmp_path, _kueue_lab(ORDINARY["workload"]))
    )
    assert f"QuotaReserved=True (QuotaReserved: {ORDINARY['workload']})" in shown and REDACTED not in shown


def test_a_bundle_of_the_leaky_cluster_holds_none_and_shows_none(tmp_path: Path) -> None:
    """``snapshot --bundle`` redacts every string of the capture (cluster/redact.py): the archive holds none of
    the planted secrets, and ``check -o wide`` from it shows none."""
    from gpulabel.model.evidence import Evidence

    data, _ = make_bundle(_cluster(LEAKY), Evidence((), ()))
    raw = gzip.decompress(data)
    for secret in (*SECRETS, CEL_SECRET):
        assert secret.encode() not in raw, secret
    path = tmp_path / "b.tar.gz"
    path.write_bytes(data)
    _, shown = run("check", "-o", "wide", "--snapshot", str(path))
    _assert_redacted(shown, ("node", "claim", "pod", "cel"), "check -o wide --snapshot bundle")


def test_the_claim_read_is_not_changed_and_an_ordinary_claim_is_kept_as_read() -> None:
    from gpulabel.model.cluster import KIND

    read = KIND["ResourceClaim"].read
    leaky = not_ready("gpu-1")
    leaky["status"]["devices"][0]["conditions"][0]["message"] = PLANTED
    _, kept = read(leaky, "s")
    assert leaky["status"]["devices"][0]["conditions"][0]["message"] == PLANTED  # the object read is the caller's
    assert kept["status"]["devices"][0]["conditions"][0]["message"].count(REDACTED) == 3
    ordinary = not_ready("gpu-1")
    assert read(ordinary, "s")[1] is ordinary  # nothing to redact: no copy
