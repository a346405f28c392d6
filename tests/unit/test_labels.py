"""Label rules: table-driven, one sentence per case, as the API server decides."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpulabel.k8s.labels import (
    is_valid_key,
    is_valid_value,
    key_errors,
    label_errors,
    split_assignment,
    value_errors,
)
from gpulabel.model.sanitize import sanitize, sanitize_gfd

VALUE_MSG_START = "a valid label must be an empty string or consist of alphanumeric characters"

VALUE_CASES = [
    ("an empty value is valid", "", True),
    ("a plain product name is valid", "NVIDIA-A100-SXM4-40GB", True),
    ("a single letter is valid", "a", True),
    ("63 characters are valid", "a" * 63, True),
    ("64 characters are too many", "a" * 64, False),
    ("a space is rejected", "NVIDIA A100", False),
    ("a leading dash is rejected", "-a", False),
    ("a trailing dot is rejected", "a.", False),
    ("underscores and dots inside are fine", "a_b.c-d", True),
    ("non-ASCII letters are rejected though str.isalnum accepts them", "caf\u00e9", False),
    ("full-width digits are rejected", "\uff11\uff12", False),
    ("parentheses are rejected", "TITAN-X-(Pascal)", False),
    ("a slash is rejected in a value", "a/b", False),
    ("a newline at the end is rejected", "abc\n", False),
]


@pytest.mark.parametrize(("name", "value", "valid"), VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_value_validation(name: str, value: str, valid: bool) -> None:
    assert is_valid_value(value) is valid
    assert (value_errors(value) == []) is valid


KEY_CASES = [
    ("a bare name is valid", "gpu", True),
    ("a prefixed name is valid", "nvidia.com/gpu.product", True),
    ("the NFD prefix is valid", "feature.node.kubernetes.io/pci-10de.present", True),
    ("an uppercase name is valid", "nvidia.com/GPU", True),
    ("an uppercase prefix is rejected", "NVIDIA.com/gpu", False),
    ("two slashes are rejected", "a/b/c", False),
    ("an empty prefix is rejected", "/x", False),
    ("an empty name is rejected", "nvidia.com/", False),
    ("an empty key is rejected", "", False),
    ("a 63-character name is valid", "x/" + "a" * 63, True),
    ("a 64-character name is rejected", "x/" + "a" * 64, False),
    ("a 253-character prefix is valid", ("a" * 61 + ".") * 4 + "a" * 5 + "/x", True),
    ("a 254-character prefix is rejected", ("a" * 61 + ".") * 4 + "a" * 6 + "/x", False),
    ("a prefix label may not end with a dash", "a-.com/x", False),
    ("non-ASCII in the name is rejected", "nvidia.com/gp\u00fc", False),
    ("an underscore in the prefix is rejected", "my_domain.com/x", False),
]


@pytest.mark.parametrize(("name", "key", "valid"), KEY_CASES, ids=[c[0] for c in KEY_CASES])
def test_key_validation(name: str, key: str, valid: bool) -> None:
    assert is_valid_key(key) is valid, key_errors(key)


def test_an_empty_prefix_gives_the_servers_message() -> None:
    assert key_errors("/x") == ["prefix part must be non-empty"]


def test_an_empty_name_reports_both_emptiness_and_the_format() -> None:
    errs = key_errors("nvidia.com/")
    assert errs[0] == "name part must be non-empty"
    assert errs[1].startswith("name part must consist of alphanumeric characters")
    assert len(errs) == 2


def test_a_long_name_reports_length_in_bytes() -> None:
    assert key_errors("a" * 64) == ["name part must be no more than 63 bytes"]


def test_an_uppercase_prefix_names_rfc_1123() -> None:
    (err,) = key_errors("NVIDIA.com/gpu")
    assert err.startswith("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric")
    assert err.endswith(
        "(e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    )


def test_three_parts_give_the_single_whole_key_message() -> None:
    (err,) = key_errors("a/b/c")
    assert err.startswith("a valid label key must consist of alphanumeric characters")
    assert err.endswith("with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")


def test_a_long_invalid_value_gives_two_messages_in_the_servers_order() -> None:
    errs = value_errors(" " * 64)
    assert errs[0] == "must be no more than 63 bytes"
    assert errs[1].startswith(VALUE_MSG_START)


def test_multibyte_characters_count_as_bytes() -> None:
    # 32 two-byte characters are 64 bytes: too long, as well as not ASCII.
    assert value_errors("\u00e9" * 32)[0] == "must be no more than 63 bytes"


def test_label_errors_read_as_the_server_prints_them() -> None:
    (err,) = label_errors("nvidia.com/gpu.product", "NVIDIA A100-SXM4-40GB")
    assert err == (
        'metadata.labels: Invalid value: "NVIDIA A100-SXM4-40GB": a valid label must be an empty string or '
        "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    )


def test_label_errors_quote_like_go() -> None:
    (err,) = label_errors("k", 'a"b\tc\u00e9')
    assert 'Invalid value: "a\\"b\\tc\u00e9"' in err


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [("a=b", "a", "b"), ("a=b=c", "a", "b=c"), ("a", "a", ""), ("a=", "a", "")],
    ids=["a plain pair", "the first equals splits", "a bare key has the empty value", "a trailing equals"],
)
def test_split_assignment(text: str, key: str, value: str) -> None:
    assert split_assignment(text) == (key, value)


SANITIZE_CASES = [
    ("spaces become dashes", "NVIDIA A100-SXM4-40GB", "NVIDIA-A100-SXM4-40GB"),
    ("parentheses become dashes and the end is trimmed", "NVIDIA TITAN X (Pascal)", "NVIDIA-TITAN-X--Pascal"),
    ("leading and trailing junk is trimmed", "  (Tesla T4)  ", "Tesla-T4"),
    ("a valid value is unchanged", "NVIDIA-H100-80GB-HBM3", "NVIDIA-H100-80GB-HBM3"),
    ("nothing usable gives the empty value", "()", ""),
    ("the empty string stays empty", "", ""),
    ("non-ASCII letters become dashes", "caf\u00e9 GPU", "caf--GPU"),
    ("a dash at position 63 is trimmed after the cut", "a" * 62 + " " + "b" * 10, "a" * 62),
    ("a long value is cut to 63", "x" * 100, "x" * 63),
    ("underscores and dots are kept", "_a_b.c.", "a_b.c"),
]


@pytest.mark.parametrize(("name", "text", "expected"), SANITIZE_CASES, ids=[c[0] for c in SANITIZE_CASES])
def test_sanitize(name: str, text: str, expected: str) -> None:
    assert sanitize(text) == expected
    assert is_valid_value(sanitize(text))


# NVIDIA/k8s-device-plugin internal/lm/resource.go: GP = getProductName, SA = sanitise;
# RT = internal/lm/resource_test.go (GFD's own cases: TestGPUResourceLabeler, TestMigResourceLabeler).
GP, SA = "resource.go getProductName", "resource.go sanitise"
RT_GPU, RT_MIG = "resource_test.go TestGPUResourceLabeler", "resource_test.go TestMigResourceLabeler"
GFD_CASES: list[tuple[str, str, str, dict[str, object], str]] = [
    ("no sharing", RT_GPU, "MOCKMODEL", {}, "MOCKMODEL"),
    ("shared appends suffix", RT_GPU, "MOCKMODEL", {"shared": True}, "MOCKMODEL-SHARED"),
    ("a MIG device names its profile", RT_MIG, "MOCKMODEL", {"mig_profile": "1g.300gb"}, "MOCKMODEL-MIG-1g.300gb"),
    (
        "a shared MIG device",
        RT_MIG,
        "MOCKMODEL",
        {"mig_profile": "1g.300gb", "shared": True},
        "MOCKMODEL-MIG-1g.300gb-SHARED",
    ),
    ("parentheses are deleted, not replaced", SA, "NVIDIA-TITAN-X-(Pascal)", {}, "NVIDIA-TITAN-X-Pascal"),
    ("space runs collapse to one dash", SA + " (strings.Fields)", "Tesla   T4", {}, "Tesla-T4"),
    ("leading and trailing spaces vanish", SA + " (strings.Fields)", " A100 ", {}, "A100"),
    ("a tab is deleted before the split", SA, "Tesla\tT4", {}, "TeslaT4"),
    ("GFD does not truncate", SA, "A " * 40, {}, "-".join(["A"] * 40)),
    ("an empty product with no MIG: no product label", GP + " (no parts)", "", {"shared": True}, ""),
    (
        "an empty product with a MIG profile starts at MIG",
        GP + " (empty parts left out)",
        "",
        {"mig_profile": "1g.5gb"},
        "MIG-1g.5gb",
    ),
    ("a profile with surrounding spaces", SA, "A100", {"mig_profile": " 1g.5gb "}, "A100-MIG-1g.5gb"),
    (
        "a product of spaces is an empty word",
        GP + ' (p != "" before sanitise)',
        "  ",
        {"mig_profile": "1g.5gb"},
        "-MIG-1g.5gb",
    ),
    (
        "a real A100 MIG device",
        RT_MIG,
        "NVIDIA A100-SXM4-40GB",
        {"mig_profile": "1g.5gb"},
        "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb",
    ),
]


@pytest.mark.parametrize(("name", "upstream", "text", "opts", "expected"), GFD_CASES, ids=[c[0] for c in GFD_CASES])
def test_sanitize_gfd(name: str, upstream: str, text: str, opts: dict[str, object], expected: str) -> None:
    assert sanitize_gfd(text, **opts) == expected  # type: ignore[arg-type]


@settings(max_examples=2000)
@given(st.text())
def test_sanitize_always_gives_a_valid_value_and_is_idempotent(text: str) -> None:
    once = sanitize(text)
    assert is_valid_value(once)
    assert sanitize(once) == once


@settings(max_examples=500)
@given(st.text())
def test_validation_never_raises(text: str) -> None:
    key_errors(text)
    value_errors(text)
    label_errors(text, text)
