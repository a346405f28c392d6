"""gpulabel's feature-file parser against a transcription of nfd-worker's, on random files from NFD's grammar.

``nfd_labels`` below is ``parseFeatureFile``/``parseDirectives``/``updateFeatures``
of sigs.k8s.io/node-feature-discovery ``source/local/local.go`` written out line
by line, followed by what nfd-worker does with the labels (a default prefix for
keys without ``/``, labels the API server refuses dropped). Expiry times are
drawn together with the instant they stand for, or ``None`` for the spellings
Go's ``time.Parse(time.RFC3339, ...)`` refuses, so the oracle does not reuse
gpulabel's time parser.

Examples: ``GPULABEL_FUZZ_EXAMPLES`` (default 300).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpulabel.k8s.labels import is_valid_key, is_valid_value
from gpulabel.model.featurefile import GO_SPACE, parse_feature_text

EXAMPLES = int(os.environ.get("GPULABEL_FUZZ_EXAMPLES", "300"))
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
DELTAS = [timedelta(days=-400), timedelta(seconds=-1), timedelta(0), timedelta(seconds=1), timedelta(days=30)]
KINDS = ["label", "label", "label", "no-label", "no-label", "expiry", "expiry", "comment", "lookalike", "blank"]


@st.composite
def expiry(draw: st.DrawFn) -> tuple[str, datetime | None]:
    """An expiry-time value and the instant Go reads from it (``None``: Go refuses it)."""
    when = NOW + draw(st.sampled_from(DELTAS))
    form = draw(st.sampled_from(["Z", "Z", "Z", "offset", "fraction", "date", "nozone", "lower-t", "space", "junk"]))
    if form == "Z":
        return when.strftime("%Y-%m-%dT%H:%M:%SZ"), when
    if form == "offset":
        tz = timezone(timedelta(hours=-5, minutes=-30))
        return when.astimezone(tz).strftime("%Y-%m-%dT%H:%M:%S-05:30"), when
    if form == "fraction":
        return when.strftime("%Y-%m-%dT%H:%M:%S.250Z"), when + timedelta(milliseconds=250)
    if form == "date":
        return when.strftime("%Y-%m-%d"), None
    if form == "nozone":
        return when.strftime("%Y-%m-%dT%H:%M:%S"), None
    if form == "lower-t":
        return when.strftime("%Y-%m-%dt%H:%M:%SZ"), None
    if form == "space":
        return when.strftime("%Y-%m-%d %H:%M:%SZ"), None
    return draw(st.sampled_from(["tomorrow", "", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z"])), None


KEYS = ["a", "b", "example.com/a", "nvidia.com/gpu.present", "bad key", "a ", "x/y/z", ""]
VALUES = ["1", "true", "", "x y", "a=b", " 2", "v" * 64]
PADDING = st.sampled_from(["", " ", "\t", "\r", "\u00a0", "\x1c"])


@st.composite
def line(draw: st.DrawFn, times: dict[str, datetime | None]) -> str:
    kind = draw(st.sampled_from(KINDS))
    if kind == "label":
        key = draw(st.sampled_from(KEYS))
        text = key if draw(st.booleans()) else f"{key}={draw(st.sampled_from(VALUES))}"
    elif kind == "no-label":
        text = draw(st.sampled_from(["# +no-label", "# +no-feature", "# +no-label=1"]))
    elif kind == "expiry":
        value, instant = draw(expiry())
        times[value.strip(GO_SPACE)] = instant
        text = draw(st.sampled_from(["# +expiry-time=", "# +expiry-time= "])) + value
    elif kind == "comment":
        text = draw(st.sampled_from(["# hello", "#", "# +", "# +no-lable", "# +expiry-time"]))
    elif kind == "lookalike":
        text = draw(st.sampled_from(["#+no-label", "#  +no-label", "# + no-label"]))
    else:
        text = ""
    return draw(PADDING) + text + draw(PADDING)


@st.composite
def no_label_run(draw: st.DrawFn, times: dict[str, datetime | None]) -> list[str]:
    """``# +no-label`` followed by expiry changes and labels: where expiry and no-label interact."""
    out = ["# +no-label"]
    for _ in range(draw(st.integers(1, 3))):
        value, instant = draw(expiry())
        times[value.strip(GO_SPACE)] = instant
        out += ["# +expiry-time=" + value, f"{draw(st.sampled_from(KEYS))}={draw(st.sampled_from(VALUES))}"]
    return out


@st.composite
def feature_file(draw: st.DrawFn) -> tuple[list[str], dict[str, datetime | None]]:
    times: dict[str, datetime | None] = {}
    chunks = draw(st.lists(st.one_of(line(times).map(lambda text: [text]), no_label_run(times)), max_size=12))
    return [text for chunk in chunks for text in chunk], times


def nfd_labels(lines: list[str], times: dict[str, datetime | None], now: datetime) -> dict[str, str]:
    """nfd-worker's local source, transcribed; then nfd-worker's prefix and validation."""
    labels: dict[str, str] = {}
    expiry_time, skip_label = now, False  # parsingOpts{ExpiryTime: now}
    for raw in lines:
        text = raw.strip(GO_SPACE)  # strings.TrimSpace
        if len(text) == 0:
            continue
        if text.startswith("#"):
            if text.startswith("# +"):  # parseDirectives
                split = text[len("# +") :].split("=", 1)
                if split[0] == "expiry-time":
                    if len(split) == 2:
                        parsed = times.get(split[1].strip(GO_SPACE))
                        if parsed is not None:
                            expiry_time = parsed
                elif split[0] == "no-label":
                    skip_label = True
            continue
        if expiry_time < now:  # ExpiryTime.Before(now)
            continue
        split = text.split("=", 1)
        key = split[0]
        if not skip_label:
            labels[key] = "true" if len(split) == 1 else split[1]  # updateFeatures
        else:
            labels.pop(key, None)
        skip_label = False
    out = {}
    for key, value in labels.items():
        full = key if "/" in key else "feature.node.kubernetes.io/" + key
        if is_valid_key(full) and is_valid_value(value):
            out[full] = value
    return out


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow])
@given(feature_file())
def test_gpulabel_reads_a_feature_file_as_nfd_worker_does(case: tuple[list[str], dict[str, datetime | None]]) -> None:
    lines, times = case
    # "a" and "feature.node.kubernetes.io/a" would collide after prefixing: NFD's order there is a map's.
    data = "\n".join(lines).encode()
    ff = parse_feature_text(data, "f.env", "n", NOW)
    assert ff.desired() == nfd_labels(lines, times, NOW)
    for problem in ff.problems:
        str(problem).encode("utf-8")  # every problem prints
