"""Feature files in NFD's syntax: what becomes a label, and what is reported."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpulabel.cluster.featurefiles import read_feature_dir, read_feature_file
from gpulabel.model.featurefile import MAX_FILE_BYTES, parse_feature_text

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def parse(text: str | bytes) -> tuple[dict[str, str], list[str]]:
    data = text.encode() if isinstance(text, str) else text
    ff = parse_feature_text(data, "f.env", "n", NOW)
    return ff.desired(), [str(p) for p in ff.problems]


# Each row: (sentence, the nfd-worker rule it follows, file text, labels, problems).
# LOCAL = sigs.k8s.io/node-feature-discovery source/local/local.go
PF, PD, UF = "local.go parseFeatureFile", "local.go parseDirectives", "local.go updateFeatures"
CASES: list[tuple[str, str, str | bytes, dict[str, str], list[str]]] = [
    ("key=value sets a label", UF, "nvidia.com/gpu.count=2", {"nvidia.com/gpu.count": "2"}, []),
    ("a bare key means true", UF, "nvidia.com/gpu.present", {"nvidia.com/gpu.present": "true"}, []),
    (
        "a key without a prefix gets NFD's default one",
        "nfd-worker: labels without a namespace get feature.node.kubernetes.io/",
        "custom-gpu-training=true",
        {"feature.node.kubernetes.io/custom-gpu-training": "true"},
        [],
    ),
    ("lines are trimmed and blank lines skipped", PF, "  \n  example.com/a=1  \n\n", {"example.com/a": "1"}, []),
    (
        "the split on '=' does not trim: 'key ' is an invalid key",
        PF + " (strings.SplitN without TrimSpace)",
        "example.com/a = 1",
        {},
        ["f.env:1: invalid label example.com/a = 1: name part must consist of alphanumeric characters"],
    ),
    ("comments are skipped", PF, "# a comment\nexample.com/a=1", {"example.com/a": "1"}, []),
    ("an empty value is a value", UF, "example.com/a=", {"example.com/a": ""}, []),
    (
        "no-label skips only the next line",
        PD,
        "# +no-label\nexample.com/a=1\nexample.com/b=2",
        {"example.com/b": "2"},
        [],
    ),
    (
        "no-label also removes an earlier label of that key",
        PF + " (delete(labels, key))",
        "example.com/a=1\n# +no-label\nexample.com/a=2",
        {},
        ["f.env:3: warning: +no-label removes example.com/a set on line 1"],
    ),
    (
        "no-label carries over an expired line to the next live one",
        PF + " (an expired line continues before SkipLabel is reset)",
        "# +no-label\n# +expiry-time=2026-01-01T00:00:00Z\nexample.com/a=1\n# +expiry-time=2027-01-01T00:00:00Z\n"
        "example.com/b=2\nexample.com/c=3",
        {"example.com/c": "3"},
        [],
    ),
    (
        "#+no-label is a plain comment",
        PD + " (DirectivePrefix is '# +')",
        "#+no-label\nexample.com/a=1",
        {"example.com/a": "1"},
        ["f.env:1: warning: '#+no-label' is a plain comment: a directive starts with exactly '# +'"],
    ),
    (
        "two spaces before + is a plain comment too",
        PD,
        "#  +no-label\nexample.com/a=1",
        {"example.com/a": "1"},
        ["f.env:1: warning: '#  +no-label' is a plain comment: a directive starts with exactly '# +'"],
    ),
    (
        "an unknown directive is reported",
        PD + " (default: unknown feature file directive)",
        "# +no-lable\nexample.com/a=1",
        {"example.com/a": "1"},
        ["f.env:1: unknown directive 'no-lable' (NFD knows expiry-time, no-label, no-feature); ignored"],
    ),
    (
        "a space after + makes the name unknown",
        PD + " (the name is not trimmed)",
        "# + no-label\nexample.com/a=1",
        {"example.com/a": "1"},
        ["f.env:1: unknown directive ' no-label' (NFD knows expiry-time, no-label, no-feature); ignored"],
    ),
    ("no-feature concerns raw features, not labels", PD, "# +no-feature\nexample.com/a=1", {"example.com/a": "1"}, []),
    ("no-label=anything is still no-label", PD, "# +no-label=x\nexample.com/a=1", {}, []),
    (
        "an expired expiry drops the lines after it",
        PF + " (ExpiryTime.Before(now))",
        "example.com/a=1\n# +expiry-time=2026-01-01T00:00:00Z\nexample.com/b=2",
        {"example.com/a": "1"},
        [],
    ),
    (
        "an expiry of exactly now is not expired",
        PF + " (Before is strict)",
        "# +expiry-time=2026-11-29T12:00:00Z\nexample.com/a=1",
        {"example.com/a": "1"},
        [],
    ),
    (
        "a zone offset counts",
        PD + " (time.RFC3339)",
        "# +expiry-time=2026-11-29T13:00:00+02:00\nexample.com/a=1",
        {},
        [],
    ),
    (
        "fractional seconds are accepted",
        PD + " (time.Parse accepts a fraction after the seconds)",
        "# +expiry-time=2026-11-29T12:00:00.5Z\nexample.com/a=1",
        {"example.com/a": "1"},
        [],
    ),
    (
        "a future expiry keeps the lines",
        PF,
        "# +expiry-time=2027-01-01T00:00:00Z\nexample.com/b=2",
        {"example.com/b": "2"},
        [],
    ),
    (
        "a later expiry directive replaces the earlier one",
        PD,
        "# +expiry-time=2026-01-01T00:00:00Z\nexample.com/a=1\n# +expiry-time=2027-01-01T00:00:00Z\nexample.com/b=2",
        {"example.com/b": "2"},
        [],
    ),
    (
        "a bare date is a bad directive and the earlier expiry stays",
        PD + " (time.Parse(time.RFC3339) error)",
        "# +expiry-time=2026-01-01T00:00:00Z\n# +expiry-time=2027-01-01\nexample.com/a=1",
        {},
        [
            "f.env:2: invalid expiry time '2027-01-01': not RFC 3339 with a time zone (e.g. 2026-12-31T23:59:59Z); "
            "the earlier expiry stays in force"
        ],
    ),
    (
        "a time without a zone is a bad directive",
        PD,
        "# +expiry-time=2027-01-01T00:00:00\nexample.com/a=1",
        {"example.com/a": "1"},
        [
            "f.env:1: invalid expiry time '2027-01-01T00:00:00': not RFC 3339 with a time zone "
            "(e.g. 2026-12-31T23:59:59Z); the earlier expiry stays in force"
        ],
    ),
    (
        "expiry-time without '=' is a bad directive",
        PD + " (invalid directive format)",
        "# +expiry-time\nexample.com/a=1",
        {"example.com/a": "1"},
        ["f.env:1: invalid directive: should be '# +expiry-time=<RFC 3339 time>'"],
    ),
    (
        "CRLF line ends are fine",
        PF + " (TrimSpace)",
        "example.com/a=1\r\nexample.com/b=2\r\n",
        {"example.com/a": "1", "example.com/b": "2"},
        [],
    ),
    (
        "a BOM stays part of the first key, as in NFD",
        PF + " (no BOM handling)",
        "\ufeffexample.com/a=1\nexample.com/b=2",
        {"example.com/b": "2"},
        [
            "f.env:1: invalid label \ufeffexample.com/a=1: prefix part a lowercase RFC 1123 subdomain",
            "f.env:1: warning: starts with a byte order mark, which NFD keeps as part of the first line",
        ],
    ),
    (
        "a line that is not UTF-8 is an invalid label, the others count",
        PF + " (Go strings hold any bytes)",
        b"example.com/a=1\nexample.com/b=\xff\n",
        {"example.com/a": "1"},
        ["f.env:2: invalid label example.com/b=\\xff: a valid label must be an empty string"],
    ),
    (
        "a later invalid value replaces an earlier valid one",
        UF + " (the last value wins, then nfd-worker drops the invalid label)",
        "example.com/a=1\nexample.com/a=x y",
        {},
        [
            "f.env:2: warning: example.com/a set again (first on line 1); the last value wins",
            "f.env:2: invalid label example.com/a=x y: a valid label must be an empty string",
        ],
    ),
]


@pytest.mark.parametrize(("name", "upstream", "text", "expected", "reported"), CASES, ids=[c[0] for c in CASES])
def test_parsing(name: str, upstream: str, text: str | bytes, expected: dict[str, str], reported: list[str]) -> None:
    desired, problems = parse(text)
    assert desired == expected
    assert len(problems) == len(reported)
    for got, want in zip(problems, reported, strict=True):
        assert got.startswith(want)


def test_a_nul_byte_refuses_the_whole_file() -> None:
    desired, problems = parse(b"example.com/a=1\n\x00")
    assert desired == {}
    assert problems == ["f.env: binary data (NUL byte): not a feature file; nothing applied"]


def test_ten_thousand_lines_parse() -> None:
    text = "\n".join(f"example.com/k{i}={i}" for i in range(10_000))
    desired, problems = parse(text)
    assert len(desired) == 10_000 and problems == []


def test_a_file_over_64_kib_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "n.env"
    big.write_text("example.com/a=1\n" * (MAX_FILE_BYTES // 16 + 1))
    ff = read_feature_file(str(big))
    assert ff.desired() == {}
    assert "over NFD's 64 KiB limit" in str(ff.problems[0])


def test_a_directory_maps_files_to_nodes_and_skips_dotfiles(tmp_path: Path) -> None:
    (tmp_path / "lab-node-1.env").write_text("example.com/a=1\n")
    (tmp_path / ".hidden.env").write_text("example.com/a=1\n")
    (tmp_path / "..data").mkdir()
    (tmp_path / "notes.txt").write_text("x")
    files, problems = read_feature_dir(str(tmp_path))
    assert [f.node for f in files] == ["lab-node-1"]
    assert [str(p) for p in problems] == [f"{tmp_path / 'notes.txt'}: warning: not named <node>.env; ignored"]


def test_only_whole_file_problems_refuse_the_file(tmp_path: Path) -> None:
    assert parse_feature_text(b"a/b/c=1\nexample.com/a=1", "f.env", "n", NOW).refused is False
    assert parse_feature_text(b"example.com/a=1\x00", "f.env", "n", NOW).refused is True
    assert read_feature_file(str(tmp_path / "missing.env")).refused is True


def test_a_fifo_in_the_directory_is_skipped_as_nfd_skips_it(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "n.env")
    files, problems = read_feature_dir(str(tmp_path))
    assert files == []
    assert [str(p) for p in problems] == [
        f"{tmp_path / 'n.env'}: warning: not a regular file: NFD reads nothing from it; ignored"
    ]
