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


CASES = [
    ("key=value sets a label", "nvidia.com/gpu.count=2", {"nvidia.com/gpu.count": "2"}),
    ("a bare key means true", "nvidia.com/gpu.present", {"nvidia.com/gpu.present": "true"}),
    (
        "a key without a prefix gets NFD's default one",
        "custom-gpu-training=true",
        {"feature.node.kubernetes.io/custom-gpu-training": "true"},
    ),
    ("lines are trimmed and blank lines skipped", "  \n  example.com/a = 1  \n\n", {"example.com/a": "1"}),
    ("comments are skipped", "# a comment\nexample.com/a=1", {"example.com/a": "1"}),
    ("an empty value is a value", "example.com/a=", {"example.com/a": ""}),
    ("no-label skips only the next line", "# +no-label\nexample.com/a=1\nexample.com/b=2", {"example.com/b": "2"}),
    (
        "an expired expiry drops the lines after it",
        "example.com/a=1\n# +expiry-time=2026-01-01T00:00:00Z\nexample.com/b=2",
        {"example.com/a": "1"},
    ),
    ("a future expiry keeps the lines", "# +expiry-time=2027-01-01T00:00:00Z\nexample.com/b=2", {"example.com/b": "2"}),
    (
        "a later expiry directive replaces the earlier one",
        "# +expiry-time=2026-01-01T00:00:00Z\nexample.com/a=1\n# +expiry-time=2027-01-01T00:00:00Z\nexample.com/b=2",
        {"example.com/b": "2"},
    ),
    ("CRLF line ends are fine", "example.com/a=1\r\nexample.com/b=2\r\n", {"example.com/a": "1", "example.com/b": "2"}),
    ("a BOM is ignored", "\ufeffexample.com/a=1", {"example.com/a": "1"}),
]


@pytest.mark.parametrize(("name", "text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_parsing(name: str, text: str, expected: dict[str, str]) -> None:
    desired, problems = parse(text)
    assert desired == expected
    assert problems == []


def test_only_the_first_equals_splits() -> None:
    # the value 'b=c' is not a valid label value: reported and skipped
    desired, problems = parse("example.com/a=b=c")
    assert desired == {}
    assert problems[0].startswith("f.env:1: invalid label example.com/a=b=c: a valid label must")


def test_an_invalid_value_is_reported_with_file_and_line_and_skipped() -> None:
    desired, problems = parse("example.com/a=1\nnvidia.com/gpu.product=NVIDIA A100\nexample.com/b=2")
    assert desired == {"example.com/a": "1", "example.com/b": "2"}
    assert len(problems) == 1
    assert problems[0].startswith("f.env:2: invalid label nvidia.com/gpu.product=NVIDIA A100: a valid label must")


def test_an_invalid_key_is_reported() -> None:
    _, problems = parse("a/b/c=1")
    assert problems[0].startswith("f.env:1: invalid label a/b/c=1: a valid label key must")


def test_a_duplicate_key_warns_and_the_last_wins() -> None:
    desired, problems = parse("example.com/a=1\nexample.com/a=2")
    assert desired == {"example.com/a": "2"}
    assert problems == ["f.env:2: warning: example.com/a set again (first on line 1); the last value wins"]


def test_a_nul_byte_refuses_the_whole_file() -> None:
    desired, problems = parse(b"example.com/a=1\n\x00")
    assert desired == {}
    assert problems == ["f.env: binary data (NUL byte): not a feature file; nothing applied"]


def test_a_line_that_is_not_utf8_is_reported_and_skipped() -> None:
    desired, problems = parse(b"example.com/a=1\nexample.com/b=\xff\n")
    assert desired == {"example.com/a": "1"}
    assert problems == ["f.env:2: not UTF-8 text; line skipped"]


def test_an_invalid_expiry_is_reported() -> None:
    _, problems = parse("# +expiry-time=tomorrow\nexample.com/a=1")
    assert problems == ["f.env:1: invalid expiry time 'tomorrow'"]


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
