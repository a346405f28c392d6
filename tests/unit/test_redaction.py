"""Redaction a reviewer would trust: the text rules, the keys that name a secret, and a planted secret in every
place evidence is shown (``check -o wide``, ``explain``, JSON and YAML, the report, the monitor's Event, stderr)
as well as in the bundle (``tests/unit/test_evidence.py`` greps the archive)."""

from __future__ import annotations

import io
import json
import tarfile
from collections import Counter
from pathlib import Path

import orjson
import pytest
import yaml

from gpulabel.cli.main import main
from gpulabel.cluster.redact import Redactor
from gpulabel.model.evidence import EventNote, Evidence, LogLine, LogTail
from gpulabel.model.redaction import REDACTED, names_secret, redact_text
from gpulabel.model.signatures import SIGNATURES
from tests.signature_lines import LINES, TWINS

ROOT = Path(__file__).parents[2]
DRIFTED = ROOT / "examples" / "drifted-lab.yaml"
TOOLKIT = "gpu-operator/nvidia-container-toolkit-daemonset-x7k2p"

# (text with a planted secret, the secret, the rule that must take it, what must stay)
PLANTED_TEXT = [
    ("sh -c 'nvidia-installer --silent --password pl4nted-sh && run'", "pl4nted-sh", "secret-flag", "--password"),
    ("pulling https://admin:pl4nted-url@registry.example.com/v2/x", "pl4nted-url", "url-password", "https://admin:"),
    ("--token pl4nted-flag --verbose", "pl4nted-flag", "secret-flag", "--verbose"),
    ('password="pl4nted quoted value" next', "pl4nted quoted", "secret-value", 'password="'),
    ('{"api_key": "pl4nted-json"}', "pl4nted-json", "secret-value", '"api_key": "'),
    ("Authorization: Basic cGw0bnRlZC1iYXNpYw==", "cGw0bnRlZC1iYXNpYw", "bearer", "Authorization: Basic"),
    ("PRIVATE_KEY=pl4nted-pk ok", "pl4nted-pk", "secret-value", "PRIVATE_KEY="),
]


@pytest.mark.parametrize(("text", "secret", "rule", "stays"), PLANTED_TEXT)
def test_each_text_rule_takes_its_secret_and_leaves_the_name(text: str, secret: str, rule: str, stays: str) -> None:
    counts: Counter[str] = Counter()
    out = redact_text(text, counts)
    assert secret not in out and REDACTED in out and stays in out
    assert counts[rule] >= 1
    assert redact_text(out) == out  # twice is once


def test_ordinary_lines_are_left_alone() -> None:
    """The table's real lines and the usual startup and Event lines carry no secret and are not touched."""
    ordinary = [
        *(line for lines in LINES.values() for line, _ in lines),
        *(line for lines in TWINS.values() for line in lines),
        'MountVolume.SetUp failed for volume "ngc-secret" : secret "ngc-secret" not found',
        'Successfully pulled image "nvcr.io/nvidia/k8s-device-plugin:v0.17.0" in 1.2s',
        "https://github.com/NVIDIA/gpu-operator/issues/266",
        "Starting nvidia-container-toolkit 1.17.3 with --runtime=containerd",
        "using image registry.example.com:5000/nvidia/driver@sha256:0123abcd",
    ]
    for line in ordinary:
        assert redact_text(line) == line, line


def test_a_key_names_a_secret_by_its_words_not_its_prefix() -> None:
    assert names_secret("example.com/password") and names_secret("secret-token") and names_secret("x/API_KEY")
    assert not names_secret("nvidia.com/gpu.product") and not names_secret("kubernetes.io/hostname")


def test_annotation_and_label_values_whose_key_names_a_secret_are_redacted_whole() -> None:
    doc = {
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "annotations": {"example.com/password": "pl4nted one", "example.com/note": "kept as is"},
            "labels": {"secret-token": "pl4nted2", "app": "nvidia-driver-daemonset"},
        },
        "spec": {"containers": [{"name": "c", "args": ["sh", "-c", "run --password pl4nted3 && x"]}]},
    }
    r = Redactor()
    out = r.redact_document(doc)
    meta = out["metadata"]
    assert meta["annotations"] == {"example.com/password": REDACTED, "example.com/note": "kept as is"}
    assert meta["labels"] == {"secret-token": REDACTED, "app": "nvidia-driver-daemonset"}
    assert out["spec"]["containers"][0]["args"] == ["sh", "-c", f"run --password {REDACTED} && x"]
    assert r.counts["secret-key-value"] == 2 and r.counts["secret-flag"] == 1
    assert "  secret-key-value: 2\n" in r.report() and "  url-password: 0\n" in r.report()


# -- every place evidence is shown, from evidence no one redacted (a live read, a hand-made bundle) ------------

LOG_SECRETS = {
    "shell": "pl4nted-in-shell",
    "url": "pl4nted-in-url",
    "event": "ghp_Pl4ntedGitHubToken0123456789ab",
    "unread": "pl4nted-in-unread",
    "panic": "pl4nted-in-panic",
}


def _leaky_evidence() -> Evidence:
    tail = LogTail(
        TOOLKIT,
        "nvidia-container-toolkit-ctr",
        previous=True,
        lines=(
            LogLine("2026-11-30T10:12:00Z", f"error running sh -c 'install --password {LOG_SECRETS['shell']}'"),
            LogLine("2026-11-30T10:12:01Z", f"failed fetching https://ci:{LOG_SECRETS['url']}@repo.example.com/x"),
            LogLine("2026-11-30T10:12:02Z", f"panic: login --token {LOG_SECRETS['panic']} refused"),
        ),
    )
    event = EventNote("Node", "", "lab-node-0", "Warning", "Leak", f"token {LOG_SECRETS['event']}", "t")
    unread = f"pods/log {TOOLKIT} other: 500 proxy https://u:{LOG_SECRETS['unread']}@proxy:3128 refused"
    return Evidence((tail,), (event,), (unread,))


def _unredacted_bundle(path: Path) -> str:
    """A bundle as an older gpulabel or a person could have made it: evidence.json not redacted."""
    members = {
        "snapshot.json": orjson.dumps(yaml.safe_load(DRIFTED.read_text())),
        "evidence.json": orjson.dumps(_leaky_evidence().to_json()),
    }
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(raw.getvalue())
    return str(path)


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    "argv",
    [
        ("check", "-o", "wide"),
        ("check", "-o", "json"),
        ("check", "-o", "yaml"),
        ("check", "-o", "table"),
        ("explain", "node/lab-node-0"),
        ("explain", "node/lab-node-0", "-o", "json"),
        ("report", "--html", "-"),
    ],
    ids=" ".join,
)
def test_no_planted_secret_is_shown_wherever_evidence_is(tmp_path: Path, argv: tuple[str, ...]) -> None:
    bundle = _unredacted_bundle(tmp_path / "old.tar.gz")
    _, out, err = run(*argv, "--snapshot", bundle)
    shown = out + err
    assert REDACTED in shown or "&lt;redacted&gt;" in shown  # the evidence is there, redacted
    for what, secret in LOG_SECRETS.items():
        assert secret not in shown, what


def test_the_monitors_event_says_no_planted_secret(tmp_path: Path) -> None:
    from gpulabel.app.monitorevidence import live_explainer
    from gpulabel.checks.engine.rootcause import Cause
    from gpulabel.model.cluster import ClusterState, DaemonSet
    from gpulabel.model.findings import Finding
    from gpulabel.model.podspec import compiled
    from gpulabel.model.records import Pod
    from tests.fakeapi import FakeClock, fake_client
    from tests.unit.test_evidence import POD_JSON, EvidenceApi

    body = f"2026-11-30T10:12:01Z panic: login --password {LOG_SECRETS['shell']} refused\n"
    api = EvidenceApi(POD_JSON, body, [])
    selector = {"nodeSelector": {"nvidia.com/gpu.deploy.container-toolkit": "true"}}
    ds = DaemonSet("gpu-operator", "nvidia-container-toolkit-daemonset", "uid-ds", selector, {})
    pod = Pod("gpu-operator", "tk-1", "gpu-1", "Running", {}, {}, (("DaemonSet", "uid-ds"),), compiled({})[0])
    state = ClusterState(pods=(pod,), daemonsets=(ds,))
    finding = Finding("operands", "not-ready", node="gpu-1", operand="container-toolkit", severity="error")
    why = live_explainer(fake_client(tmp_path, api, FakeClock()), lambda line: None)
    said = why(Cause("gpu-1", "operand-pod", 1, finding, 0), state)
    assert "panic: login --password" in said and LOG_SECRETS["shell"] not in said


def test_the_signature_table_still_names_its_rows_after_redaction() -> None:
    """Redaction runs before matching: no row's pattern may depend on a value the rules take."""
    for s in SIGNATURES:
        for line, _ in LINES[s.id]:
            assert s.found_in(redact_text(line)), s.id


def test_the_json_evidence_rows_hold_the_redacted_line(tmp_path: Path) -> None:
    bundle = _unredacted_bundle(tmp_path / "old.tar.gz")
    _, out, _ = run("check", "-o", "json", "--snapshot", bundle)
    lines = [r["line"] for r in json.loads(out)["evidence"]]
    assert lines[:3] == [
        f"error running sh -c 'install --password {REDACTED}'",
        f"failed fetching https://ci:{REDACTED}@repo.example.com/x",
        f"panic: login --token {REDACTED} refused",
    ]


def test_the_quick_look_before_the_rules_changes_no_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """redact_text skips the rules for text holding none of what they need (model/redaction.py _MAY_HOLD): on the
    planted texts, the table's lines and their twins, the rules alone give the same text and counts."""
    import re

    from gpulabel.model import redaction

    corpus = [
        *(text for text, _, _, _ in PLANTED_TEXT),
        *(line for lines in LINES.values() for line, _ in lines),
        *(line for lines in TWINS.values() for line in lines),
        "AKIAABCDEFGHIJKLMNOP in eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln",
        "X-Api-Key: k3y glpat-0123456789abcdefABCD xoxb-0123456789-abc Private-Key=pk",
    ]

    def each() -> list[tuple[str, Counter[str]]]:
        out = []
        for text in corpus:
            counts: Counter[str] = Counter()
            out.append((redact_text(text, counts), counts))
        return out

    quick = each()
    monkeypatch.setattr(redaction, "_MAY_HOLD", re.compile(""))
    assert quick == each()
    assert sum(REDACTED in text for text, _ in quick) >= len(PLANTED_TEXT) + 2
