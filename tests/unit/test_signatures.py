"""The signature table: per row a real line for each wording its sources cite, healthy twins that name no cause,
and the matcher that names a cause from a line (or does not guess). The lines: ``tests/signature_lines.py``."""

from __future__ import annotations

import pytest

from gpulabel.checks.explain.evidence import Blame, diagnose
from gpulabel.model.evidence import EventNote, Evidence, LogLine, LogTail, containers_to_read, parse_log
from gpulabel.model.operands import CATALOGUE
from gpulabel.model.signatures import SIGNATURES, Signature
from tests.signature_lines import LINES, TWINS

# id -> (the first line, where it comes from): what other tests take as "a real line of the row"
EXCERPTS: dict[str, tuple[str, str]] = {k: v[0] for k, v in LINES.items()}


def _evidence(where: str, lines: list[str]) -> Evidence:
    if where == "log":
        return Evidence(logs=(LogTail("gpu-operator/p-1", "ctr", lines=tuple(LogLine("", t) for t in lines)),))
    notes = []
    for line in lines:
        reason, _, message = line.partition(": ")
        notes.append(EventNote("Pod", "gpu-operator", "p-1", "Warning", reason, message, "t"))
    return Evidence(events=tuple(notes))


def _named(operand: str, where: str, lines: list[str]) -> Signature | None:
    return diagnose(Blame("gpu-1", operand, "operand-pod", _pod(), None), _evidence(where, lines)).signature


def test_every_row_has_a_line_per_wording_and_every_line_a_row() -> None:
    assert set(LINES) == {s.id for s in SIGNATURES}
    for s in SIGNATURES:
        assert s.cause.strip() and s.fix.strip() and all(src.strip() for src in s.sources)
        assert len(LINES[s.id]) >= len(s.sources), f"{s.id}: a line for each of its {len(s.sources)} sources"
        assert len({text for text, _ in LINES[s.id]}) == len(LINES[s.id])


@pytest.mark.parametrize(
    ("row", "line"), [(s, text) for s in SIGNATURES for text, _ in LINES[s.id]], ids=lambda v: getattr(v, "id", "")
)
def test_each_line_names_its_own_row(row: Signature, line: str) -> None:
    operand = row.operand if row.operand != "*" else "driver"
    evidence = _evidence(row.where, ["starting", line] if row.where == "log" else [line])
    d = diagnose(Blame("gpu-1", operand, "operand-pod", _pod(), None), evidence)
    assert d.signature is row
    assert len(d.lines) == 1


@pytest.mark.parametrize("operand", sorted(TWINS))
def test_a_healthy_pods_ordinary_lines_name_no_cause(operand: str) -> None:
    """The twins: startup lines, retries that succeed and near misses of the rows (a GDS driver not ready, gcc's
    warning form, a MIG reset under way) name no cause, for their operand and for every other."""
    where = "event" if operand == "*" else "log"
    for who in CATALOGUE if where == "event" else [operand]:
        assert _named(who, where, TWINS[operand]) is None, who
    for line in TWINS[operand]:  # each alone too: no row may need its neighbours to stay quiet
        assert _named(operand if operand != "*" else "driver", where, [line]) is None, line


def test_every_operand_with_a_log_row_has_twins() -> None:
    assert {s.operand for s in SIGNATURES if s.where == "log"} <= set(TWINS)
    assert "*" in TWINS


# operands built from one code base print the same library's words (NVML loading): a line of one names the
# same cause in the other's pod
# operands built from the same code, whose failure lines are the same words: the device plugin and GFD (one
# repository), the standalone host engine and dcgm-exporter's embedded one (both DCGM's DcgmHostEngineHandler)
_SIBLINGS = {
    "device-plugin": "gpu-feature-discovery",
    "gpu-feature-discovery": "device-plugin",
    "dcgm": "dcgm-exporter",
    "dcgm-exporter": "dcgm",
}


@pytest.mark.parametrize("row", [s for s in SIGNATURES if s.where == "log"], ids=lambda s: s.id)
def test_no_line_names_a_cause_for_another_operands_pod(row: Signature) -> None:
    others = {s.operand for s in SIGNATURES} - {"*", row.operand, _SIBLINGS.get(row.operand, "")}
    for other in sorted(others):
        for line, _ in LINES[row.id]:
            named = _named(other, "log", [line])
            assert named is None, f"{line!r} names {named and named.id} for {other}"


def _pod():  # type: ignore[no-untyped-def]
    from gpulabel.model.podspec import compiled
    from gpulabel.model.records import Pod

    return Pod("gpu-operator", "p-1", "gpu-1", "Running", {}, {}, (), compiled({})[0])


BACKOFF = "Back-off restarting failed container"


def test_an_unknown_failure_shows_the_last_lines_and_no_cause() -> None:
    lines = tuple(LogLine(f"2026-11-30T10:00:0{i}Z", f"step {i}") for i in range(6))
    evidence = Evidence(
        logs=(LogTail("gpu-operator/p-1", "ctr", previous=True, lines=lines),),
        events=(
            EventNote("Pod", "gpu-operator", "p-1", "Warning", "BackOff", "Back-off restarting failed container", "t"),
        ),
    )
    d = diagnose(Blame("gpu-1", "device-plugin", "operand-pod", _pod(), None), evidence)
    assert d.signature is None
    assert [ln.text for ln in d.lines] == [
        "step 3",
        "step 4",
        "step 5",
        "BackOff: Back-off restarting failed container",
    ]
    assert d.lines[0].where == "ctr (previous)" and d.lines[0].time == "2026-11-30T10:00:03Z"
    assert d.summary() == 'no known signature; "step 5"'


def test_the_toolkits_load_wrapper_around_another_error_is_an_unknown_failure() -> None:
    """``unable to load containerd config: ...`` wraps every load error of the toolkit; only a file's (missing,
    unreadable, unparsable) names toolkit-runtime-config, another inner error names no cause and is shown."""
    line = next(t for t in TWINS["container-toolkit"] if "unsupported type for version field" in t)
    evidence = Evidence(logs=(LogTail("gpu-operator/p-1", "ctr", lines=(LogLine("", "starting"), LogLine("", line))),))
    d = diagnose(Blame("gpu-1", "container-toolkit", "operand-pod", _pod(), None), evidence)
    assert d.signature is None and line in [ln.text for ln in d.lines]


def test_the_mig_managers_apply_wrapper_around_nvml_not_starting_is_not_a_held_gpu() -> None:
    """``Error applying MIG configuration with hooks: ...`` wraps every error of mig-parted's apply; NVML failing
    to start with a missing library or driver names mig-manager-nvml, with another return (an internal driver error)
    no cause, and the line is shown."""
    line = next(t for t in TWINS["mig-manager"] if "error initializing NVML: Unknown Error" in t)
    evidence = Evidence(logs=(LogTail("gpu-operator/p-1", "ctr", lines=(LogLine("", "starting"), LogLine("", line))),))
    d = diagnose(Blame("gpu-1", "mig-manager", "operand-pod", _pod(), None), evidence)
    assert d.signature is None and line in [ln.text for ln in d.lines]
    then = 'time="2026-11-30T10:12:02Z" level=error msg="Error: failed to apply MIG configuration: exit status 1"'
    missing = Evidence(
        logs=(
            LogTail("gpu-operator/p-1", "ctr", lines=(LogLine("", EXCERPTS["mig-manager-nvml"][0]), LogLine("", then))),
        )
    )
    named = diagnose(Blame("gpu-1", "mig-manager", "operand-pod", _pod(), None), missing).signature
    assert named is not None and named.id == "mig-manager-nvml"  # the Go manager's exit-status line after it


def test_a_row_of_another_operand_is_not_taken() -> None:
    line = EXCERPTS["device-plugin-nvml"][0]
    evidence = Evidence(logs=(LogTail("gpu-operator/p-1", "ctr", lines=(LogLine("", line),)),))
    d = diagnose(Blame("gpu-1", "driver", "operand-pod", _pod(), None), evidence)
    assert d.signature is None and [ln.text for ln in d.lines] == [line]


@pytest.mark.parametrize("line", [text for text, _ in LINES["validator-driver-not-ready"]])
def test_the_validators_rows_read_its_init_container_in_another_operands_pod(line: str) -> None:
    """The toolkit's driver-validation init container runs the validator's image (gpu-operator assets
    state-container-toolkit, v23.3 to v26.7): its words name the validator's cause there, and only in a
    ``*-validation`` init container, not in the operand's own container."""
    for container, init, named in (("driver-validation", True, "validator-driver-not-ready"), ("ctr", False, None)):
        tail = LogTail("gpu-operator/p-1", container, init=init, lines=(LogLine("", line),))
        d = diagnose(Blame("gpu-1", "container-toolkit", "operand-pod", _pod(), None), Evidence(logs=(tail,)))
        assert (d.signature and d.signature.id) == named, container


def test_the_first_row_of_the_table_wins_on_one_log() -> None:
    both = (EXCERPTS["driver-secure-boot"][0], EXCERPTS["driver-module-load"][0])
    evidence = Evidence(logs=(LogTail("gpu-operator/p-1", "ctr", lines=tuple(LogLine("", t) for t in both)),))
    d = diagnose(Blame("gpu-1", "driver", "operand-pod", _pod(), None), evidence)
    assert d.signature is not None and d.signature.id == "driver-secure-boot"


def test_events_of_other_objects_are_not_evidence() -> None:
    line = EXCERPTS["image-pull"][0]
    reason, _, message = line.partition(": ")
    other = EventNote("Pod", "gpu-operator", "someone-else", "Warning", reason, message, "t")
    node = EventNote("Node", "default", "gpu-1", "Warning", reason, message, "t")
    d = diagnose(Blame("gpu-1", "driver", "operand-pod", _pod(), None), Evidence(events=(other,)))
    assert d.signature is None and d.lines == ()
    d = diagnose(Blame("gpu-1", "driver", "operand-pod", _pod(), None), Evidence(events=(node,)))
    assert d.signature is not None and d.signature.id == "image-pull"


def test_which_containers_are_read() -> None:
    pod = {
        "status": {
            "initContainerStatuses": [
                {"name": "ok-init", "state": {"terminated": {"exitCode": 0}}},
                {
                    "name": "bad-init",
                    "restartCount": 3,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": {"exitCode": 1}},
                },
                {"name": "later-init", "state": {"waiting": {"reason": "PodInitializing"}}},
                {"name": "running-init", "state": {"running": {}}},
                {"name": "no-image-init", "state": {"waiting": {"reason": "ImagePullBackOff"}}},
            ],
            "containerStatuses": [
                {"name": "main", "ready": False, "state": {"waiting": {"reason": "PodInitializing"}}},
                {"name": "creating", "ready": False, "state": {"waiting": {"reason": "ContainerCreating"}}},
                {"name": "fine", "ready": True, "state": {"running": {}}},
                {"name": "unready", "ready": False, "state": {"running": {}}},
                {
                    "name": "crashing",
                    "ready": False,
                    "restartCount": 2,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": {"exitCode": 2}},
                },
            ],
        }
    }
    got = [(c.name, c.init, c.previous) for c in containers_to_read(pod)]
    # the containers still waiting to start (behind the init containers, on an image) have no log: not asked
    assert got == [
        ("bad-init", True, True),
        ("running-init", True, False),
        ("unready", False, False),
        ("crashing", False, True),
    ]


def test_a_log_body_with_timestamps() -> None:
    body = "2026-11-30T10:00:00.123456789Z first line\n2026-11-30T10:00:01Z second: with colon\nno stamp\n"
    assert parse_log(body) == (
        LogLine("2026-11-30T10:00:00.123456789Z", "first line"),
        LogLine("2026-11-30T10:00:01Z", "second: with colon"),
        LogLine("", "no stamp"),
    )
